// The linear objectives of SPEC section 1: values, gradients, L and f*, blocks, validation.
#include <QtTest>

#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "data/loaders.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "objective/linear_objective.hpp"
#include "objective/solvers.hpp"
#include "random/numpy_random.hpp"

using namespace pipelens;

// Fails the test unless `expr` throws `Type` whose message contains `needle`.
#define EXPECT_THROW_WITH(Type, expr, needle)                                                  \
    do {                                                                                       \
        bool thrown_ = false;                                                                  \
        try {                                                                                  \
            (void)(expr);                                                                      \
        } catch (const Type& e_) {                                                             \
            thrown_ = true;                                                                    \
            QVERIFY2(std::string(e_.what()).find(needle) != std::string::npos,                 \
                     (std::string("message lacks '") + (needle) + "': " + e_.what()).c_str()); \
        }                                                                                      \
        QVERIFY2(thrown_, "expected " #Type " from " #expr);                                   \
    } while (0)

namespace {

Dataset randomData(int n, int d, std::uint64_t seed, bool logistic, double noise = 0.3) {
    SyntheticSpec spec;
    spec.kind = logistic ? "logistic" : "random";
    spec.rows = n;
    spec.dim = d;
    spec.seed = seed;
    spec.labelNoise = logistic ? 0.0 : noise;
    Dataset data = makeSynthetic(spec);
    if (logistic) {
        data.X *= 0.3;  // softer margins: labels stay mixed, f* well inside (0, log 2)
    }
    return data;
}

// Central differences of a scalar function of w.
template <typename F>
Eigen::VectorXd numericGradient(F f, const Eigen::VectorXd& w, double h = 1e-5) {
    Eigen::VectorXd g(w.size());
    for (Eigen::Index i = 0; i < w.size(); ++i) {
        Eigen::VectorXd plus = w, minus = w;
        plus[i] += h;
        minus[i] -= h;
        g[i] = (f(plus) - f(minus)) / (2.0 * h);
    }
    return g;
}

double relativeError(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return (a - b).norm() / std::max(1.0, b.norm());
}

// lambda_max(X^T X / n) from the largest singular value: independent of the solvers' Gram path.
double sigmaMaxSquaredOverN(const Eigen::MatrixXd& X) {
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(X);
    double s = svd.singularValues()[0];
    return s * s / static_cast<double>(X.rows());
}

}  // namespace

class TestObjective : public QObject {
    Q_OBJECT

  private slots:
    void gradients_data() {
        QTest::addColumn<bool>("logistic");
        QTest::addColumn<double>("l2");
        QTest::newRow("quadratic") << false << 0.0;
        QTest::newRow("logistic l2 = 0") << true << 0.0;
        QTest::newRow("logistic l2 = 0.1") << true << 0.1;
    }
    void gradients() {
        QFETCH(bool, logistic);
        QFETCH(double, l2);
        Dataset data = randomData(12, 5, 21, logistic);
        LinearObjective obj(data, logistic ? LossKind::Logistic : LossKind::Quadratic, l2, 3);
        QCOMPARE(obj.batches(), 4);
        NumpyRandom rng(99);
        for (int trial = 0; trial < 3; ++trial) {
            Eigen::VectorXd w = rng.normalVector(5);
            auto f = [&](const Eigen::VectorXd& v) { return obj.value(v); };
            Eigen::VectorXd g = obj.gradient(w);
            QVERIFY2(relativeError(g, numericGradient(f, w)) < 1e-6, "gradient vs differences");

            Eigen::VectorXd mean = Eigen::VectorXd::Zero(5);
            double meanValue = 0.0;
            for (int b = 0; b < obj.batches(); ++b) {
                auto fb = [&](const Eigen::VectorXd& v) { return obj.batchValue(b, v); };
                Eigen::VectorXd gb = obj.batchGradient(b, w);
                QVERIFY2(relativeError(gb, numericGradient(fb, w)) < 1e-6,
                         "batch gradient vs differences");

                // The pipeline's view: X_b^T g with g from the last stage, plus l2 w.
                auto Xb = obj.X().middleRows(Eigen::Index{3} * b, 3);
                Eigen::VectorXd out;
                obj.outputGradient(b, Xb * w, out);
                QCOMPARE(out.size(), Eigen::Index(3));
                Eigen::VectorXd viaOutput = Xb.transpose() * out + l2 * w;
                QVERIFY(relativeError(viaOutput, gb) < 1e-14);
                mean += gb / obj.batches();
                meanValue += obj.batchValue(b, w) / obj.batches();
            }
            // Finite sum: f and its gradient are the means over the batches.
            QVERIFY(relativeError(mean, g) < 1e-13);
            QVERIFY(std::abs(meanValue - obj.value(w)) < 1e-13 * std::max(1.0, obj.value(w)));
        }
    }

    void quadraticValueByHand() {
        Dataset data = randomData(8, 3, 4, false);
        LinearObjective obj(data, LossKind::Quadratic, 0.0, 4);
        Eigen::VectorXd w(3);
        w << 0.5, -1.0, 2.0;
        double sum = 0.0;
        for (int i = 0; i < 8; ++i) {
            double r = data.X.row(i).dot(w) - data.y[i];
            sum += r * r;
        }
        QVERIFY(std::abs(obj.value(w) - 0.5 * sum / 8.0) < 1e-14 * sum);
        // Logistic value by hand, with the regulariser.
        Dataset labels = randomData(8, 3, 4, true);
        LinearObjective logistic(labels, LossKind::Logistic, 0.2, 2);
        double total = 0.0;
        for (int i = 0; i < 8; ++i) {
            double z = labels.X.row(i).dot(w);
            total += std::log(1.0 + std::exp(z)) - labels.y[i] * z;
        }
        double expected = total / 8.0 + 0.1 * w.squaredNorm();
        QVERIFY(std::abs(logistic.value(w) - expected) < 1e-14);
    }

    void minimizer_data() {
        QTest::addColumn<bool>("logistic");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::addColumn<double>("l2");
        QTest::newRow("least squares") << false << 40 << 6 << 0.0;
        QTest::newRow("least squares, d > n") << false << 10 << 25 << 0.0;
        QTest::newRow("logistic l2 = 0") << true << 300 << 4 << 0.0;
        QTest::newRow("logistic l2 = 1e-3") << true << 60 << 8 << 1e-3;
        QTest::newRow("logistic l2 = 1, d > n") << true << 10 << 30 << 1.0;
    }
    void minimizer() {
        QFETCH(bool, logistic);
        QFETCH(int, rows);
        QFETCH(int, dim);
        QFETCH(double, l2);
        Dataset data = randomData(rows, dim, 17, logistic);
        LinearObjective obj(data, logistic ? LossKind::Logistic : LossKind::Quadratic, l2, rows);
        const Eigen::VectorXd& w = obj.minimizer();
        QCOMPARE(w.size(), Eigen::Index(dim));
        QVERIFY2(obj.gradient(w).norm() <= 1e-8,
                 qPrintable(QString("||grad f(w*)|| = %1").arg(obj.gradient(w).norm())));
        const double fStar = obj.optimum();
        QCOMPARE(fStar, obj.value(w));
        NumpyRandom rng(5);
        for (int trial = 0; trial < 20; ++trial) {
            Eigen::VectorXd delta = 1e-3 * rng.normalVector(dim);
            QVERIFY(obj.value(w + delta) >= fStar - 1e-15);
        }
        if (!logistic && dim > rows) {
            // Rank-deficient least squares: the minimum-norm solution, i.e. the pseudo-inverse's.
            Eigen::VectorXd pinv =
                data.X.jacobiSvd(Eigen::ComputeThinU | Eigen::ComputeThinV).solve(data.y);
            QVERIFY(relativeError(w, pinv) < 1e-9);
        }
    }

    void leastSquaresPaths_data() {
        QTest::addColumn<double>("kappa");
        QTest::addColumn<bool>("duplicateColumn");
        QTest::newRow("kappa 1e6 (normal equations)") << 1e6 << false;
        QTest::newRow("kappa 1e10 (pivoted QR)") << 1e10 << false;
        QTest::newRow("duplicate column (rank-deficient)") << 0.0 << true;
    }
    void leastSquaresPaths() {
        QFETCH(double, kappa);
        QFETCH(bool, duplicateColumn);
        SyntheticSpec spec;
        spec.kind = "tridiagonal";
        spec.rows = 120;
        spec.dim = 30;
        spec.seed = 77;
        spec.conditionNumber = kappa;
        spec.labelNoise = duplicateColumn ? 0.1 : 0.0;
        Dataset data = makeSynthetic(spec);
        if (duplicateColumn) {
            data.X.col(5) = data.X.col(4);
        }
        LinearObjective obj(data, LossKind::Quadratic, 0.0, 10);
        const Eigen::VectorXd& w = obj.minimizer();
        Eigen::VectorXd reference =
            data.X.jacobiSvd(Eigen::ComputeThinU | Eigen::ComputeThinV).solve(data.y);
        const double fRef = obj.value(reference);
        if (duplicateColumn) {
            // The minimum-norm minimiser splits the weight evenly over the two equal columns.
            QVERIFY(std::abs(w[4] - w[5]) < 1e-9 * std::abs(w[4]));
            QVERIFY(relativeError(w, reference) < 1e-9);
            QVERIFY(std::abs(obj.optimum() - fRef) <= 1e-12 * fRef);
        } else {
            // Noise-free labels: f* is zero up to rounding, and w reproduces y.
            QVERIFY2(obj.optimum() <= 1e-20, qPrintable(QString("f* = %1").arg(obj.optimum())));
            QVERIFY(relativeError(w, reference) < 1e-12 * kappa);
        }
    }

    void separableLogisticThrows() {
        Dataset data = randomData(20, 5, 8, true);
        Eigen::VectorXd direction = Eigen::VectorXd::LinSpaced(5, 1.0, -1.0);
        for (int i = 0; i < 20; ++i) {
            data.y[i] = data.X.row(i).dot(direction) > 0.0 ? 1.0 : 0.0;
        }
        LinearObjective obj(data, LossKind::Logistic, 0.0, 10);
        EXPECT_THROW_WITH(DataError, obj.optimum(), "separable");
        // A regulariser makes the minimiser exist.
        LinearObjective regularised(data, LossKind::Logistic, 1e-2, 10);
        QVERIFY(regularised.gradient(regularised.minimizer()).norm() <= 1e-8);
    }

    void smoothness() {
        Dataset quad = randomData(30, 7, 2, false);
        LinearObjective q(quad, LossKind::Quadratic, 0.0, 10);
        double expected = sigmaMaxSquaredOverN(quad.X);
        QVERIFY(std::abs(q.smoothness() - expected) <= 1e-12 * expected);
        // Quadratic: L is the largest Hessian eigenvalue, the Hessian being X^T X / n.
        Eigen::MatrixXd H = quad.X.transpose() * quad.X / 30.0;
        double hessianMax = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(H).eigenvalues()[6];
        QVERIFY(std::abs(q.smoothness() - hessianMax) <= 1e-12 * expected);

        Dataset logi = randomData(30, 7, 2, true);
        LinearObjective l(logi, LossKind::Logistic, 0.05, 10);
        double bound = 0.25 * sigmaMaxSquaredOverN(logi.X) + 0.05;
        QVERIFY(std::abs(l.smoothness() - bound) <= 1e-12 * bound);

        // Known constants skip the computation.
        q.setSmoothness(3.0);
        QCOMPARE(q.smoothness(), 3.0);
    }

    void gramPaths_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::newRow("50 x 2000") << 50 << 2000;
        QTest::newRow("2000 x 50") << 2000 << 50;
        QTest::newRow("300 x 400 (restarts)") << 300 << 400;
    }
    void gramPaths() {
        QFETCH(int, rows);
        QFETCH(int, cols);
        NumpyRandom rng(123);
        Eigen::MatrixXd X = rng.normalMatrix(rows, cols);
        const double exact = largestEigenvalueOfGramExact(X);
        const double iterative = largestEigenvalueOfGramIterative(X);
        QVERIFY2(std::abs(exact - iterative) <= 1e-10 * exact,
                 qPrintable(QString("exact %1, iterative %2")
                                .arg(exact, 0, 'g', 17)
                                .arg(iterative, 0, 'g', 17)));
        QVERIFY(std::abs(exact - sigmaMaxSquaredOverN(X)) <= 1e-12 * exact);
        QCOMPARE(largestEigenvalueOfGram(X), exact);  // below the size limit: the exact path
        QCOMPARE(largestEigenvalueOfGramIterative(Eigen::MatrixXd::Zero(4, 3)), 0.0);
    }

    void gramIterativeLargeKnownSpectrum() {
        // min(n, d) > 1500 selects the iterative path; a diagonal X with a close top pair
        // (1600 vs 1599) has a known lambda_max and needs many restarts.
        const int n = 1600;
        Eigen::MatrixXd X = Eigen::MatrixXd::Zero(n, n);
        for (int i = 0; i < n; ++i) {
            X(i, i) = std::sqrt(static_cast<double>(n) * (i + 1));
        }
        auto start = std::chrono::steady_clock::now();
        double lambda = largestEigenvalueOfGram(X);
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("lambda_max = %.17g in %.2f s", lambda, seconds);
        QVERIFY2(std::abs(lambda - n) <= 1e-10 * n, qPrintable(QString::number(lambda, 'g', 17)));
    }

    void goldenConstants_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("pd-quadratic-S4") << "pd-quadratic-S4";
        QTest::newRow("pd-logistic-S5") << "pd-logistic-S5";
        QTest::newRow("localsgd-quadratic-S4-R4-H2") << "localsgd-quadratic-S4-R4-H2";
        QTest::newRow("filldrain-S4-N6") << "filldrain-S4-N6";
    }
    void goldenConstants() {
        QFETCH(QString, name);
        const std::string dir = std::string(PIPELENS_GOLDEN_DIR) + "/" + name.toStdString();
        std::ifstream in(dir + "/case.json");
        QVERIFY(in.good());
        nlohmann::json spec = nlohmann::json::parse(in);
        const std::string kind = spec["objective"]["kind"].get<std::string>();
        const bool logistic = kind == "logistic";
        const double l2 = spec["objective"].value("l2", 0.0);
        const int batch = spec["batch_size"].get<int>();
        // The fill-drain case has no objective of its own; its data and constants are quadratic.
        LinearObjective obj(loadNpyPair(dir + "/X.npy", dir + "/y.npy"),
                            logistic ? LossKind::Logistic : LossKind::Quadratic, l2, batch);
        QCOMPARE(obj.batches(), spec["dataset_batches"].get<int>());

        const double L = spec["L"].get<double>();
        QVERIFY2(std::abs(obj.smoothness() - L) <= 1e-9 * L,
                 qPrintable(QString("L = %1, case.json %2")
                                .arg(obj.smoothness(), 0, 'g', 17)
                                .arg(L, 0, 'g', 17)));
        const double fStar = spec["f_star"].get<double>();
        const double ours = obj.optimum();
        if (logistic) {
            QVERIFY2(
                std::abs(ours - fStar) <= 1e-9 * fStar,
                qPrintable(
                    QString("f* = %1, case.json %2").arg(ours, 0, 'g', 17).arg(fStar, 0, 'g', 17)));
        } else {
            QVERIFY2(std::abs(ours - fStar) <= 1e-12,
                     qPrintable(QString("f* = %1, case.json %2").arg(ours).arg(fStar)));
        }
        QVERIFY(obj.gradient(obj.minimizer()).norm() <= 1e-10);
    }

    void blocks() {
        auto sizes = [](int d, int s) {
            std::vector<int> out;
            int offset = 0;
            for (const BlockRange& b : splitBlocks(d, s)) {
                if (b.offset != offset) {
                    return std::vector<int>{-1};
                }
                out.push_back(b.size);
                offset += b.size;
            }
            if (offset != d) {
                return std::vector<int>{-2};
            }
            return out;
        };
        QCOMPARE(sizes(10, 3), (std::vector<int>{4, 3, 3}));
        QCOMPARE(sizes(26, 4), (std::vector<int>{7, 7, 6, 6}));
        QCOMPARE(sizes(17, 5), (std::vector<int>{4, 4, 3, 3, 3}));
        QCOMPARE(sizes(20, 4), (std::vector<int>{5, 5, 5, 5}));
        QCOMPARE(sizes(5, 5), (std::vector<int>{1, 1, 1, 1, 1}));
        QCOMPARE(sizes(7, 1), (std::vector<int>{7}));
        EXPECT_THROW_WITH(ConfigError, splitBlocks(3, 4), "stages = 4");
        EXPECT_THROW_WITH(ConfigError, splitBlocks(3, 0), "stages = 0");
    }

    void constructorValidation() {
        Dataset data = randomData(12, 4, 1, false);
        EXPECT_THROW_WITH(ConfigError, LinearObjective(data, LossKind::Quadratic, 0.0, 5),
                          "batch_size = 5");
        EXPECT_THROW_WITH(ConfigError, LinearObjective(data, LossKind::Quadratic, 0.0, 0),
                          "batch_size = 0");
        EXPECT_THROW_WITH(ConfigError, LinearObjective(data, LossKind::Logistic, -0.5, 4),
                          "l2 = -0.5");
        Dataset shortY = data;
        shortY.y.conservativeResize(10);
        EXPECT_THROW_WITH(DataError, LinearObjective(shortY, LossKind::Quadratic, 0.0, 4),
                          "X has 12 rows, y has 10 entries");
        Dataset badLabels = randomData(12, 4, 1, true);
        badLabels.y[3] = 2.0;
        EXPECT_THROW_WITH(DataError, LinearObjective(badLabels, LossKind::Logistic, 0.0, 4),
                          "row 3 has y = 2");
        Dataset nan = data;
        nan.X(1, 1) = std::nan("");
        EXPECT_THROW_WITH(DataError, LinearObjective(nan, LossKind::Quadratic, 0.0, 4), "NaN");
        QCOMPARE(parseLossKind("logistic"), LossKind::Logistic);
        EXPECT_THROW_WITH(ConfigError, parseLossKind("hinge"), "\"hinge\"");
    }
};

QTEST_APPLESS_MAIN(TestObjective)
#include "tst_objective.moc"

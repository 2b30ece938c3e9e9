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
#include "objective/gram_spectrum.hpp"
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

SyntheticSpec syntheticSpec(const std::string& kind, int rows, int dim, std::uint64_t seed) {
    SyntheticSpec spec;
    spec.kind = kind;
    spec.rows = rows;
    spec.dim = dim;
    spec.seed = seed;
    return spec;
}

Dataset randomData(int n, int d, std::uint64_t seed, bool logistic, double noise = 0.3) {
    SyntheticSpec spec = syntheticSpec(logistic ? "logistic" : "random", n, d, seed);
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
    Eigen::BDCSVD<Eigen::MatrixXd> svd(X);
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

    // Newton-CG (the default) against Newton with a factorised Hessian at every step (the
    // reference): both reach gradient norm <= 1e-10 and the same f*.
    void logisticNewtonCgMatchesDense_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::addColumn<double>("l2");
        QTest::addColumn<double>("scale");  // of X; 1 keeps the generator's nearly separable data
        QTest::newRow("600 x 512, l2 = 1e-4 (the benchmark)") << 600 << 512 << 1e-4 << 1.0;
        QTest::newRow("400 x 50, l2 = 1e-3") << 400 << 50 << 1e-3 << 0.3;
        QTest::newRow("300 x 4, l2 = 0") << 300 << 4 << 0.0 << 0.3;
        QTest::newRow("100 x 300, l2 = 1e-2 (d > n)") << 100 << 300 << 1e-2 << 1.0;
    }
    void logisticNewtonCgMatchesDense() {
        QFETCH(int, rows);
        QFETCH(int, dim);
        QFETCH(double, l2);
        QFETCH(double, scale);
        Dataset data = makeSynthetic(syntheticSpec("logistic", rows, dim, 11));
        data.X *= scale;
        LinearObjective obj(std::move(data), LossKind::Logistic, l2, 1);
        NewtonReport cg;
        NewtonReport dense;
        const Eigen::VectorXd wCg = solveLogisticMinimizer(obj, NewtonSteps::Auto, &cg);
        const Eigen::VectorXd wDense = solveLogisticMinimizer(obj, NewtonSteps::Dense, &dense);
        QVERIFY2(obj.gradient(wCg).norm() <= 1e-10,
                 qPrintable(QString::number(obj.gradient(wCg).norm())));
        QVERIFY2(obj.gradient(wDense).norm() <= 1e-10,
                 qPrintable(QString::number(obj.gradient(wDense).norm())));
        QCOMPARE(cg.denseSteps, 0);
        QVERIFY(cg.hessianProducts > 0);
        QCOMPARE(dense.denseSteps, dense.iterations);
        QCOMPARE(dense.hessianProducts, 0);
        const double fCg = obj.value(wCg);
        const double fDense = obj.value(wDense);
        QVERIFY2(
            std::abs(fCg - fDense) <= 1e-15 + 1e-13 * fDense,
            qPrintable(
                QString("f* %1 (CG), %2 (dense)").arg(fCg, 0, 'g', 17).arg(fDense, 0, 'g', 17)));
        if (l2 > 0.0) {
            // l2-strong convexity: ||w - w*|| <= ||grad f(w)|| / l2 for both points.
            QVERIFY((wCg - wDense).norm() <= 2e-10 / l2);
        }
        QCOMPARE(obj.optimum(), fCg);  // the objective's f* comes from the Newton-CG path
    }

    // A Hessian that diagonal scaling cannot condition (correlated features, cond 1e8): conjugate
    // gradients exceed their budget and Newton finishes with factorised steps.
    void logisticIllConditionedUsesDenseSteps() {
        SyntheticSpec spec = syntheticSpec("tridiagonal", 200, 40, 5);
        spec.conditionNumber = 1e8;
        spec.labelNoise = 5.0;
        Dataset data = makeSynthetic(spec);
        for (Eigen::Index i = 0; i < data.y.size(); ++i) {
            data.y[i] = data.y[i] > 0.0 ? 1.0 : 0.0;  // noisy signs: not separable
        }
        LinearObjective obj(std::move(data), LossKind::Logistic, 1e-8, 10);
        NewtonReport cg;
        NewtonReport dense;
        const Eigen::VectorXd w = solveLogisticMinimizer(obj, NewtonSteps::Auto, &cg);
        const Eigen::VectorXd wDense = solveLogisticMinimizer(obj, NewtonSteps::Dense, &dense);
        QVERIFY2(
            cg.denseSteps > 0,
            qPrintable(
                QString("%1 products, %2 iterations").arg(cg.hessianProducts).arg(cg.iterations)));
        QVERIFY(obj.gradient(w).norm() <= 1e-10);
        QVERIFY(obj.gradient(wDense).norm() <= 1e-10);
        QVERIFY(std::abs(obj.value(w) - obj.value(wDense)) <= 1e-15 + 1e-13 * obj.value(wDense));
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
        QTest::addColumn<int>("basis");
        QTest::newRow("50 x 2000") << 50 << 2000 << 128;
        QTest::newRow("2000 x 50") << 2000 << 50 << 128;
        QTest::newRow("300 x 400") << 300 << 400 << 128;
        QTest::newRow("300 x 400, basis 12 (restarts)") << 300 << 400 << 12;
        QTest::newRow("600 x 512") << 600 << 512 << 128;
    }
    void gramPaths() {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, basis);
        NumpyRandom rng(123);
        Eigen::MatrixXd X = rng.normalMatrix(rows, cols);
        const double exact = largestEigenvalueOfGramExact(X);
        QVERIFY(std::abs(exact - sigmaMaxSquaredOverN(X)) <= 1e-12 * exact);
        const GramEigenBound bound = largestEigenvalueOfGramBound(X, 1e-10, 20000, false, basis);
        const QString figures = QString("exact %1, Ritz %2, bound %3, %4 products")
                                    .arg(exact, 0, 'g', 17)
                                    .arg(bound.ritz, 0, 'g', 17)
                                    .arg(bound.upper(), 0, 'g', 17)
                                    .arg(bound.products);
        QVERIFY2(bound.tight(1e-10), qPrintable(figures));
        // A Rayleigh quotient never exceeds lambda_max; the bound never falls below it and
        // exceeds it by at most the tolerance (1e-13: the exact solver's own rounding).
        QVERIFY2(bound.ritz <= exact * (1.0 + 1e-13), qPrintable(figures));
        QVERIFY2(bound.upper() >= exact * (1.0 - 1e-13), qPrintable(figures));
        QVERIFY2(bound.upper() <= exact * (1.0 + 1e-10 + 1e-13), qPrintable(figures));
        const double chosen = largestEigenvalueOfGram(X);
        QVERIFY(chosen >= exact * (1.0 - 1e-13) && chosen <= exact * (1.0 + 1e-10 + 1e-13));
        if (std::min(rows, cols) <= 128) {
            QCOMPARE(chosen, exact);  // small Grams: the exact path
        }
        QCOMPARE(largestEigenvalueOfGramBound(Eigen::MatrixXd::Zero(4, 3), 1e-10, 100).upper(),
                 0.0);
    }

    // L of the objective against the dense eigenvalue on every kind of synthetic data, tall and
    // wide, including a clustered top of the spectrum (tridiagonal) where Lanczos gives up.
    void smoothnessAgainstExact_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::newRow("logistic 600 x 512") << "logistic" << 600 << 512;
        QTest::newRow("logistic 200 x 400") << "logistic" << 200 << 400;
        QTest::newRow("random 1000 x 150") << "random" << 1000 << 150;
        QTest::newRow("random 600 x 512") << "random" << 600 << 512;
        QTest::newRow("simple 600 x 512") << "simple" << 600 << 512;
        QTest::newRow("simple 300 x 64") << "simple" << 300 << 64;
        QTest::newRow("tridiagonal 600 x 512") << "tridiagonal" << 600 << 512;
        QTest::newRow("tridiagonal 400 x 200") << "tridiagonal" << 400 << 200;
    }
    void smoothnessAgainstExact() {
        QFETCH(QString, kind);
        QFETCH(int, rows);
        QFETCH(int, dim);
        Dataset data = makeSynthetic(syntheticSpec(kind.toStdString(), rows, dim, 3));
        const double exact = largestEigenvalueOfGramExact(data.X);
        const bool logistic = kind == "logistic";
        LinearObjective obj(std::move(data), logistic ? LossKind::Logistic : LossKind::Quadratic,
                            logistic ? 1e-4 : 0.0, 10);
        const double expected = logistic ? 0.25 * exact + 1e-4 : exact;
        const double L = obj.smoothness();
        const QString figures =
            QString("L %1, exact %2").arg(L, 0, 'g', 17).arg(expected, 0, 'g', 17);
        QVERIFY2(L >= expected * (1.0 - 1e-13), qPrintable(figures));
        QVERIFY2(L <= expected * (1.0 + 1e-10 + 1e-13), qPrintable(figures));
        if (kind == "simple") {
            QVERIFY(std::abs(exact - std::min(rows, dim)) <= 1e-12 * exact);  // planted spectrum
        }
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
        // Above the dense limit L is the Lanczos upper bound: at most 1e-10 above lambda_max.
        QVERIFY2(lambda >= n * (1.0 - 1e-13) && lambda <= n * (1.0 + 1e-10 + 1e-13),
                 qPrintable(QString::number(lambda, 'g', 17)));
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

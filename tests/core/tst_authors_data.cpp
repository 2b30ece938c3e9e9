// The synthetic data sets against the paper authors' generator (issue #30, SPEC sections 1 and
// 6): makeSynthetic must give, to rounding, the X and y that tools/authors_synthetic.py (an
// independent NumPy script following the authors' construction) writes. Cases that need no
// Python pin a few values and E2's smoothness constant.
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>
#include <QtTest>

#include <Eigen/Dense>
#include <cmath>
#include <string>

#include "data/loaders.hpp"
#include "data/synthetic.hpp"
#include "objective/gram_spectrum.hpp"
#include "objective/linear_objective.hpp"

using namespace pipelens;

namespace {

const char* const kPython = "/usr/bin/python3";

// max |a - b| / max |b|: the relative distance the tests bound.
double relativeMaxError(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// Runs `program args`; "" on success, else what went wrong with its output.
QString runProcess(const QString& program, const QStringList& args) {
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, args);
    if (!process.waitForStarted(10000)) {
        return "could not start " + program;
    }
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
        return program + " did not finish in 120 s";
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        return program + " " + args.join(' ') + " failed: " + QString::fromUtf8(process.readAll());
    }
    return {};
}

}  // namespace

class TestAuthorsData : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString numpyMissing_;  // why the NumPy cases are skipped; empty when they run

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        if (!QFileInfo(kPython).isExecutable()) {
            numpyMissing_ = QString(kPython) + " is not installed";
            return;
        }
        if (!runProcess(kPython, {"-c", "import numpy"}).isEmpty()) {
            numpyMissing_ = QString(kPython) + " has no numpy (Debian: apt install python3-numpy)";
        }
    }

    void matchesAuthorsScript_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::addColumn<int>("seed");
        QTest::addColumn<double>("kappa");
        QTest::addColumn<double>("noise");
        QTest::newRow("tridiagonal 600 x 512 seed 0 (E3)")
            << "tridiagonal" << 600 << 512 << 0 << 0.0 << 0.0;
        QTest::newRow("tridiagonal 40 x 12 kappa 100, noise")
            << "tridiagonal" << 40 << 12 << 7 << 100.0 << 0.3;
        QTest::newRow("simple 200 x 50") << "simple" << 200 << 50 << 0 << 0.0 << 0.0;
        QTest::newRow("simple 30 x 60 (wide), noise") << "simple" << 30 << 60 << 3 << 0.0 << 0.5;
        QTest::newRow("random 2000 x 512 seed 0 (E2)")
            << "random" << 2000 << 512 << 0 << 0.0 << 0.0;
    }
    void matchesAuthorsScript() {
        QFETCH(QString, kind);
        QFETCH(int, rows);
        QFETCH(int, dim);
        QFETCH(int, seed);
        QFETCH(double, kappa);
        QFETCH(double, noise);
        if (!numpyMissing_.isEmpty()) {
            QSKIP(qPrintable(numpyMissing_ + ": the NumPy reference cannot be made"));
        }
        const QString out =
            tmp_.path() + QString("/%1-%2x%3-%4").arg(kind).arg(rows).arg(dim).arg(seed);
        QStringList args{QString(PIPELENS_SOURCE_DIR) + "/tools/authors_synthetic.py",
                         "--kind",
                         kind,
                         "--rows",
                         QString::number(rows),
                         "--dim",
                         QString::number(dim),
                         "--seed",
                         QString::number(seed),
                         "--label-noise",
                         QString::number(noise, 'g', 17),
                         "--out",
                         out};
        if (kappa > 0.0) {
            args << "--condition-number" << QString::number(kappa, 'g', 17);
        }
        const QString failure = runProcess(kPython, args);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        const Dataset reference =
            loadNpyPair((out + "/X.npy").toStdString(), (out + "/y.npy").toStdString());

        SyntheticSpec spec;
        spec.kind = kind.toStdString();
        spec.rows = rows;
        spec.dim = dim;
        spec.seed = static_cast<std::uint64_t>(seed);
        spec.conditionNumber = kappa;
        spec.labelNoise = noise;
        const Dataset data = makeSynthetic(spec);
        QCOMPARE(data.X.rows(), reference.X.rows());
        QCOMPARE(data.X.cols(), reference.X.cols());
        QCOMPARE(data.y.size(), reference.y.size());
        const double errX = relativeMaxError(data.X, reference.X);
        const double errY = relativeMaxError(data.y, reference.y);
        qInfo("%s: max |X - X_ref| / max |X_ref| = %.3g, the same for y = %.3g", qPrintable(kind),
              errX, errY);
        QVERIFY2(errX <= 1e-12, qPrintable(QString("X differs by %1 (relative)").arg(errX)));
        QVERIFY2(errY <= 1e-12, qPrintable(QString("y differs by %1 (relative)").arg(errY)));
    }

    void tridiagonalPinnedEntries() {
        // Values from tools/authors_synthetic.py --kind tridiagonal --rows 600 --dim 512
        // --seed 0 (E3's data); max |X| = 6.30, max |y| = 111.8.
        SyntheticSpec spec;
        spec.kind = "tridiagonal";
        spec.rows = 600;
        spec.dim = 512;
        spec.seed = 0;
        const Dataset data = makeSynthetic(spec);
        struct Entry {
            int row;
            int col;
            double value;
        };
        const Entry xs[] = {{0, 0, -0.18638667953402266},   {0, 1, -0.06933425439798513},
                            {0, 511, 1.33494969568595},     {1, 0, 0.8063810966777745},
                            {300, 256, 1.7760249265079775}, {599, 510, 0.38905708162277597},
                            {599, 511, 0.6346526630795366}};
        for (const Entry& e : xs) {
            const double got = data.X(e.row, e.col);
            QVERIFY2(std::abs(got - e.value) <= 1e-12 * 6.3,
                     qPrintable(QString("X(%1, %2) = %3, the authors' generator gives %4")
                                    .arg(e.row)
                                    .arg(e.col)
                                    .arg(got, 0, 'g', 17)
                                    .arg(e.value, 0, 'g', 17)));
        }
        const Entry ys[] = {
            {0, 0, -41.23514546433497}, {1, 0, 4.7506683827905745}, {599, 0, 28.691242057521702}};
        for (const Entry& e : ys) {
            const double got = data.y[e.row];
            QVERIFY2(std::abs(got - e.value) <= 1e-12 * 111.8,
                     qPrintable(QString("y[%1] = %2, the authors' generator gives %3")
                                    .arg(e.row)
                                    .arg(got, 0, 'g', 17)
                                    .arg(e.value, 0, 'g', 17)));
        }
    }

    void simplePinnedEntries() {
        // tools/authors_synthetic.py --kind simple --rows 30 --dim 60 --seed 0.
        SyntheticSpec spec;
        spec.kind = "simple";
        spec.rows = 30;
        spec.dim = 60;
        spec.seed = 0;
        const Dataset data = makeSynthetic(spec);
        QVERIFY(std::abs(data.X(0, 0) - 3.9874606533888324) <= 1e-12 * 4.0);
        QVERIFY(std::abs(data.X(29, 59) - 2.081746869600661) <= 1e-12 * 4.0);
    }

    void e2RandomQuadraticSmoothness() {
        // E2's data (random, n = 2000, d = 512, seed 0): the authors' notebook prints
        // L = 2.2469060432964114. PipeLens's dense eigensolver must agree to 1e-12 (relative);
        // the objective's L (a Lanczos upper bound at this size) may lie above it by at most
        // its documented 1e-10, never below.
        SyntheticSpec spec;
        spec.kind = "random";
        spec.rows = 2000;
        spec.dim = 512;
        spec.seed = 0;
        const LinearObjective objective(makeSynthetic(spec), LossKind::Quadratic, 0.0, 1);
        const double want = 2.2469060432964114;
        const double exact = largestEigenvalueOfGramExact(objective.X());
        QVERIFY2(std::abs(exact - want) <= 1e-12 * want,
                 qPrintable(QString("lambda_max(X^T X / n) = %1, the notebook's %2")
                                .arg(exact, 0, 'g', 17)
                                .arg(want, 0, 'g', 17)));
        const double L = objective.smoothness();
        QVERIFY2(L >= exact * (1.0 - 1e-15) && L <= exact * (1.0 + 1e-10),
                 qPrintable(
                     QString("L = %1, lambda_max = %2").arg(L, 0, 'g', 17).arg(exact, 0, 'g', 17)));
    }
};

QTEST_GUILESS_MAIN(TestAuthorsData)
#include "tst_authors_data.moc"

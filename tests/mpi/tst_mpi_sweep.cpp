// `mpirun -np P pipelens-cli sweep` against the single-process sweep: the same folder, every
// file byte for byte, with 2 processes and with 3 on this 2-core machine (--oversubscribe); a
// run killed part way and resumed skips the points it had finished and still ends identical;
// a point that fails names the point and the rank, and the job exits non-zero.
#include <QFileInfo>
#include <QtTest>

#include <QTemporaryDir>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "folder_snapshot.hpp"
#include "mpi_test_support.hpp"

using nlohmann::json;
using pipelens::test::ProcessResult;
using pipelens::test::runMpi;
using pipelens::test::runProcess;
namespace fs = std::filesystem;

namespace {

// Six points of uneven cost (S = 2 ... 8), three methods, a tuned grid, two seeds.
json smallSweep(const std::string& dataX = "") {
    json experiment = json::parse(R"({
        "name": "mpi-small", "backend": "cpu", "stages": 4, "batch_size": 10,
        "data": {"kind": "random", "rows": 60, "dim": 8, "seed": 2},
        "budget": {"epochs": 2},
        "methods": [
            {"method": "pd", "step_size": {"grid": [-6, -2]}},
            {"method": "rpd", "step_size": 0.05, "delta": 6},
            {"method": "localsgd", "step_size": 0.05, "local_steps": 2}
        ]})");
    if (!dataX.empty()) experiment["data"] = {{"source", "csv"}, {"x", dataX}};
    return {{"name", "mpi-small"},
            {"seeds", 2},
            {"experiment", experiment},
            {"axis", {{"name", "stages"}, {"values", {2, 3, 4, 5, 6, 8}}}}};
}

// Eight heavier points for the kill-and-resume test: a run lasts long enough to be cut short.
constexpr int kSlowPoints = 16;

json slowSweep() {
    json s = smallSweep();
    // Enough points, each slow enough, that a kill after the first one lands mid-run even on a
    // fast or idle machine.
    s["experiment"]["data"] = {{"kind", "random"}, {"rows", 2000}, {"dim", 64}, {"seed", 3}};
    s["experiment"]["budget"] = {{"epochs", 12}};
    json values = json::array();
    for (int v = 2; v < 2 + kSlowPoints; ++v) values.push_back(v);
    s["axis"]["values"] = values;
    return s;
}

QString writeSweep(const QTemporaryDir& dir, const QString& name, const json& sweep) {
    QString path = dir.filePath(name);
    std::ofstream(path.toStdString()) << sweep.dump(2);
    return path;
}

std::map<std::string, std::string> snapshot(const QString& dir) {
    return pipelens::test::snapshotFolder(dir.toStdString());
}

// Names the first file that differs, so a failure says where.
void compareFolders(const QString& expected, const QString& actual) {
    const auto a = snapshot(expected);
    const auto b = snapshot(actual);
    QStringList names;
    for (const auto& [name, text] : a) names << QString::fromStdString(name);
    QStringList namesB;
    for (const auto& [name, text] : b) namesB << QString::fromStdString(name);
    QCOMPARE(namesB, names);
    for (const auto& [name, text] : a) {
        QVERIFY2(b.at(name) == text, qPrintable(QString::fromStdString(name) + " differs"));
    }
}

int pointsPerRankSum(const QString& err) {
    const auto m = QRegularExpression("points computed per rank:([ 0-9]+)").match(err);
    int sum = 0;
    for (const QString& n : m.captured(1).split(' ', Qt::SkipEmptyParts)) sum += n.toInt();
    return sum;
}

QStringList pointFiles(const QString& dir) {
    return QDir(dir + "/points").entryList({"point-*.json"}, QDir::Files, QDir::Name);
}

}  // namespace

class TstMpiSweep : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        sweep_ = writeSweep(tmp_, "small-sweep.json", smallSweep());
        reference_ = tmp_.filePath("one-process");
        const ProcessResult r =
            runProcess(PIPELENS_CLI_PATH, {"sweep", sweep_, "--out", reference_, "--quiet"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    }

    void sameFolderAsOneProcess_data() {
        QTest::addColumn<int>("ranks");
        QTest::newRow("np 2") << 2;
        QTest::newRow("np 3 (oversubscribed)") << 3;
    }

    void sameFolderAsOneProcess() {
        QFETCH(int, ranks);
        const QString out = tmp_.filePath(QString("np%1").arg(ranks));
        const ProcessResult r = runMpi(ranks, PIPELENS_CLI_PATH, {"sweep", sweep_, "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(QString("sweep over %1 MPI processes").arg(ranks)),
                 qPrintable(r.err));
        QCOMPARE(pointsPerRankSum(r.err), 6);
        compareFolders(reference_, out);
        QCOMPARE(snapshot(out).size(), std::size_t{4 + 6});  // sweep.json, marker, summaries
    }

    void killedRunResumesSkippingFinishedPoints() {
        const QString sweep = writeSweep(tmp_, "slow-sweep.json", slowSweep());
        const QString reference = tmp_.filePath("slow-one-process");
        const ProcessResult one =
            runProcess(PIPELENS_CLI_PATH, {"sweep", sweep, "--out", reference, "--quiet"});
        QVERIFY2(one.exitCode == 0, qPrintable(one.err));

        // Kill the job (mpirun ends every rank) as soon as a point is in the folder.
        const QString out = tmp_.filePath("slow-np2");
        QProcess job;
        job.start(PIPELENS_MPIEXEC, pipelens::test::mpirunArgs(2)
                                        << PIPELENS_CLI_PATH << "sweep" << sweep << "--out" << out
                                        << "--quiet");
        QVERIFY(job.waitForStarted(10000));
        QElapsedTimer waited;
        waited.start();
        while (pointFiles(out).isEmpty() && waited.elapsed() < 120000 &&
               job.state() == QProcess::Running) {
            QTest::qWait(10);
        }
        job.terminate();
        QVERIFY(job.waitForFinished(60000));
        const QStringList before = pointFiles(out);
        QVERIFY2(!before.isEmpty(), "no point finished before the job ended");
        QVERIFY2(before.size() < kSlowPoints, "the job finished before it could be killed");
        std::map<QString, fs::file_time_type> written;
        for (const QString& f : before) {
            written[f] = fs::last_write_time((out + "/points/" + f).toStdString());
        }

        QTest::qWait(20);  // a rewritten file would get a later time
        const ProcessResult resumed =
            runMpi(2, PIPELENS_CLI_PATH, {"sweep", sweep, "--out", out, "--resume"});
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
        QCOMPARE(pointsPerRankSum(resumed.err), kSlowPoints - static_cast<int>(before.size()));
        for (const auto& [f, time] : written) {
            QVERIFY2(fs::last_write_time((out + "/points/" + f).toStdString()) == time,
                     qPrintable(f + " was computed again"));
        }
        // A kill can land between writing a file's temporary copy and renaming it (a point or a
        // summary): such a leftover is not a result (resume ignores it), so it goes before
        // comparing.
        for (const QString& sub : {QString(), QString("/points")}) {
            for (const QString& f : QDir(out + sub).entryList({"*.tmp-*"}, QDir::Files)) {
                QFile::remove(out + sub + "/" + f);
            }
        }
        compareFolders(reference, out);
        QCOMPARE(snapshot(out).size(), std::size_t{4 + kSlowPoints});
    }

    void failingPointNamesPointAndRank() {
        // No such data file: reading the sweep does not open it, so each point fails as it runs.
        const QString data = tmp_.filePath("missing.csv");
        const QString sweep =
            writeSweep(tmp_, "failing-sweep.json", smallSweep(data.toStdString()));
        const ProcessResult r = runMpi(3, PIPELENS_CLI_PATH,
                                       {"sweep", sweep, "--out", tmp_.filePath("failing")}, 60000);
        QVERIFY2(r.exitCode > 0, qPrintable("exit " + QString::number(r.exitCode) + "\n" + r.err));
        QVERIFY2(r.err.contains(QRegularExpression(
                     "sweep point [0-5] \\(stages = [0-9]\\) failed on rank [0-2]: .*missing")),
                 qPrintable(r.err));
        // No point finished: the folder this run created is gone, so it blocks no rerun, and
        // nothing suggests --resume (issue 28; tst_cli_messages covers the hint after a point).
        QVERIFY2(!QFileInfo::exists(tmp_.filePath("failing")), qPrintable(r.err));
        QVERIFY2(!r.err.contains("--resume"), qPrintable(r.err));
    }

    void resumeRefusedWithoutFlagOnEveryRank() {
        // Rank 0 cannot open the folder: every rank stops, the message is the single-process one.
        const ProcessResult r =
            runMpi(2, PIPELENS_CLI_PATH, {"sweep", sweep_, "--out", reference_}, 60000);
        QVERIFY(r.exitCode > 0);
        QVERIFY2(r.err.contains("already holds a sweep: pass --resume"), qPrintable(r.err));
        QCOMPARE(r.err.count("already holds a sweep"), 1);  // printed by rank 0 alone
    }

  private:
    QTemporaryDir tmp_;
    QString sweep_;
    QString reference_;
};

QTEST_GUILESS_MAIN(TstMpiSweep)
#include "tst_mpi_sweep.moc"

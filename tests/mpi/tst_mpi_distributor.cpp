// The MPI work distributor on its own, through mpi_work_probe (fake items that sleep for chosen
// times) under mpirun: every item is computed once and its result arrives intact, items are
// handed out as ranks become free (a slow item does not hold back the others), one rank works
// alone, and a failing item stops every rank with an error naming the item and the rank.
#include <QtTest>

#include <QTemporaryDir>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "mpi_test_support.hpp"

using nlohmann::json;
using pipelens::test::ProcessResult;
using pipelens::test::runMpi;

namespace {

QString durations(int first, int count, int others) {
    QStringList d{QString::number(first)};
    for (int i = 1; i < count; ++i) d << QString::number(others);
    return d.join(',');
}

ProcessResult probe(int ranks, const QStringList& args) {
    return runMpi(ranks, PIPELENS_MPI_PROBE_PATH, args);
}

json parseReport(const ProcessResult& r) {
    return json::parse(r.out.trimmed().toStdString());
}

// How many items each rank computed.
std::map<int, int> itemsPerRank(const json& report) {
    std::map<int, int> n;
    for (int r : report["rank_of_item"]) ++n[r];
    return n;
}

}  // namespace

class TstMpiDistributor : public QObject {
    Q_OBJECT

  private slots:
    void everyItemOnceWithItsResultIntact() {
        // 1 MiB results go through MPI's rendezvous protocol, not the small-message path.
        const ProcessResult r =
            probe(3, {"--durations-ms", durations(10, 12, 10), "--payload-bytes", "1048576"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const json report = parseReport(r);
        QCOMPARE(report["size"].get<int>(), 3);
        QCOMPARE(report["finished"].size(), std::size_t{12});
        std::set<std::size_t> seen;
        for (const json& f : report["finished"]) {
            const std::size_t item = f["item"];
            QVERIFY2(seen.insert(item).second, "an item was passed on twice");
            QVERIFY(f["payload_intact"].get<bool>());
            const int rank = report["rank_of_item"][item];
            QCOMPARE(QString::fromStdString(f["head"]),
                     QString("item %1 rank %2|").arg(item).arg(rank));
        }
        QCOMPARE(seen.size(), std::size_t{12});
    }

    void slowItemDoesNotHoldBackTheOthers() {
        // Item 0 sleeps 1.5 s, the 24 others 25 ms: handed out one at a time, the rank with the
        // slow item does nothing else while the other two share the rest (a static split in
        // thirds would give it 8 items). Its result is passed on last.
        const ProcessResult r = probe(3, {"--durations-ms", durations(1500, 25, 25)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const json report = parseReport(r);
        const int slowRank = report["rank_of_item"][0];
        const auto perRank = itemsPerRank(report);
        QCOMPARE(perRank.at(slowRank), 1);
        QCOMPARE(perRank.size(), std::size_t{3});  // rank 0 computes too
        QCOMPARE(report["finished"].back()["item"].get<int>(), 0);
    }

    void coordinatorOnlyHandsOut() {
        const ProcessResult r =
            probe(3, {"--durations-ms", durations(1500, 25, 25), "--coordinator-only"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const json report = parseReport(r);
        QCOMPARE(report["computed_on_rank0"].get<int>(), 0);
        const auto perRank = itemsPerRank(report);
        QCOMPARE(perRank.count(0), std::size_t{0});
        QCOMPARE(perRank.at(report["rank_of_item"][0].get<int>()), 1);
        QCOMPARE(perRank.size(), std::size_t{2});
    }

    void oneRankComputesEverything() {
        const ProcessResult r = probe(1, {"--durations-ms", durations(5, 6, 5)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const json report = parseReport(r);
        QCOMPARE(report["computed_on_rank0"].get<int>(), 6);
        QCOMPARE(itemsPerRank(report), (std::map<int, int>{{0, 6}}));
    }

    void failingItemStopsEveryRankNamingItemAndRank() {
        QTemporaryDir status;
        const ProcessResult r = probe(3, {"--durations-ms", durations(20, 20, 20), "--fail", "5",
                                          "--status-dir", status.path()});
        QVERIFY2(r.exitCode > 0,
                 qPrintable("mpirun exited with " + QString::number(r.exitCode) + "\n" + r.err));
        QVERIFY2(r.err.contains(QRegularExpression("work item 5 failed on rank [0-2]: probe item 5 "
                                                   "throws")),
                 qPrintable(r.err));
        for (int rank = 0; rank < 3; ++rank) {
            QFile f(status.path() + "/rank-" + QString::number(rank));
            QVERIFY2(f.open(QIODevice::ReadOnly),
                     qPrintable("rank " + QString::number(rank) + " wrote no exit status"));
            QCOMPARE(f.readAll().trimmed(), QByteArray("3"));
        }
    }

    void failureOnAWorkerNamesThatRank() {
        // With rank 0 only coordinating and one worker, the failing item ran on rank 1.
        const ProcessResult r =
            probe(2, {"--durations-ms", durations(5, 8, 5), "--fail", "3", "--coordinator-only"});
        QVERIFY(r.exitCode > 0);
        QVERIFY2(r.err.contains("work item 3 failed on rank 1: probe item 3 throws"),
                 qPrintable(r.err));
        // Items handed out before the failure were passed on; none after it.
        QVERIFY2(r.err.contains("(finished 3)"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TstMpiDistributor)
#include "tst_mpi_distributor.moc"

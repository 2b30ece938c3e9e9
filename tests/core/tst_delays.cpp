// Exact PipeDream delays (SPEC section 3): the DelayTable against a brute-force recomputation from
// the timeline's cells, and the steady-state statistics against the closed forms.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "errors.hpp"
#include "schedule/delay_ranges.hpp"
#include "schedule/delays.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/schedule_tables.hpp"
#include "schedule/timeline.hpp"
#include "schedule/timeline_program.hpp"

using namespace pipelens;

namespace {

// Recomputes h(m, j) and the update list straight from the cells: a forward acts in its first
// slot, a backward in its last; inside a slot the stages act in increasing index.
struct BruteForce {
    int S = 0;
    int N = 0;
    std::vector<long long> h;                 // h(m, j)
    std::vector<std::pair<int, int>> update;  // (microbatch, stage) of update k
    std::vector<int> updateSlot;
    std::vector<int> version;  // updates of block j before F(m, j)

    explicit BruteForce(const Timeline& tl) : S(tl.params.stages), N(tl.params.microbatches) {
        struct Act {
            int slot, stage, isBackward, m;
        };
        std::vector<Act> acts;
        for (const auto& c : tl.cells) {
            const bool b = c.op == OpKind::Backward;
            acts.push_back({b ? c.endSlot : c.startSlot, c.stage, b ? 1 : 0, c.microbatch});
        }
        std::sort(acts.begin(), acts.end(), [](const Act& a, const Act& b) {
            return a.slot != b.slot ? a.slot < b.slot : a.stage < b.stage;
        });
        h.assign(static_cast<size_t>(S) * N, -1);
        version.assign(static_cast<size_t>(S) * N, -1);
        std::vector<int> blockUpdates(S, 0);
        for (const Act& a : acts) {
            if (a.isBackward) {
                update.push_back({a.m, a.stage});
                updateSlot.push_back(a.slot);
                ++blockUpdates[a.stage];
            } else {
                h[static_cast<size_t>(a.m) * S + a.stage] = static_cast<long long>(update.size());
                version[static_cast<size_t>(a.m) * S + a.stage] = blockUpdates[a.stage];
            }
        }
    }
    long long delay(size_t k, int j) const {
        return static_cast<long long>(k) - h[static_cast<size_t>(update[k].first) * S + j];
    }

    // Every delay of the updates k >= ceil(from * K), sorted.
    std::vector<long long> window(double from) const {
        const auto first =
            static_cast<size_t>(std::ceil(from * static_cast<double>(update.size())));
        std::vector<long long> all;
        for (size_t k = first; k < update.size(); ++k) {
            for (int j = 0; j < S; ++j) all.push_back(delay(k, j));
        }
        std::sort(all.begin(), all.end());
        return all;
    }
};

// Nearest rank: the smallest value with at least q of the samples at or below it.
long long nearestRank(const std::vector<long long>& sorted, double q) {
    auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    rank = std::max<size_t>(rank, 1);
    return sorted[rank - 1];
}

ScheduleParams pd(int S, int N) {
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = S;
    p.microbatches = N;
    return p;
}

void compareStats(const DelayStats& got, const std::vector<long long>& sorted, int S) {
    if (sorted.empty()) {  // a window past the last update
        QCOMPARE(got.samples, 0LL);
        QCOMPARE(got.max, 0LL);
        return;
    }
    QCOMPARE(got.samples, static_cast<long long>(sorted.size()));
    QCOMPARE(got.max, sorted.back());
    long double sum = 0;
    for (long long v : sorted) sum += v;
    const double mean = static_cast<double>(sum / sorted.size());
    QVERIFY2(
        std::abs(got.mean - mean) <= 1e-12 * std::max(1.0, mean),
        qPrintable(
            QString("S=%1 mean %2 vs %3").arg(S).arg(got.mean, 0, 'g', 17).arg(mean, 0, 'g', 17)));
    QCOMPARE(got.p10, nearestRank(sorted, 0.10));
    QCOMPARE(got.p50, nearestRank(sorted, 0.50));
    QCOMPARE(got.p90, nearestRank(sorted, 0.90));
}

// A timeline of every kind the delay units distinguish, by row name.
Timeline unitsTimeline(const std::string& kind, int S, int N, int group) {
    ScheduleParams p = pd(S, N);
    p.flushGroup = group;
    if (kind == "pd B=2 latency 1") p.costs = {1, 2, 1};
    if (kind == "fill-drain") p.kind = ScheduleKind::FillDrain;
    if (kind == "sgd") {
        p.kind = ScheduleKind::LocalSgd;
        p.replicas = 1;
    }
    if (kind == "1f1b") p.kind = ScheduleKind::OneFOneB;
    if (kind == "zb-h1") {
        p.kind = ScheduleKind::ZeroBubbleH1;
        p.costs.backwardSlots = 2;
    }
    if (kind == "2bw") p.kind = ScheduleKind::TwoBw;
    if (kind == "imported sync") {
        ScheduleParams built = p;
        built.kind = ScheduleKind::OneFOneB;
        p.kind = ScheduleKind::Imported;
        p.program = std::make_shared<const PipelineProgram>(stepProgram(built, group));
    }
    if (kind == "imported async") {
        // PipeDream's own timeline of `group` microbatches as the imported step.
        p.kind = ScheduleKind::Imported;
        p.asyncUpdate = true;
        p.flushGroup = 0;
        p.program = std::make_shared<const PipelineProgram>(
            programFromTimeline(buildTimeline(pd(S, group))));
    }
    return buildTimeline(p);
}

// The three units straight from their definitions (SPEC section 2.1), over the replay order:
// block updates between the read and the update; the distinct optimizer steps of block j with
// an update in between, not the update's own (`group` microbatches per step, or 0: each update
// its own step); the update's slot minus the forward cell's start slot.
struct UnitsBruteForce {
    int S = 0;
    std::vector<ReplayEvent> updates;
    std::vector<long long> readAt;  // position (updates before) of F(m, j)'s read
    std::vector<int> readSlot;
    int group = 0;

    UnitsBruteForce(const Timeline& tl, int stepGroup) : S(tl.params.stages), group(stepGroup) {
        const auto cells = static_cast<size_t>(S) * tl.params.microbatches;
        readAt.assign(cells, -1);
        readSlot.assign(cells, -1);
        for (const ReplayEvent& e : replayOrder(tl)) {
            if (e.op == OpKind::Forward) {
                readAt[static_cast<size_t>(e.microbatch) * S + e.stage] =
                    static_cast<long long>(updates.size());
            } else {
                updates.push_back(e);
            }
        }
        for (const TimelineCell& c : tl.cells) {
            if (c.op == OpKind::Forward)
                readSlot[static_cast<size_t>(c.microbatch) * S + c.stage] = c.startSlot;
        }
    }
    long long stepOf(size_t k) const {
        return group > 0 ? updates[k].microbatch / group : static_cast<long long>(k);
    }
    long long value(DelayUnit unit, size_t k, int j) const {
        const size_t read = static_cast<size_t>(updates[k].microbatch) * S + static_cast<size_t>(j);
        const auto from = static_cast<size_t>(readAt[read]);
        switch (unit) {
            case DelayUnit::BlockUpdates:
                return static_cast<long long>(k - from);
            case DelayUnit::Slots:
                return updates[k].slot - readSlot[read];
            case DelayUnit::OptimizerSteps:
                break;
        }
        std::vector<long long> steps;
        for (size_t i = from; i < k; ++i) {
            if (updates[i].stage == j && stepOf(i) != stepOf(k)) steps.push_back(stepOf(i));
        }
        std::sort(steps.begin(), steps.end());
        return std::unique(steps.begin(), steps.end()) - steps.begin();
    }
};

}  // namespace

class TestDelays : public QObject {
    Q_OBJECT
  private slots:
    void unitsMatchTheirDefinitions_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("group");      // flushGroup as configured
        QTest::addColumn<int>("stepGroup");  // microbatches per step (0: each update a step)
        QTest::newRow("pd S=4") << "pd" << 4 << 40 << 0 << 0;
        QTest::newRow("pd S=5 B=2 latency 1") << "pd B=2 latency 1" << 5 << 30 << 0 << 0;
        QTest::newRow("fill-drain S=4 G=4") << "fill-drain" << 4 << 14 << 4 << 4;
        QTest::newRow("fill-drain S=3 all") << "fill-drain" << 3 << 7 << 0 << 7;
        QTest::newRow("sgd S=3") << "sgd" << 3 << 6 << 0 << 0;
        QTest::newRow("1f1b S=4 M=8") << "1f1b" << 4 << 20 << 8 << 8;
        QTest::newRow("zb-h1 S=4 M=8") << "zb-h1" << 4 << 16 << 8 << 8;
        QTest::newRow("2bw S=4 m=4") << "2bw" << 4 << 26 << 4 << 4;
        QTest::newRow("2bw S=3 m=5") << "2bw" << 3 << 17 << 5 << 5;
        QTest::newRow("imported sync S=4 M=6") << "imported sync" << 4 << 15 << 6 << 6;
        QTest::newRow("imported async S=4") << "imported async" << 4 << 20 << 12 << 0;
    }
    void unitsMatchTheirDefinitions() {
        QFETCH(QString, kind);
        QFETCH(int, S);
        QFETCH(int, N);
        QFETCH(int, group);
        QFETCH(int, stepGroup);
        const Timeline tl = unitsTimeline(kind.toStdString(), S, N, group);
        auto table = std::make_shared<const DelayTable>(tl);
        QCOMPARE(table->stepMicrobatches(), stepGroup);
        const UnitsBruteForce bf(tl, stepGroup);
        QCOMPARE(static_cast<size_t>(table->updates()), bf.updates.size());
        for (const DelayUnit unit :
             {DelayUnit::BlockUpdates, DelayUnit::OptimizerSteps, DelayUnit::Slots}) {
            // The range index in the same unit, with bins of a few updates so that whole bins,
            // partial bins and sums are all exercised.
            const DelayRanges ranges(table, 3LL * S, unit);
            std::vector<std::int32_t> acc(static_cast<size_t>(S), DelayRanges::kNoValue);
            std::vector<long long> want(static_cast<size_t>(S), -1);
            long long sum = 0;
            for (size_t k = 0; k < bf.updates.size(); ++k) {
                const auto kk = static_cast<long long>(k);
                for (int j = 0; j < S; ++j) {
                    const long long v = bf.value(unit, k, j);
                    QVERIFY2(v >= 0, qPrintable(kind));
                    QVERIFY2(table->delayIn(unit, kk, j) == v,
                             qPrintable(QString("%1 %2: k=%3 block %4: %5, want %6")
                                            .arg(kind, delayUnitWords(unit))
                                            .arg(k)
                                            .arg(j)
                                            .arg(table->delayIn(unit, kk, j))
                                            .arg(v)));
                    QCOMPARE(static_cast<long long>(ranges.delay(kk, j)), v);
                    want[static_cast<size_t>(j)] = std::max(want[static_cast<size_t>(j)], v);
                    sum += v;
                }
            }
            ranges.rangeMax(1, table->updates(), acc.data());
            std::fill(acc.begin(), acc.end(), DelayRanges::kNoValue);
            ranges.rangeMax(0, table->updates(), acc.data());
            for (int j = 0; j < S; ++j)
                QCOMPARE(static_cast<long long>(acc[static_cast<size_t>(j)]),
                         want[static_cast<size_t>(j)]);
            QCOMPARE(ranges.delaySum(0, table->updates()), sum);
        }
        // The paper's unit is the table's delay, unchanged.
        for (long long k = 0; k < table->updates(); ++k)
            QCOMPARE(table->delayIn(DelayUnit::BlockUpdates, k, S - 1), table->delay(k, S - 1));
    }

    void pipeDreamOwnBlockStepsAreStagesBelow() {
        // SPEC section 2.1: PD's own-block delay on stage s = 1 ... S is S - s optimizer steps
        // once the pipeline is full (the microbatches in flight above it).
        for (const int S : {2, 4, 8}) {
            const DelayTable t(buildTimeline(pd(S, 10 * S)));
            for (long long k = t.updates() / 4; k < 3 * t.updates() / 4; ++k) {
                const int s = t.update(k).stage;
                QCOMPARE(t.delaySteps(k, s), static_cast<long long>(S - (s + 1)));
            }
        }
    }

    void synchronousStepsAreNotStale() {
        // One step's reads all precede its updates: no step between them, in every block.
        for (const char* kind : {"1f1b", "zb-h1", "imported sync", "fill-drain"}) {
            const DelayTable t(unitsTimeline(kind, 4, 24, 8));
            for (long long k = 0; k < t.updates(); ++k) {
                for (int j = 0; j < 4; ++j) QCOMPARE(t.delaySteps(k, j), 0LL);
            }
        }
    }

    void twoBwIsOneStepStale() {
        // Group t reads version t - 1 and its step lands after group t - 1's: one step; the
        // first group reads w(0) = w(-1) and no step lands before its own, so 0 there.
        const int S = 4;
        const int m = 4;
        const DelayTable t(unitsTimeline("2bw", S, 24, m));
        for (long long k = 0; k < t.updates(); ++k) {
            const long long want = t.update(k).microbatch < m ? 0 : 1;
            for (int j = 0; j < S; ++j) QCOMPARE(t.delaySteps(k, j), want);
        }
    }
    void tableMatchesBruteForce_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("noam");
        QTest::addColumn<int>("backwardSlots");
        QTest::addColumn<int>("latency");
        QTest::newRow("pd S=1") << 0 << 1 << 5 << 0 << 1 << 0;
        QTest::newRow("pd S=4") << 0 << 4 << 40 << 0 << 1 << 0;
        QTest::newRow("pd S=7 N=9") << 0 << 7 << 9 << 0 << 1 << 0;
        QTest::newRow("pd S=6 noam 3") << 0 << 6 << 30 << 3 << 1 << 0;
        QTest::newRow("pd S=5 B=2 latency 1") << 0 << 5 << 30 << 0 << 2 << 1;
        QTest::newRow("fill-drain S=4") << 1 << 4 << 12 << 0 << 1 << 0;
    }
    void tableMatchesBruteForce() {
        QFETCH(int, kind);
        QFETCH(int, S);
        QFETCH(int, N);
        QFETCH(int, noam);
        QFETCH(int, backwardSlots);
        QFETCH(int, latency);
        ScheduleParams p = pd(S, N);
        p.kind = static_cast<ScheduleKind>(kind);
        p.noam = noam;
        p.costs = {1, backwardSlots, latency};
        Timeline tl = buildTimeline(p);
        DelayTable t(tl);
        BruteForce bf(tl);
        QCOMPARE(t.stages(), S);
        QCOMPARE(t.microbatches(), N);
        QCOMPARE(t.updates(), static_cast<long long>(S) * N);
        QCOMPARE(static_cast<long long>(bf.update.size()), t.updates());
        long long maxDelay = 0;
        for (long long k = 0; k < t.updates(); ++k) {
            const auto uk = static_cast<size_t>(k);
            QCOMPARE(t.update(k).microbatch, bf.update[uk].first);
            QCOMPARE(t.update(k).stage, bf.update[uk].second);
            QCOMPARE(t.update(k).slot, bf.updateSlot[uk]);
            for (int j = 0; j < S; ++j) {
                QCOMPARE(t.delay(k, j), bf.delay(uk, j));
                QVERIFY(t.delay(k, j) >= 0);
                maxDelay = std::max(maxDelay, bf.delay(uk, j));
            }
        }
        for (int m = 0; m < N; ++m) {
            for (int j = 0; j < S; ++j) {
                QCOMPARE(t.forwardIndex(m, j), bf.h[static_cast<size_t>(m) * S + j]);
                QCOMPARE(t.versionRead(m, j), bf.version[static_cast<size_t>(m) * S + j]);
            }
        }
        QCOMPARE(t.maxDelay(), maxDelay);
        // delayStats over the table equals the statistics of the materialised window.
        for (double from : {0.0, 0.5, 0.75}) {
            compareStats(delayStats(t, from), bf.window(from), S);
            if (QTest::currentTestFailed()) return;
        }
    }

    void formulaValues() {
        // SPEC section 3: 14 at S = 4, 60 at S = 8, 248 at S = 16; odd S subtract another half.
        QCOMPARE(pipeDreamMaxDelayFormula(4), 14LL);
        QCOMPARE(pipeDreamMaxDelayFormula(8), 60LL);
        QCOMPARE(pipeDreamMaxDelayFormula(16), 248LL);
        for (int S = 1; S <= 300; ++S) {
            const double exact = S % 2 == 0 ? S * S - S / 2.0 : S * S - S / 2.0 - 0.5;
            QCOMPARE(static_cast<double>(pipeDreamMaxDelayFormula(S)), exact);
            QCOMPARE(pipeDreamMaxDelayFormula(S),
                     static_cast<long long>(std::floor(S * S - S / 2.0)));
        }
    }

    void steadyStateMaxForEveryS() {
        // N = 10 S, second half of the updates: max = floor(S^2 - S/2), always a read of block 1.
        for (int S = 2; S <= 64; ++S) {
            DelayStats d = pipeDreamDelayStats(S);
            QCOMPARE(d.stages, S);
            QCOMPARE(d.microbatches, 10 * S);
            QCOMPARE(d.samples, static_cast<long long>(S) * 10 * S / 2 * S);
            QCOMPARE(d.max, static_cast<long long>(std::floor(S * S - S / 2.0)));
            QCOMPARE(d.formulaMax, S % 2 == 0 ? S * S - S / 2.0 : S * S - S / 2.0 - 0.5);
            QCOMPARE(d.formulaMean, S * S / 2.0);
            QCOMPARE(d.maxBlock, 0);
        }
    }

    void steadyStateMaxByBruteForce() {
        for (int S = 2; S <= 16; ++S) {
            BruteForce bf(buildTimeline(pd(S, 10 * S)));
            std::vector<long long> w = bf.window(0.5);
            QCOMPARE(w.back(), static_cast<long long>(std::floor(S * S - S / 2.0)));
            // Which block's read attains it: only block 1 (j = 0).
            const size_t first = bf.update.size() / 2;
            for (size_t k = first; k < bf.update.size(); ++k) {
                for (int j = 1; j < S; ++j) QVERIFY(bf.delay(k, j) < w.back());
            }
        }
    }

    void steadyStateMeanNearHalfSSquared() {
        // SPEC: the mean is "about S^2/2". Observed mean / (S^2/2): 0.75 at S = 2, 0.944 at
        // S = 4, 0.989 at S = 8, 1.0004 at S = 16, 1.0039 at S = 64; within 1.1% from S = 8 on.
        // Tested: within 2% for S >= 8, 6% for S >= 4, 26% below.
        for (int S = 2; S <= 64; ++S) {
            DelayStats d = pipeDreamDelayStats(S);
            const double ratio = d.mean / (S * S / 2.0);
            const double tol = S >= 8 ? 0.02 : S >= 4 ? 0.06 : 0.26;
            QVERIFY2(std::abs(ratio - 1.0) <= tol,
                     qPrintable(QString("S=%1 mean %2 ratio %3").arg(S).arg(d.mean).arg(ratio)));
            QVERIFY(d.p10 <= d.p50 && d.p50 <= d.p90 && d.p90 <= d.max);
        }
    }

    void compressedStatsEqualBruteForce() {
        for (int S = 1; S <= 16; ++S) {
            BruteForce bf(buildTimeline(pd(S, 10 * S)));
            DelayStats d = pipeDreamDelayStats(S);
            compareStats(d, bf.window(0.5), S);
            if (QTest::currentTestFailed()) return;
        }
        // Other N and windows too.
        for (int S : {3, 8, 11}) {
            for (int N : {S, 3 * S + 1, 25 * S}) {
                BruteForce bf(buildTimeline(pd(S, N)));
                for (double from : {0.0, 0.3, 0.9}) {
                    compareStats(pipeDreamDelayStats(S, N, from), bf.window(from), S);
                    if (QTest::currentTestFailed()) return;
                }
            }
        }
    }

    void badWindowThrows() {
        DelayTable t(buildTimeline(pd(3, 6)));
        for (double from : {-0.1, 1.0, std::nan("")}) {
            try {
                delayStats(t, from);
                QFAIL("no error for a bad window");
            } catch (const ConfigError& e) {
                QVERIFY2(QString(e.what()).contains("from_fraction"), e.what());
            }
        }
    }

    // The tables people get (app CSV exports, results folder): stages and blocks from 1, as on
    // screen. Hand-derived for PD with S = 2 and two microbatches: block 1 is updated at slots 3
    // and 5, block 2 at slots 2 and 4, so only F(1) on stage 2 (slot 3) reads version 1.
    void ganttTableNumbersStagesFromOne() {
        ScheduleParams p;
        p.kind = ScheduleKind::PipeDream;
        p.stages = 2;
        p.microbatches = 2;
        const Timeline tl = buildTimeline(p);
        const DelayTable d(tl);
        QCOMPARE(QString::fromStdString(ganttTableCsv(tl, &d, "PD \"1F1B\"")),
                 QString("method,slot,end_slot,stage,op,microbatch,version_read,replica,round\n"
                         "\"PD \"\"1F1B\"\"\",0,0,1,F,0,0,,\n"
                         "\"PD \"\"1F1B\"\"\",1,1,1,F,1,0,,\n"
                         "\"PD \"\"1F1B\"\"\",1,1,2,F,0,0,,\n"
                         "\"PD \"\"1F1B\"\"\",2,2,2,B,0,0,,\n"
                         "\"PD \"\"1F1B\"\"\",3,3,1,B,0,0,,\n"
                         "\"PD \"\"1F1B\"\"\",3,3,2,F,1,1,,\n"
                         "\"PD \"\"1F1B\"\"\",4,4,2,B,1,1,,\n"
                         "\"PD \"\"1F1B\"\"\",5,5,1,B,1,0,,\n"));
        QCOMPARE(QString::fromStdString(delayTableCsv(d, "PD", 2)),
                 QString("method,block_update,updated_stage,microbatch,slot,delay_block1,"
                         "delay_block2\n"
                         "\"PD\",0,2,0,2,0,0\n"
                         "\"PD\",1,1,0,3,1,1\n"));
    }

    // LocalSGD: every cell names its replica and round, and each averaging is a row of its own
    // after the last cell that starts in its slot and before the first that starts later.
    void ganttTableMarksReplicasRoundsAndAveraging() {
        ScheduleParams p;
        p.kind = ScheduleKind::LocalSgd;
        p.stages = 3;
        p.replicas = 2;
        p.localSteps = 2;
        p.microbatches = 12;
        const Timeline tl = buildTimeline(p);
        QVERIFY(tl.averagingSlots.size() >= 2);
        std::istringstream in(ganttTableCsv(tl, nullptr, "LocalSGD"));
        std::string line;
        std::getline(in, line);
        size_t cell = 0;
        size_t average = 0;
        int lastSlot = -1;
        while (std::getline(in, line)) {
            std::vector<std::string> f;
            std::stringstream ss(line);
            for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
            if (f.size() == 8) f.emplace_back();  // getline drops a trailing empty field
            QCOMPARE(f.size(), size_t(9));
            const int slot = std::stoi(f[1]);
            QVERIFY(slot >= lastSlot);
            lastSlot = slot;
            if (f[4] == "average") {
                QVERIFY(average < tl.averagingSlots.size());
                QCOMPARE(slot, tl.averagingSlots[average]);
                QVERIFY(f[3].empty() && f[5].empty() && f[7].empty());
                QCOMPARE(std::stoi(f[8]), static_cast<int>(average) + 1);
                // Every cell that starts in the averaging's slot came before it.
                QVERIFY(cell == tl.cells.size() || tl.cells[cell].startSlot > slot);
                ++average;
                continue;
            }
            const TimelineCell& c = tl.cells[cell++];
            QCOMPARE(std::stoi(f[3]), c.stage + 1);
            QCOMPARE(std::stoi(f[5]), c.microbatch);
            QVERIFY(f[6].empty());  // no delays given
            QCOMPARE(std::stoi(f[7]), c.microbatch % 2 + 1);
            QCOMPARE(std::stoi(f[8]), c.microbatch / 4 + 1);
        }
        QCOMPARE(cell, tl.cells.size());
        QCOMPARE(average, tl.averagingSlots.size());
    }
};

QTEST_APPLESS_MAIN(TestDelays)
#include "tst_delays.moc"

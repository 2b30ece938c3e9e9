// The Chrome trace event JSON of a run (experiment/output/chrome_trace.hpp), parsed back with
// nlohmann::json and checked against the timeline it came from: one complete event per cell at
// ts = slot x 1000 with dur = slots x 1000, metadata for every process and thread, pid and tid
// >= 1 with tids unique across processes, no overlap on a track, version_read and staleness
// against counts made here from the cells alone, LocalSGD's replica processes and averagings,
// and the loss counter with its decimation.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "experiment/config/config.hpp"
#include "experiment/output/chrome_trace.hpp"
#include "experiment/run/experiment.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using json = nlohmann::json;

namespace {

struct Tracks {
    std::map<long long, std::string> processName;  // pid -> name
    std::map<long long, long long> processSort;    // pid -> sort index
    std::map<long long, std::string> threadName;   // tid -> name
    std::map<long long, long long> threadSort;     // tid -> sort index
    std::map<long long, long long> threadProcess;  // tid -> pid of its metadata
    std::vector<json> complete;                    // X
    std::vector<json> instants;                    // i
    std::vector<json> counters;                    // C
};

// The file's structure, checked for any trace: the envelope, metadata for every pid and tid the
// events use, pid and tid >= 1, a tid in one process only, and no two X events on one track
// overlapping.
Tracks readTrace(const std::string& text) {
    Tracks t;
    const json j = json::parse(text);
    [&] {
        QVERIFY(j.is_object());
        QCOMPARE(j.at("displayTimeUnit").get<std::string>(), std::string("ms"));
        QVERIFY(j.at("traceEvents").is_array());
    }();
    for (const json& e : j.at("traceEvents")) {
        const std::string ph = e.at("ph").get<std::string>();
        const long long pid = e.at("pid").get<long long>();
        if (pid < 1) QTest::qFail("pid < 1", __FILE__, __LINE__);
        if (ph == "M") {
            const std::string name = e.at("name").get<std::string>();
            if (name == "process_name") {
                t.processName[pid] = e.at("args").at("name").get<std::string>();
            } else if (name == "process_sort_index") {
                t.processSort[pid] = e.at("args").at("sort_index").get<long long>();
            } else {
                const long long tid = e.at("tid").get<long long>();
                if (tid < 1) QTest::qFail("tid < 1", __FILE__, __LINE__);
                const auto [it, inserted] = t.threadProcess.emplace(tid, pid);
                if (!inserted && it->second != pid)
                    QTest::qFail("a tid in two processes", __FILE__, __LINE__);
                if (name == "thread_name") {
                    t.threadName[tid] = e.at("args").at("name").get<std::string>();
                } else if (name == "thread_sort_index") {
                    t.threadSort[tid] = e.at("args").at("sort_index").get<long long>();
                } else {
                    QTest::qFail(("unknown metadata " + name).c_str(), __FILE__, __LINE__);
                }
            }
        } else if (ph == "X") {
            t.complete.push_back(e);
        } else if (ph == "i") {
            t.instants.push_back(e);
        } else if (ph == "C") {
            t.counters.push_back(e);
        } else {
            QTest::qFail(("unexpected ph " + ph).c_str(), __FILE__, __LINE__);
        }
    }
    // Every process named and sorted, every thread named, sorted and in its process.
    for (const auto& [pid, name] : t.processName) {
        if (t.processSort.count(pid) == 0) QTest::qFail("process without sort", __FILE__, __LINE__);
    }
    for (const auto& [tid, pid] : t.threadProcess) {
        if (t.threadName.count(tid) == 0 || t.threadSort.count(tid) == 0)
            QTest::qFail("thread without name or sort", __FILE__, __LINE__);
        if (t.processName.count(pid) == 0)
            QTest::qFail("thread of an unnamed process", __FILE__, __LINE__);
    }
    std::map<long long, std::vector<std::pair<long long, long long>>> byTrack;  // tid -> spans
    for (const json& e : t.complete) {
        const long long pid = e.at("pid").get<long long>();
        const long long tid = e.at("tid").get<long long>();
        if (t.threadProcess.count(tid) == 0 || t.threadProcess.at(tid) != pid)
            QTest::qFail("X on a thread without metadata in its process", __FILE__, __LINE__);
        const long long ts = e.at("ts").get<long long>();
        const long long dur = e.at("dur").get<long long>();
        if (ts < 0 || dur <= 0) QTest::qFail("bad ts or dur", __FILE__, __LINE__);
        byTrack[tid].emplace_back(ts, ts + dur);
    }
    for (auto& [tid, spans] : byTrack) {
        std::sort(spans.begin(), spans.end());
        for (std::size_t i = 1; i < spans.size(); ++i) {
            if (spans[i].first < spans[i - 1].second)
                QTest::qFail("two X events overlap on one track", __FILE__, __LINE__);
        }
    }
    for (const std::vector<json>* list : {&t.instants, &t.counters}) {
        for (const json& e : *list) {
            if (t.processName.count(e.at("pid").get<long long>()) == 0)
                QTest::qFail("event of an unnamed process", __FILE__, __LINE__);
        }
    }
    return t;
}

// Replay order (SPEC section 2): a forward acts in its first slot, a backward in its last; within
// a slot, stage order. The key of a cell's action.
std::pair<int, int> actsAt(const TimelineCell& c) {
    return {c.op == OpKind::Forward ? c.startSlot : c.endSlot, c.stage};
}

// For each (microbatch, stage): its F and B cells.
using CellKey = std::tuple<int, int, bool>;  // microbatch, stage, forward
std::map<CellKey, TimelineCell> cellsByKey(const Timeline& tl) {
    std::map<CellKey, TimelineCell> out;
    for (const TimelineCell& c : tl.cells)
        out[{c.microbatch, c.stage, c.op == OpKind::Forward}] = c;
    return out;
}

// Checks every X event against its cell: name, cat, ts, dur, thread, args. With `delays`,
// version_read against the table and against a count of the stage's backwards acting before the
// forward, and staleness against a count of all backwards acting between F(m, s) and B(m, s).
void checkCells(const Tracks& t, const Timeline& tl, const DelayTable* delays,
                const std::map<long long, int>& expectedPidOfTid) {
    QCOMPARE(t.complete.size(), tl.cells.size());
    const auto cells = cellsByKey(tl);
    std::vector<std::pair<int, int>> backwardActs;  // sorted action keys of every backward
    for (const TimelineCell& c : tl.cells) {
        if (c.op == OpKind::Backward) backwardActs.push_back(actsAt(c));
    }
    std::sort(backwardActs.begin(), backwardActs.end());
    auto backwardsBefore = [&](std::pair<int, int> key) {
        return static_cast<long long>(
            std::lower_bound(backwardActs.begin(), backwardActs.end(), key) - backwardActs.begin());
    };
    std::set<CellKey> seen;
    for (const json& e : t.complete) {
        const json& a = e.at("args");
        const int m = a.at("microbatch").get<int>();
        const int s = a.at("stage").get<int>() - 1;
        const std::string name = e.at("name").get<std::string>();
        QVERIFY(name == "F " + std::to_string(m) || name == "B " + std::to_string(m));
        const bool forward = name[0] == 'F';
        QCOMPARE(e.at("cat").get<std::string>(), std::string(forward ? "forward" : "backward"));
        const CellKey key{m, s, forward};
        QVERIFY2(cells.count(key) == 1, qPrintable(QString::fromStdString(e.dump())));
        QVERIFY(seen.insert(key).second);
        const TimelineCell& c = cells.at(key);
        QCOMPARE(e.at("ts").get<long long>(), 1000LL * c.startSlot);
        QCOMPARE(e.at("dur").get<long long>(), 1000LL * (c.endSlot - c.startSlot + 1));
        const long long tid = e.at("tid").get<long long>();
        QCOMPARE(t.threadName.at(tid), "stage " + std::to_string(s + 1));
        QCOMPARE(t.threadSort.at(tid), static_cast<long long>(s + 1));
        if (!expectedPidOfTid.empty())
            QCOMPARE(e.at("pid").get<long long>(),
                     static_cast<long long>(expectedPidOfTid.at(tid)));
        if (!delays) {
            QVERIFY(!a.contains("version_read") && !a.contains("staleness"));
            continue;
        }
        const TimelineCell& f = cells.at({m, s, true});
        QCOMPARE(a.at("version_read").get<int>(), delays->versionRead(m, s));
        // Updates of block s before F(m, s) acted: the backwards of stage s acting before it.
        long long ownBefore = 0;
        for (const TimelineCell& b : tl.cells) {
            if (b.op == OpKind::Backward && b.stage == s && actsAt(b) < actsAt(f)) ++ownBefore;
        }
        QCOMPARE(a.at("version_read").get<long long>(), ownBefore);
        if (forward) {
            QVERIFY(!a.contains("staleness"));
        } else {
            // k - h(m, s): every block update acting before B(m, s) minus those before F(m, s).
            QCOMPARE(a.at("staleness").get<long long>(),
                     backwardsBefore(actsAt(c)) - backwardsBefore(actsAt(f)));
        }
    }
}

ExperimentConfig smallRun() {
    return ExperimentConfig::fromJson(json::parse(R"({
        "name": "trace",
        "stages": 4,
        "batch_size": 10,
        "data": {"kind": "random", "rows": 60, "dim": 8, "seed": 3},
        "budget": {"epochs": 2},
        "methods": [
            {"method": "pd", "step_size": 0.05},
            {"method": "rpd", "step_size": 0.05, "delta": 6},
            {"method": "localsgd", "step_size": 0.05, "local_steps": 2}
        ]
    })"));
}

}  // namespace

class TestChromeTrace : public QObject {
    Q_OBJECT

  private slots:
    // PD with unit costs: one process named by the label, threads "stage 1" … "stage S" with
    // tids 1 … S, every cell once, version_read and staleness as counted from the cells, and the
    // loss counter (a NaN left out).
    void pipeDreamTraceMatchesTimeline() {
        ScheduleParams p;
        p.kind = ScheduleKind::PipeDream;
        p.stages = 4;
        p.microbatches = 12;
        const Timeline tl = buildTimeline(p);
        const DelayTable d(tl);
        std::vector<double> loss(static_cast<std::size_t>(tl.totalSlots) + 1);
        for (std::size_t i = 0; i < loss.size(); ++i) loss[i] = 1.0 / static_cast<double>(i + 1);
        loss[3] = std::numeric_limits<double>::quiet_NaN();
        const Tracks t = readTrace(chromeTraceJson({{"PD", &tl, &d, &loss}}));
        QCOMPARE(t.processName.size(), std::size_t(1));
        QCOMPARE(t.processName.at(1), std::string("PD"));
        QCOMPARE(t.processSort.at(1), 1LL);
        QCOMPARE(t.threadName.size(), std::size_t(4));
        std::map<long long, int> pidOfTid;
        for (int s = 0; s < 4; ++s) pidOfTid[s + 1] = 1;
        for (const auto& [tid, pid] : t.threadProcess) QCOMPARE(pid, 1LL);
        checkCells(t, tl, &d, pidOfTid);
        // The closed form: in the steady state (S <= m < N - 1 here) the backward of stage 1
        // makes the largest delay, S^2 - S/2 = 14 for S = 4 (SPEC section 3); start-up reads are
        // staler (up to 16 here), none exceeds the table's maximum.
        for (const json& e : t.complete) {
            const json& a = e["args"];
            if (e["cat"] != "backward") continue;
            QVERIFY(a["staleness"].get<long long>() <= d.maxDelay());
            const int m = a["microbatch"].get<int>();
            if (a["stage"] == 1 && m >= 4 && m < 11)
                QCOMPARE(a["staleness"].get<long long>(), 14LL);
        }
        QCOMPARE(t.counters.size(), loss.size() - 1);
        for (const json& c : t.counters) {
            QCOMPARE(c.at("name").get<std::string>(), std::string("loss"));
            QCOMPARE(c.at("pid").get<long long>(), 1LL);
            const long long ts = c.at("ts").get<long long>();
            QCOMPARE(ts % 1000, 0LL);
            const long long slot = ts / 1000;
            QVERIFY(slot != 3);
            QCOMPARE(c.at("args").at("loss").get<double>(), 1.0 / static_cast<double>(slot + 1));
        }
    }

    // Costs above one slot: dur spans the op, staleness follows the replay order in which a
    // backward acts in its last slot; fill-drain beside it gets pid 2 and tids S + 1 … 2S.
    // ZB-H1 splits each backward into I (input gradient) and W (weight gradient): the slices
    // carry INTEROP.md's letters and their own categories, one per cell, and only W, where the
    // block's update lands, has a staleness (the delay table's, as B's on other schedules).
    void zeroBubbleSlicesAreInputAndWeight() {
        ScheduleParams p;
        p.kind = ScheduleKind::ZeroBubbleH1;
        p.stages = 3;
        p.microbatches = 6;
        p.flushGroup = 3;
        const Timeline tl = buildTimeline(p);
        const DelayTable d(tl);
        const Tracks t = readTrace(chromeTraceJson({{"ZB-H1", &tl, &d, nullptr}}));
        QCOMPARE(t.complete.size(), tl.cells.size());
        std::map<std::tuple<int, int, int>, OpKind> opAt;  // (microbatch, stage, start) -> op
        for (const TimelineCell& c : tl.cells) opAt[{c.microbatch, c.stage, c.startSlot}] = c.op;
        std::map<std::string, int> perCategory;
        for (const json& e : t.complete) {
            const json& a = e.at("args");
            const int m = a.at("microbatch").get<int>();
            const int s = a.at("stage").get<int>() - 1;
            const int start = static_cast<int>(e.at("ts").get<long long>() / 1000);
            const OpKind op = opAt.at({m, s, start});
            const char* want[] = {"F ", "B ", "I ", "W "};
            const char* cat[] = {"forward", "backward", "input_grad", "weight_grad"};
            const auto i = static_cast<std::size_t>(op);
            QCOMPARE(e.at("name").get<std::string>(), want[i] + std::to_string(m));
            QCOMPARE(e.at("cat").get<std::string>(), std::string(cat[i]));
            ++perCategory[cat[i]];
            QCOMPARE(a.contains("staleness"), op == OpKind::WeightGrad);
            if (op == OpKind::WeightGrad) {
                long long k = 0;
                while (!(d.update(k).microbatch == m && d.update(k).stage == s)) ++k;
                QCOMPARE(a.at("staleness").get<long long>(), d.delay(k, s));
            }
        }
        QCOMPARE(perCategory["forward"], 18);
        QCOMPARE(perCategory["input_grad"], 18);
        QCOMPARE(perCategory["weight_grad"], 18);
        QCOMPARE(perCategory.count("backward"), std::size_t(0));
    }

    void costsAndTwoMethods() {
        ScheduleParams p;
        p.kind = ScheduleKind::PipeDream;
        p.stages = 3;
        p.microbatches = 9;
        p.costs = OpCosts{2, 3, 1};
        const Timeline pd = buildTimeline(p);
        const DelayTable d(pd);
        ScheduleParams q;
        q.kind = ScheduleKind::FillDrain;
        q.stages = 3;
        q.microbatches = 5;
        const Timeline fd = buildTimeline(q);
        const Tracks t = readTrace(chromeTraceJson({{"PD", &pd, &d, nullptr},
                                                    {"no timeline", nullptr, nullptr, nullptr},
                                                    {"Fill-drain", &fd, nullptr, nullptr}}));
        QCOMPARE(t.processName.size(), std::size_t(2));
        QCOMPARE(t.processName.at(2), std::string("Fill-drain"));
        QCOMPARE(t.processSort.at(2), 2LL);
        QCOMPARE(t.complete.size(), pd.cells.size() + fd.cells.size());
        QVERIFY(t.counters.empty());
        for (long long tid = 1; tid <= 6; ++tid)
            QCOMPARE(t.threadProcess.at(tid), tid <= 3 ? 1LL : 2LL);
        Tracks first = t;
        Tracks second = t;
        first.complete.clear();
        second.complete.clear();
        for (const json& e : t.complete) (e["pid"] == 1 ? first : second).complete.push_back(e);
        checkCells(first, pd, &d, {});
        checkCells(second, fd, nullptr, {});
        for (const json& e : first.complete) {
            const bool forward = e["cat"] == "forward";
            QCOMPARE(e["dur"].get<long long>(), forward ? 2000LL : 3000LL);
        }
    }

    // LocalSGD with R = 3 replicas and H = 2: one process per replica named "LABEL replica r",
    // microbatch m on replica m mod R (SPEC section 2), every stage a thread of each, the
    // averagings as instants on every replica at the end of their slot, the loss on replica 1.
    void localSgdReplicaProcesses() {
        ScheduleParams p;
        p.kind = ScheduleKind::LocalSgd;
        p.stages = 3;
        p.replicas = 3;
        p.localSteps = 2;
        p.microbatches = 20;  // 3 complete rounds of R H = 6, and 2 microbatches of a fourth
        const Timeline tl = buildTimeline(p);
        QCOMPARE(tl.averagingSlots.size(), std::size_t(3));
        const std::vector<double> loss(static_cast<std::size_t>(tl.totalSlots) + 1, 2.5);
        const Tracks t = readTrace(chromeTraceJson({{"LocalSGD", &tl, nullptr, &loss}}));
        QCOMPARE(t.processName.size(), std::size_t(3));
        for (long long r = 1; r <= 3; ++r) {
            QCOMPARE(t.processName.at(r), "LocalSGD replica " + std::to_string(r));
            QCOMPARE(t.processSort.at(r), r);
        }
        QCOMPARE(t.threadName.size(), std::size_t(9));
        QCOMPARE(t.complete.size(), tl.cells.size());
        Tracks flat = t;
        checkCells(flat, tl, nullptr, {});
        for (const json& e : t.complete) {
            const int m = e["args"]["microbatch"].get<int>();
            QCOMPARE(e["pid"].get<long long>(), static_cast<long long>(m % 3 + 1));
        }
        QCOMPARE(t.instants.size(), 3 * tl.averagingSlots.size());
        std::map<long long, std::vector<long long>> averagesOf;  // pid -> ts
        for (const json& e : t.instants) {
            QCOMPARE(e["name"].get<std::string>(), std::string("average"));
            QCOMPARE(e["s"].get<std::string>(), std::string("p"));
            averagesOf[e["pid"].get<long long>()].push_back(e["ts"].get<long long>());
        }
        for (long long r = 1; r <= 3; ++r) {
            std::vector<long long> want;
            for (int slot : tl.averagingSlots) want.push_back(1000LL * (slot + 1));
            QCOMPARE(averagesOf[r], want);
        }
        QCOMPARE(t.counters.size(), loss.size());
        for (const json& c : t.counters) QCOMPARE(c["pid"].get<long long>(), 1LL);
    }

    // Evenly spaced samples, the first and the last kept, never more than the limit.
    void lossDecimation() {
        QCOMPARE(traceLossSamples(5, 10), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
        QCOMPARE(traceLossSamples(10, 10).size(), std::size_t(10));
        QCOMPARE(traceLossSamples(11, 3), (std::vector<std::size_t>{0, 5, 10}));
        const std::vector<std::size_t> k = traceLossSamples(100001, 20000);
        QCOMPARE(k.size(), std::size_t(20000));
        QCOMPARE(k.front(), std::size_t(0));
        QCOMPARE(k.back(), std::size_t(100000));
        QVERIFY(std::adjacent_find(k.begin(), k.end(), [](std::size_t a, std::size_t b) {
                    return b <= a || b - a > 6;  // spacing 100000 / 19999, about 5
                }) == k.end());
        // Through the writer: a 50 001-value series gives 20 000 samples from ts 0 to 50 000 ms.
        ScheduleParams p;
        p.stages = 2;
        p.microbatches = 2;
        const Timeline tl = buildTimeline(p);
        std::vector<double> loss(50001);
        for (std::size_t i = 0; i < loss.size(); ++i) loss[i] = static_cast<double>(i);
        const Tracks t = readTrace(chromeTraceJson({{"PD", &tl, nullptr, &loss}}));
        QCOMPARE(t.counters.size(), kTraceMaxLossSamples);
        QCOMPARE(t.counters.front()["ts"].get<long long>(), 0LL);
        QCOMPARE(t.counters.back()["ts"].get<long long>(), 50000LL * 1000);
        for (const json& c : t.counters)
            QCOMPARE(c["args"]["loss"].get<double>() * 1000, c["ts"].get<double>());
    }

    // Labels are JSON strings: quotes, backslashes and control bytes survive the round trip.
    void labelsEscaped() {
        ScheduleParams p;
        p.stages = 2;
        p.microbatches = 2;
        const Timeline tl = buildTimeline(p);
        const std::string label = "a \"b\" \\ c\td\x01 é";
        const Tracks t = readTrace(chromeTraceJson({{label, &tl, nullptr, nullptr}}));
        QCOMPARE(t.processName.at(1), label);
    }

    // A whole run: PD (with its delays and objective per slot) and LocalSGD's S replicas; RPD
    // has no timeline and no track.
    void experimentResultTrace() {
        ExperimentConfig c = smallRun();
        RunOptions o;
        o.threads = 2;
        const ExperimentResult res = runExperiment(c, o);
        QCOMPARE(res.methods.size(), std::size_t(3));
        const RunResult& pd = res.methods[0].result;
        const RunResult& lsgd = res.methods[2].result;
        QVERIFY(pd.timeline && pd.delays && lsgd.timeline && !res.methods[1].result.timeline);
        const Tracks t = readTrace(chromeTraceJson(res));
        const int replicas = lsgd.timeline->params.replicas;
        QCOMPARE(replicas, 4);
        QCOMPARE(t.processName.size(), std::size_t(1 + replicas));
        QCOMPARE(t.processName.at(1), pd.label);
        QCOMPARE(t.processName.at(2), lsgd.label + " replica 1");
        QCOMPARE(t.threadName.size(), std::size_t(4 * (1 + replicas)));
        QCOMPARE(t.complete.size(), pd.timeline->cells.size() + lsgd.timeline->cells.size());
        Tracks first = t;
        first.complete.clear();
        for (const json& e : t.complete) {
            if (e["pid"] == 1) first.complete.push_back(e);
        }
        checkCells(first, *pd.timeline, &*pd.delays, {});
        std::size_t pdSamples = 0;
        for (const json& e : t.counters) {
            if (e["pid"] != 1) continue;
            const auto i = static_cast<std::size_t>(e["ts"].get<long long>() / 1000);
            QCOMPARE(e["args"]["loss"].get<double>(), pd.objectivePerSlot.at(i));
            ++pdSamples;
        }
        QCOMPARE(pdSamples, pd.objectivePerSlot.size());
        QCOMPARE(t.instants.size(), replicas * lsgd.timeline->averagingSlots.size());
    }
};

QTEST_GUILESS_MAIN(TestChromeTrace)
#include "tst_chrome_trace.moc"

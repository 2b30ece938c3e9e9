// Slot timelines (SPEC section 2): run lengths against the closed forms, and the dependency rules
// checked from the cells alone on many random parameter sets, default and non-default costs.
#include <QtTest>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "errors.hpp"
#include "method.hpp"
#include "schedule/program.hpp"
#include "schedule/pytorch_csv.hpp"
#include "schedule/timeline.hpp"
#include "schedule/timeline_program.hpp"

using namespace pipelens;

namespace {

// Start and end slot of every F(m, s) and B(m, s), read back from the cells.
struct OpTimes {
    int S = 0;
    int N = 0;
    std::vector<int> fStart, fEnd, bStart, bEnd;
    int at(int m, int s) const { return m * S + s; }
};

// Reads the cells back; returns a description of the first malformed cell, or an empty string.
QString collectTimes(const Timeline& tl, OpTimes& t) {
    const ScheduleParams& p = tl.params;
    t.S = p.stages;
    t.N = p.microbatches;
    const size_t n = static_cast<size_t>(t.S) * t.N;
    t.fStart.assign(n, -1);
    t.fEnd.assign(n, -1);
    t.bStart.assign(n, -1);
    t.bEnd.assign(n, -1);
    if (tl.cells.size() != 2 * n) {
        return QString("%1 cells, want 2 N S = %2").arg(tl.cells.size()).arg(2 * n);
    }
    for (const TimelineCell& c : tl.cells) {
        if (c.stage < 0 || c.stage >= t.S || c.microbatch < 0 || c.microbatch >= t.N) {
            return "cell out of range";
        }
        const int i = t.at(c.microbatch, c.stage);
        const bool fwd = c.op == OpKind::Forward;
        int& start = fwd ? t.fStart[i] : t.bStart[i];
        int& end = fwd ? t.fEnd[i] : t.bEnd[i];
        if (start != -1) {
            return QString("%1(%2, %3) appears twice")
                .arg(fwd ? "F" : "B")
                .arg(c.microbatch)
                .arg(c.stage);
        }
        start = c.startSlot;
        end = c.endSlot;
        const int want = fwd ? p.costs.forwardSlots : p.costs.backwardSlots;
        if (end - start + 1 != want) return "a cell's length differs from its op's cost";
    }
    return {};
}

#define CHECK_THAT(cond, ...)                               \
    do {                                                    \
        if (!(cond)) return QString::asprintf(__VA_ARGS__); \
    } while (0)

// Every rule of SPEC section 2 that a valid timeline must obey, checked from the cells only.
// Returns the first violation, or an empty string.
QString violation(const Timeline& tl) {
    const ScheduleParams& p = tl.params;
    OpTimes t;
    QString malformed = collectTimes(tl, t);
    if (!malformed.isEmpty()) return malformed;
    const int S = t.S;
    const int N = t.N;
    const int lat = p.costs.latencySlots;

    // Cells are sorted by (start slot, stage).
    for (size_t i = 1; i < tl.cells.size(); ++i) {
        const auto& a = tl.cells[i - 1];
        const auto& b = tl.cells[i];
        CHECK_THAT(a.startSlot < b.startSlot || (a.startSlot == b.startSlot && a.stage < b.stage),
                   "cells not sorted at %zu", i);
    }
    int lastEnd = -1;
    for (const auto& c : tl.cells) lastEnd = std::max(lastEnd, c.endSlot);
    CHECK_THAT(tl.totalSlots == lastEnd + 1, "totalSlots %d, last busy slot %d", tl.totalSlots,
               lastEnd);
    // The run ends when the last microbatch's backward on stage 1 finishes.
    CHECK_THAT(t.bEnd[t.at(N - 1, 0)] == lastEnd, "run does not end with B(N-1, 0)");

    for (int m = 0; m < N; ++m) {
        for (int s = 0; s < S; ++s) {
            const int i = t.at(m, s);
            if (s > 0) {
                CHECK_THAT(t.fStart[i] > t.fEnd[t.at(m, s - 1)] + lat,
                           "F(%d,%d) at %d before F(%d,%d) ended at %d (+latency %d)", m, s,
                           t.fStart[i], m, s - 1, t.fEnd[t.at(m, s - 1)], lat);
            }
            CHECK_THAT(t.bStart[i] > t.fEnd[i], "B(%d,%d) before its own forward", m, s);
            if (s < S - 1) {
                CHECK_THAT(t.bStart[i] > t.bEnd[t.at(m, s + 1)] + lat,
                           "B(%d,%d) at %d before B(%d,%d) ended at %d (+latency %d)", m, s,
                           t.bStart[i], m, s + 1, t.bEnd[t.at(m, s + 1)], lat);
            }
            if (m > 0) {
                // Each stage runs forwards, and backwards, in microbatch order.
                CHECK_THAT(t.fStart[i] > t.fStart[t.at(m - 1, s)], "F order on stage %d", s);
                CHECK_THAT(t.bStart[i] > t.bStart[t.at(m - 1, s)], "B order on stage %d", s);
            }
        }
    }

    // One operation per stage per slot.
    std::vector<std::vector<int>> busy(S, std::vector<int>(tl.totalSlots, 0));
    for (const auto& c : tl.cells) {
        for (int x = c.startSlot; x <= c.endSlot; ++x) {
            CHECK_THAT(++busy[c.stage][x] == 1, "stage %d runs two ops in slot %d", c.stage, x);
        }
    }

    // Peak stash: copies held from a forward's start until its backward starts.
    for (int s = 0; s < S; ++s) {
        int peak = 0;
        for (int x = 0; x < tl.totalSlots; ++x) {
            int held = 0;
            for (int m = 0; m < N; ++m) {
                if (t.fStart[t.at(m, s)] <= x && x < t.bStart[t.at(m, s)]) ++held;
            }
            peak = std::max(peak, held);
        }
        CHECK_THAT(tl.peakStash.at(s) == peak, "peak stash of stage %d: %d, counted %d", s,
                   tl.peakStash.at(s), peak);
    }

    if (p.kind == ScheduleKind::PipeDream) {
        // NOAM: when F(m, 0) starts, fewer than NOAM microbatches are in flight (a microbatch
        // leaves the flight when B(m, 0) has finished).
        for (int m = 0; m < N; ++m) {
            const int x = t.fStart[t.at(m, 0)];
            int inFlight = 0;
            for (int q = 0; q < m; ++q) {
                if (t.bEnd[t.at(q, 0)] >= x) ++inFlight;
            }
            CHECK_THAT(inFlight < p.noam, "F(%d,0) at slot %d with %d in flight (NOAM %d)", m, x,
                       inFlight, p.noam);
        }
        CHECK_THAT(tl.averagingSlots.empty(), "PD has no averaging");
    }

    if (p.kind == ScheduleKind::LocalSgd) {
        const int R = p.replicas;
        const int round = R * p.localSteps;
        for (int m = 0; m < N; ++m) {
            const int q = m / round;
            // The same replica's previous microbatch of this round.
            const int prev = m - R;
            if (prev >= q * round) {
                for (int s = 0; s < S; ++s) {
                    CHECK_THAT(t.fStart[t.at(m, s)] > t.bEnd[t.at(prev, s)],
                               "F(%d,%d) at %d before B(%d,%d) of the same replica ended at %d", m,
                               s, t.fStart[t.at(m, s)], prev, s, t.bEnd[t.at(prev, s)]);
                }
            }
            // No forward of round q before round q-1 drained (every B on stage 1 finished).
            if (q > 0) {
                for (int r = (q - 1) * round; r < q * round; ++r) {
                    CHECK_THAT(t.fStart[t.at(m, 0)] > t.bEnd[t.at(r, 0)],
                               "F(%d,0) of round %d before B(%d,0) of the previous round", m, q, r);
                }
            }
        }
        // Averaging at the end of each complete round: the slot its last B on stage 1 ends.
        std::vector<int> want;
        for (int q = 0; (q + 1) * round <= N; ++q) {
            int end = -1;
            for (int r = q * round; r < (q + 1) * round; ++r)
                end = std::max(end, t.bEnd[t.at(r, 0)]);
            want.push_back(end);
        }
        CHECK_THAT(tl.averagingSlots == want, "averaging slots differ (%zu vs %zu rounds)",
                   tl.averagingSlots.size(), want.size());
    }

    if (p.kind == ScheduleKind::FillDrain) {
        const int G = p.flushGroup;
        for (int m = 0; m < N; ++m) {
            const int g = m / G;
            const int last = std::min(N, (g + 1) * G) - 1;
            for (int s = 0; s < S; ++s) {
                // Backwards of a group only after all its forwards left the last stage.
                CHECK_THAT(t.bStart[t.at(m, s)] > t.fEnd[t.at(last, S - 1)],
                           "B(%d,%d) before the group's forwards finished", m, s);
            }
            if (g > 0) {
                for (int r = (g - 1) * G; r < g * G; ++r) {
                    CHECK_THAT(t.fStart[t.at(m, 0)] > t.bEnd[t.at(r, 0)],
                               "group %d starts before group %d flushed", g, g - 1);
                }
            }
        }
    }
    return {};
}

#define checkInvariants(tl)                     \
    do {                                        \
        const QString v_ = violation(tl);       \
        QVERIFY2(v_.isEmpty(), qPrintable(v_)); \
    } while (0)

ScheduleParams params(ScheduleKind kind, int S, int N) {
    ScheduleParams p;
    p.kind = kind;
    p.stages = S;
    p.microbatches = N;
    return p;
}

// A busy grid counted slot by slot, independent of utilization()'s arithmetic.
std::vector<int> busySlotsPerStage(const Timeline& tl) {
    std::vector<std::vector<char>> grid(tl.params.stages, std::vector<char>(tl.totalSlots, 0));
    for (const auto& c : tl.cells) {
        for (int x = c.startSlot; x <= c.endSlot; ++x) grid[c.stage][x] = 1;
    }
    std::vector<int> busy;
    busy.reserve(grid.size());
    for (const auto& row : grid)
        busy.push_back(static_cast<int>(std::count(row.begin(), row.end(), 1)));
    return busy;
}

void expectConfigError(const ScheduleParams& p, const QString& field) {
    try {
        buildTimeline(p);
    } catch (const ConfigError& e) {
        const QString msg = QString::fromStdString(e.what());
        QVERIFY2(msg.startsWith(field + " = "), qPrintable(msg));
        QVERIFY2(msg.contains("not allowed"), qPrintable(msg));
        return;
    }
    QFAIL(qPrintable("no ConfigError for bad " + field));
}

}  // namespace

class TestSchedule : public QObject {
    Q_OBJECT
  private slots:
    void pipeDreamRunLength() {
        for (int S = 1; S <= 24; ++S) {
            for (int N : {1, 2, 3, S - 1, S, S + 1, 2 * S, 10 * S + 3}) {
                if (N < 1) continue;
                Timeline tl = buildTimeline(params(ScheduleKind::PipeDream, S, N));
                QCOMPARE(tl.totalSlots, 2 * N + 2 * (S - 1));
                QCOMPARE(pipeDreamSlotsFormula(S, N), 2 * N + 2 * (S - 1));
                checkInvariants(tl);
            }
        }
    }

    void fillDrainRunLengthAndSlots() {
        for (int S = 1; S <= 12; ++S) {
            for (int N : {1, 2, S, 3 * S + 1}) {
                Timeline tl = buildTimeline(params(ScheduleKind::FillDrain, S, N));
                QCOMPARE(tl.totalSlots, 2 * (N + S - 1));
                checkInvariants(tl);
                // SPEC: F(m, s) at slot m + s, B(m, s) at slot (N + S - 1) + m + (S - 1 - s).
                for (const auto& c : tl.cells) {
                    const int want = c.op == OpKind::Forward
                                         ? c.microbatch + c.stage
                                         : (N + S - 1) + c.microbatch + (S - 1 - c.stage);
                    QCOMPARE(c.startSlot, want);
                }
            }
        }
    }

    void fillDrainFlushGroups() {
        // G microbatches per flush: N/G independent GPipe rounds of 2 (G + S - 1) slots each.
        for (int S : {2, 3, 5}) {
            for (int G : {1, 2, 4}) {
                for (int groups : {1, 3}) {
                    ScheduleParams p = params(ScheduleKind::FillDrain, S, G * groups);
                    p.flushGroup = G;
                    Timeline tl = buildTimeline(p);
                    QCOMPARE(tl.totalSlots, groups * 2 * (G + S - 1));
                    checkInvariants(tl);
                }
            }
        }
    }

    void localSgdRoundLength() {
        // R = S: one round of S*H microbatches lasts 2SH + 2(S - 1) slots.
        for (int S = 1; S <= 10; ++S) {
            for (int H : {1, 2, 3, 5}) {
                for (int rounds : {1, 2, 3}) {
                    ScheduleParams p = params(ScheduleKind::LocalSgd, S, rounds * S * H);
                    p.localSteps = H;
                    Timeline tl = buildTimeline(p);
                    const int round = 2 * S * H + 2 * (S - 1);
                    QCOMPARE(localSgdRoundSlotsFormula(S, H), round);
                    QCOMPARE(tl.totalSlots, rounds * round);
                    QCOMPARE(static_cast<int>(tl.averagingSlots.size()), rounds);
                    for (int q = 0; q < rounds; ++q)
                        QCOMPARE(tl.averagingSlots[q], (q + 1) * round - 1);
                    checkInvariants(tl);
                }
            }
        }
    }

    void localSgdPartialRoundIsNotAveraged() {
        ScheduleParams p = params(ScheduleKind::LocalSgd, 4, 4 * 2 + 3);
        p.localSteps = 2;
        Timeline tl = buildTimeline(p);
        QCOMPARE(static_cast<int>(tl.averagingSlots.size()), 1);
        checkInvariants(tl);
    }

    void invariantsOnRandomParameters_data() {
        QTest::addColumn<int>("forwardSlots");
        QTest::addColumn<int>("backwardSlots");
        QTest::addColumn<int>("latency");
        QTest::newRow("default costs") << 1 << 1 << 0;
        QTest::newRow("F=1 B=2 latency 1") << 1 << 2 << 1;
        QTest::newRow("F=2 B=3 latency 2") << 2 << 3 << 2;
    }
    void invariantsOnRandomParameters() {
        QFETCH(int, forwardSlots);
        QFETCH(int, backwardSlots);
        QFETCH(int, latency);
        std::mt19937 rng(20240611u +
                         static_cast<unsigned>(forwardSlots * 100 + backwardSlots * 10 + latency));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        std::map<ScheduleKind, int> counted;
        for (int trial = 0; trial < 150; ++trial) {
            ScheduleParams p;
            p.kind = static_cast<ScheduleKind>(trial % 3);
            p.stages = pick(1, 9);
            p.microbatches = pick(1, 40);
            p.costs = {forwardSlots, backwardSlots, latency};
            if (p.kind == ScheduleKind::PipeDream) p.noam = pick(0, 2 * p.stages);
            if (p.kind == ScheduleKind::LocalSgd) {
                p.replicas = pick(0, p.stages + 2);
                p.localSteps = pick(1, 4);
            }
            if (p.kind == ScheduleKind::FillDrain) p.flushGroup = pick(0, 6);
            Timeline tl = buildTimeline(p);
            // Resolved defaults.
            if (p.kind == ScheduleKind::PipeDream) {
                QCOMPARE(tl.params.noam, p.noam == 0 ? p.stages : p.noam);
            }
            if (p.kind == ScheduleKind::LocalSgd) {
                QCOMPARE(tl.params.replicas, p.replicas == 0 ? p.stages : p.replicas);
            }
            if (p.kind == ScheduleKind::FillDrain) {
                QCOMPARE(tl.params.flushGroup, p.flushGroup == 0 ? p.microbatches : p.flushGroup);
            }
            const QString v = violation(tl);
            QVERIFY2(v.isEmpty(),
                     qPrintable(QString("%1 (kind %2 S=%3 N=%4 noam=%5 R=%6 H=%7 G=%8)")
                                    .arg(v)
                                    .arg(QString::fromStdString(scheduleKindName(p.kind)))
                                    .arg(p.stages)
                                    .arg(p.microbatches)
                                    .arg(p.noam)
                                    .arg(p.replicas)
                                    .arg(p.localSteps)
                                    .arg(p.flushGroup)));
            ++counted[p.kind];
        }
        QCOMPARE(static_cast<int>(counted.size()), 3);
    }

    void checkerCatchesBrokenTimelines() {
        // The invariant checker itself must be able to fail.
        const Timeline good = buildTimeline(params(ScheduleKind::PipeDream, 3, 6));
        QVERIFY(violation(good).isEmpty());
        auto broken = [&](const std::function<void(Timeline&)>& edit) {
            Timeline t = good;
            edit(t);
            return !violation(t).isEmpty();
        };
        auto cell = [](Timeline& t, OpKind op, int m, int s) -> TimelineCell& {
            for (auto& c : t.cells) {
                if (c.op == op && c.microbatch == m && c.stage == s) return c;
            }
            throw std::logic_error("no such cell");
        };
        // F(2, 1) one slot early: before F(2, 0) finished (or on a busy slot).
        QVERIFY(broken([&](Timeline& t) {
            --cell(t, OpKind::Forward, 2, 1).startSlot;
            --cell(t, OpKind::Forward, 2, 1).endSlot;
        }));
        // B(1, 1) one slot early: before B(1, 2).
        QVERIFY(broken([&](Timeline& t) {
            --cell(t, OpKind::Backward, 1, 1).startSlot;
            --cell(t, OpKind::Backward, 1, 1).endSlot;
        }));
        QVERIFY(broken([&](Timeline& t) { t.cells.pop_back(); }));
        QVERIFY(broken([&](Timeline& t) { t.params.noam = 2; }));
        QVERIFY(broken([&](Timeline& t) { ++t.peakStash[1]; }));
        QVERIFY(broken([&](Timeline& t) { ++t.totalSlots; }));
        QVERIFY(broken([&](Timeline& t) { t.params.costs.backwardSlots = 2; }));
        ScheduleParams lp = params(ScheduleKind::LocalSgd, 3, 12);
        lp.localSteps = 2;
        Timeline local = buildTimeline(lp);
        QVERIFY(violation(local).isEmpty());
        local.params.replicas = 1;  // claims one replica: sequential dependencies are violated
        QVERIFY(!violation(local).isEmpty());
        local = buildTimeline(lp);
        local.averagingSlots.pop_back();
        QVERIFY(!violation(local).isEmpty());
        // A PD timeline relabelled as LocalSGD starts rounds before the previous one drained.
        Timeline relabelled = buildTimeline(params(ScheduleKind::PipeDream, 3, 12));
        relabelled.params.kind = ScheduleKind::LocalSgd;
        relabelled.params.replicas = 3;
        relabelled.params.localSteps = 1;
        QVERIFY(!violation(relabelled).isEmpty());
    }

    void pipeDreamNoamOne() {
        // NOAM = 1: one microbatch at a time, so the run is N round trips of 2S slots.
        for (int S : {1, 3, 6}) {
            ScheduleParams p = params(ScheduleKind::PipeDream, S, 7);
            p.noam = 1;
            Timeline tl = buildTimeline(p);
            QCOMPARE(tl.totalSlots, 7 * 2 * S);
            checkInvariants(tl);
        }
    }

    void pipeDreamLatencyLengthens() {
        // Non-default costs cannot make the run shorter than the critical path of one microbatch.
        ScheduleParams p = params(ScheduleKind::PipeDream, 5, 20);
        p.costs = {1, 2, 1};
        Timeline tl = buildTimeline(p);
        const int oneTrip = 5 * 1 + 5 * 2 + 2 * 4 * 1;
        QVERIFY(tl.totalSlots >= oneTrip);
        QVERIFY(tl.totalSlots > buildTimeline(params(ScheduleKind::PipeDream, 5, 20)).totalSlots);
        // Each stage is busy 20 * (1 + 2) slots at most once per slot.
        for (int b : busySlotsPerStage(tl)) QCOMPARE(b, 20 * 3);
        checkInvariants(tl);
    }

    void utilizationEqualsDirectCount() {
        std::vector<ScheduleParams> cases;
        cases.push_back(params(ScheduleKind::PipeDream, 4, 9));
        cases.push_back(params(ScheduleKind::FillDrain, 6, 5));
        ScheduleParams l = params(ScheduleKind::LocalSgd, 3, 13);
        l.localSteps = 2;
        cases.push_back(l);
        ScheduleParams c = params(ScheduleKind::PipeDream, 5, 11);
        c.costs = {1, 2, 1};
        cases.push_back(c);
        for (const ScheduleParams& p : cases) {
            Timeline tl = buildTimeline(p);
            Utilization u = utilization(tl);
            std::vector<int> busy = busySlotsPerStage(tl);
            QCOMPARE(static_cast<int>(u.perStage.size()), p.stages);
            double sum = 0.0;
            for (int s = 0; s < p.stages; ++s) {
                const double want = static_cast<double>(busy[s]) / tl.totalSlots;
                QVERIFY(std::abs(u.perStage[s] - want) < 1e-15);
                sum += want;
            }
            QVERIFY(std::abs(u.overall - sum / p.stages) < 1e-15);
            QVERIFY(std::abs(u.bubbleFraction - (1.0 - sum / p.stages)) < 1e-15);
        }
        // PD: every stage does 2N slots of work in 2N + 2(S - 1): utilization N / (N + S - 1).
        Utilization pd = utilization(buildTimeline(params(ScheduleKind::PipeDream, 8, 80)));
        QVERIFY(std::abs(pd.overall - 80.0 / 87.0) < 1e-12);
        QVERIFY(std::abs(pd.bubbleFraction - 7.0 / 87.0) < 1e-12);
    }

    // A slot timeline as a PyTorch schedule program: every cell at (stage, start slot), valid
    // under the strict checks, the same length, bubble and peak stash, and the CSV round trip.
    void timelineAsProgram() {
        std::vector<ScheduleParams> cases;
        cases.push_back(params(ScheduleKind::PipeDream, 4, 9));
        cases.push_back(params(ScheduleKind::PipeDream, 1, 3));
        ScheduleParams f = params(ScheduleKind::FillDrain, 6, 10);
        f.flushGroup = 4;
        cases.push_back(f);
        ScheduleParams l = params(ScheduleKind::LocalSgd, 3, 13);
        l.localSteps = 2;
        cases.push_back(l);
        ScheduleParams lat = params(ScheduleKind::PipeDream, 3, 7);
        lat.costs.latencySlots = 2;
        cases.push_back(lat);
        for (const ScheduleParams& p : cases) {
            const Timeline tl = buildTimeline(p);
            const PipelineProgram program = programFromTimeline(tl);
            QCOMPARE(static_cast<int>(program.ranks.size()), p.stages);
            long long busy = 0;
            for (const auto& row : program.ranks) {
                QCOMPARE(static_cast<int>(row.size()), tl.totalSlots);
                for (const ProgramStep& step : row) busy += step.count;
            }
            QCOMPARE(busy, static_cast<long long>(tl.cells.size()));
            for (const TimelineCell& c : tl.cells) {
                const ProgramStep& step = program.ranks[c.stage][c.startSlot];
                QCOMPARE(step.count, 1);
                QCOMPARE(step.actions[0].stage, c.stage);
                QCOMPARE(step.actions[0].microbatch, c.microbatch);
                QVERIFY((step.actions[0].kind == ActionKind::Forward) == (c.op == OpKind::Forward));
            }
            validateProgram(program);
            const ProgramSummary sum = summarizeProgram(program);
            QCOMPARE(sum.lengthSteps, static_cast<long long>(tl.totalSlots));
            QCOMPARE(sum.microbatches, p.microbatches);
            QVERIFY(std::abs(sum.bubbleFraction - utilization(tl).bubbleFraction) < 1e-12);
            QCOMPARE(sum.peakActivations, tl.peakStash);
            QVERIFY(parsePytorchScheduleCsv(pytorchScheduleCsv(program), "rt.csv").ranks ==
                    program.ranks);
        }
        ScheduleParams slow = params(ScheduleKind::PipeDream, 3, 5);
        slow.costs.backwardSlots = 2;
        try {
            (void)programFromTimeline(buildTimeline(slow));
            QFAIL("a backward of two slots was written as one step");
        } catch (const ConfigError& e) {
            QVERIFY(QString(e.what()).contains("backward_slots = 2"));
        }
    }

    void microbatchesForBudgetIsLargestFit() {
        std::vector<ScheduleParams> cases;
        cases.push_back(params(ScheduleKind::PipeDream, 4, 1));
        cases.push_back(params(ScheduleKind::FillDrain, 3, 1));
        ScheduleParams l = params(ScheduleKind::LocalSgd, 4, 1);
        l.localSteps = 3;
        cases.push_back(l);
        ScheduleParams f = params(ScheduleKind::FillDrain, 4, 1);
        f.flushGroup = 4;
        cases.push_back(f);
        ScheduleParams c = params(ScheduleKind::PipeDream, 3, 1);
        c.costs = {1, 2, 1};
        cases.push_back(c);
        for (ScheduleParams p : cases) {
            for (int budget : {0, 1, 5, 7, 8, 9, 17, 40, 41, 100, 257}) {
                const int n = microbatchesForBudget(p, budget);
                QVERIFY(n >= 0);
                if (n > 0) {
                    p.microbatches = n;
                    QVERIFY(buildTimeline(p).totalSlots <= budget);
                }
                p.microbatches = n + 1;
                QVERIFY2(buildTimeline(p).totalSlots > budget,
                         qPrintable(QString("N=%1 also fits %2 slots").arg(n + 1).arg(budget)));
            }
        }
        // PD closed form: the largest N with 2N + 2(S - 1) <= B.
        for (int budget = 6; budget < 60; ++budget) {
            QCOMPARE(microbatchesForBudget(params(ScheduleKind::PipeDream, 4, 1), budget),
                     (budget - 6) / 2);
        }
    }

    void timelineCsvFormat() {
        Timeline tl = buildTimeline(params(ScheduleKind::PipeDream, 2, 2));
        // Hand-derived: F0 on both stages, then 1F1B.
        QCOMPARE(
            QString::fromStdString(timelineCsv(tl)),
            QString("slot,stage,op,microbatch\n"
                    "0,0,F,0\n1,0,F,1\n1,1,F,0\n2,1,B,0\n3,0,B,0\n3,1,F,1\n4,1,B,1\n5,0,B,1\n"));
        ScheduleParams p = params(ScheduleKind::PipeDream, 2, 1);
        p.costs = {1, 2, 0};
        QCOMPARE(QString::fromStdString(timelineCsv(buildTimeline(p), true)),
                 QString("slot,stage,op,microbatch,end_slot\n"
                         "0,0,F,0,0\n1,1,F,0,1\n2,1,B,0,3\n4,0,B,0,5\n"));
    }

    void replayOrderActsAtForwardStartAndBackwardEnd() {
        ScheduleParams p = params(ScheduleKind::PipeDream, 3, 6);
        p.costs = {1, 3, 1};
        Timeline tl = buildTimeline(p);
        std::vector<ReplayEvent> ev = replayOrder(tl);
        QCOMPARE(ev.size(), tl.cells.size());
        for (size_t i = 1; i < ev.size(); ++i) {
            QVERIFY(ev[i - 1].slot < ev[i].slot ||
                    (ev[i - 1].slot == ev[i].slot && ev[i - 1].stage < ev[i].stage));
        }
        std::multiset<std::tuple<int, int, int, int>> want, got;
        for (const auto& c : tl.cells) {
            want.insert({c.op == OpKind::Forward ? c.startSlot : c.endSlot, c.stage,
                         static_cast<int>(c.op), c.microbatch});
        }
        for (const auto& e : ev)
            got.insert({e.slot, e.stage, static_cast<int>(e.op), e.microbatch});
        QVERIFY(want == got);
    }

    void badParametersThrowNamingTheField() {
        ScheduleParams ok = params(ScheduleKind::PipeDream, 4, 8);
        ScheduleParams p = ok;
        p.stages = 0;
        expectConfigError(p, "stages");
        p = ok;
        p.stages = -3;
        expectConfigError(p, "stages");
        p = ok;
        p.microbatches = 0;
        expectConfigError(p, "microbatches");
        p = ok;
        p.noam = -1;
        expectConfigError(p, "noam");
        p = ok;
        p.kind = ScheduleKind::LocalSgd;
        p.replicas = -2;
        expectConfigError(p, "replicas");
        p = ok;
        p.kind = ScheduleKind::LocalSgd;
        p.localSteps = 0;
        expectConfigError(p, "local_steps");
        p = ok;
        p.kind = ScheduleKind::FillDrain;
        p.flushGroup = -1;
        expectConfigError(p, "flush_group");
        p = ok;
        p.costs.forwardSlots = 0;
        expectConfigError(p, "forward_slots");
        p = ok;
        p.costs.backwardSlots = 0;
        expectConfigError(p, "backward_slots");
        p = ok;
        p.costs.latencySlots = -1;
        expectConfigError(p, "latency_slots");
        try {
            parseScheduleKind("foo");
            QFAIL("no error for kind foo");
        } catch (const ConfigError& e) {
            const QString msg = e.what();
            QVERIFY2(msg.contains("kind") && msg.contains("foo") && msg.contains("pd") &&
                         msg.contains("fill-drain") && msg.contains("localsgd"),
                     qPrintable(msg));
        }
        QCOMPARE(parseScheduleKind("pd"), ScheduleKind::PipeDream);
        QCOMPARE(parseScheduleKind("fill-drain"), ScheduleKind::FillDrain);
        QCOMPARE(parseScheduleKind("localsgd"), ScheduleKind::LocalSgd);
    }

    void artHasOneRowPerStage() {
        Timeline tl = buildTimeline(params(ScheduleKind::PipeDream, 5, 7));
        const QStringList lines =
            QString::fromStdString(timelineArt(tl)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + 5);
        for (int s = 0; s < 5; ++s) QVERIFY(lines[1 + s].startsWith(QString("stage %1 |").arg(s)));
    }
};

QTEST_APPLESS_MAIN(TestSchedule)
#include "tst_schedule.moc"

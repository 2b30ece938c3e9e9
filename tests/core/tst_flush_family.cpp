// The flushing schedule family as programs (SPEC section 2.1; flush_family.hpp) and timeProgram.
// Each built grid is read back by a checker written here (not validateProgram): every stage on
// one rank, every microbatch's F and B (or I and W) exactly once per stage, the dependencies
// strictly in column order, one action per rank and step; then its length, bubble and peak
// activations against closed forms stated with the reason they hold. timeProgram is compared
// with a slot-by-slot simulator written here on the families' orders with several costs.
#include <QtTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "core/expect_error.hpp"
#include "errors.hpp"
#include "schedule/flush_family.hpp"
#include "schedule/program.hpp"

using namespace pipelens;

namespace {

// Dependency classes: F, a backward that the stage before waits for (B or I), W.
constexpr int kF = 0;
constexpr int kBack = 1;
constexpr int kW = 2;

int classOf(ActionKind k) {
    if (k == ActionKind::Forward) return kF;
    if (k == ActionKind::WeightGrad) return kW;
    return kBack;
}

// What the checker reads from a compute-only grid (columns are unit-cost times).
struct GridFacts {
    QString error;                // empty: valid
    long long length = 0;         // one past the last busy column
    std::vector<long long> busy;  // per rank
    std::vector<int> stageRank;
    std::vector<int> stagePeak;  // per stage: activations held at once, F column to release
    std::vector<int> rankPeak;   // per rank: the sum over its stages, column by column
};

GridFacts checkGrid(const PipelineProgram& p, int stages, int micro, bool split) {
    GridFacts f;
    const auto n = static_cast<std::size_t>(stages) * static_cast<std::size_t>(micro);
    // col[kind][s * M + m]; kind 0 F, 1 B, 2 I, 3 W.
    std::array<std::vector<long long>, 4> col;
    for (auto& c : col) c.assign(n, -1);
    f.stageRank.assign(static_cast<std::size_t>(stages), -1);
    f.busy.assign(p.ranks.size(), 0);
    const auto fail = [&](const QString& why) {
        if (f.error.isEmpty()) f.error = why;
    };
    for (std::size_t r = 0; r < p.ranks.size(); ++r) {
        for (std::size_t t = 0; t < p.ranks[r].size(); ++t) {
            const ProgramStep& step = p.ranks[r][t];
            if (step.count == 0) continue;
            if (step.count != 1) {
                fail(QString("rank %1 step %2 holds %3 actions").arg(r).arg(t).arg(step.count));
                continue;
            }
            const Action& a = step.actions[0];
            if (a.stage < 0 || a.stage >= stages || a.microbatch < 0 || a.microbatch >= micro) {
                fail(QString("rank %1 step %2: stage %3 microbatch %4 out of range")
                         .arg(r)
                         .arg(t)
                         .arg(a.stage)
                         .arg(a.microbatch));
                continue;
            }
            int& owner = f.stageRank[static_cast<std::size_t>(a.stage)];
            if (owner >= 0 && owner != static_cast<int>(r)) {
                fail(QString("stage %1 on ranks %2 and %3").arg(a.stage).arg(owner).arg(r));
            }
            owner = static_cast<int>(r);
            long long& c = col[static_cast<std::size_t>(a.kind)]
                              [static_cast<std::size_t>(a.stage) * micro + a.microbatch];
            if (c >= 0) {
                fail(QString("kind %1 stage %2 microbatch %3 twice")
                         .arg(static_cast<int>(a.kind))
                         .arg(a.stage)
                         .arg(a.microbatch));
            }
            c = static_cast<long long>(t);
            ++f.busy[r];
            f.length = std::max(f.length, static_cast<long long>(t) + 1);
        }
    }
    const auto at = [&](int kind, int s, int m) {
        return col[static_cast<std::size_t>(kind)][static_cast<std::size_t>(s) * micro + m];
    };
    f.stagePeak.assign(static_cast<std::size_t>(stages), 0);
    f.rankPeak.assign(p.ranks.size(), 0);
    std::vector<std::vector<int>> rankHeld(
        p.ranks.size(), std::vector<int>(static_cast<std::size_t>(f.length) + 1, 0));
    for (int s = 0; s < stages; ++s) {
        std::vector<int> held(static_cast<std::size_t>(f.length) + 1, 0);
        for (int m = 0; m < micro; ++m) {
            const long long fw = at(0, s, m);
            const long long b = at(1, s, m);
            const long long i = at(2, s, m);
            const long long w = at(3, s, m);
            const QString sm = QString("stage %1 microbatch %2").arg(s).arg(m);
            if (fw < 0) fail("no F for " + sm);
            if (split && (b >= 0 || i < 0 || w < 0)) fail("not exactly one I and one W for " + sm);
            if (!split && (b < 0 || i >= 0 || w >= 0)) fail("not exactly one B for " + sm);
            const long long back = split ? i : b;
            if (fw < 0 || back < 0) continue;
            if (s > 0 && !(at(0, s - 1, m) < fw)) fail("F not after F of the stage before: " + sm);
            if (!(back > fw)) fail("backward not after F: " + sm);
            if (s + 1 < stages) {
                const long long next = split ? at(2, s + 1, m) : at(1, s + 1, m);
                if (!(next >= 0 && next < back)) fail("backward not after the next stage's: " + sm);
            }
            if (split && !(w > i)) fail("W not after I: " + sm);
            const long long release = split ? w : b;
            if (release < 0) continue;
            for (long long t = fw; t <= release; ++t) {
                ++held[static_cast<std::size_t>(t)];
                const int r = f.stageRank[static_cast<std::size_t>(s)];
                if (r >= 0) ++rankHeld[static_cast<std::size_t>(r)][static_cast<std::size_t>(t)];
            }
        }
        f.stagePeak[static_cast<std::size_t>(s)] = *std::max_element(held.begin(), held.end());
    }
    for (std::size_t r = 0; r < p.ranks.size(); ++r) {
        f.rankPeak[r] = *std::max_element(rankHeld[r].begin(), rankHeld[r].end());
    }
    for (int s = 0; s < stages; ++s) {
        if (f.stageRank[static_cast<std::size_t>(s)] < 0) fail(QString("stage %1 absent").arg(s));
    }
    return f;
}

// A slot-by-slot simulator: at every slot, each rank that is free starts its next step when
// every dependency of its actions has ended by then. Independent of timeProgram's event loop.
struct Simulated {
    bool deadlock = false;
    std::array<std::vector<long long>, 3> start;  // per class, s * M + m
    long long length = 0;
    std::vector<long long> busy;
    std::vector<int> peak;
};

Simulated simulate(const PipelineProgram& p, const ActionCosts& c) {
    int stages = 0;
    int micro = 0;
    for (const auto& row : p.ranks) {
        for (const ProgramStep& st : row) {
            for (int i = 0; i < st.count; ++i) {
                stages = std::max(stages, st.actions[static_cast<std::size_t>(i)].stage + 1);
                micro = std::max(micro, st.actions[static_cast<std::size_t>(i)].microbatch + 1);
            }
        }
    }
    const auto n = static_cast<std::size_t>(stages) * static_cast<std::size_t>(micro);
    Simulated out;
    std::array<std::vector<long long>, 3> end;
    for (int k = 0; k < 3; ++k) {
        out.start[static_cast<std::size_t>(k)].assign(n, -1);
        end[static_cast<std::size_t>(k)].assign(n, -1);
    }
    const auto cost = [&](ActionKind k) -> long long {
        switch (k) {
            case ActionKind::Forward:
                return c.forward;
            case ActionKind::Backward:
                return c.backward;
            case ActionKind::InputGrad:
                return c.inputGrad;
            case ActionKind::WeightGrad:
                return c.weightGrad;
        }
        return 1;
    };
    const auto idx = [&](int s, int m) { return static_cast<std::size_t>(s) * micro + m; };
    // Ended by slot t (an end of -1 is "not yet").
    const auto done = [&](int cls, int s, int m, long long t) {
        const long long e = end[static_cast<std::size_t>(cls)][idx(s, m)];
        return e >= 0 && e <= t;
    };
    const auto ready = [&](const Action& a, long long t) {
        switch (a.kind) {
            case ActionKind::Forward:
                return a.stage == 0 || done(kF, a.stage - 1, a.microbatch, t);
            case ActionKind::Backward:
            case ActionKind::InputGrad:
                return done(kF, a.stage, a.microbatch, t) &&
                       (a.stage + 1 == stages || done(kBack, a.stage + 1, a.microbatch, t));
            case ActionKind::WeightGrad:
                return done(kBack, a.stage, a.microbatch, t);
        }
        return false;
    };
    const std::size_t ranks = p.ranks.size();
    std::vector<std::size_t> pos(ranks, 0);
    std::vector<long long> freeAt(ranks, 0);
    out.busy.assign(ranks, 0);
    std::size_t remaining = 0;
    for (const auto& row : p.ranks) {
        for (const ProgramStep& st : row) remaining += st.count > 0 ? 1 : 0;
    }
    long long lastProgress = 0;
    for (long long t = 0; remaining > 0; ++t) {
        for (std::size_t r = 0; r < ranks; ++r) {
            const auto& row = p.ranks[r];
            while (pos[r] < row.size() && row[pos[r]].count == 0) ++pos[r];
            if (pos[r] >= row.size() || freeAt[r] > t) continue;
            const ProgramStep& st = row[pos[r]];
            bool ok = true;
            for (int i = 0; i < st.count; ++i)
                ok = ok && ready(st.actions[static_cast<std::size_t>(i)], t);
            if (!ok) continue;
            long long busy = 0;
            for (int i = 0; i < st.count; ++i) {
                const Action& a = st.actions[static_cast<std::size_t>(i)];
                const auto cls = static_cast<std::size_t>(classOf(a.kind));
                out.start[cls][idx(a.stage, a.microbatch)] = t;
                end[cls][idx(a.stage, a.microbatch)] = t + cost(a.kind);
                busy = std::max(busy, cost(a.kind));
                out.length = std::max(out.length, t + cost(a.kind));
            }
            freeAt[r] = t + busy;
            out.busy[r] += busy;
            ++pos[r];
            --remaining;
            lastProgress = t;
        }
        if (t > lastProgress + 1000) {
            out.deadlock = true;
            return out;
        }
    }
    // Held from the F's first slot until the release (full B, else W) has ended.
    out.peak.assign(static_cast<std::size_t>(stages), 0);
    for (int s = 0; s < stages; ++s) {
        std::vector<int> diff(static_cast<std::size_t>(out.length) + 2, 0);
        for (int m = 0; m < micro; ++m) {
            const long long f0 = out.start[kF][idx(s, m)];
            const long long w = end[kW][idx(s, m)];
            const long long rel = w >= 0 ? w : end[kBack][idx(s, m)];
            if (f0 < 0 || rel < 0) continue;
            ++diff[static_cast<std::size_t>(f0)];
            --diff[static_cast<std::size_t>(rel)];
        }
        int held = 0;
        for (const int d : diff) {
            held += d;
            out.peak[static_cast<std::size_t>(s)] =
                std::max(out.peak[static_cast<std::size_t>(s)], held);
        }
    }
    return out;
}

// Compares timeProgram with the simulator: every action's start and end, length, busy, peak.
void compareWithSimulator(const PipelineProgram& p, const ActionCosts& c) {
    const Simulated sim = simulate(p, c);
    QVERIFY(!sim.deadlock);
    const ProgramTiming timing = timeProgram(p, c);
    QCOMPARE(timing.length, sim.length);
    QCOMPARE(timing.busyPerRank, sim.busy);
    QCOMPARE(timing.peakActivations, sim.peak);
    long long busy = 0;
    for (const long long b : sim.busy) busy += b;
    const double bubble = 1.0 - static_cast<double>(busy) / (static_cast<double>(p.ranks.size()) *
                                                             static_cast<double>(sim.length));
    QVERIFY(std::abs(timing.bubbleFraction - bubble) < 1e-12);
    std::size_t count = 0;
    for (const auto& row : p.ranks) {
        for (const ProgramStep& st : row) count += static_cast<std::size_t>(st.count);
    }
    QCOMPARE(timing.actions.size(), count);
    int micro = 0;
    for (const TimedAction& a : timing.actions) micro = std::max(micro, a.action.microbatch + 1);
    for (std::size_t i = 0; i < timing.actions.size(); ++i) {
        const TimedAction& a = timing.actions[i];
        const long long want =
            sim.start[static_cast<std::size_t>(classOf(a.action.kind))]
                     [static_cast<std::size_t>(a.action.stage) * micro + a.action.microbatch];
        QCOMPARE(a.start, want);
        if (i > 0) {
            const TimedAction& b = timing.actions[i - 1];
            QVERIFY(b.start < a.start || (b.start == a.start && b.rank <= a.rank));
        }
    }
}

struct Case {
    FlushKind kind;
    int S;
    int M;
    int v;
};

std::vector<Case> familyCases() {
    std::vector<Case> out;
    for (const int S : {1, 2, 3, 4, 5, 8}) {
        for (const int M : {1, 2, 3, 4, 7, 8, 12, 16}) {
            out.push_back({FlushKind::GPipe, S, M, 1});
            out.push_back({FlushKind::OneFOneB, S, M, 1});
            out.push_back({FlushKind::ZeroBubbleH1, S, M, 1});
            if (M % S == 0) {
                for (const int v : {2, 3, 4}) out.push_back({FlushKind::Interleaved, S, M, v});
            }
        }
    }
    out.push_back({FlushKind::OneFOneB, 16, 40, 1});
    out.push_back({FlushKind::ZeroBubbleH1, 16, 40, 1});
    out.push_back({FlushKind::Interleaved, 16, 32, 2});
    return out;
}

FlushScheduleParams paramsOf(const Case& c) {
    return {c.kind, c.S, c.M, c.v};
}

RankOrders orderOf(const Case& c) {
    switch (c.kind) {
        case FlushKind::GPipe:
            return gpipeOrder(c.S, c.M);
        case FlushKind::OneFOneB:
            return oneFOneBOrder(c.S, c.M);
        case FlushKind::Interleaved:
            return interleavedOrder(c.S, c.M, c.v);
        case FlushKind::ZeroBubbleH1:
            return zeroBubbleH1Order(c.S, c.M);
    }
    return {};
}

QString label(const Case& c) {
    return QString("%1 S=%2 M=%3 v=%4")
        .arg(QString::fromStdString(flushKindName(c.kind)))
        .arg(c.S)
        .arg(c.M)
        .arg(c.v);
}

}  // namespace

class TestFlushFamily : public QObject {
    Q_OBJECT

  private slots:
    void names();
    void closedForms();
    void timingAgreesWithSimulator();
    void zeroBubbleAgainstOneFOneB();
    void overlappedPair();
    void refusals();
    void deadlocks();
    void largeProgram();
};

void TestFlushFamily::names() {
    QCOMPARE(QString::fromStdString(flushKindName(FlushKind::GPipe)), QString("gpipe"));
    QCOMPARE(QString::fromStdString(flushKindName(FlushKind::OneFOneB)), QString("1f1b"));
    QCOMPARE(QString::fromStdString(flushKindName(FlushKind::Interleaved)), QString("interleaved"));
    QCOMPARE(QString::fromStdString(flushKindName(FlushKind::ZeroBubbleH1)), QString("zb-h1"));
    for (const auto& e : kFlushKinds) {
        QCOMPARE(parseEnum(kFlushKinds, e.name).value(), e.value);
    }
}

// Every family against its closed forms, read back from the grid by checkGrid.
void TestFlushFamily::closedForms() {
    for (const Case& c : familyCases()) {
        const QString at = label(c);
        const FlushScheduleParams params = paramsOf(c);
        const PipelineProgram p = buildFlushProgram(params);
        const bool split = c.kind == FlushKind::ZeroBubbleH1;
        const int stages = c.S * c.v;
        QVERIFY2(!p.orderOnly, qPrintable(at));
        QCOMPARE(p.ranks.size(), static_cast<std::size_t>(c.S));
        const GridFacts f = checkGrid(p, stages, c.M, split);
        QVERIFY2(f.error.isEmpty(), qPrintable(at + ": " + f.error));
        for (int s = 0; s < stages; ++s) {
            QCOMPARE(f.stageRank[static_cast<std::size_t>(s)], s % c.S);
        }

        // Length with unit costs. GPipe and 1F1B: microbatch M − 1 leaves stage 0 at M, reaches
        // the last stage's end at M + S − 1, and the backward wave of M microbatches on S
        // stages takes as long again: 2(M + S − 1). Interleaved: Narayanan et al. 2021 give a
        // bubble time of (S − 1)/v of a whole stage's F + B, so in chunk steps 2vM + 2(S − 1).
        // ZB-H1: the last stage cannot start before S − 1 and runs 3M ops; the first stage's
        // first I needs S forwards and S − 1 input gradients before it (2S − 1 steps) and its M
        // I and M W all follow: the length is at least max(3M + S − 1, 2M + 2S − 1), and the
        // order reaches it.
        const long long S = c.S;
        const long long M = c.M;
        long long want = 0;
        long long opsPerRank = 0;
        switch (c.kind) {
            case FlushKind::GPipe:
            case FlushKind::OneFOneB:
                want = 2 * (M + S - 1);
                opsPerRank = 2 * M;
                break;
            case FlushKind::Interleaved:
                want = 2 * (c.v * M + S - 1);
                opsPerRank = 2 * M * c.v;
                break;
            case FlushKind::ZeroBubbleH1:
                want = std::max(3 * M + S - 1, 2 * M + 2 * S - 1);
                opsPerRank = 3 * M;
                break;
        }
        QCOMPARE(f.length, want);
        QCOMPARE(flushLengthFormula(params), want);
        for (const auto& row : p.ranks) QCOMPARE(static_cast<long long>(row.size()), want);
        for (const long long b : f.busy) QCOMPARE(b, opsPerRank);
        const double bubble = 1.0 - static_cast<double>(opsPerRank) / static_cast<double>(want);
        QVERIFY2(std::abs(flushBubbleFormula(params) - bubble) < 1e-12, qPrintable(at));
        // The SPEC's forms of the bubble: (S − 1)/(M + S − 1), (S − 1)/(vM + S − 1), and for
        // ZB-H1 with M >= S, (S − 1)/(3M + S − 1).
        double spec = -1.0;
        if (c.kind == FlushKind::GPipe || c.kind == FlushKind::OneFOneB) {
            spec = static_cast<double>(S - 1) / static_cast<double>(M + S - 1);
        } else if (c.kind == FlushKind::Interleaved) {
            spec = static_cast<double>(S - 1) / static_cast<double>(c.v * M + S - 1);
        } else if (M >= S) {
            spec = static_cast<double>(S - 1) / static_cast<double>(3 * M + S - 1);
        }
        if (spec >= 0) QVERIFY2(std::abs(bubble - spec) < 1e-12, qPrintable(at));

        // Peak activations. GPipe holds all M before the first backward. 1F1B: stage s runs
        // min(S − s − 1, M) warm-up forwards and one more before its first backward, and then
        // alternates, so min(S − s, M). ZB-H1: after F(d + j) on stage s (d = S − s − 1 warm-up)
        // the W of microbatches 0 … j − s − 1 have run: d + j + 1 − (j − s) = S held, so every
        // stage holds min(S, M): the first stage's 1F1B peak, as Qi et al. bound it (the peak
        // over stages equals 1F1B's; per stage it is higher below the first stage).
        // Interleaved, per device (chunk activations, 1/v of a stage's each): the warm-up
        // forwards and one more, min(2(S − d − 1) + (v − 1)S + 1, vM).
        for (int s = 0; s < stages; ++s) {
            const int got = f.stagePeak[static_cast<std::size_t>(s)];
            switch (c.kind) {
                case FlushKind::GPipe:
                    QCOMPARE(got, c.M);
                    break;
                case FlushKind::OneFOneB:
                    QCOMPARE(got, std::min(c.S - s, c.M));
                    break;
                case FlushKind::ZeroBubbleH1:
                    QCOMPARE(got, std::min(c.S, c.M));
                    break;
                case FlushKind::Interleaved:
                    break;
            }
        }
        if (c.kind == FlushKind::Interleaved) {
            for (int d = 0; d < c.S; ++d) {
                QCOMPARE(f.rankPeak[static_cast<std::size_t>(d)],
                         std::min(2 * (c.S - d - 1) + (c.v - 1) * c.S + 1, c.v * c.M));
            }
        }

        // timeProgram on the grid: every action starts at its column (the grid is the ASAP
        // timing), and its totals equal the checker's.
        const ProgramTiming t = timeProgram(p);
        QCOMPARE(t.length, want);
        QCOMPARE(t.busyPerRank, f.busy);
        QCOMPARE(t.peakActivations, f.stagePeak);
        QVERIFY(std::abs(t.bubbleFraction - bubble) < 1e-12);
        for (const TimedAction& a : t.actions) {
            const ProgramStep& cell =
                p.ranks[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(a.start)];
            QCOMPARE(cell.count, 1);
            QVERIFY(cell.actions[0] == a.action);
            QCOMPARE(a.end, a.start + 1);
        }

        // The strict checks and summary of program.cpp agree.
        validateProgram(p);
        const ProgramSummary sum = summarizeProgram(p);
        QCOMPARE(sum.lengthSteps, want);
        QCOMPARE(sum.ranks, c.S);
        QCOMPARE(sum.stages, stages);
        QCOMPARE(sum.microbatches, c.M);
        QCOMPARE(sum.splitBackward, split);
        QCOMPARE(sum.peakActivations, f.stagePeak);
        QVERIFY(std::abs(sum.bubbleFraction - bubble) < 1e-12);
    }
}

void TestFlushFamily::timingAgreesWithSimulator() {
    const std::vector<ActionCosts> costs{{1, 1, 1, 1}, {1, 2, 1, 1}, {2, 3, 1, 1}, {3, 2, 2, 1}};
    for (const Case& c : familyCases()) {
        if (c.S > 8) continue;
        const PipelineProgram order = orderProgram(orderOf(c));
        for (const ActionCosts& cost : costs) {
            compareWithSimulator(order, cost);
            if (QTest::currentTestFailed()) {
                QFAIL(qPrintable(label(c) + QString(" costs %1 %2 %3 %4")
                                                .arg(cost.forward)
                                                .arg(cost.backward)
                                                .arg(cost.inputGrad)
                                                .arg(cost.weightGrad)));
            }
        }
        compareWithSimulator(buildFlushProgram(paramsOf(c)), {2, 3, 1, 1});
        if (QTest::currentTestFailed()) QFAIL(qPrintable(label(c)));
    }
}

// ZB-H1 against 1F1B on equal terms (1F1B's B costs I + W = 2). 1F1B with op costs F and B
// lasts (M + S − 1)(F + B) (its critical path runs M + S − 1 forwards and as many backwards), so
// 3(M + S − 1) here, and each rank idles 3(S − 1) of it; ZB-H1's ranks idle S − 1 (M >= S):
// exactly one third.
void TestFlushFamily::zeroBubbleAgainstOneFOneB() {
    for (const int S : {2, 3, 4, 6, 8}) {
        for (const int M : {S, S + 1, 2 * S, 3 * S + 1}) {
            const ProgramTiming one = timeProgram(orderProgram(oneFOneBOrder(S, M)), {1, 2, 1, 1});
            const ProgramTiming zb =
                timeProgram(buildFlushProgram({FlushKind::ZeroBubbleH1, S, M, 1}));
            QCOMPARE(one.length, 3LL * (M + S - 1));
            QCOMPARE(zb.length, 3LL * M + S - 1);
            for (std::size_t r = 0; r < static_cast<std::size_t>(S); ++r) {
                const long long idleOne = one.length - one.busyPerRank[r];
                const long long idleZb = zb.length - zb.busyPerRank[r];
                QCOMPARE(idleOne, 3LL * (S - 1));
                QCOMPARE(idleZb * 3, idleOne);
            }
            // Peak over stages: the same as 1F1B's (its first stage's S).
            QCOMPARE(*std::max_element(zb.peakActivations.begin(), zb.peakActivations.end()),
                     *std::max_element(one.peakActivations.begin(), one.peakActivations.end()));
        }
    }
}

// An overlapped pair starts both actions together and keeps the rank busy for the larger cost.
void TestFlushFamily::overlappedPair() {
    const auto one = [](ActionKind k, int s, int m) {
        ProgramStep st;
        st.actions[0] = {k, s, m};
        st.count = 1;
        return st;
    };
    ProgramStep pair;
    pair.actions[0] = {ActionKind::Forward, 1, 1};
    pair.actions[1] = {ActionKind::Backward, 1, 0};
    pair.count = 2;
    PipelineProgram p;
    p.ranks = {
        {one(ActionKind::Forward, 0, 0), one(ActionKind::Forward, 0, 1), ProgramStep{},
         one(ActionKind::Backward, 0, 0), ProgramStep{}, one(ActionKind::Backward, 0, 1)},
        {ProgramStep{}, one(ActionKind::Forward, 1, 0), pair, one(ActionKind::Backward, 1, 1)}};
    const ProgramTiming unit = timeProgram(p);
    // Unit costs: 1F0 at 1, the pair at 2, 1B1 at 3, 0B0 at 3, 0B1 at 4.
    QCOMPARE(unit.length, 5LL);
    QCOMPARE(unit.busyPerRank, (std::vector<long long>{4, 3}));
    QCOMPARE(unit.peakActivations, (std::vector<int>{2, 2}));
    const ProgramTiming slow = timeProgram(p, {1, 2, 1, 1});
    // F = 1, B = 2: the pair starts at 2 and holds rank 1 until 4; 1B1 runs 4..6; 0B0 after
    // 1B0 (ends 4) runs 4..6; 0B1 after 1B1 runs 6..8.
    int pairStarts = 0;
    for (const TimedAction& a : slow.actions) {
        if (a.action == pair.actions[0] || a.action == pair.actions[1]) {
            QCOMPARE(a.start, 2LL);
            QCOMPARE(a.rank, 1);
            ++pairStarts;
        }
    }
    QCOMPARE(pairStarts, 2);
    QCOMPARE(slow.length, 8LL);
    QCOMPARE(slow.busyPerRank, (std::vector<long long>{6, 5}));
    compareWithSimulator(p, {1, 1, 1, 1});
    compareWithSimulator(p, {1, 2, 1, 1});
    compareWithSimulator(p, {2, 3, 1, 1});
}

void TestFlushFamily::refusals() {
    const auto build = [](FlushKind k, int S, int M, int v) {
        return [=] { (void)buildFlushProgram({k, S, M, v}); };
    };
    expectError<ConfigError>(
        build(FlushKind::Interleaved, 4, 10, 3),
        {"virtual_stages = 3", "microbatches", "multiple of stages = 4", "microbatches = 10"});
    expectError<ConfigError>(build(FlushKind::Interleaved, 4, 8, 1),
                             {"interleaved needs virtual_stages >= 2", "virtual_stages = 1"});
    expectError<ConfigError>(build(FlushKind::Interleaved, 4, 8, 0),
                             {"interleaved needs virtual_stages >= 2", "virtual_stages = 0"});
    for (const FlushKind k : {FlushKind::GPipe, FlushKind::OneFOneB, FlushKind::ZeroBubbleH1}) {
        expectError<ConfigError>(build(k, 4, 8, 2), {"virtual_stages = 2", "only interleaved",
                                                     QString::fromStdString(flushKindName(k))});
    }
    for (const FlushKind k :
         {FlushKind::GPipe, FlushKind::OneFOneB, FlushKind::Interleaved, FlushKind::ZeroBubbleH1}) {
        const int v = k == FlushKind::Interleaved ? 2 : 1;
        expectError<ConfigError>(build(k, 0, 8, v), {"stages = 0", "1 to 4096"});
        expectError<ConfigError>(build(k, -3, 8, v), {"stages = -3"});
        expectError<ConfigError>(build(k, 4097, 8, v), {"stages = 4097", "1 to 4096"});
        expectError<ConfigError>(build(k, 4, 0, v), {"microbatches = 0", "at least 1"});
        expectError<ConfigError>(build(k, 4, -1, v), {"microbatches = -1"});
        // Too large a grid: S × length cells over kMaxFlushCells.
        expectError<ConfigError>(build(k, 4096, 4096, v), {"cells", "stages = 4096"});
    }
    expectError<ConfigError>(build(FlushKind::Interleaved, 2, 2, 2'000'000'000),
                             {"virtual_stages = 2000000000", "cells"});
    // The largest accepted sizes build.
    QVERIFY(static_cast<long long>(64) * flushLengthFormula({FlushKind::OneFOneB, 64, 65000, 1}) <=
            kMaxFlushCells);
    QVERIFY_THROWS_NO_EXCEPTION(validateFlushScheduleParams({FlushKind::OneFOneB, 64, 65000, 1}));
    // Costs below one slot.
    const PipelineProgram p = buildFlushProgram({FlushKind::OneFOneB, 2, 2, 1});
    expectError<ConfigError>(
        [&] {
            (void)timeProgram(p, {0, 1, 1, 1});
        },
        {"forward = 0", "at least 1"});
    expectError<ConfigError>(
        [&] {
            (void)timeProgram(p, {1, 1, 1, -2});
        },
        {"weight_grad = -2", "at least 1"});
}

// Programs that can never finish: ConfigError naming the rank, step, cell and what it waits for.
void TestFlushFamily::deadlocks() {
    const auto one = [](ActionKind k, int s, int m) {
        ProgramStep st;
        st.actions[0] = {k, s, m};
        st.count = 1;
        return st;
    };
    // Rank 0 runs its backward before its forward: 0B0 waits for 0F0, which waits behind it.
    PipelineProgram cycle;
    cycle.ranks = {{one(ActionKind::Backward, 0, 0), one(ActionKind::Forward, 0, 0)},
                   {one(ActionKind::Forward, 1, 0), one(ActionKind::Backward, 1, 0)}};
    expectError<ConfigError>(
        [&] { (void)timeProgram(cycle); },
        {"rank 0, step 0 (cell 0B0)", "waits for 0F0 (rank 0, step 1)", "cycle"});
    // Rank 0 never runs 0F1; rank 1's forward of microbatch 1 waits for it forever.
    PipelineProgram missing;
    missing.ranks = {
        {one(ActionKind::Forward, 0, 0), ProgramStep{}, one(ActionKind::Backward, 0, 0)},
        {ProgramStep{}, one(ActionKind::Forward, 1, 0), one(ActionKind::Backward, 1, 0),
         one(ActionKind::Forward, 1, 1), one(ActionKind::Backward, 1, 1)}};
    expectError<ConfigError>([&] { (void)timeProgram(missing); },
                             {"rank 1, step 3 (cell 1F1)", "waits for 0F1", "never runs"});
    // Two ranks waiting on each other across stages: rank 0 waits for 1B0 before running 0F0.
    PipelineProgram crossed;
    crossed.ranks = {{one(ActionKind::Backward, 0, 0), one(ActionKind::Forward, 0, 0)},
                     {one(ActionKind::Forward, 1, 0), one(ActionKind::Backward, 1, 0)}};
    crossed.ranks[0][0] = one(ActionKind::InputGrad, 0, 0);
    crossed.ranks[0].push_back(one(ActionKind::WeightGrad, 0, 0));
    expectError<ConfigError>([&] { (void)timeProgram(crossed); },
                             {"rank 0, step 0 (cell 0I0)", "waits for 0F0"});
    // The first stuck rank waits, through rank 1, for rank 2, whose 2B0 has no forward: the
    // root is named, not the first rank.
    PipelineProgram chain;
    chain.ranks = {{one(ActionKind::Forward, 0, 0), one(ActionKind::Backward, 0, 0)},
                   {one(ActionKind::Forward, 1, 0), one(ActionKind::Backward, 1, 0)},
                   {one(ActionKind::Backward, 2, 0)}};
    expectError<ConfigError>([&] { (void)timeProgram(chain); },
                             {"rank 2, step 0 (cell 2B0)", "waits for 2F0", "never runs"});
    // An action twice.
    PipelineProgram twice;
    twice.ranks = {{one(ActionKind::Forward, 0, 0), one(ActionKind::Forward, 0, 0),
                    one(ActionKind::Backward, 0, 0)}};
    expectError<ConfigError>([&] { (void)timeProgram(twice); },
                             {"rank 0, step 1 (cell 0F0)", "more than once"});
    // A W whose I is missing.
    PipelineProgram noInput;
    noInput.ranks = {{one(ActionKind::Forward, 0, 0), one(ActionKind::WeightGrad, 0, 0)}};
    expectError<ConfigError>([&] { (void)timeProgram(noInput); },
                             {"rank 0, step 1 (cell 0W0)", "0I0", "never runs"});
    // The simulator agrees that these never finish.
    QVERIFY(simulate(cycle, {}).deadlock);
    QVERIFY(simulate(missing, {}).deadlock);
}

// The largest case of the brief (S = 128, M = 1024, about 262,000 actions) builds and times
// correctly; its speed is measured outside the test suite.
void TestFlushFamily::largeProgram() {
    const PipelineProgram p = buildFlushProgram({FlushKind::OneFOneB, 128, 1024, 1});
    const GridFacts f = checkGrid(p, 128, 1024, false);
    QVERIFY2(f.error.isEmpty(), qPrintable(f.error));
    QCOMPARE(f.length, 2LL * (1024 + 128 - 1));
    for (int s = 0; s < 128; ++s) QCOMPARE(f.stagePeak[static_cast<std::size_t>(s)], 128 - s);
    const ProgramTiming t = timeProgram(p, {1, 2, 1, 1});
    QCOMPARE(t.length, 3LL * (1024 + 128 - 1));
    QCOMPARE(t.actions.size(), static_cast<std::size_t>(2 * 128 * 1024));
}

QTEST_APPLESS_MAIN(TestFlushFamily)
#include "tst_flush_family.moc"

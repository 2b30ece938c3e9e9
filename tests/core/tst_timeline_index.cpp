// What views derive from a timeline (TimelineIndex, schedulePhases): the cell at (stage, slot),
// busy counts over slot ranges, stash depth and the startup / steady / drain phases, each against
// a brute-force computation from the cells.
#include <QtTest>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "schedule/phases.hpp"
#include "schedule/timeline.hpp"
#include "schedule/timeline_index.hpp"

using namespace pipelens;

namespace {

struct Case {
    const char* name;
    ScheduleParams params;
};

std::vector<Case> cases() {
    std::vector<Case> out;
    auto add = [&](const char* name, ScheduleKind kind, int S, int N, auto tweak) {
        ScheduleParams p;
        p.kind = kind;
        p.stages = S;
        p.microbatches = N;
        tweak(p);
        out.push_back({name, p});
    };
    auto none = [](ScheduleParams&) {};
    add("PD S=4 N=12", ScheduleKind::PipeDream, 4, 12, none);
    add("PD S=5 N=3 (fewer microbatches than stages)", ScheduleKind::PipeDream, 5, 3, none);
    add("PD S=6 N=20 NOAM=3", ScheduleKind::PipeDream, 6, 20,
        [](ScheduleParams& p) { p.noam = 3; });
    add("PD S=3 N=9 F=2 B=3 latency 1", ScheduleKind::PipeDream, 3, 9, [](ScheduleParams& p) {
        p.costs = {2, 3, 1};
    });
    add("fill-drain S=4 N=10 G=4", ScheduleKind::FillDrain, 4, 10,
        [](ScheduleParams& p) { p.flushGroup = 4; });
    add("fill-drain S=3 N=7 B=2", ScheduleKind::FillDrain, 3, 7,
        [](ScheduleParams& p) { p.costs.backwardSlots = 2; });
    add("LocalSGD S=4 N=32 H=2", ScheduleKind::LocalSgd, 4, 32,
        [](ScheduleParams& p) { p.localSteps = 2; });
    add("LocalSGD S=3 N=10 R=2 H=3", ScheduleKind::LocalSgd, 3, 10, [](ScheduleParams& p) {
        p.replicas = 2;
        p.localSteps = 3;
    });
    return out;
}

// busy[stage][slot]: 0 idle, 1 forward, 2 backward; and the cell index, straight from the cells.
struct Grid {
    std::vector<std::vector<int>> op;
    std::vector<std::vector<int>> cell;
    explicit Grid(const Timeline& tl)
        : op(static_cast<size_t>(tl.params.stages), std::vector<int>(tl.totalSlots, 0)),
          cell(static_cast<size_t>(tl.params.stages), std::vector<int>(tl.totalSlots, -1)) {
        for (size_t i = 0; i < tl.cells.size(); ++i) {
            const TimelineCell& c = tl.cells[i];
            for (int t = c.startSlot; t <= c.endSlot; ++t) {
                op[c.stage][t] = c.op == OpKind::Forward ? 1 : 2;
                cell[c.stage][t] = static_cast<int>(i);
            }
        }
    }
    int count(int stage, int lo, int hi, int kind) const {
        return static_cast<int>(std::count(op[stage].begin() + lo, op[stage].begin() + hi, kind));
    }
};

// Microbatches held on `stage` during `slot`: forward started at or before it, backward ending
// at or after it.
int bruteStashDepth(const Timeline& tl, int stage, int slot) {
    std::vector<int> fStart(tl.params.microbatches, -1);
    std::vector<int> bEnd(tl.params.microbatches, -1);
    for (const TimelineCell& c : tl.cells) {
        if (c.stage != stage) continue;
        (c.op == OpKind::Forward ? fStart : bEnd)[c.microbatch] =
            c.op == OpKind::Forward ? c.startSlot : c.endSlot;
    }
    int depth = 0;
    for (int m = 0; m < tl.params.microbatches; ++m)
        depth += fStart[m] >= 0 && fStart[m] <= slot && bEnd[m] >= slot;
    return depth;
}

// The phases from extremes over each group's cells (no assumption about which microbatch of a
// group goes first): startup until every stage has started a backward of the group, drain from
// after stage 1's last forward of the group (not before startup ends) until its last backward
// ends.
std::vector<Phase> brutePhases(const Timeline& tl) {
    const ScheduleParams& p = tl.params;
    int group = p.microbatches;
    if (p.kind == ScheduleKind::LocalSgd) group = p.replicas * p.localSteps;
    if (p.kind == ScheduleKind::FillDrain) group = p.flushGroup;
    std::vector<Phase> out;
    for (int g0 = 0; g0 < p.microbatches; g0 += group) {
        const int g1 = std::min(p.microbatches, g0 + group);
        int begin = 1 << 30;
        int lastForwardEnd = -1;
        int end = -1;
        std::vector<int> firstBackward(p.stages, 1 << 30);
        for (const TimelineCell& c : tl.cells) {
            if (c.microbatch < g0 || c.microbatch >= g1) continue;
            if (c.op == OpKind::Forward && c.stage == 0) {
                begin = std::min(begin, c.startSlot);
                lastForwardEnd = std::max(lastForwardEnd, c.endSlot);
            }
            if (c.op == OpKind::Backward) {
                firstBackward[c.stage] = std::min(firstBackward[c.stage], c.startSlot);
                if (c.stage == 0) end = std::max(end, c.endSlot + 1);
            }
        }
        const int allStarted = *std::max_element(firstBackward.begin(), firstBackward.end());
        const int drain = std::max(lastForwardEnd + 1, allStarted);
        if (allStarted > begin) out.push_back({begin, allStarted, PhaseKind::Startup});
        if (drain > allStarted) out.push_back({allStarted, drain, PhaseKind::Steady});
        if (end > drain) out.push_back({drain, end, PhaseKind::Drain});
    }
    return out;
}

}  // namespace

class TestTimelineIndex : public QObject {
    Q_OBJECT
  private slots:
    void findsTheCellAtEveryStageAndSlot() {
        for (const Case& c : cases()) {
            auto tl = std::make_shared<const Timeline>(buildTimeline(c.params));
            const TimelineIndex index(tl);
            const Grid grid(*tl);
            QCOMPARE(index.stages(), c.params.stages);
            QCOMPARE(index.slotCount(), tl->totalSlots);
            for (int s = 0; s < index.stages(); ++s) {
                for (int t = 0; t < index.slotCount(); ++t) {
                    const TimelineCell* cell = index.cellAt(s, t);
                    const int expected = grid.cell[s][t];
                    QVERIFY2(expected < 0 ? cell == nullptr
                                          : cell == &tl->cells[static_cast<size_t>(expected)],
                             c.name);
                }
            }
            QVERIFY(!index.cellAt(-1, 0) && !index.cellAt(0, -1));
            QVERIFY(!index.cellAt(index.stages(), 0) && !index.cellAt(0, index.slotCount()));
        }
    }

    void countsBusySlotsOverAnyRange() {
        std::mt19937 random(7);
        TimelineIndex index;  // one index reset to each timeline: reused memory, fresh counts
        for (const Case& c : cases()) {
            auto tl = std::make_shared<const Timeline>(buildTimeline(c.params));
            index.reset(tl);
            const Grid grid(*tl);
            std::uniform_int_distribution<int> slot(0, index.slotCount());
            for (int trial = 0; trial < 400; ++trial) {
                int lo = slot(random);
                int hi = slot(random);
                if (lo > hi) std::swap(lo, hi);
                const int s = trial % index.stages();
                QCOMPARE(index.forwardBusy(s, lo, hi), grid.count(s, lo, hi, 1));
                QCOMPARE(index.backwardBusy(s, lo, hi), grid.count(s, lo, hi, 2));
            }
            for (int s = 0; s < index.stages(); ++s) {
                QCOMPARE(index.forwardBusy(s, 0, index.slotCount()),
                         c.params.microbatches * std::max(1, c.params.costs.forwardSlots));
            }
        }
    }

    void givesTheStashDepthOfEveryStageAndSlot() {
        for (const Case& c : cases()) {
            auto tl = std::make_shared<const Timeline>(buildTimeline(c.params));
            const TimelineIndex index(tl);
            for (int s = 0; s < index.stages(); ++s) {
                int peak = 0;
                for (int t = -1; t <= index.slotCount(); ++t) {
                    const int depth = index.stashDepth(s, t);
                    QCOMPARE(depth, t < 0 ? 0 : bruteStashDepth(*tl, s, t));
                    peak = std::max(peak, depth);
                }
                QCOMPARE(peak, tl->peakStash[static_cast<size_t>(s)]);
            }
        }
    }

    void visitsTheCellsOverlappingARange() {
        for (const Case& c : cases()) {
            auto tl = std::make_shared<const Timeline>(buildTimeline(c.params));
            const TimelineIndex index(tl);
            for (int first = 0; first < index.slotCount(); first += 3) {
                const int last = std::min(index.slotCount(), first + 5);
                std::vector<const TimelineCell*> seen;
                index.forEachCellIn(first, last,
                                    [&](const TimelineCell& cell) { seen.push_back(&cell); });
                std::vector<const TimelineCell*> expected;
                for (const TimelineCell& cell : tl->cells) {
                    if (cell.endSlot >= first && cell.startSlot < last) expected.push_back(&cell);
                }
                QVERIFY2(seen == expected, c.name);
            }
        }
    }

    void anEmptyIndexAnswersNothing() {
        const TimelineIndex index(nullptr);
        QVERIFY(index.empty());
        QVERIFY(!index.cellAt(0, 0));
        QCOMPARE(index.stashDepth(0, 0), 0);
        int visited = 0;
        index.forEachCellIn(0, 10, [&](const TimelineCell&) { ++visited; });
        QCOMPARE(visited, 0);
    }

    void phasesOfPipeDreamAreHandChecked() {
        // S = 4, N = 12: stage 1's first backward is at slot 2S - 1 = 7; in steady state it
        // admits F(m) at slot 2m, so the last forward F(11) is at 22 and the drain starts at 23;
        // the run ends at 2N + 2(S - 1) = 30.
        ScheduleParams p;
        p.stages = 4;
        p.microbatches = 12;
        const std::vector<Phase> expected = {
            {0, 7, PhaseKind::Startup}, {7, 23, PhaseKind::Steady}, {23, 30, PhaseKind::Drain}};
        QVERIFY(schedulePhases(buildTimeline(p)) == expected);
    }

    void phasesAgreeWithExtremesOverEachGroup() {
        for (const Case& c : cases()) {
            const Timeline tl = buildTimeline(c.params);
            const std::vector<Phase> phases = schedulePhases(tl);
            QVERIFY2(phases == brutePhases(tl), c.name);
            // In slot order, each inside the run, and phaseAt finds the one holding a slot.
            for (size_t i = 0; i < phases.size(); ++i) {
                QVERIFY(phases[i].first < phases[i].last && phases[i].last <= tl.totalSlots);
                if (i > 0) QVERIFY(phases[i - 1].last <= phases[i].first);
            }
            for (int t = 0; t < tl.totalSlots; ++t) {
                PhaseKind expected = PhaseKind::Steady;
                for (const Phase& ph : phases) {
                    if (ph.first <= t && t < ph.last) expected = ph.kind;
                }
                QCOMPARE(phaseAt(phases, t + 0.5), expected);
            }
        }
    }
};

QTEST_MAIN(TestTimelineIndex)
#include "tst_timeline_index.moc"

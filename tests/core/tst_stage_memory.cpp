// Memory per stage and per device (schedule/stage_memory.hpp) against closed forms, stages s
// from 0: 1F1B with flush holds min(S - s, M) activations on stage s, ZB-H1 min(S, M) on every
// stage (each W waits), GPipe M; PipeDream (the paper's greedy 1F1B, noam = S) stashes
// min(S, 2 (S - s) - 1) weight copies, which 2BW's timeline shares with two versions;
// interleaved 1F1B (v = 2) on rank r of P holds 2 (P - 1 - r) + (v - 1) P + 1 activations at
// once over its two stages.
#include <QtTest>

#include <algorithm>
#include <memory>

#include "errors.hpp"
#include "schedule/pytorch_csv.hpp"
#include "schedule/stage_memory.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;

namespace {

ScheduleParams params(ScheduleKind kind, int S, int N, int group) {
    ScheduleParams p;
    p.kind = kind;
    p.stages = S;
    p.microbatches = N;
    p.flushGroup = group;
    return p;
}

// The activations a device holds at once, by brute force over slots: microbatch m of stage s
// is held in slot t when its forward started at or before t and its freeing op (full B, or W)
// ended after t - 1.
int heldAtOnce(const Timeline& tl, const std::vector<int>& stages) {
    int peak = 0;
    for (int t = 0; t < tl.totalSlots; ++t) {
        int held = 0;
        for (int s : stages) {
            for (int m = 0; m < tl.params.microbatches; ++m) {
                int fStart = -1;
                int freeEnd = tl.totalSlots;
                for (const TimelineCell& c : tl.cells) {
                    if (c.stage != s || c.microbatch != m) continue;
                    if (c.op == OpKind::Forward) fStart = c.startSlot;
                    if (c.op == OpKind::Backward || c.op == OpKind::WeightGrad) freeEnd = c.endSlot;
                }
                if (fStart >= 0 && fStart <= t && t <= freeEnd) ++held;
            }
        }
        peak = std::max(peak, held);
    }
    return peak;
}

}  // namespace

class TestStageMemory : public QObject {
    Q_OBJECT
  private slots:
    void oneFOneBHoldsSMinusSOrM_data() {
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("M");
        QTest::newRow("S=4 M=8") << 4 << 8;
        QTest::newRow("S=4 M=2") << 4 << 2;
        QTest::newRow("S=6 M=4") << 6 << 4;
        QTest::newRow("S=3 M=3") << 3 << 3;
    }
    void oneFOneBHoldsSMinusSOrM() {
        QFETCH(int, S);
        QFETCH(int, M);
        const auto mem = stageMemory(buildTimeline(params(ScheduleKind::OneFOneB, S, 3 * M, M)));
        QCOMPARE(static_cast<int>(mem.size()), S);
        for (int s = 0; s < S; ++s) {
            QCOMPARE(mem[s].weightVersions, 1);
            QCOMPARE(mem[s].activations, std::min(S - s, M));
            QCOMPARE(mem[s].total, 1.0 + std::min(S - s, M));
        }
        // ZB-H1 (F = I = W = 1, and with B = 2): a deferred W keeps its activation, so every
        // stage holds what 1F1B's first stage holds.
        for (int backward : {1, 2}) {
            ScheduleParams p = params(ScheduleKind::ZeroBubbleH1, S, 3 * M, M);
            p.costs.backwardSlots = backward;
            const Timeline tl = buildTimeline(p);
            const auto zb = stageMemory(tl);
            for (int s = 0; s < S; ++s) {
                QCOMPARE(zb[s].weightVersions, 1);
                QCOMPARE(zb[s].activations, std::min(S, M));
                QCOMPARE(zb[s].activations, heldAtOnce(tl, {s}));
            }
        }
    }

    void gpipeHoldsM_data() {
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("M");
        QTest::newRow("S=4 M=8") << 4 << 8;
        QTest::newRow("S=5 M=2") << 5 << 2;
    }
    void gpipeHoldsM() {
        QFETCH(int, S);
        QFETCH(int, M);
        const Timeline tl = buildTimeline(params(ScheduleKind::FillDrain, S, 3 * M, M));
        QVERIFY(tl.peakActivations.empty());  // counted from the cells
        const auto mem = stageMemory(tl);
        for (int s = 0; s < S; ++s) {
            QCOMPARE(mem[s].weightVersions, 1);
            QCOMPARE(mem[s].activations, M);
        }
    }

    void pipeDreamStashesSMinusS() {
        for (int S : {2, 3, 4, 7, 8}) {
            const Timeline tl = buildTimeline(params(ScheduleKind::PipeDream, S, 5 * S, 0));
            QVERIFY(tl.peakActivations.empty());  // counted from the cells
            const auto mem = stageMemory(tl);
            for (int s = 0; s < S; ++s) {
                const int stash = std::min(S, 2 * (S - s) - 1);
                QCOMPARE(mem[s].weightVersions, stash);
                QCOMPARE(mem[s].activations, stash);
                QCOMPARE(mem[s].activations, heldAtOnce(tl, {s}));
            }
        }
    }

    void twoBwHoldsTwoVersions() {
        for (int S : {2, 4, 6}) {
            const Timeline tl = buildTimeline(params(ScheduleKind::TwoBw, S, 6 * S, S));
            const auto mem = stageMemory(tl);
            for (int s = 0; s < S; ++s) {
                QCOMPARE(mem[s].weightVersions, 2);
                QCOMPARE(mem[s].activations, std::min(S, 2 * (S - s) - 1));
            }
        }
    }

    void localSgdReplicasEachHoldACopy() {
        ScheduleParams p = params(ScheduleKind::LocalSgd, 4, 24, 0);
        p.replicas = 3;
        p.localSteps = 2;
        const auto mem = stageMemory(buildTimeline(p));
        for (const StageMemory& m : mem) QCOMPARE(m.weightVersions, 3);
        p.replicas = 1;  // SGD
        for (const StageMemory& m : stageMemory(buildTimeline(p))) QCOMPARE(m.weightVersions, 1);
    }

    void modelSizesScaleTheUnits() {
        // The language model's shape: a large embedding first, a large head last.
        const Timeline tl = buildTimeline(params(ScheduleKind::PipeDream, 4, 12, 0));
        MemoryModel model;
        model.stageWeights = {3.0, 1.0, 1.0, 2.5};
        model.activation = 0.5;
        const auto mem = stageMemory(tl, model);
        QCOMPARE(mem[0].weightUnits, 4 * 3.0);
        QCOMPARE(mem[0].activationUnits, 4 * 0.5);
        QCOMPARE(mem[2].total, 3 * 1.0 + 3 * 0.5);
        QCOMPARE(mem[3].total, 1 * 2.5 + 1 * 0.5);
        const auto devices = deviceMemory(tl, model);
        QCOMPARE(static_cast<int>(devices.size()), 4);  // no placement: a device per stage
        QCOMPARE(devices[0].total, mem[0].total);
        QCOMPARE(peakDevice(devices).device, 0);
        QCOMPARE(peakDevice(devices).total, 14.0);
    }

    void badModelIsRefusedNamingTheField() {
        const Timeline tl = buildTimeline(params(ScheduleKind::PipeDream, 4, 12, 0));
        MemoryModel model;
        model.stageWeights = {1.0, 2.0};
        try {
            stageMemory(tl, model);
            QFAIL("two sizes for four stages were accepted");
        } catch (const ConfigError& e) {
            const QString m = e.what();
            QVERIFY2(m.contains("stage_weights has 2") && m.contains("4 stages"), e.what());
        }
        model.stageWeights = {1.0, 1.0, -1.0, 1.0};
        QVERIFY_THROWS_EXCEPTION(ConfigError, stageMemory(tl, model));
    }

    void interleavedDevicesSumTheirStages() {
        ScheduleParams p;
        p.kind = ScheduleKind::Imported;
        p.program = std::make_shared<const PipelineProgram>(readPytorchScheduleCsv(
            PIPELENS_SOURCE_DIR "/examples/schedules/interleaved_s4_m8_v2.csv"));
        p.stages = 8;
        p.microbatches = 8;
        const Timeline tl = buildTimeline(p);
        const auto stages = stageMemory(tl);
        const auto devices = deviceMemory(tl);
        const int P = 4;
        const int v = 2;
        QCOMPARE(static_cast<int>(stages.size()), P * v);
        QCOMPARE(static_cast<int>(devices.size()), P);
        for (int r = 0; r < P; ++r) {
            const DeviceMemory& d = devices[r];
            QCOMPARE(d.stages, (std::vector<int>{r, r + P}));
            QCOMPARE(d.weightUnits, 2.0);  // one version of each of its two stages
            // Warm-up forwards of interleaved 1F1B, then one more before the first backward.
            QCOMPARE(d.activations, 2 * (P - 1 - r) + (v - 1) * P + 1);
            QCOMPARE(d.activations, heldAtOnce(tl, d.stages));
            QVERIFY(d.activations <= stages[r].activations + stages[r + P].activations);
            QCOMPARE(d.total, d.weightUnits + d.activations);
        }
        QCOMPARE(peakDevice(devices).device, 0);
        QCOMPARE(peakDevice(devices).total, 2.0 + 11.0);
    }
};

QTEST_APPLESS_MAIN(TestStageMemory)
#include "tst_stage_memory.moc"

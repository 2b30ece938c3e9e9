// The schedule family of SPEC section 2.1 as runs (program_schedules.hpp): each replay against
// an independent small reference written here (minibatch SGD with accumulation for the flushing
// schedules, the delay-1 recursion for 2BW, PipeDream itself for an imported PipeDream timeline
// with update = async), each timeline against its closed forms and the dependency rules.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "compute/cpu_backend.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "family_params.hpp"
#include "replay/pipeline_replay.hpp"
#include "schedule/delays.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/pytorch_csv.hpp"
#include "schedule/run_length.hpp"
#include "schedule/timeline.hpp"
#include "schedule/timeline_program.hpp"
#include "small_objective.hpp"

using namespace pipelens;
using Eigen::VectorXd;

namespace {

std::shared_ptr<LinearObjective> objective(LossKind loss) {
    return test::smallObjective(loss, 60, 11);
}

ScheduleParams params(ScheduleKind kind, int S, int N, int group) {
    return test::familyParams(kind, S, N, group);
}

struct Ran {
    VectorXd weights;
    RunResult result;
};

Ran run(const std::shared_ptr<LinearObjective>& obj, const Timeline& tl, double step, double scale,
        Method method) {
    PipelineReplayConfig cfg;
    cfg.method = method;
    cfg.timeline = tl;
    cfg.stepSize = step;
    cfg.stepScale = scale;
    auto backend = std::make_unique<CpuBackend>();
    CpuBackend* raw = backend.get();
    PipelineReplay replay(obj, std::move(backend), cfg);
    while (!replay.done() && replay.advance(7) > 0) {
    }
    Ran out;
    out.weights = raw->weights();
    out.result = replay.result();
    return out;
}

bool near(const VectorXd& a, const VectorXd& b) {
    return (a - b).norm() <= 1e-12 * std::max(1.0, b.norm());
}

// Minibatch SGD with accumulation: each step of `group` microbatches (the last one may hold
// fewer) applies step * (sum of their gradients at the step's starting point) / group.
VectorXd minibatchSgd(const LinearObjective& obj, int N, int group, double step) {
    VectorXd w = VectorXd::Zero(obj.dim());
    for (int start = 0; start < N; start += group) {
        VectorXd sum = VectorXd::Zero(obj.dim());
        for (int m = start; m < std::min(N, start + group); ++m)
            sum += obj.batchGradient(m % obj.batches(), w);
        w -= step * sum / group;
    }
    return w;
}

// PipeDream-2BW: w(t+1) = w(t) - step * mean over group t of the gradients at w(t - 1), with
// w(-1) = w(0).
VectorXd delayOneRecursion(const LinearObjective& obj, int N, int group, double step) {
    VectorXd previous = VectorXd::Zero(obj.dim());
    VectorXd w = previous;
    for (int start = 0; start < N; start += group) {
        VectorXd sum = VectorXd::Zero(obj.dim());
        for (int m = start; m < std::min(N, start + group); ++m)
            sum += obj.batchGradient(m % obj.batches(), previous);
        previous = w;
        w -= step * sum / group;
    }
    return w;
}

// Every cell's dependencies (SPEC section 2.1): F(m, s) after F(m, s - 1); a backward (B or I)
// after F(m, s) and after the backward of (m, s + 1); W after I; one op per device at a time.
void requireValid(const Timeline& tl) {
    const int S = tl.params.stages;
    std::map<std::tuple<int, int, int>, const TimelineCell*> at;  // (op, m, s)
    for (const TimelineCell& c : tl.cells) {
        QVERIFY(
            at.emplace(std::make_tuple(static_cast<int>(c.op), c.microbatch, c.stage), &c).second);
    }
    auto find = [&](OpKind op, int m, int s) -> const TimelineCell* {
        auto it = at.find({static_cast<int>(op), m, s});
        return it == at.end() ? nullptr : it->second;
    };
    std::vector<int> busyUntil(static_cast<size_t>(S), -1);
    for (const TimelineCell& c : tl.cells) {
        const int device = tl.stageRank.empty() ? c.stage : tl.stageRank[c.stage];
        QVERIFY2(c.startSlot > busyUntil[device], "two ops of one device overlap");
        busyUntil[device] = c.endSlot;
        const int m = c.microbatch;
        const int s = c.stage;
        if (c.op == OpKind::Forward) {
            if (s > 0) QVERIFY(find(OpKind::Forward, m, s - 1)->endSlot < c.startSlot);
            continue;
        }
        if (c.op == OpKind::WeightGrad) {
            QVERIFY(find(OpKind::InputGrad, m, s)->endSlot < c.startSlot);
            continue;
        }
        QVERIFY(find(OpKind::Forward, m, s)->endSlot < c.startSlot);
        if (s + 1 < S) {
            const TimelineCell* after = find(c.op, m, s + 1);
            QVERIFY(after && after->endSlot < c.startSlot);
        }
    }
}

}  // namespace

class TestFamilyReplay : public QObject {
    Q_OBJECT

  private slots:
    void flushingSchedulesAreMinibatchSgd_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("loss");
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        for (int loss : {0, 1}) {
            const auto l = QString(loss ? "logistic" : "quadratic");
            QTest::newRow(qPrintable("1f1b S=4 M=8 " + l))
                << static_cast<int>(ScheduleKind::OneFOneB) << loss << 4 << 8 << 40;
            QTest::newRow(qPrintable("1f1b S=3 M=2 partial " + l))
                << static_cast<int>(ScheduleKind::OneFOneB) << loss << 3 << 2 << 11;
            QTest::newRow(qPrintable("zb-h1 S=4 M=8 " + l))
                << static_cast<int>(ScheduleKind::ZeroBubbleH1) << loss << 4 << 8 << 32;
            QTest::newRow(qPrintable("zb-h1 S=5 M=3 partial " + l))
                << static_cast<int>(ScheduleKind::ZeroBubbleH1) << loss << 5 << 3 << 13;
        }
    }
    void flushingSchedulesAreMinibatchSgd() {
        QFETCH(int, kind);
        QFETCH(int, loss);
        QFETCH(int, S);
        QFETCH(int, M);
        QFETCH(int, N);
        auto obj = objective(loss ? LossKind::Logistic : LossKind::Quadratic);
        const Timeline tl = buildTimeline(params(static_cast<ScheduleKind>(kind), S, N, M));
        const double step = loss ? 1.5 : 0.3;
        const Ran r = run(obj, tl, step, 1.0 / M, Method::OneFOneB);
        QVERIFY(r.result.finished);
        QVERIFY(!r.result.divergence.diverged);
        QCOMPARE(r.result.updates, static_cast<long long>(N) * S);
        QVERIFY(near(r.weights, minibatchSgd(*obj, N, M, step)));
        // The weights change only where a step lands: f per slot is flat inside every step.
        const auto& f = r.result.objectivePerSlot;
        QCOMPARE(static_cast<int>(f.size()), tl.totalSlots + 1);
        const int steps = (N + M - 1) / M;
        QCOMPARE(static_cast<int>(tl.stepEndSlots.size()), steps);
        int from = 0;
        for (int end : tl.stepEndSlots) {
            for (int t = from; t < end; ++t) QCOMPARE(f[static_cast<size_t>(t) + 1], f[from]);
            QVERIFY(f[static_cast<size_t>(end) + 1] != f[from]);
            from = end + 1;
        }
    }

    void interleavedIsMinibatchSgdOverChunks_data() {
        QTest::addColumn<int>("devices");
        QTest::addColumn<int>("v");
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        QTest::newRow("S=2 v=2 M=4") << 2 << 2 << 4 << 12;
        QTest::newRow("S=4 v=2 M=8 partial") << 4 << 2 << 8 << 21;
        QTest::newRow("S=3 v=3 M=6") << 3 << 3 << 6 << 18;
    }
    void interleavedIsMinibatchSgdOverChunks() {
        // The model split into S·v chunks (blocks), chunk c on device c mod S; a chunk op costs
        // 1/v of a stage op, so with stage costs (v, v) every chunk op takes one slot and a step
        // lasts 2(v·M + S − 1) slots (flushLengthFormula).
        QFETCH(int, devices);
        QFETCH(int, v);
        QFETCH(int, M);
        QFETCH(int, N);
        auto obj = objective(LossKind::Logistic);
        ScheduleParams p = params(ScheduleKind::Interleaved, devices * v, N, M);
        p.virtualStages = v;
        p.costs.forwardSlots = v;
        p.costs.backwardSlots = v;
        const Timeline tl = buildTimeline(p);
        requireValid(tl);
        for (int c = 0; c < devices * v; ++c) QCOMPARE(tl.stageRank[c], c % devices);
        if (N % M == 0) QCOMPARE(tl.totalSlots, (N / M) * 2 * (v * M + devices - 1));
        QCOMPARE(runLengthSlots(p), static_cast<long long>(tl.totalSlots));
        const Ran r = run(obj, tl, 1.5, 1.0 / M, Method::Interleaved);
        QVERIFY(r.result.finished);
        QCOMPARE(r.result.updates, static_cast<long long>(N) * devices * v);
        QVERIFY(near(r.weights, minibatchSgd(*obj, N, M, 1.5)));
        // Bubble over devices: (S − 1)/(v·M + S − 1) per whole step.
        if (N % M == 0) {
            QVERIFY(std::abs(utilization(tl).bubbleFraction -
                             double(devices - 1) / (v * M + devices - 1)) < 1e-12);
        }
    }

    void interleavedRefusesCostsThatDoNotSplit() {
        ScheduleParams p = params(ScheduleKind::Interleaved, 8, 16, 8);
        p.virtualStages = 2;
        try {
            buildTimeline(p);  // forward_slots = 1 cannot be halved
            QFAIL("costs (1, 1) were accepted for v = 2");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains("multiples of 2"), e.what());
        }
        p.costs = {2, 2, 0, 1};
        p.flushGroup = 6;  // not a multiple of S = 4 devices
        QVERIFY_THROWS_EXCEPTION(ConfigError, buildTimeline(p));
    }

    void twoBwIsTheDelayOneRecursion_data() {
        QTest::addColumn<int>("loss");
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("N");
        for (int loss : {0, 1}) {
            const auto l = QString(loss ? "logistic" : "quadratic");
            QTest::newRow(qPrintable("S=4 m=4 " + l)) << loss << 4 << 4 << 40;
            QTest::newRow(qPrintable("S=4 m=6 partial " + l)) << loss << 4 << 6 << 27;
            QTest::newRow(qPrintable("S=2 m=5 " + l)) << loss << 2 << 5 << 30;
            QTest::newRow(qPrintable("S=7 m=7 " + l)) << loss << 7 << 7 << 35;
        }
    }
    void twoBwIsTheDelayOneRecursion() {
        QFETCH(int, loss);
        QFETCH(int, S);
        QFETCH(int, m);
        QFETCH(int, N);
        auto obj = objective(loss ? LossKind::Logistic : LossKind::Quadratic);
        const Timeline tl = buildTimeline(params(ScheduleKind::TwoBw, S, N, m));
        const double step = loss ? 1.5 : 0.3;
        const Ran r = run(obj, tl, step, 1.0 / m, Method::TwoBw);
        QVERIFY(r.result.finished);
        QVERIFY(near(r.weights, delayOneRecursion(*obj, N, m, step)));
        QVERIFY(!near(r.weights, minibatchSgd(*obj, N, m, step)));  // the delay is real
        // PipeDream's 1F1B timing, two weight versions per stage.
        QCOMPARE(tl.totalSlots, pipeDreamSlotsFormula(S, N));
        QCOMPARE(tl.weightVersions, std::vector<int>(static_cast<size_t>(S), 2));
    }

    void twoBwRefusesTooFewMicrobatchesPerStep() {
        try {
            buildTimeline(params(ScheduleKind::TwoBw, 4, 20, 3));
            QFAIL("m = 3 < S = 4 was accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains("accumulation = 3") &&
                         QString(e.what()).contains("S = 4"),
                     e.what());
        }
    }

    void importedSyncTrainsAsItsBuiltSchedule_data() {
        QTest::addColumn<int>("kind");
        QTest::newRow("1f1b") << static_cast<int>(ScheduleKind::OneFOneB);
        QTest::newRow("zb-h1") << static_cast<int>(ScheduleKind::ZeroBubbleH1);
    }
    void importedSyncTrainsAsItsBuiltSchedule() {
        QFETCH(int, kind);
        const int S = 4;
        const int M = 8;
        const int N = 24;
        auto obj = objective(LossKind::Logistic);
        ScheduleParams built = params(static_cast<ScheduleKind>(kind), S, N, M);
        const Timeline want = buildTimeline(built);
        // Through the CSV, as a person would bring it.
        const std::string csv = pytorchScheduleCsv(stepProgram(built, M));
        ScheduleParams imported = built;
        imported.kind = ScheduleKind::Imported;
        imported.flushGroup = 0;
        imported.program =
            std::make_shared<const PipelineProgram>(parsePytorchScheduleCsv(csv, "x.csv"));
        const Timeline got = buildTimeline(imported);
        QCOMPARE(got.totalSlots, want.totalSlots);
        QCOMPARE(got.cells.size(), want.cells.size());
        for (size_t i = 0; i < got.cells.size(); ++i) {
            QCOMPARE(got.cells[i].startSlot, want.cells[i].startSlot);
            QCOMPARE(got.cells[i].stage, want.cells[i].stage);
            QCOMPARE(got.cells[i].op, want.cells[i].op);
            QCOMPARE(got.cells[i].microbatch, want.cells[i].microbatch);
        }
        const Ran a = run(obj, got, 1.5, 1.0 / M, Method::Imported);
        const Ran b = run(obj, want, 1.5, 1.0 / M, Method::OneFOneB);
        QCOMPARE(a.weights, b.weights);
        QVERIFY(near(a.weights, minibatchSgd(*obj, N, M, 1.5)));
    }

    void importedAsyncPipeDreamTimelineIsPipeDream_data() {
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("N");
        QTest::newRow("S=4 N=20") << 4 << 20;
        QTest::newRow("S=3 N=7") << 3 << 7;
        QTest::newRow("S=6 N=30") << 6 << 30;
    }
    void importedAsyncPipeDreamTimelineIsPipeDream() {
        // PipeDream's own timeline written as one step of an imported schedule: with
        // update = async each B updates its block at once, reading its stashed copy, as PD.
        QFETCH(int, S);
        QFETCH(int, N);
        auto obj = objective(LossKind::Quadratic);
        ScheduleParams pd;
        pd.stages = S;
        pd.microbatches = N;
        const Timeline pdTl = buildTimeline(pd);
        ScheduleParams imp;
        imp.kind = ScheduleKind::Imported;
        imp.stages = S;
        imp.microbatches = N;
        imp.asyncUpdate = true;
        imp.program = std::make_shared<const PipelineProgram>(programFromTimeline(pdTl));
        const Timeline tl = buildTimeline(imp);
        QCOMPARE(tl.totalSlots, pdTl.totalSlots);
        const Ran a = run(obj, tl, 0.3, 1.0, Method::Imported);
        const Ran b = run(obj, pdTl, 0.3, 1.0, Method::PipeDream);
        QVERIFY(near(a.weights, b.weights));
        QCOMPARE(a.result.objectivePerSlot.size(), b.result.objectivePerSlot.size());
        for (size_t t = 0; t < a.result.objectivePerSlot.size(); ++t) {
            QVERIFY(std::abs(a.result.objectivePerSlot[t] - b.result.objectivePerSlot[t]) <=
                    1e-12 * std::max(1.0, std::abs(b.result.objectivePerSlot[t])));
        }
        // The delays (block updates) are PipeDream's.
        const DelayTable da(tl);
        const DelayTable db(pdTl);
        QCOMPARE(da.maxDelay(), db.maxDelay());
        QCOMPARE(a.result.versionChecks, b.result.versionChecks);
    }

    void timelinesMatchTheClosedForms_data() {
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("M");
        for (int S : {1, 2, 4, 7})
            for (int M : {1, 3, 8, 16})
                QTest::newRow(qPrintable(QString("S=%1 M=%2").arg(S).arg(M))) << S << M;
    }
    void timelinesMatchTheClosedForms() {
        QFETCH(int, S);
        QFETCH(int, M);
        const int steps = 3;
        const Timeline one = buildTimeline(params(ScheduleKind::OneFOneB, S, steps * M, M));
        requireValid(one);
        QCOMPARE(one.totalSlots, steps * 2 * (M + S - 1));
        QCOMPARE(runLengthSlots(one.params), static_cast<long long>(one.totalSlots));
        for (int s = 0; s < S; ++s) QCOMPARE(one.peakActivations[s], std::min(S - s, M));
        QCOMPARE(one.weightVersions, std::vector<int>(static_cast<size_t>(S), 1));
        const Timeline zb = buildTimeline(params(ScheduleKind::ZeroBubbleH1, S, steps * M, M));
        requireValid(zb);
        QCOMPARE(zb.totalSlots, steps * std::max(3 * M + S - 1, 2 * M + 2 * S - 1));
        QCOMPARE(runLengthSlots(zb.params), static_cast<long long>(zb.totalSlots));
        for (int s = 0; s < S; ++s) QCOMPARE(zb.peakActivations[s], std::min(S, M));
        const Timeline two =
            buildTimeline(params(ScheduleKind::TwoBw, S, steps * M, std::max(M, S)));
        requireValid(two);
        // The same timelines with fewer cells kept: the visiting build sees the same cells.
        std::vector<TimelineCell> seen;
        simulateSchedule(params(ScheduleKind::ZeroBubbleH1, S, steps * M, M),
                         [&](const TimelineCell& c) { seen.push_back(c); });
        QCOMPARE(seen.size(), zb.cells.size());
    }

    void splitBackwardCostsAFullBackward() {
        // I + W = B: with backward 3 and weight 1, I takes 2 slots and W 1.
        ScheduleParams p = params(ScheduleKind::ZeroBubbleH1, 4, 8, 8);
        p.costs.backwardSlots = 3;
        const Timeline tl = buildTimeline(p);
        requireValid(tl);
        for (const TimelineCell& c : tl.cells) {
            const int span = c.endSlot - c.startSlot + 1;
            QCOMPARE(span, c.op == OpKind::InputGrad ? 2 : 1);
        }
        // The defaults (1, 1): I costs one slot, as SPEC section 2.1's F = B = W = 1.
        p.costs.backwardSlots = 1;
        QCOMPARE(programActionCosts(p.costs).inputGrad, 1);
        p.costs.latencySlots = 1;
        try {
            buildTimeline(p);
            QFAIL("latency_slots = 1 was accepted for zb-h1");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).startsWith("costs.latency_slots = 1 is not allowed with "
                                                  "zb-h1"),
                     e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestFamilyReplay)
#include "tst_family_replay.moc"

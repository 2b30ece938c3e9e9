// The schedule family of SPEC section 2.1 (1F1B with flush, ZB-H1, PipeDream-2BW, imported
// schedules with update = sync or async) on the character transformer: each LM pipeline replay
// against an independent reference written here from the model's own whole-model loss and
// gradient (minibatch SGD for the flushing schedules, the delay-one recursion for 2BW, the LM
// PipeDream run for PipeDream's timeline imported with update = async), and the refusal of an
// asynchronous split backward whose weight updates run from the first stage up.
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "errors.hpp"
#include "family_params.hpp"
#include "lm_builtin_problem.hpp"
#include "method.hpp"
#include "objective/lm/lm_model.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "schedule/program.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/timeline.hpp"
#include "schedule/timeline_program.hpp"

using namespace pipelens;
using Eigen::VectorXd;

namespace {

// A smaller corpus than the other LM tests: the runs below use a few dozen batches only.
std::shared_ptr<const CharTransformerProblem> problemIn(LmPrecision precision) {
    return builtInProblem(precision, 8'000, 0.0);
}

ScheduleParams params(ScheduleKind kind, int S, int N, int group) {
    return test::familyParams(kind, S, N, group);
}

std::unique_ptr<LmReplay> runLm(const std::shared_ptr<const CharTransformerProblem>& problem,
                                const Timeline& tl, Method method, double step, double scale) {
    LmPipelineConfig cfg;
    cfg.method = method;
    cfg.timeline = tl;
    cfg.stepSize = step;
    cfg.stepScale = scale;
    auto run = makeLmPipelineReplay(problem, cfg);
    run->runToEnd();
    return run;
}

// The whole-model gradient of dataset batch `batch` at w, in double; its loss into `loss`.
VectorXd gradientAt(const CharTransformerProblem& p, const VectorXd& w, int batch,
                    double* loss = nullptr) {
    CharTransformer<double> model(p.layout);
    VectorXd g(w.size());
    const double f =
        model.lossAndGradient(w.data(), p.train.tokens(batch), p.train.targets(batch), g.data());
    if (loss) *loss = f;
    return g;
}

int batchOf(const CharTransformerProblem& p, int microbatch) {
    return microbatch % p.train.batches();
}

// Minibatch SGD with accumulation: each step of `group` microbatches (the last may hold
// r < group) applies step * (sum of their gradients at the step's start) / divisor, where the
// divisor is `group`, or r for the last step when `meanOfPartial` (the rule the schedules do
// not follow: it is here to show the test tells the two apart). `losses`, when given, receives
// each microbatch's loss at its step's starting weights.
VectorXd minibatchSgd(const CharTransformerProblem& p, int N, int group, double step,
                      bool meanOfPartial = false, std::vector<double>* losses = nullptr) {
    VectorXd w = p.w0;
    if (losses) losses->assign(static_cast<std::size_t>(N), 0.0);
    for (int start = 0; start < N; start += group) {
        const int end = std::min(N, start + group);
        VectorXd sum = VectorXd::Zero(w.size());
        for (int m = start; m < end; ++m)
            sum += gradientAt(p, w, batchOf(p, m),
                              losses ? &(*losses)[static_cast<std::size_t>(m)] : nullptr);
        w -= step * sum / (meanOfPartial ? end - start : group);
    }
    return w;
}

// PipeDream-2BW: w(t + 1) = w(t) - step * (sum over group t of the gradients at w(t - 1)) / m,
// with w(-1) = w(0).
VectorXd delayOneRecursion(const CharTransformerProblem& p, int N, int group, double step) {
    VectorXd previous = p.w0;
    VectorXd w = previous;
    for (int start = 0; start < N; start += group) {
        VectorXd sum = VectorXd::Zero(w.size());
        for (int m = start; m < std::min(N, start + group); ++m)
            sum += gradientAt(p, previous, batchOf(p, m));
        previous = w;
        w -= step * sum / group;
    }
    return w;
}

// Largest entry of |a - b| relative to the largest entry of |b|.
double relDiff(const VectorXd& a, const VectorXd& b) {
    if (a.size() != b.size()) return 1e300;
    return (a - b).lpNorm<Eigen::Infinity>() / std::max(1e-300, b.lpNorm<Eigen::Infinity>());
}

ProgramStep one(ActionKind kind, int stage, int microbatch) {
    ProgramStep s;
    s.actions[0] = Action{kind, stage, microbatch};
    s.count = 1;
    return s;
}

// Three stages (the model's fewest: embedding, a block, head), two microbatches, split
// backward. Stage 1 runs I(1, 1) between I(0, 1) and W(0, 1), and stage 0 runs W(0, 0) right
// after I(0, 0), so W(0, 0) (column 6) lands before W(0, 1) (column 7):
//   rank 0: F0 F1 .  .  .  I0 W0 I1 W1
//   rank 1: .  F0 F1 .  I0 .  I1 W0 W1
//   rank 2: .  .  F0 I0 F1 I1 W0 W1
PipelineProgram weightUpdatesFromTheFirstStageUp() {
    const ProgramStep idle;
    const auto F = ActionKind::Forward;
    const auto I = ActionKind::InputGrad;
    const auto W = ActionKind::WeightGrad;
    PipelineProgram p;
    p.ranks = {
        {one(F, 0, 0), one(F, 0, 1), idle, idle, idle, one(I, 0, 0), one(W, 0, 0), one(I, 0, 1),
         one(W, 0, 1)},
        {idle, one(F, 1, 0), one(F, 1, 1), idle, one(I, 1, 0), idle, one(I, 1, 1), one(W, 1, 0),
         one(W, 1, 1)},
        {idle, idle, one(F, 2, 0), one(I, 2, 0), one(F, 2, 1), one(I, 2, 1), one(W, 2, 0),
         one(W, 2, 1)},
    };
    return p;
}

ScheduleParams importedParams(const PipelineProgram& program, int stages, int N, bool async) {
    ScheduleParams p;
    p.kind = ScheduleKind::Imported;
    p.stages = stages;
    p.microbatches = N;
    p.asyncUpdate = async;
    p.program = std::make_shared<const PipelineProgram>(program);
    return p;
}

// The three-stage problem the hand-written program trains.
std::shared_ptr<const CharTransformerProblem> threeStageProblem() {
    CharTransformerParams p;
    p.stages = 3;
    p.width = 16;
    p.heads = 2;
    p.context = 8;
    p.batch = 4;
    p.builtInCharacters = 4'000;
    p.initSeed = 2;
    return std::make_shared<const CharTransformerProblem>(makeCharTransformerProblem(p));
}

}  // namespace

class TestLmFamily : public QObject {
    Q_OBJECT

  private slots:
    void flushingSchedulesAreMinibatchSgd_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        const int one = static_cast<int>(ScheduleKind::OneFOneB);
        const int zb = static_cast<int>(ScheduleKind::ZeroBubbleH1);
        QTest::newRow("1f1b S=4 M=8 N=24") << one << 8 << 24;
        QTest::newRow("1f1b S=4 M=3 N=10 partial") << one << 3 << 10;
        QTest::newRow("1f1b S=4 M=6 N=16 partial") << one << 6 << 16;
        QTest::newRow("zb-h1 S=4 M=8 N=16") << zb << 8 << 16;
        QTest::newRow("zb-h1 S=4 M=5 N=13 partial") << zb << 5 << 13;
    }
    void flushingSchedulesAreMinibatchSgd() {
        QFETCH(int, kind);
        QFETCH(int, M);
        QFETCH(int, N);
        const auto problem = problemIn(LmPrecision::Double);
        const auto k = static_cast<ScheduleKind>(kind);
        const Timeline tl = buildTimeline(params(k, 4, N, M));
        const double step = 0.5;
        const auto t0 = std::chrono::steady_clock::now();
        const auto run = runLm(
            problem, tl, k == ScheduleKind::OneFOneB ? Method::OneFOneB : Method::ZeroBubbleH1,
            step, 1.0 / M);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(run->result().finished, run->result().divergence.reason.c_str());
        QCOMPARE(run->result().updates, static_cast<long long>(N) * 4);
        std::vector<double> losses;
        const VectorXd want = minibatchSgd(*problem, N, M, step, false, &losses);
        const double err = relDiff(run->weights(), want);
        const double moved = relDiff(problem->w0, want);
        qInfo("%s: max weight difference %.3g relative (the run moved w0 by %.3g), %.2f s",
              QTest::currentDataTag(), err, moved, seconds);
        QVERIFY2(err <= 1e-12, qPrintable(QString::number(err)));
        QVERIFY(moved > 1e-3);  // the run trained: the comparison is not of w0 with w0
        if (N % M != 0) {
            // The last step divides by M, not by its own r microbatches.
            const double other = relDiff(run->weights(), minibatchSgd(*problem, N, M, step, true));
            qInfo("  against sum / r in the last step: %.3g", other);
            QVERIFY(other > 1e-6);
        }
        // Every forward of a step reads the step's starting weights: each logged last-stage
        // loss is the whole model's loss there.
        const auto& logged = run->log().forwardLosses;
        QCOMPARE(logged.size(), static_cast<std::size_t>(N));
        double lossErr = 0.0;
        for (const LmForwardLoss& f : logged) {
            const double w = losses[static_cast<std::size_t>(f.microbatch)];
            lossErr = std::max(lossErr, std::abs(f.loss - w) / std::abs(w));
        }
        qInfo("  forward losses: max difference %.3g relative", lossErr);
        QVERIFY(lossErr <= 1e-12);
    }

    void twoBwIsTheDelayOneRecursion_data() {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("N");
        QTest::newRow("S=4 m=4 N=24") << 4 << 24;
        QTest::newRow("S=4 m=6 N=27 partial") << 6 << 27;
    }
    void twoBwIsTheDelayOneRecursion() {
        QFETCH(int, m);
        QFETCH(int, N);
        const auto problem = problemIn(LmPrecision::Double);
        const Timeline tl = buildTimeline(params(ScheduleKind::TwoBw, 4, N, m));
        const double step = 0.5;
        const auto run = runLm(problem, tl, Method::TwoBw, step, 1.0 / m);
        QVERIFY2(run->result().finished, run->result().divergence.reason.c_str());
        QCOMPARE(run->result().updates, static_cast<long long>(N) * 4);
        const double err = relDiff(run->weights(), delayOneRecursion(*problem, N, m, step));
        const double fromSgd = relDiff(run->weights(), minibatchSgd(*problem, N, m, step));
        qInfo("%s: max weight difference %.3g relative; from minibatch SGD %.3g",
              QTest::currentDataTag(), err, fromSgd);
        QVERIFY2(err <= 1e-12, qPrintable(QString::number(err)));
        QVERIFY(fromSgd > 1e-6);  // the one-step delay is real
    }

    void importedAsyncPipeDreamTimelineIsPipeDream_data() {
        QTest::addColumn<int>("N");
        QTest::newRow("S=4 N=20") << 20;
        QTest::newRow("S=4 N=7") << 7;
    }
    void importedAsyncPipeDreamTimelineIsPipeDream() {
        // PipeDream's own timeline as one step of an imported schedule: with update = async each
        // B updates its block at once, reading the copy its forward stashed, as PD does.
        QFETCH(int, N);
        const auto problem = problemIn(LmPrecision::Double);
        ScheduleParams pd;
        pd.stages = 4;
        pd.microbatches = N;
        const Timeline pdTl = buildTimeline(pd);
        const Timeline tl = buildTimeline(importedParams(programFromTimeline(pdTl), 4, N, true));
        QCOMPARE(tl.totalSlots, pdTl.totalSlots);
        const auto a = runLm(problem, tl, Method::Imported, 0.5, 1.0);
        const auto b = runLm(problem, pdTl, Method::PipeDream, 0.5, 1.0);
        QVERIFY(a->result().finished);
        QVERIFY(b->result().finished);
        QCOMPARE(a->result().updates, b->result().updates);
        const double err = relDiff(a->weights(), b->weights());
        qInfo("%s: max weight difference from the PD run %.3g relative (PD moved w0 by %.3g)",
              QTest::currentDataTag(), err, relDiff(problem->w0, b->weights()));
        QVERIFY2(err <= 1e-12, qPrintable(QString::number(err)));
        // The stash the executor held is the schedule's own count of weight versions (async:
        // forwards minus updates in the replay's order), which is PD's stash depth.
        QCOMPARE(a->log().peakStashedWeights, tl.weightVersions);
        QCOMPARE(a->log().peakStashedWeights, b->log().peakStashedWeights);
        // Not minibatch SGD: PD's stale reads are there.
        QVERIFY(relDiff(a->weights(), minibatchSgd(*problem, N, 4, 0.5)) > 1e-6);
        const auto& fa = a->log().forwardLosses;
        const auto& fb = b->log().forwardLosses;
        QCOMPARE(fa.size(), fb.size());
        for (std::size_t i = 0; i < fa.size(); ++i) {
            QVERIFY(std::abs(fa[i].loss - fb[i].loss) <= 1e-12 * std::abs(fb[i].loss));
        }
    }

    void importedAsyncWeightUpdatesFirstStageUpAreRefused() {
        const auto problem = threeStageProblem();
        const PipelineProgram program = weightUpdatesFromTheFirstStageUp();
        validateProgram(program);  // a valid schedule: only the LM's backprop order breaks
        const Timeline tl = buildTimeline(importedParams(program, 3, 4, true));
        QVERIFY(backpropOrderViolation(tl).has_value());
        try {
            runLm(problem, tl, Method::Imported, 0.5, 1.0);
            QFAIL("an asynchronous W(0, 0) before W(0, 1) was accepted");
        } catch (const ConfigError& e) {
            const QString what = e.what();
            qInfo("%s", e.what());
            QVERIFY2(what.contains("the update of block 0 by microbatch 0") &&
                         what.contains("before that of block 1") && what.contains("imported"),
                     e.what());
        }
        // The same program with update = sync trains (its updates land at the step's end, the
        // last stage first): minibatch SGD with M = 2.
        const Timeline sync = buildTimeline(importedParams(program, 3, 5, false));
        QVERIFY(!backpropOrderViolation(sync).has_value());
        const auto run = runLm(problem, sync, Method::Imported, 0.5, 0.5);
        QVERIFY(run->result().finished);
        const double err = relDiff(run->weights(), minibatchSgd(*problem, 5, 2, 0.5));
        qInfo("the same program with update = sync, N = 5: max weight difference %.3g", err);
        QVERIFY2(err <= 1e-12, qPrintable(QString::number(err)));
    }

    void floatPrecisionRuns_data() {
        QTest::addColumn<int>("kind");
        QTest::newRow("1f1b") << static_cast<int>(ScheduleKind::OneFOneB);
        QTest::newRow("2bw") << static_cast<int>(ScheduleKind::TwoBw);
    }
    void floatPrecisionRuns() {
        // Weights and activations in float: the double reference from the same w0, to float's
        // rounding.
        QFETCH(int, kind);
        const auto k = static_cast<ScheduleKind>(kind);
        const auto problem = problemIn(LmPrecision::Float);
        const int M = 4;
        const int N = 16;
        const Timeline tl = buildTimeline(params(k, 4, N, M));
        const auto run = runLm(
            problem, tl, k == ScheduleKind::TwoBw ? Method::TwoBw : Method::OneFOneB, 0.5, 1.0 / M);
        QVERIFY(run->result().finished);
        const VectorXd want = k == ScheduleKind::TwoBw ? delayOneRecursion(*problem, N, M, 0.5)
                                                       : minibatchSgd(*problem, N, M, 0.5);
        const double err = relDiff(run->weights(), want);
        qInfo("%s float: max weight difference %.3g relative", QTest::currentDataTag(), err);
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
        QVERIFY(err > 0.0);  // float really ran
    }
};

QTEST_APPLESS_MAIN(TestLmFamily)
#include "tst_lm_family.moc"

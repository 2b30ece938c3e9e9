// Optimizers with state (docs/correctors.md, "Optimizers") on the language model's CPU engine,
// against recursions written here: each walks the schedule's events (or PD's delay table for
// RPD), takes each block's gradient from the model's own gradient function at the weights the
// schedule says were read, and applies the formulas coordinate by coordinate. Never the
// executor's code path.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compute/lm_cpu_pipeline_executor.hpp"
#include "errors.hpp"
#include "expect_error.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "lm_tiny_problem.hpp"
#include "ref_optimizer.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "schedule/delays.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using Eigen::VectorXd;
using nlohmann::json;

namespace {

using Problem = std::shared_ptr<const CharTransformerProblem>;

using test::lmBatchesOf;
using test::lmStageGradient;
using test::relError;
using test::sameBits;
using test::tinyLmProblem;

using test::RefOptimizer;

// The schedule's reference run (test::refPipelineWalk) on the model from its initial weights.
VectorXd refPipeline(const CharTransformerProblem& p, const Timeline& tl, int replicas,
                     double gamma, const OptimizerSpec& spec, int stepGroup) {
    const auto batchOf = lmBatchesOf(p, tl.params.microbatches);
    std::vector<std::pair<Eigen::Index, Eigen::Index>> blocks;
    blocks.reserve(static_cast<size_t>(p.layout.stages()));
    for (int j = 0; j < p.layout.stages(); ++j)
        blocks.emplace_back(p.layout.stage(j).offset, p.layout.stage(j).size);
    const auto gradient = [&](const VectorXd& point, int stage, int microbatch) {
        return lmStageGradient(p, point, stage, batchOf[static_cast<size_t>(microbatch)]);
    };
    return test::refPipelineWalk(tl, replicas, p.w0, blocks, gradient, gamma, spec, stepGroup);
}

std::unique_ptr<LmReplay> enginePipeline(const Problem& p, const Timeline& tl, Method method,
                                         int replicas, double gamma, const OptimizerSpec& spec,
                                         double stepScale, int slotThreads = 1) {
    LmPipelineConfig cfg;
    cfg.method = method;
    cfg.timeline = tl;
    cfg.replicas = replicas;
    cfg.stepSize = gamma;
    cfg.stepScale = stepScale;
    cfg.optimizer = spec;
    cfg.slotThreads = slotThreads;
    return test::runTinyLmPipeline(p, cfg);
}

OptimizerSpec optimizer(OptimizerKind kind, double weightDecay = 0.0) {
    OptimizerSpec o;
    o.kind = kind;
    o.weightDecay = weightDecay;
    o.beta = 0.8;
    o.beta1 = 0.85;
    o.beta2 = 0.97;
    o.eps = 1e-6;
    return o;
}

// Every kind, with and without decay, and its step size.
void addOptimizerRows() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("decay");
    QTest::addColumn<double>("gamma");
    const std::vector<std::pair<OptimizerKind, double>> kinds = {{OptimizerKind::Sgd, 0.1},
                                                                 {OptimizerKind::Momentum, 0.05},
                                                                 {OptimizerKind::Nesterov, 0.05},
                                                                 {OptimizerKind::Adam, 0.01},
                                                                 {OptimizerKind::AdamW, 0.01}};
    for (const auto& [kind, gamma] : kinds) {
        for (double decay : {0.0, 0.05}) {
            if (kind == OptimizerKind::Sgd && decay == 0.0) continue;  // plain: the golden tests
            const std::string name =
                std::string(enumName(kOptimizerKinds, kind)) + (decay > 0 ? " decay" : "");
            QTest::newRow(name.c_str()) << static_cast<int>(kind) << decay << gamma;
        }
    }
}

ScheduleParams schedule(ScheduleKind kind, int stages, int microbatches) {
    ScheduleParams s;
    s.kind = kind;
    s.stages = stages;
    s.microbatches = microbatches;
    return s;
}

// The message of the ConfigError `f` throws ("" if none).
constexpr auto configError = &errorMessageOf<ConfigError>;

// An executor that is not the CPU's (as the OpenCL one): it keeps runSlot's and setOptimizer's
// defaults and hands the work to a CPU executor.
class OtherExecutor final : public LmPipelineExecutor {
  public:
    OtherExecutor(Problem p, int replicas)
        : cpu_(makeLmCpuPipelineExecutor(std::move(p), replicas)) {}
    std::string describe() const override { return "test device"; }
    double forward(int m, int s, int r, int b) override { return cpu_->forward(m, s, r, b); }
    void backward(int m, int s, int r, int b, double g) override { cpu_->backward(m, s, r, b, g); }
    void averageReplicas() override { cpu_->averageReplicas(); }
    double meanLoss(const TokenBatches& b) override { return cpu_->meanLoss(b); }
    VectorXd weights() const override { return cpu_->weights(); }
    std::vector<int> peakStashedWeights() const override { return cpu_->peakStashedWeights(); }
    std::vector<int> peakKeptInputs() const override { return cpu_->peakKeptInputs(); }

  private:
    std::unique_ptr<LmPipelineExecutor> cpu_;
};

json lmConfig(const json& optimizerJson, const std::string& method) {
    json j = {{"name", "lm-opt"},
              {"seed", 1},
              {"stages", 3},
              {"batch_size", 2},
              {"backend", "cpu"},
              {"objective", test::tinyLmObjectiveJson()},
              {"budget", {{"slots", 40}}},
              {"methods", json::array({{{"method", method}, {"step_size", 0.01}}})}};
    if (!optimizerJson.is_null()) j["methods"][0]["optimizer"] = optimizerJson;
    return j;
}

}  // namespace

class TestLmOptimizers : public QObject {
    Q_OBJECT
  private slots:
    // PipeDream (S = 3 and 4): every optimizer against the recursion, to 1e-12 in double.
    void pipeDreamMatchesTheRecursion_data() { addOptimizerRows(); }
    void pipeDreamMatchesTheRecursion() {
        QFETCH(int, kind);
        QFETCH(double, decay);
        QFETCH(double, gamma);
        const OptimizerSpec spec = optimizer(static_cast<OptimizerKind>(kind), decay);
        for (int S : {3, 4}) {
            const Problem p = tinyLmProblem(S);
            const Timeline tl = buildTimeline(schedule(ScheduleKind::PipeDream, S, 10));
            const VectorXd ref = refPipeline(*p, tl, 1, gamma, spec, 1);
            const auto run = enginePipeline(p, tl, Method::PipeDream, 1, gamma, spec, 1.0);
            const double err = relError(run->weights(), ref);
            qInfo("S = %d: max rel. error %.2g, moved %.2g", S, err, relError(ref, p->w0));
            QVERIFY(err <= 1e-12);
            QVERIFY(relError(ref, p->w0) > 1e-4);  // the run moved the weights
            // Slot threads side by side: bit-identical.
            const auto threaded = enginePipeline(p, tl, Method::PipeDream, 1, gamma, spec, 1.0, 3);
            QVERIFY(sameBits(threaded->weights(), run->weights()));
        }
    }

    // Sequential SGD and LocalSGD (R = 2, state averaged with the weights).
    void sequentialAndLocalSgdMatchTheRecursion_data() { addOptimizerRows(); }
    void sequentialAndLocalSgdMatchTheRecursion() {
        QFETCH(int, kind);
        QFETCH(double, decay);
        QFETCH(double, gamma);
        const OptimizerSpec spec = optimizer(static_cast<OptimizerKind>(kind), decay);
        const Problem p = tinyLmProblem(3);
        ScheduleParams seq = schedule(ScheduleKind::LocalSgd, 3, 6);
        seq.replicas = 1;
        seq.localSteps = 1 << 29;
        const Timeline seqTl = buildTimeline(seq);
        QVERIFY(relError(enginePipeline(p, seqTl, Method::Sgd, 1, gamma, spec, 1.0)->weights(),
                         refPipeline(*p, seqTl, 1, gamma, spec, 1)) <= 1e-12);
        ScheduleParams local = schedule(ScheduleKind::LocalSgd, 3, 12);
        local.replicas = 2;
        local.localSteps = 2;
        const Timeline localTl = buildTimeline(local);
        QVERIFY(!localTl.averagingSlots.empty());
        const double err =
            relError(enginePipeline(p, localTl, Method::LocalSgd, 2, gamma, spec, 1.0)->weights(),
                     refPipeline(*p, localTl, 2, gamma, spec, 1));
        qInfo("LocalSGD R = 2: max rel. error %.2g", err);
        QVERIFY(err <= 1e-12);
    }

    // Synchronous steps (fill-drain, 1F1B): one optimizer step per block on the step's mean.
    void synchronousStepsMatchTheRecursion_data() { addOptimizerRows(); }
    void synchronousStepsMatchTheRecursion() {
        QFETCH(int, kind);
        QFETCH(double, decay);
        QFETCH(double, gamma);
        const OptimizerSpec spec = optimizer(static_cast<OptimizerKind>(kind), decay);
        const Problem p = tinyLmProblem(3);
        ScheduleParams fd = schedule(ScheduleKind::FillDrain, 3, 8);
        fd.flushGroup = 4;
        ScheduleParams ofob = schedule(ScheduleKind::OneFOneB, 3, 8);
        ofob.flushGroup = 4;
        for (const auto& [params, method] :
             {std::pair{fd, Method::FillDrain}, std::pair{ofob, Method::OneFOneB}}) {
            const Timeline tl = buildTimeline(params);
            const double err =
                relError(enginePipeline(p, tl, method, 1, gamma, spec, 1.0 / 4)->weights(),
                         refPipeline(*p, tl, 1, gamma, spec, 4));
            qInfo("%s: max rel. error %.2g", methodName(method).c_str(), err);
            QVERIFY(err <= 1e-12);
        }
    }

    // RPD with PipeDream's delays and order: one optimizer step per update on the newest block.
    void rpdMatchesTheRecursion_data() { addOptimizerRows(); }
    void rpdMatchesTheRecursion() {
        QFETCH(int, kind);
        QFETCH(double, decay);
        QFETCH(double, gamma);
        const OptimizerSpec spec = optimizer(static_cast<OptimizerKind>(kind), decay);
        const int S = 3;
        const Problem p = tinyLmProblem(S);
        const auto table = std::make_shared<const DelayTable>(
            buildTimeline(schedule(ScheduleKind::PipeDream, S, 8)));
        const long long K = table->updates();
        LmRpdConfig cfg;
        cfg.updates = K;
        cfg.stepSize = gamma;
        cfg.delayMode = DelayMode::PipeDream;
        cfg.order = StageOrder::PipeDream;
        cfg.pipeDream = table;
        cfg.maxDelay = table->maxDelay();
        cfg.batchOf = lmBatchesOf(*p, 8);
        cfg.optimizer = spec;
        auto run = makeLmRpdReplay(p, cfg);
        run->runToEnd();
        QVERIFY(run->result().finished);
        // Every iterate kept: z_k's block j is iterate k - d_kj's.
        std::vector<VectorXd> hist{p->w0};
        std::vector<RefOptimizer> opt(S, RefOptimizer(spec));
        for (long long k = 0; k < K; ++k) {
            VectorXd z(p->w0.size());
            for (int j = 0; j < S; ++j) {
                const auto& b = p->layout.stage(j);
                z.segment(b.offset, b.size) =
                    hist[static_cast<size_t>(k - table->delay(k, j))].segment(b.offset, b.size);
            }
            const BlockUpdateInfo& u = table->update(k);
            const VectorXd g = lmStageGradient(*p, z, u.stage, cfg.batchOf[u.microbatch]);
            VectorXd next = hist.back();
            const auto& b = p->layout.stage(u.stage);
            opt[u.stage].apply(next.segment(b.offset, b.size), g, gamma);
            hist.push_back(next);
        }
        const double err = relError(run->weights(), hist.back());
        qInfo("RPD: max rel. error %.2g over %lld updates", err, K);
        QVERIFY(err <= 1e-12);
    }

    // A transformer block of C = 32 (12,672 parameters) is updated in several chunks (the
    // executor's cache-sized pieces): still the whole block's update.
    void chunkedBlocksMatchTheRecursion() {
        const Problem p = tinyLmProblem(3, LmPrecision::Double, 32);
        QVERIFY(p->layout.stage(1).size > 3 * 4096);
        for (OptimizerKind kind : {OptimizerKind::Nesterov, OptimizerKind::AdamW}) {
            const OptimizerSpec spec = optimizer(kind, 0.05);
            const Timeline pd = buildTimeline(schedule(ScheduleKind::PipeDream, 3, 6));
            double err =
                relError(enginePipeline(p, pd, Method::PipeDream, 1, 0.01, spec, 1.0)->weights(),
                         refPipeline(*p, pd, 1, 0.01, spec, 1));
            QVERIFY(err <= 1e-12);
            ScheduleParams fd = schedule(ScheduleKind::FillDrain, 3, 6);
            fd.flushGroup = 3;
            const Timeline fdTl = buildTimeline(fd);
            err = relError(
                enginePipeline(p, fdTl, Method::FillDrain, 1, 0.01, spec, 1.0 / 3)->weights(),
                refPipeline(*p, fdTl, 1, 0.01, spec, 3));
            QVERIFY(err <= 1e-12);
        }
    }

    // Adam on sequential SGD is the textbook Adam loop on the whole vector: g = the full
    // gradient at w, one step per microbatch (every block's count is the microbatch's).
    void adamOnSequentialSgdIsTextbookAdam() {
        const Problem p = tinyLmProblem(4);
        const OptimizerSpec spec = optimizer(OptimizerKind::Adam);
        const double gamma = 0.01;
        const int N = 7;
        ScheduleParams seq = schedule(ScheduleKind::LocalSgd, 4, N);
        seq.replicas = 1;
        seq.localSteps = 1 << 29;
        const auto run = enginePipeline(p, buildTimeline(seq), Method::Sgd, 1, gamma, spec, 1.0);
        CharTransformer<double> model(p->layout);
        VectorXd w = p->w0;
        VectorXd m = VectorXd::Zero(w.size());
        VectorXd v = VectorXd::Zero(w.size());
        VectorXd g(w.size());
        const auto batchOf = lmBatchesOf(*p, N);
        for (int t = 1; t <= N; ++t) {
            const int batch = batchOf[static_cast<size_t>(t - 1)];
            model.lossAndGradient(w.data(), p->train.tokens(batch), p->train.targets(batch),
                                  g.data());
            m = spec.beta1 * m + (1 - spec.beta1) * g;
            v = spec.beta2 * v + (1 - spec.beta2) * g.cwiseProduct(g);
            const VectorXd mHat = m / (1 - std::pow(spec.beta1, t));
            const VectorXd vHat = v / (1 - std::pow(spec.beta2, t));
            w -= gamma * (mHat.array() / (vHat.array().sqrt() + spec.eps)).matrix();
        }
        const double err = relError(run->weights(), w);
        qInfo("sequential SGD + Adam vs textbook Adam: %.2g", err);
        QVERIFY(err <= 1e-12);
        QVERIFY(relError(w, p->w0) > 1e-3);
    }

    // Momentum with beta = 0 is plain SGD bit for bit on the asynchronous methods.
    void momentumZeroIsPlainSgdBitForBit() {
        OptimizerSpec zero = optimizer(OptimizerKind::Momentum);
        zero.beta = 0.0;
        for (int S : {3, 4}) {
            const Problem p = tinyLmProblem(S);
            const Timeline tl = buildTimeline(schedule(ScheduleKind::PipeDream, S, 10));
            const auto plain = enginePipeline(p, tl, Method::PipeDream, 1, 0.1, {}, 1.0);
            const auto momentum = enginePipeline(p, tl, Method::PipeDream, 1, 0.1, zero, 1.0);
            QVERIFY(sameBits(plain->weights(), momentum->weights()));
            QVERIFY(!sameBits(plain->weights(), p->w0));
        }
    }

    // Float: the same run within float's rounding of the double one.
    void floatFollowsDouble() {
        const OptimizerSpec spec = optimizer(OptimizerKind::AdamW, 0.05);
        const Timeline tl = buildTimeline(schedule(ScheduleKind::PipeDream, 3, 10));
        const auto d = enginePipeline(tinyLmProblem(3), tl, Method::PipeDream, 1, 0.01, spec, 1.0);
        const auto f = enginePipeline(tinyLmProblem(3, LmPrecision::Float), tl, Method::PipeDream,
                                      1, 0.01, spec, 1.0);
        const double err = relError(f->weights(), d->weights());
        qInfo("float vs double: %.2g", err);
        QVERIFY(err <= 1e-4);
    }

    // An executor other than the CPU's (OpenCL) refuses a stateful optimizer by name.
    void otherExecutorsRefuseAnOptimizer() {
        const Problem p = tinyLmProblem(3);
        LmPipelineConfig cfg;
        cfg.timeline = buildTimeline(schedule(ScheduleKind::PipeDream, 3, 4));
        cfg.stepSize = 0.01;
        cfg.optimizer = optimizer(OptimizerKind::Adam);
        const LmExecutorFactory other = [](Problem q, int r) {
            return std::make_unique<OtherExecutor>(std::move(q), r);
        };
        QCOMPARE(QString::fromStdString(configError([&] { makeLmPipelineReplay(p, cfg, other); })),
                 QString(R"(optimizer.kind = "adam" (or a weight_decay) is not supported by the )"
                         R"(language model's test device executor: plain sgd only; use the CPU )"
                         R"(engine (backend = "cpu"))"));
        cfg.optimizer = {};
        QVERIFY(makeLmPipelineReplay(p, cfg, other) != nullptr);  // plain sgd is fine
    }

    // The config: the language model takes optimizers on the CPU, and with backend opencl too
    // (the OpenCL executors apply them).
    void configAcceptsOptimizersOnTheLanguageModel() {
        const json adam = {{"kind", "adam"}, {"beta2", 0.99}};
        ExperimentConfig c = ExperimentConfig::fromJson(lmConfig(adam, "pd"));
        QCOMPARE(c.methods[0].optimizer.kind, OptimizerKind::Adam);
        const ExperimentResult res = runExperiment(c);
        QCOMPARE(res.methods.size(), size_t(1));
        QCOMPARE(QString::fromStdString(res.methods[0].label), QString("PipeDream + Adam"));
        QVERIFY(res.methods[0].result.finished);
        QVERIFY(std::isfinite(lmOf(res.methods[0]).finalLoss));
        json j = lmConfig(adam, "rpd");
        j["backend"] = "opencl";
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(j); })),
                 QString());
    }
};

QTEST_APPLESS_MAIN(TestLmOptimizers)
#include "tst_lm_optimizers.moc"

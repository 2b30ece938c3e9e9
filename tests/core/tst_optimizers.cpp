// Optimizers with state (docs/correctors.md, "Optimizers") on the CPU engine, against recursions
// written here from the formulas: each walks the schedule's events (or PD's delay table for RPD)
// with plain per-coordinate loops and its own gradients, never the engine's code path.
#include <QtTest>

#include <cmath>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compute/cpu_backend.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "expect_error.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "forwarding_backend.hpp"
#include "ref_optimizer.hpp"
#include "replay/pipeline_replay.hpp"
#include "replay/rpd_replay.hpp"
#include "schedule/delays.hpp"
#include "schedule/program.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/pytorch_csv.hpp"
#include "schedule/timeline.hpp"
#include "small_objective.hpp"

using namespace pipelens;
using Eigen::VectorXd;
using nlohmann::json;

namespace {

std::shared_ptr<LinearObjective> makeObjective(LossKind loss) {
    return test::smallObjective(loss, 40, 7);
}

using test::refBlockGradient;

using test::RefOptimizer;

// The schedule's reference run (test::refPipelineWalk) on the linear objective from w = 0.
VectorXd refPipeline(const LinearObjective& obj, const Timeline& tl, int replicas, double gamma,
                     const OptimizerSpec& spec, int stepGroup) {
    std::vector<std::pair<Eigen::Index, Eigen::Index>> blocks;
    for (const BlockRange& b : splitBlocks(obj.dim(), tl.params.stages))
        blocks.emplace_back(b.offset, b.size);
    const auto gradient = [&](const VectorXd& point, int stage, int microbatch) {
        return refBlockGradient(obj, microbatch % obj.batches(), point,
                                BlockRange{static_cast<int>(blocks[stage].first),
                                           static_cast<int>(blocks[stage].second)});
    };
    return test::refPipelineWalk(tl, replicas, VectorXd::Zero(obj.dim()), blocks, gradient, gamma,
                                 spec, stepGroup);
}

// The engine's run of the same schedule; its final replica average.
VectorXd enginePipeline(std::shared_ptr<LinearObjective> obj, const Timeline& tl, int replicas,
                        double gamma, const OptimizerSpec& spec, double stepScale,
                        Method method = Method::PipeDream, RunResult* result = nullptr) {
    PipelineReplayConfig cfg;
    cfg.method = method;
    cfg.timeline = tl;
    cfg.replicas = replicas;
    cfg.stepSize = gamma;
    cfg.stepScale = stepScale;
    cfg.optimizer = spec;
    auto backend = std::make_unique<CpuBackend>();
    CpuBackend* raw = backend.get();
    PipelineReplay replay(std::move(obj), std::move(backend), cfg);
    replay.runToEnd();
    if (!replay.result().finished) throw std::runtime_error("the engine's run did not finish");
    if (result) *result = replay.result();
    return raw->weights();
}

// RPD with PipeDream's delays and order and every iterate kept: w_{k+1} = w_k with block s_k
// stepped by the optimizer on grad_{s_k} f_batch(z_k), z_k's block j from iterate k - d_kj.
VectorXd refRpd(const LinearObjective& obj, const DelayTable& table, long long K, double gamma,
                const OptimizerSpec& spec) {
    const int S = table.stages();
    const auto blocks = splitBlocks(obj.dim(), S);
    std::vector<VectorXd> hist{VectorXd::Zero(obj.dim())};
    std::vector<RefOptimizer> opt(S, RefOptimizer(spec));
    for (long long k = 0; k < K; ++k) {
        VectorXd z(obj.dim());
        for (int j = 0; j < S; ++j) {
            const BlockRange& b = blocks[j];
            z.segment(b.offset, b.size) =
                hist[static_cast<size_t>(k - table.delay(k, j))].segment(b.offset, b.size);
        }
        const BlockUpdateInfo& u = table.update(k);
        const BlockRange& b = blocks[u.stage];
        VectorXd next = hist.back();
        VectorXd block = next.segment(b.offset, b.size);
        opt[u.stage].apply(block, refBlockGradient(obj, u.microbatch % obj.batches(), z, b), gamma);
        next.segment(b.offset, b.size) = block;
        hist.push_back(next);
    }
    return hist.back();
}

std::shared_ptr<const DelayTable> pdTable(int S, int N) {
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = S;
    p.microbatches = N;
    return std::make_shared<const DelayTable>(buildTimeline(p));
}

VectorXd engineRpd(std::shared_ptr<LinearObjective> obj,
                   const std::shared_ptr<const DelayTable>& table, long long K, double gamma,
                   const OptimizerSpec& spec, RunResult* result = nullptr) {
    RpdReplayConfig cfg;
    cfg.stages = table->stages();
    cfg.updates = K;
    cfg.stepSize = gamma;
    cfg.delayMode = DelayMode::PipeDream;
    cfg.order = StageOrder::PipeDream;
    cfg.pipeDream = table;
    cfg.optimizer = spec;
    auto backend = std::make_unique<CpuBackend>();
    CpuBackend* raw = backend.get();
    RpdReplay replay(std::move(obj), std::move(backend), cfg);
    replay.runToEnd();
    if (!replay.result().finished) throw std::runtime_error("the engine's RPD run did not finish");
    if (result) *result = replay.result();
    return raw->weights();
}

// max_i |a_i - b_i| / max(1, |b_i|): at most 1e-12 for "equal in double".
double relativeDifference(const VectorXd& a, const VectorXd& b) {
    double worst = 0.0;
    for (Eigen::Index i = 0; i < b.size(); ++i) {
        worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i])));
    }
    return worst;
}

OptimizerSpec specOf(OptimizerKind kind) {
    OptimizerSpec o;
    o.kind = kind;
    o.beta = 0.7;
    o.beta1 = 0.8;
    o.beta2 = 0.95;
    o.eps = 1e-6;
    o.weightDecay = kind == OptimizerKind::AdamW ? 0.05 : 0.02;
    return o;
}

ScheduleParams params(ScheduleKind kind, int S, int N, int group = 0) {
    ScheduleParams p;
    p.kind = kind;
    p.stages = S;
    p.microbatches = N;
    p.flushGroup = group;
    return p;
}

// The message of the ConfigError `f` throws ("" if none).
constexpr auto configError = &errorMessageOf<ConfigError>;

json baseConfig(const json& optimizer) {
    json m = {{"method", "pd"}, {"step_size", 0.01}};
    if (!optimizer.is_null()) m["optimizer"] = optimizer;
    return {{"stages", 2},
            {"batch_size", 5},
            {"data", {{"rows", 40}, {"dim", 6}}},
            {"budget", {{"microbatches", 16}}},
            {"methods", json::array({m})}};
}

// A backend that would run on a device: it forwards to the CPU engine but keeps the default
// setOptimizer (plain SGD only), or with `optimizers` forwards that too (as the OpenCL backend
// now applies them).
class PlainOnlyBackend final : public test::ForwardingCpuBackend {
  public:
    explicit PlainOnlyBackend(bool optimizers = false)
        : ForwardingCpuBackend("plain-only"), optimizers_(optimizers) {}
    void setOptimizer(const OptimizerSpec& spec, double gradientScale) override {
        if (!optimizers_) return ComputeBackend::setOptimizer(spec, gradientScale);
        inner().setOptimizer(spec, gradientScale);
    }

  private:
    bool optimizers_ = false;
};

const std::vector<OptimizerKind> kStateful{OptimizerKind::Momentum, OptimizerKind::Nesterov,
                                           OptimizerKind::Adam, OptimizerKind::AdamW};

}  // namespace

class TestOptimizers : public QObject {
    Q_OBJECT

  private slots:
    void pipelinesMatchTheRecursion_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("loss");
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("stages");
        QTest::addColumn<int>("group");  // microbatches per synchronous step (1: async)
        const std::vector<std::tuple<const char*, ScheduleKind, int, int>> schedules{
            {"pd-S2", ScheduleKind::PipeDream, 2, 1},
            {"pd-S3", ScheduleKind::PipeDream, 3, 1},
            {"fill-drain-S3-G3", ScheduleKind::FillDrain, 3, 3},
            {"1f1b-S3-M3", ScheduleKind::OneFOneB, 3, 3},
            {"zb-h1-S3-M3", ScheduleKind::ZeroBubbleH1, 3, 3},
            {"2bw-S2-m2", ScheduleKind::TwoBw, 2, 2},
            {"2bw-S3-m4", ScheduleKind::TwoBw, 3, 4}};
        auto kinds = kStateful;
        kinds.push_back(OptimizerKind::Sgd);  // sgd with weight decay: the optimizer path too
        for (OptimizerKind k : kinds) {
            for (LossKind loss : {LossKind::Quadratic, LossKind::Logistic}) {
                for (const auto& [name, sched, S, group] : schedules) {
                    QTest::addRow("%s-%s-%s", std::string(enumName(kOptimizerKinds, k)).c_str(),
                                  lossKindName(loss).c_str(), name)
                        << static_cast<int>(k) << static_cast<int>(loss) << static_cast<int>(sched)
                        << S << group;
                }
            }
        }
    }

    void pipelinesMatchTheRecursion() {
        QFETCH(int, kind);
        QFETCH(int, loss);
        QFETCH(int, schedule);
        QFETCH(int, stages);
        QFETCH(int, group);
        auto obj = makeObjective(static_cast<LossKind>(loss));
        const OptimizerSpec spec = specOf(static_cast<OptimizerKind>(kind));
        const Timeline tl = buildTimeline(
            params(static_cast<ScheduleKind>(schedule), stages, 12, group > 1 ? group : 0));
        const double gamma = 0.05;
        const VectorXd want = refPipeline(*obj, tl, 1, gamma, spec, group);
        const VectorXd got = enginePipeline(obj, tl, 1, gamma, spec, 1.0 / group);
        QVERIFY2(want.norm() > 1e-3, "the run moved the weights");
        QVERIFY2(relativeDifference(got, want) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got, want))));
    }

    void interleavedAndImportedMatchTheRecursion_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("loss");
        QTest::addColumn<QString>("schedule");
        for (OptimizerKind k : {OptimizerKind::Nesterov, OptimizerKind::AdamW}) {
            for (LossKind loss : {LossKind::Quadratic, LossKind::Logistic}) {
                for (const char* sched : {"interleaved", "imported-sync", "imported-async"}) {
                    QTest::addRow("%s-%s-%s", std::string(enumName(kOptimizerKinds, k)).c_str(),
                                  lossKindName(loss).c_str(), sched)
                        << static_cast<int>(k) << static_cast<int>(loss) << QString(sched);
                }
            }
        }
    }

    void interleavedAndImportedMatchTheRecursion() {
        // Interleaved 1F1B (2 devices x 2 chunks, M = 2) and the imported PyTorch 1F1B file
        // (S = 4, M = 8), synchronous and asynchronous (every backward a step).
        QFETCH(int, kind);
        QFETCH(int, loss);
        QFETCH(QString, schedule);
        auto obj = makeObjective(static_cast<LossKind>(loss));
        ScheduleParams p;
        if (schedule == "interleaved") {
            p = params(ScheduleKind::Interleaved, 4, 8, 2);
            p.virtualStages = 2;
            p.costs.forwardSlots = 2;  // a chunk op costs 1/v of a stage op
            p.costs.backwardSlots = 4;
        } else {
            p = params(ScheduleKind::Imported, 4, 16);
            p.program = std::make_shared<const PipelineProgram>(readPytorchScheduleCsv(
                std::string(PIPELENS_SOURCE_DIR) + "/examples/schedules/1f1b_s4_m8.csv"));
            p.asyncUpdate = schedule == "imported-async";
        }
        const Timeline tl = buildTimeline(p);
        const int group = p.asyncUpdate ? 1 : programStepMicrobatches(p);
        QCOMPARE(group, schedule == "interleaved" ? 2 : (p.asyncUpdate ? 1 : 8));
        const OptimizerSpec spec = specOf(static_cast<OptimizerKind>(kind));
        const VectorXd want = refPipeline(*obj, tl, 1, 0.05, spec, group);
        const VectorXd got = enginePipeline(obj, tl, 1, 0.05, spec, 1.0 / group);
        QVERIFY(want.norm() > 1e-3);
        QVERIFY2(relativeDifference(got, want) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got, want))));
    }

    void localSgdAndSequentialSgdMatchTheRecursion_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("replicas");
        for (OptimizerKind k : kStateful) {
            for (int r : {1, 2}) {
                QTest::addRow("%s-R%d", std::string(enumName(kOptimizerKinds, k)).c_str(), r)
                    << static_cast<int>(k) << r;
            }
        }
    }

    void localSgdAndSequentialSgdMatchTheRecursion() {
        // R = 2, H = 2: replicas average weights and optimizer state every round. R = 1, H = N:
        // the sequential SGD method (one replica, never averaged).
        QFETCH(int, kind);
        QFETCH(int, replicas);
        auto obj = makeObjective(LossKind::Logistic);
        const OptimizerSpec spec = specOf(static_cast<OptimizerKind>(kind));
        ScheduleParams p = params(ScheduleKind::LocalSgd, 3, 12);
        p.replicas = replicas;
        p.localSteps = replicas == 1 ? 12 : 2;
        const Timeline tl = buildTimeline(p);
        QCOMPARE(tl.averagingSlots.empty(), false);
        const VectorXd want = refPipeline(*obj, tl, replicas, 0.05, spec, 1);
        const VectorXd got = enginePipeline(obj, tl, replicas, 0.05, spec, 1.0, Method::LocalSgd);
        QVERIFY(want.norm() > 1e-3);
        QVERIFY2(relativeDifference(got, want) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got, want))));
    }

    void rpdMatchesTheRecursion_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("loss");
        QTest::addColumn<int>("stages");
        for (OptimizerKind k : kStateful) {
            for (LossKind loss : {LossKind::Quadratic, LossKind::Logistic}) {
                for (int S : {2, 3}) {
                    QTest::addRow("%s-%s-S%d", std::string(enumName(kOptimizerKinds, k)).c_str(),
                                  lossKindName(loss).c_str(), S)
                        << static_cast<int>(k) << static_cast<int>(loss) << S;
                }
            }
        }
    }

    void rpdMatchesTheRecursion() {
        // RPD with PipeDream's delays and order (a known delay sequence): one optimizer step per
        // update on the newest version of the block.
        QFETCH(int, kind);
        QFETCH(int, loss);
        QFETCH(int, stages);
        auto obj = makeObjective(static_cast<LossKind>(loss));
        const auto table = pdTable(stages, 12);
        const long long K = table->updates();
        QVERIFY(table->maxDelay() > 0);
        const OptimizerSpec spec = specOf(static_cast<OptimizerKind>(kind));
        const VectorXd want = refRpd(*obj, *table, K, 0.05, spec);
        const VectorXd got = engineRpd(obj, table, K, 0.05, spec);
        QVERIFY(want.norm() > 1e-3);
        QVERIFY2(relativeDifference(got, want) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got, want))));
    }

    void zeroMomentumIsSgdBitForBit() {
        // beta = 0 with no decay: v = g, so the update is the plain one, bit for bit, on the
        // methods whose every backward is a step (PD, LocalSGD, sequential SGD, RPD).
        auto obj = makeObjective(LossKind::Logistic);
        for (OptimizerKind k : {OptimizerKind::Momentum, OptimizerKind::Nesterov}) {
            OptimizerSpec zero;
            zero.kind = k;
            zero.beta = 0.0;
            RunResult a;
            RunResult b;
            const Timeline pd = buildTimeline(params(ScheduleKind::PipeDream, 3, 12));
            const VectorXd wa =
                enginePipeline(obj, pd, 1, 0.1, OptimizerSpec{}, 1.0, Method::PipeDream, &a);
            const VectorXd wb = enginePipeline(obj, pd, 1, 0.1, zero, 1.0, Method::PipeDream, &b);
            QVERIFY(wa == wb);
            QVERIFY(a.objectivePerUpdate == b.objectivePerUpdate);
            QVERIFY(a.objectivePerSlot == b.objectivePerSlot);
            ScheduleParams lp = params(ScheduleKind::LocalSgd, 3, 12);
            lp.replicas = 2;
            lp.localSteps = 2;
            const Timeline local = buildTimeline(lp);
            QVERIFY(enginePipeline(obj, local, 2, 0.1, OptimizerSpec{}, 1.0, Method::LocalSgd) ==
                    enginePipeline(obj, local, 2, 0.1, zero, 1.0, Method::LocalSgd));
            ScheduleParams sp = params(ScheduleKind::LocalSgd, 3, 12);
            sp.replicas = 1;
            sp.localSteps = 12;
            const Timeline sequential = buildTimeline(sp);
            QVERIFY(enginePipeline(obj, sequential, 1, 0.1, OptimizerSpec{}, 1.0, Method::Sgd) ==
                    enginePipeline(obj, sequential, 1, 0.1, zero, 1.0, Method::Sgd));
            const auto table = pdTable(3, 12);
            QVERIFY(engineRpd(obj, table, table->updates(), 0.1, OptimizerSpec{}, &a) ==
                    engineRpd(obj, table, table->updates(), 0.1, zero, &b));
            QVERIFY(a.objectivePerUpdate == b.objectivePerUpdate);
            // A nonzero beta must change the run (the comparison above can fail).
            OptimizerSpec some = zero;
            some.beta = 0.5;
            QVERIFY(enginePipeline(obj, pd, 1, 0.1, some, 1.0) != wa);
        }
    }

    void zeroMomentumOnSynchronousStepsIsSgdUpToRounding() {
        // A synchronous step sums its gradients before one update: SGD's per-backward updates
        // of gamma/M g give the same weights up to rounding.
        auto obj = makeObjective(LossKind::Quadratic);
        OptimizerSpec zero;
        zero.kind = OptimizerKind::Momentum;
        zero.beta = 0.0;
        const Timeline tl = buildTimeline(params(ScheduleKind::OneFOneB, 3, 12, 4));
        const VectorXd sgd = enginePipeline(obj, tl, 1, 0.1, OptimizerSpec{}, 0.25);
        const VectorXd mom = enginePipeline(obj, tl, 1, 0.1, zero, 0.25);
        QVERIFY(sgd.norm() > 1e-3);
        QVERIFY2(relativeDifference(mom, sgd) <= 1e-13,
                 qPrintable(QString("difference %1").arg(relativeDifference(mom, sgd))));
    }

    void adamOnSynchronousSchedulesIsTextbookAdam_data() {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("group");
        QTest::addRow("sequential-sgd") << static_cast<int>(ScheduleKind::LocalSgd) << 1;
        QTest::addRow("fill-drain-G4") << static_cast<int>(ScheduleKind::FillDrain) << 4;
        QTest::addRow("1f1b-M3") << static_cast<int>(ScheduleKind::OneFOneB) << 3;
    }

    void adamOnSynchronousSchedulesIsTextbookAdam() {
        // Textbook Adam (Kingma & Ba, Algorithm 1) on the whole vector, one step per
        // synchronous step with the mean gradient of its microbatches, all read at the same w.
        QFETCH(int, schedule);
        QFETCH(int, group);
        auto obj = makeObjective(LossKind::Logistic);
        const int S = 3;
        const int N = 12;
        ScheduleParams p = params(static_cast<ScheduleKind>(schedule), S, N, group > 1 ? group : 0);
        if (p.kind == ScheduleKind::LocalSgd) {
            p.replicas = 1;
            p.localSteps = N;
        }
        const Timeline tl = buildTimeline(p);
        OptimizerSpec adam;
        adam.kind = OptimizerKind::Adam;
        const double alpha = 0.02;
        const VectorXd got = enginePipeline(obj, tl, 1, alpha, adam, 1.0 / group, Method::Sgd);

        const int d = obj->dim();
        const BlockRange whole{0, d};
        VectorXd theta = VectorXd::Zero(d);
        VectorXd m = VectorXd::Zero(d);
        VectorXd v = VectorXd::Zero(d);
        for (int t = 1; t <= N / group; ++t) {
            VectorXd g = VectorXd::Zero(d);
            for (int j = 0; j < group; ++j) {
                g += refBlockGradient(*obj, ((t - 1) * group + j) % obj->batches(), theta, whole);
            }
            g /= group;
            m = adam.beta1 * m + (1 - adam.beta1) * g;
            v = adam.beta2 * v + (1 - adam.beta2) * VectorXd(g.array().square());
            const VectorXd mHat = m / (1 - std::pow(adam.beta1, t));
            const VectorXd vHat = v / (1 - std::pow(adam.beta2, t));
            theta -= alpha * VectorXd(mHat.array() / (vHat.array().sqrt() + adam.eps));
        }
        QVERIFY(theta.norm() > 1e-3);
        QVERIFY2(relativeDifference(got, theta) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got, theta))));
    }

    void configReadsWritesAndDefaults() {
        const ExperimentConfig plain = ExperimentConfig::fromJson(baseConfig(nullptr));
        QVERIFY(plain.methods[0].optimizer == OptimizerSpec{});
        QVERIFY(!plain.toJson()["methods"][0].contains("optimizer"));

        const ExperimentConfig adamw =
            ExperimentConfig::fromJson(baseConfig({{"kind", "adamw"}, {"beta2", 0.99}}));
        const OptimizerSpec& o = adamw.methods[0].optimizer;
        QCOMPARE(o.kind, OptimizerKind::AdamW);
        QCOMPARE(o.beta1, 0.9);
        QCOMPARE(o.beta2, 0.99);
        QCOMPARE(o.eps, 1e-8);
        QCOMPARE(o.weightDecay, 0.01);
        QCOMPARE(ExperimentConfig::fromJson(adamw.toJson()), adamw);
        QVERIFY(defaultMethodLabel(adamw.methods[0], 2).find("AdamW") != std::string::npos);

        const ExperimentConfig mom =
            ExperimentConfig::fromJson(baseConfig({{"kind", "nesterov"}, {"beta", 0.5}}));
        QCOMPARE(mom.methods[0].optimizer.beta, 0.5);
        QCOMPARE(mom.methods[0].optimizer.weightDecay, 0.0);
        QCOMPARE(ExperimentConfig::fromJson(mom.toJson()), mom);

        // A kind's unused fields (left by an edit that changed the kind) are not written.
        ExperimentConfig edited = mom;
        edited.methods[0].optimizer.kind = OptimizerKind::Sgd;
        QVERIFY(!edited.toJson()["methods"][0].contains("optimizer"));
    }

    void badConfigsNameFieldValueAndRange_data() {
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<QString>("message");
        QTest::addRow("unknown kind")
            << R"({"kind": "lion"})"
            << R"(methods[0].optimizer.kind = "lion" is not allowed: one of sgd, momentum, )"
               R"(nesterov, adam, adamw)";
        QTest::addRow("kind missing")
            << R"({"beta": 0.5})"
            << "methods[0].optimizer.kind is missing: one of sgd, momentum, nesterov, adam, adamw";
        QTest::addRow("beta 1")
            << R"({"kind": "momentum", "beta": 1})"
            << "methods[0].optimizer.beta = 1 is not allowed: a number in [0, 1)";
        QTest::addRow("beta2 negative")
            << R"({"kind": "adam", "beta2": -0.1})"
            << "methods[0].optimizer.beta2 = -0.1 is not allowed: a number in [0, 1)";
        QTest::addRow("eps 0") << R"({"kind": "adam", "eps": 0})"
                               << "methods[0].optimizer.eps = 0 is not allowed: a number in (0, 1]";
        QTest::addRow("weight decay")
            << R"({"kind": "sgd", "weight_decay": -1})"
            << "methods[0].optimizer.weight_decay = -1 is not allowed: a number in [0, 1e6]";
        QTest::addRow("another kind's key")
            << R"({"kind": "momentum", "beta1": 0.9})"
            << "unknown key methods[0].optimizer.beta1 (allowed here: beta, kind, weight_decay)";
        QTest::addRow("not an object")
            << R"("adam")"
            << R"(methods[0].optimizer = "adam" is not allowed: a JSON object)";
    }

    void badConfigsNameFieldValueAndRange() {
        QFETCH(QString, optimizer);
        QFETCH(QString, message);
        const json o = json::parse(optimizer.toStdString());
        QCOMPARE(
            QString::fromStdString(configError([&] { ExperimentConfig::fromJson(baseConfig(o)); })),
            message);
    }

    void openClTakesOptimizers() {
        // Optimizers with state run on every engine (docs/opencl.md): a config with backend
        // "opencl" and one validates, and so does one with correctors (tst_correctors).
        json j = baseConfig({{"kind", "adam"}});
        j["backend"] = "opencl";
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(j); })),
                 QString());
        j["methods"][0]["optimizer"] = {{"kind", "sgd"}, {"weight_decay", 0.1}};
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(j); })),
                 QString());
        ExperimentConfig c = ExperimentConfig::fromJson(baseConfig({{"kind", "momentum"}}));
        j["methods"][0]["correctors"] = json::array({{{"kind", "dc"}}});
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(j); })),
                 QString());
    }

    void autoOnADeviceRunsTheOptimizerThere() {
        // The engine chosen is a device (backend name not "cpu"): a method with an optimizer
        // runs there, with no notice (the device backend is asked to apply it).
        ExperimentConfig c = ExperimentConfig::fromJson(baseConfig({{"kind", "adam"}}));
        int deviceBackends = 0;
        RunOptions options;
        options.backendName = "opencl: a device";
        options.backend = [&deviceBackends]() -> std::unique_ptr<ComputeBackend> {
            ++deviceBackends;
            return std::make_unique<PlainOnlyBackend>(true);
        };
        options.threads = 1;
        const ExperimentResult r = runExperiment(c, options);
        QCOMPARE(deviceBackends, 1);
        QVERIFY(r.methods[0].result.finished);
        QVERIFY(r.notices.empty());
        const ExperimentResult cpu = runExperiment(c);
        QVERIFY(cpu.methods[0].result.objectivePerUpdate == r.methods[0].result.objectivePerUpdate);
    }

    void aBackendWithoutOptimizersRefusesOne() {
        auto obj = makeObjective(LossKind::Quadratic);
        PipelineReplayConfig cfg;
        cfg.timeline = buildTimeline(params(ScheduleKind::PipeDream, 2, 4));
        cfg.stepSize = 0.1;
        cfg.optimizer.kind = OptimizerKind::Adam;
        const std::string e =
            configError([&] { PipelineReplay(obj, std::make_unique<PlainOnlyBackend>(), cfg); });
        QCOMPARE(QString::fromStdString(e),
                 QString(R"(optimizer.kind = "adam" (or a weight_decay) is not supported by the )"
                         R"(plain-only backend: plain sgd only; use the CPU engine (backend = )"
                         R"("cpu"))"));
        cfg.optimizer = OptimizerSpec{};
        PipelineReplay plain(obj, std::make_unique<PlainOnlyBackend>(), cfg);
        plain.runToEnd();
        QVERIFY(plain.result().finished);
    }
};

QTEST_APPLESS_MAIN(TestOptimizers)
#include "tst_optimizers.moc"

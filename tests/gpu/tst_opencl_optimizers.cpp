// Optimizers with state on the OpenCL engines against the CPU engine (issue 33): sgd with weight
// decay, momentum, Nesterov, Adam and AdamW on PD, LocalSGD (R = 2, H = 2), RPD, 1F1B (M = 4) and
// fill-drain (G = 4), quadratic and logistic, give the CPU's trajectories (double: relative
// 1e-9; float: the documented run tolerance); the language model's PD, LocalSGD, 1F1B and RPD
// with Adam and momentum follow the CPU executors; a config with backend "opencl" and an
// optimizer validates and runs on the device (correctors: tst_opencl_correctors).
#include <QtTest>

#include <nlohmann/json.hpp>

#include "compute/cpu_backend.hpp"
#include "core/expect_error.hpp"
#include "core/lm_builtin_problem.hpp"
#include "core/lm_golden_case.hpp"
#include "core/lm_tiny_problem.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "fallback_backend.hpp"
#include "lm_opencl_executor.hpp"
#include "lm_opencl_rpd_executor.hpp"
#include "opencl_backend.hpp"
#include "opencl_run_compare.hpp"
#include "opencl_test_support.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "replay/pipeline_replay.hpp"

using namespace pipelens;
using DevicePrecision = pipelens::gpu::Precision;
using opencl_test::baseConfig;
using opencl_test::compareRunCurves;
using opencl_test::compareSeries;
using opencl_test::curveError;
using opencl_test::lmRpd;
using opencl_test::openCl;
using opencl_test::runOn;

namespace {

// Every kind with settings away from the defaults, so that each field reaches the kernels.
OptimizerSpec optimizerOf(const std::string& kind) {
    OptimizerSpec o;
    o.kind = *parseEnum(kOptimizerKinds, kind == "sgd+wd" ? std::string("sgd") : kind);
    if (kind == "sgd+wd") o.weightDecay = 0.1;
    if (kind == "momentum") {
        o.beta = 0.8;
        o.weightDecay = 0.02;  // coupled, as sgd's
    }
    if (kind == "nesterov") o.beta = 0.7;
    if (kind == "adam" || kind == "adamw") {
        o.beta1 = 0.85;
        o.beta2 = 0.99;
        o.eps = 1e-6;
        o.weightDecay = kind == "adamw" ? 0.05 : 0.01;
    }
    return o;
}

// Step sizes that move every optimizer well within the run, without blowing up.
double stepFor(const std::string& kind, bool logistic) {
    const bool adam = kind == "adam" || kind == "adamw";
    if (adam) return logistic ? 0.05 : 0.01;
    return logistic ? 0.3 : 0.02;
}

void compareRuns(const RunResult& ocl, const RunResult& cpu, DevicePrecision p) {
    compareRunCurves(ocl, cpu, p);
    if (QTest::currentTestFailed()) return;
    // The optimizer moved the objective: a run that ignored the updates would not pass.
    QVERIFY(cpu.objectivePerUpdate.back() < cpu.initialObjective);
}

const char* const kKinds[] = {"sgd+wd", "momentum", "nesterov", "adam", "adamw"};

// "rpd" draws its delays; "localsgd" is R = 2, H = 2; "1f1b" and "fill-drain" take M = G = 4.
MethodSpec methodFor(const std::string& method, const std::string& kind, bool logistic) {
    MethodSpec m;
    m.method = parseMethod(method);
    m.step.value = stepFor(kind, logistic);
    m.optimizer = optimizerOf(kind);
    if (method == "rpd") {
        m.delayMode = DelayMode::Uniform;
        m.delta = 9;
        m.seed = 3;
    }
    if (method == "localsgd") {
        m.replicas = 2;
        m.localSteps = 2;
    }
    if (method == "1f1b" || method == "fill-drain") m.flushGroup = 4;
    return m;
}

// The language model's PD / LocalSGD / 1F1B run with `executor` (null: the CPU's).
std::unique_ptr<LmReplay> lmPipeline(const std::shared_ptr<const CharTransformerProblem>& p,
                                     ScheduleKind kind, const OptimizerSpec& spec, double gamma,
                                     const LmExecutorFactory& executor) {
    ScheduleParams s;
    s.kind = kind;
    s.stages = p->layout.stages();
    s.microbatches = 16;
    LmPipelineConfig cfg;
    cfg.method = Method::PipeDream;
    cfg.stepScale = 1.0;
    if (kind == ScheduleKind::LocalSgd) {
        s.replicas = 2;
        s.localSteps = 2;
        cfg.method = Method::LocalSgd;
        cfg.replicas = 2;
    }
    if (kind == ScheduleKind::OneFOneB) {
        s.flushGroup = 4;
        cfg.method = Method::OneFOneB;
        cfg.stepScale = 0.25;
    }
    cfg.timeline = buildTimeline(s);
    cfg.stepSize = gamma;
    cfg.optimizer = spec;
    cfg.options.fullObjectivePerSlot = true;
    auto run = makeLmPipelineReplay(p, cfg, executor);
    run->runToEnd();
    return run;
}

// The message of the ConfigError `f` throws ("" if none).
constexpr auto configError = &errorMessageOf<ConfigError>;

}  // namespace

class TestOpenClOptimizers : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void linearRunsFollowTheCpuEngine_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<bool>("logistic");
        QTest::addColumn<int>("precision");
        const auto dbl = static_cast<int>(DevicePrecision::Double);
        const auto flt = static_cast<int>(DevicePrecision::Float);
        for (const char* method : {"pd", "localsgd", "rpd", "1f1b", "fill-drain"}) {
            for (const char* kind : kKinds) {
                for (bool logistic : {false, true}) {
                    QTest::addRow("%s/%s/%s/double", method, kind,
                                  logistic ? "logistic" : "quadratic")
                        << method << kind << logistic << dbl;
                }
            }
        }
        // Float: one row per method, the kinds spread over them.
        QTest::addRow("pd/adam/logistic/float") << "pd"
                                                << "adam" << true << flt;
        QTest::addRow("localsgd/momentum/logistic/float") << "localsgd"
                                                          << "momentum" << true << flt;
        QTest::addRow("rpd/adamw/quadratic/float") << "rpd"
                                                   << "adamw" << false << flt;
        QTest::addRow("1f1b/nesterov/logistic/float") << "1f1b"
                                                      << "nesterov" << true << flt;
        QTest::addRow("fill-drain/sgd+wd/quadratic/float") << "fill-drain"
                                                           << "sgd+wd" << false << flt;
    }
    void linearRunsFollowTheCpuEngine() {
        QFETCH(QString, method);
        QFETCH(QString, kind);
        QFETCH(bool, logistic);
        QFETCH(int, precision);
        const ExperimentConfig c = baseConfig(logistic);
        const MethodSpec m = methodFor(method.toStdString(), kind.toStdString(), logistic);
        const RunResult cpu = runOn(c, m, cpuBackendProvider());
        const auto p = static_cast<DevicePrecision>(precision);
        const RunResult ocl = runOn(c, m, openCl(p));
        compareRuns(ocl, cpu, p);
        // The optimizer made a difference: plain sgd at the same step size is another run.
        MethodSpec plain = m;
        plain.optimizer = OptimizerSpec{};
        const RunResult sgd = runOn(c, plain, cpuBackendProvider());
        QVERIFY(sgd.objectivePerUpdate != cpu.objectivePerUpdate);
    }

    // The final weights agree too (LocalSGD with Adam: the replicas' state is averaged with the
    // weights), and a later plain run on the same backend is plain again.
    void weightsAgreeAndPrepareResetsTheOptimizer() {
        ExperimentConfig c = baseConfig(true);
        auto objective = buildObjective(c);
        PipelineReplayConfig cfg;
        ScheduleParams p;
        p.kind = ScheduleKind::LocalSgd;
        p.stages = 6;
        p.microbatches = 30;
        p.replicas = 3;
        p.localSteps = 2;
        cfg.method = Method::LocalSgd;
        cfg.timeline = buildTimeline(p);
        cfg.replicas = 3;
        cfg.stepSize = 0.05;
        cfg.optimizer = optimizerOf("adam");
        auto cpuBackend = std::make_unique<CpuBackend>();
        auto oclBackend = openCl(DevicePrecision::Double)();
        ComputeBackend* cpuRaw = cpuBackend.get();
        ComputeBackend* oclRaw = oclBackend.get();
        PipelineReplay a(objective, std::move(cpuBackend), cfg);
        PipelineReplay b(objective, std::move(oclBackend), cfg);
        a.runToEnd();
        b.runToEnd();
        const Eigen::VectorXd wa = cpuRaw->weights();
        const Eigen::VectorXd wb = oclRaw->weights();
        QCOMPARE(wb.size(), wa.size());
        QVERIFY((wa - wb).norm() <= 1e-11 * wa.norm());

        // preparePipeline drops the optimizer: ops after it are plain sgd, as on the CPU.
        PipelineLayout layout;
        layout.blocks = splitBlocks(objective->dim(), 2);
        layout.stashSlots = {1, 1};
        const Eigen::VectorXd w0 = Eigen::VectorXd::Zero(objective->dim());
        std::vector<PipelineOp> ops = {{OpKind::Forward, 0, 1, 0, 0, 0, true},
                                       {OpKind::Forward, 1, 1, 0, 0, 0, true},
                                       {OpKind::Backward, 1, 1, 0, 0, 0, true},
                                       {OpKind::Backward, 0, 1, 0, 0, 0, true}};
        std::vector<UpdateSample> sa, sb;
        for (ComputeBackend* backend : {cpuRaw, oclRaw}) {
            backend->preparePipeline(*objective, layout, w0);
            backend->runOps(ops, 0.5, true, backend == cpuRaw ? sa : sb);
        }
        QCOMPARE(sb.size(), sa.size());
        for (size_t i = 0; i < sa.size(); ++i) {
            QVERIFY(opencl_test::close(sb[i].objective, sa[i].objective, 1e-12));
        }
    }

    // The fallback wrapper hands the optimizer on, and to the CPU engine when the device fails
    // mid-run: the run still has the CPU's numbers.
    void fallbackKeepsTheOptimizer() {
        const ExperimentConfig c = baseConfig(true);
        const MethodSpec m = methodFor("pd", "adam", true);
        const RunResult cpu = runOn(c, m, cpuBackendProvider());
        int notices = 0;
        const BackendProvider failing = [&notices]() -> std::unique_ptr<ComputeBackend> {
            gpu::OpenClBackendOptions o;
            o.simulateDeviceLossAfter = 7;
            return std::make_unique<gpu::FallbackBackend>(
                std::make_unique<gpu::OpenClBackend>(opencl_test::context(), o),
                [] { return std::make_unique<CpuBackend>(); },
                [&notices](const std::string&) { ++notices; });
        };
        const RunResult ocl = runOn(c, m, failing);
        QCOMPARE(notices, 1);
        compareRuns(ocl, cpu, DevicePrecision::Double);
    }

    void languageModelFollowsTheCpuExecutors_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("precision");
        QTest::addColumn<double>("tolerance");
        for (const char* method : {"pd", "rpd", "localsgd", "1f1b"}) {
            for (const char* kind : {"adam", "momentum"}) {
                QTest::addRow("%s/%s/double", method, kind)
                    << method << kind << int(LmPrecision::Double) << 1e-9;
            }
        }
        // Float: the CPU keeps the state in double, the device in float (docs/opencl.md).
        QTest::addRow("pd/adam/float") << "pd"
                                       << "adam" << int(LmPrecision::Float) << 1e-4;
        QTest::addRow("rpd/momentum/float") << "rpd"
                                            << "momentum" << int(LmPrecision::Float) << 1e-4;
    }
    void languageModelFollowsTheCpuExecutors() {
        QFETCH(QString, method);
        QFETCH(QString, kind);
        QFETCH(int, precision);
        QFETCH(double, tolerance);
        const auto problem = builtInProblem(static_cast<LmPrecision>(precision), 3'000, 0.2);
        const OptimizerSpec spec = optimizerOf(kind.toStdString());
        const double gamma = kind == "adam" ? 0.01 : 0.2;
        std::unique_ptr<LmReplay> cpu, cl;
        if (method == "rpd") {
            cpu = lmRpd(problem, spec, {}, gamma, {});
            cl = lmRpd(problem, spec, {}, gamma,
                       gpu::lmOpenClRpdExecutorFactory(opencl_test::context()));
        } else {
            const ScheduleKind k = method == "pd"         ? ScheduleKind::PipeDream
                                   : method == "localsgd" ? ScheduleKind::LocalSgd
                                                          : ScheduleKind::OneFOneB;
            cpu = lmPipeline(problem, k, spec, gamma, {});
            cl = lmPipeline(problem, k, spec, gamma,
                            gpu::lmOpenClExecutorFactory(opencl_test::context()));
        }
        QVERIFY(cpu->result().finished);
        QVERIFY(cl->result().finished);
        const double perUpdate =
            curveError(cl->result().objectivePerUpdate, cpu->result().objectivePerUpdate);
        const double w = golden_lm::maxRelError(cl->weights(), cpu->weights());
        qInfo("%s %s: per-update losses %.2g, weights %.2g", qPrintable(method), qPrintable(kind),
              perUpdate, w);
        QVERIFY(perUpdate <= tolerance);
        QVERIFY(w <= tolerance);
        // Plain sgd at the same step size ends elsewhere: the optimizer was applied.
        const auto plain = method == "rpd"
                               ? lmRpd(problem, {}, {}, gamma, {})
                               : lmPipeline(problem,
                                            method == "pd"         ? ScheduleKind::PipeDream
                                            : method == "localsgd" ? ScheduleKind::LocalSgd
                                                                   : ScheduleKind::OneFOneB,
                                            {}, gamma, {});
        QVERIFY(golden_lm::maxRelError(plain->weights(), cpu->weights()) > 100 * tolerance);
    }

    // backend "opencl" with an optimizer validates and runs on the device (no notice, the CPU's
    // numbers).
    void configWithAnOptimizerRunsOnOpenCl() {
        nlohmann::json j = {
            {"name", "cl-opt"},
            {"backend", "opencl"},
            {"stages", 4},
            {"batch_size", 8},
            {"data",
             {{"source", "synthetic"},
              {"kind", "logistic"},
              {"rows", 160},
              {"dim", 24},
              {"seed", 2}}},
            {"objective", {{"kind", "logistic"}, {"l2", 0.001}}},
            {"budget", {{"microbatches", 24}}},
            {"methods",
             {{{"method", "pd"}, {"step_size", 0.05}, {"optimizer", {{"kind", "adamw"}}}},
              {{"method", "rpd"}, {"step_size", 0.05}, {"optimizer", {{"kind", "momentum"}}}}}}};
        const ExperimentConfig c = ExperimentConfig::fromJson(j);
        RunOptions options;
        options.backendName = "opencl: test device";
        int made = 0;
        options.backend = [&made]() -> std::unique_ptr<ComputeBackend> {
            ++made;
            return std::make_unique<gpu::OpenClBackend>(opencl_test::context());
        };
        options.threads = 1;
        const ExperimentResult device = runExperiment(c, options);
        QCOMPARE(made, 2);  // both methods ran on the device
        QVERIFY(device.notices.empty());
        ExperimentConfig onCpu = c;
        onCpu.backend = BackendKind::Cpu;
        const ExperimentResult cpu = runExperiment(onCpu);
        QCOMPARE(device.methods.size(), cpu.methods.size());
        for (size_t i = 0; i < cpu.methods.size(); ++i) {
            QVERIFY(device.methods[i].result.finished);
            compareSeries(device.methods[i].result.objectivePerUpdate,
                          cpu.methods[i].result.objectivePerUpdate, 1e-9, 0.0,
                          "objective_per_update");
        }

        // The language model with an optimizer on backend opencl validates too.
        nlohmann::json lm = {
            {"name", "cl-lm-opt"},
            {"backend", "opencl"},
            {"stages", 3},
            {"batch_size", 2},
            {"objective", pipelens::test::tinyLmObjectiveJson()},
            {"budget", {{"slots", 20}}},
            {"methods",
             {{{"method", "pd"}, {"step_size", 0.01}, {"optimizer", {{"kind", "adam"}}}}}}};
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(lm); })),
                 QString());

        // With a corrector too (tst_opencl_correctors runs such configs on the device).
        j["methods"][0]["correctors"] = {{{"kind", "dc"}, {"lambda", 0.5}}};
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(j); })),
                 QString());
    }
};

QTEST_APPLESS_MAIN(TestOpenClOptimizers)
#include "tst_opencl_optimizers.moc"

// Staleness correctors on the OpenCL engines against the CPU engine (issue 33): each corrector
// alone (delay_adaptive, prediction with exact and PipeOptim s, dc, lookahead, accumulate k = 2)
// and two combinations (prediction + dc + delay_adaptive; accumulate + dc with Adam) on PD
// (S = 3) and LocalSGD (R = 2, H = 2), quadratic and logistic, give the CPU's trajectories
// (double: relative 1e-9; float: the documented run tolerance) and the same effective delays;
// RPD with dc and delay_adaptive; the fallback hands the correctors to the CPU engine; a config
// with backend "opencl" and correctors validates and runs on the device.
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

// The corrector sets under test, with settings that make each one change the run.
CorrectorSpec correctorsOf(const std::string& name) {
    CorrectorSpec c;
    if (name == "delay_adaptive" || name == "prediction+dc+delay_adaptive") {
        c.delayAdaptive = true;
        c.tauRef = 1.0;  // below PD's delays: every step is scaled
    }
    if (name == "prediction" || name == "prediction+dc+delay_adaptive") c.prediction = true;
    if (name == "prediction_pipeoptim") {
        c.prediction = true;
        c.steps = PredictionSteps::PipeOptim;
    }
    if (name == "dc" || name == "prediction+dc+delay_adaptive" || name == "accumulate+dc/adam") {
        c.dc = true;
        c.lambda = 2.0;
    }
    if (name == "lookahead") {
        c.lookahead = true;
        c.beta = 0.6;
    }
    if (name == "accumulate" || name == "accumulate+dc/adam") c.accumulate = 2;
    return c;
}

const char* const kSets[] = {
    "delay_adaptive", "prediction", "prediction_pipeoptim",         "dc",
    "lookahead",      "accumulate", "prediction+dc+delay_adaptive", "accumulate+dc/adam"};

MethodSpec methodFor(const std::string& method, const std::string& set, bool logistic) {
    MethodSpec m;
    m.method = parseMethod(method);
    const bool adam = set.ends_with("/adam");
    m.step.value = adam ? (logistic ? 0.05 : 0.01) : (logistic ? 0.5 : 0.02);
    if (adam) {
        m.optimizer.kind = OptimizerKind::Adam;
        m.optimizer.beta1 = 0.85;
        m.optimizer.beta2 = 0.99;
    }
    m.correctors = correctorsOf(set);
    if (method == "rpd") {
        m.delayMode = DelayMode::Uniform;
        m.delta = 5;
        m.seed = 3;
    }
    if (method == "localsgd") {
        m.replicas = 2;
        m.localSteps = 2;
    }
    return m;
}

void compareRuns(const RunResult& ocl, const RunResult& cpu, DevicePrecision p) {
    compareRunCurves(ocl, cpu, p);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(ocl.effectiveDelays.has_value(), cpu.effectiveDelays.has_value());
    if (cpu.effectiveDelays) {
        const DelayTable& a = *ocl.effectiveDelays;
        const DelayTable& b = *cpu.effectiveDelays;
        QCOMPARE(a.updates(), b.updates());
        for (long long k = 0; k < b.updates(); ++k) {
            for (int j = 0; j < b.stages(); ++j) QCOMPARE(a.delay(k, j), b.delay(k, j));
        }
    }
    QVERIFY(cpu.objectivePerUpdate.back() < cpu.initialObjective);
}

// The language model's PD (S = the problem's stages) with `correctors` and executor `executor`
// (null: the CPU's).
std::unique_ptr<LmReplay> lmPd(const std::shared_ptr<const CharTransformerProblem>& p,
                               const CorrectorSpec& correctors, const OptimizerSpec& optimizer,
                               double gamma, const LmExecutorFactory& executor) {
    ScheduleParams s;
    s.kind = ScheduleKind::PipeDream;
    s.stages = p->layout.stages();
    s.microbatches = 16;
    LmPipelineConfig cfg;
    cfg.method = Method::PipeDream;
    cfg.stepScale = 1.0;
    cfg.timeline = buildTimeline(s);
    cfg.stepSize = gamma;
    cfg.optimizer = optimizer;
    cfg.correctors = correctors;
    cfg.options.fullObjectivePerSlot = true;
    auto run = makeLmPipelineReplay(p, cfg, executor);
    run->runToEnd();
    return run;
}

// The message of the ConfigError `f` throws ("" if none).
constexpr auto configError = &errorMessageOf<ConfigError>;

}  // namespace

class TestOpenClCorrectors : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void linearRunsFollowTheCpuEngine_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("set");
        QTest::addColumn<bool>("logistic");
        QTest::addColumn<int>("precision");
        const auto dbl = static_cast<int>(DevicePrecision::Double);
        const auto flt = static_cast<int>(DevicePrecision::Float);
        for (const char* method : {"pd", "localsgd"}) {
            for (const char* set : kSets) {
                for (bool logistic : {false, true}) {
                    for (int p : {dbl, flt}) {
                        QTest::addRow("%s/%s/%s/%s", method, set,
                                      logistic ? "logistic" : "quadratic",
                                      p == dbl ? "double" : "float")
                            << method << set << logistic << p;
                    }
                }
            }
        }
        for (bool logistic : {false, true}) {
            for (int p : {dbl, flt}) {
                QTest::addRow("rpd/dc+delay_adaptive/%s/%s", logistic ? "logistic" : "quadratic",
                              p == dbl ? "double" : "float")
                    << "rpd"
                    << "dc+delay_adaptive" << logistic << p;
            }
        }
    }
    void linearRunsFollowTheCpuEngine() {
        QFETCH(QString, method);
        QFETCH(QString, set);
        QFETCH(bool, logistic);
        QFETCH(int, precision);
        const ExperimentConfig c = baseConfig(logistic);
        MethodSpec m = methodFor(method.toStdString(), set.toStdString(), logistic);
        if (method == "rpd") {
            m.correctors.dc = true;
            m.correctors.lambda = 2.0;
            m.correctors.delayAdaptive = true;
            m.correctors.tauRef = 2.0;
        }
        QVERIFY(m.correctors.any());
        const RunResult cpu = runOn(c, m, cpuBackendProvider());
        const auto p = static_cast<DevicePrecision>(precision);
        const RunResult ocl = runOn(c, m, openCl(p));
        compareRuns(ocl, cpu, p);
        if (method == "pd" && m.correctors.accumulate > 1) {
            QVERIFY(cpu.effectiveDelays.has_value());
        }
        // The correctors made a difference: the same method without them is another run.
        // LocalSGD's replicas read fresh weights, so there exact prediction (s = 0) and dc
        // (w_now = w_read) are the plain run, as they must be.
        const bool fresh = method == "localsgd" && (set == "prediction" || set == "dc");
        MethodSpec plain = m;
        plain.correctors = CorrectorSpec{};
        const RunResult uncorrected = runOn(c, plain, cpuBackendProvider());
        QCOMPARE(uncorrected.objectivePerUpdate == cpu.objectivePerUpdate, fresh);
    }

    // Without correctors the device runs its original kernels: a backend that had correctors
    // set and was prepared again gives the plain run's numbers bit for bit.
    void prepareDropsTheCorrectors() {
        const ExperimentConfig c = baseConfig(true);
        auto objective = buildObjective(c);
        PipelineLayout layout;
        layout.blocks = splitBlocks(objective->dim(), 2);
        layout.stashSlots = {1, 1};
        const Eigen::VectorXd w0 = Eigen::VectorXd::Zero(objective->dim());
        std::vector<PipelineOp> ops = {{OpKind::Forward, 0, 1, 0, 0, 0, true},
                                       {OpKind::Forward, 1, 1, 0, 0, 0, true},
                                       {OpKind::Backward, 1, 1, 0, 0, 0, true},
                                       {OpKind::Backward, 0, 1, 0, 0, 0, true}};
        auto fresh = openCl(DevicePrecision::Double)();
        auto reused = openCl(DevicePrecision::Double)();
        std::vector<UpdateSample> sa, sb;
        fresh->preparePipeline(*objective, layout, w0);
        fresh->runOps(ops, 0.5, true, sa);
        reused->preparePipeline(*objective, layout, w0);
        reused->setCorrectors(correctorsOf("accumulate"));
        reused->preparePipeline(*objective, layout, w0);
        reused->runOps(ops, 0.5, true, sb);
        QCOMPARE(sb.size(), sa.size());
        for (size_t i = 0; i < sa.size(); ++i) {
            QCOMPARE(sb[i].objective, sa[i].objective);
            QCOMPARE(sb[i].blockGradNormSq, sa[i].blockGradNormSq);
        }
        QVERIFY((fresh->weights() - reused->weights()).norm() == 0.0);
    }

    // The fallback wrapper hands the correctors on, and to the CPU engine when the device
    // fails mid-run: the run still has the CPU's numbers.
    void fallbackKeepsTheCorrectors() {
        const ExperimentConfig c = baseConfig(true);
        const MethodSpec m = methodFor("pd", "prediction+dc+delay_adaptive", true);
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
        QTest::addColumn<QString>("set");
        QTest::addColumn<int>("precision");
        QTest::addColumn<double>("tolerance");
        for (const char* set : {"prediction", "dc", "accumulate", "lookahead",
                                "prediction+dc+delay_adaptive", "accumulate+dc/adam", "rpd"}) {
            QTest::addRow("%s/double", set) << set << int(LmPrecision::Double) << 1e-9;
            QTest::addRow("%s/float", set) << set << int(LmPrecision::Float) << 1e-4;
        }
    }
    void languageModelFollowsTheCpuExecutors() {
        QFETCH(QString, set);
        QFETCH(int, precision);
        QFETCH(double, tolerance);
        const auto problem = builtInProblem(static_cast<LmPrecision>(precision), 3'000, 0.2);
        const bool adam = set.endsWith("/adam");
        OptimizerSpec optimizer;
        if (adam) {
            optimizer.kind = OptimizerKind::Adam;
            optimizer.eps = 1e-6;  // as tst_opencl_optimizers: float's state stays comparable
        }
        const double gamma = adam ? 0.01 : 0.2;
        std::unique_ptr<LmReplay> cpu, cl, plain;
        CorrectorSpec c;
        if (set == "rpd") {
            c.dc = true;
            c.lambda = 2.0;
            c.delayAdaptive = true;
            c.tauRef = 2.0;
            cpu = lmRpd(problem, {}, c, gamma, {});
            cl = lmRpd(problem, {}, c, gamma,
                       gpu::lmOpenClRpdExecutorFactory(opencl_test::context()));
            plain = lmRpd(problem, {}, {}, gamma, {});
        } else {
            c = correctorsOf(set.toStdString());
            if (c.lookahead) c.beta = 0.5;
            cpu = lmPd(problem, c, optimizer, gamma, {});
            cl = lmPd(problem, c, optimizer, gamma,
                      gpu::lmOpenClExecutorFactory(opencl_test::context()));
            plain = lmPd(problem, {}, optimizer, gamma, {});
        }
        QVERIFY(cpu->result().finished);
        QVERIFY(cl->result().finished);
        const double perUpdate =
            curveError(cl->result().objectivePerUpdate, cpu->result().objectivePerUpdate);
        const double w = golden_lm::maxRelError(cl->weights(), cpu->weights());
        qInfo("%s: per-update losses %.2g, weights %.2g", qPrintable(set), perUpdate, w);
        QVERIFY(perUpdate <= tolerance);
        QVERIFY(w <= tolerance);
        // The correctors were applied: the run without them ends elsewhere, much farther than
        // the device from the CPU.
        const double effect = golden_lm::maxRelError(plain->weights(), cpu->weights());
        qInfo("%s: the correctors moved the weights by %.2g", qPrintable(set), effect);
        QVERIFY(effect > 100 * w);
        QVERIFY(effect > 1e-6);
    }

    // backend "opencl" with correctors validates and runs on the device (no notice, the CPU's
    // numbers), for the linear models and the language model.
    void configWithCorrectorsRunsOnOpenCl() {
        nlohmann::json j = {{"name", "cl-correctors"},
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
                             {{{"method", "pd"},
                               {"step_size", 0.3},
                               {"correctors",
                                {{{"kind", "prediction"}, {"s", "exact"}},
                                 {{"kind", "dc"}, {"lambda", 0.5}},
                                 {{"kind", "delay_adaptive"}}}}},
                              {{"method", "rpd"},
                               {"step_size", 0.3},
                               {"correctors", {{{"kind", "dc"}, {"lambda", 0.5}}}}}}}};
        ExperimentConfig c;
        QCOMPARE(QString::fromStdString(configError([&] { c = ExperimentConfig::fromJson(j); })),
                 QString());
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

        // The language model with correctors on backend opencl validates too.
        nlohmann::json lm = {{"name", "cl-lm-correctors"},
                             {"backend", "opencl"},
                             {"stages", 3},
                             {"batch_size", 2},
                             {"objective", pipelens::test::tinyLmObjectiveJson()},
                             {"budget", {{"slots", 20}}},
                             {"methods",
                              {{{"method", "pd"},
                                {"step_size", 0.01},
                                {"correctors", {{{"kind", "accumulate"}, {"k", 2}}}}}}}};
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(lm); })),
                 QString());
    }
};

QTEST_APPLESS_MAIN(TestOpenClCorrectors)
#include "tst_opencl_correctors.moc"

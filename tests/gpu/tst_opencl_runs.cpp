// Whole runs on OpenCL against the CPU engine: PD, RPD (every delay mode), LocalSGD, sequential
// SGD, fill-drain and the schedule family (1F1B, ZB-H1, 2BW, interleaved) give the same
// trajectories (double: relative 1e-9; float: the documented
// run tolerance), a slot costs a fixed number of kernel launches whatever S, and the command-line
// tool runs end to end on the device.
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>
#include <nlohmann/json.hpp>

#include "compute/cpu_backend.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "opencl_backend.hpp"
#include "opencl_run_compare.hpp"
#include "opencl_test_support.hpp"
#include "replay/pipeline_replay.hpp"
#include "replay/rpd_replay.hpp"

using namespace pipelens;
using DevicePrecision = pipelens::gpu::Precision;
using opencl_test::baseConfig;
using opencl_test::compareRunCurves;
using opencl_test::compareSeries;
using opencl_test::openCl;

namespace {

MethodSpec methodSpec(const std::string& name, double step) {
    MethodSpec m;
    m.method = parseMethod(name);
    m.step.value = step;
    return m;
}

void compareRuns(const RunResult& ocl, const RunResult& cpu, DevicePrecision p) {
    compareRunCurves(ocl, cpu, p);
    if (QTest::currentTestFailed()) return;
    const bool dbl = p == DevicePrecision::Double;
    QCOMPARE(ocl.gradNormUpdates, cpu.gradNormUpdates);
    compareSeries(ocl.gradNormSq, cpu.gradNormSq, dbl ? 1e-8 : 1e-2,
                  dbl ? 1e-14 * cpu.gradNormSq.front() : 1e-3 * cpu.gradNormSq.front(),
                  "grad_norm_sq");
}

void addRuns() {
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("delayMode");
    QTest::addColumn<bool>("logistic");
    QTest::addColumn<int>("precision");
    struct Row {
        const char* method;
        const char* delay;
    };
    const Row rows[] = {{"pd", ""},    {"rpd", "uniform"}, {"rpd", "max"}, {"rpd", "zero"},
                        {"rpd", "pd"}, {"localsgd", ""},   {"sgd", ""},    {"fill-drain", ""},
                        {"1f1b", ""},  {"zb-h1", ""},      {"2bw", ""},    {"interleaved", ""}};
    for (bool logistic : {false, true}) {
        for (const Row& r : rows) {
            QString tag = QString("%1%2/%3").arg(r.method, *r.delay ? QString("-") + r.delay : "",
                                                 logistic ? "logistic" : "quadratic");
            QTest::newRow(qPrintable(tag + "/double"))
                << r.method << r.delay << logistic << static_cast<int>(DevicePrecision::Double);
        }
        QTest::newRow(logistic ? "pd/logistic/float" : "pd/quadratic/float")
            << "pd"
            << "" << logistic << static_cast<int>(DevicePrecision::Float);
        QTest::newRow(logistic ? "localsgd/logistic/float" : "localsgd/quadratic/float")
            << "localsgd"
            << "" << logistic << static_cast<int>(DevicePrecision::Float);
        QTest::newRow(logistic ? "rpd-uniform/logistic/float" : "rpd-uniform/quadratic/float")
            << "rpd"
            << "uniform" << logistic << static_cast<int>(DevicePrecision::Float);
    }
}

}  // namespace

class TestOpenClRuns : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void trajectoriesAgree_data() { addRuns(); }
    void trajectoriesAgree() {
        QFETCH(QString, method);
        QFETCH(QString, delayMode);
        QFETCH(bool, logistic);
        QFETCH(int, precision);
        ExperimentConfig c = baseConfig(logistic);
        MethodSpec m = methodSpec(method.toStdString(), logistic ? 0.5 : 0.05);
        if (method == "rpd") {
            m.delayMode = parseDelayMode(delayMode.toStdString());
            m.delta = 9;
            m.seed = 3;
            if (m.delayMode == DelayMode::PipeDream) m.delta = -1;
        }
        if (method == "localsgd") m.localSteps = 2;
        // The schedule family: a step's M·S updates reach the device in one slot's ops.
        if (method == "zb-h1") c.costs.backwardSlots = 2;
        if (method == "interleaved") c.costs = {2, 2, 0, 1};
        c.methods = {m};
        auto objective = buildObjective(c);
        ExperimentPlan plan = planExperiment(c, *objective);
        const MethodRun& run = plan.runs.front();
        RunResult cpu = runOne(c, run, m.step.value, objective, cpuBackendProvider());
        RunResult ocl = runOne(c, run, m.step.value, objective,
                               openCl(static_cast<DevicePrecision>(precision)));
        compareRuns(ocl, cpu, static_cast<DevicePrecision>(precision));
    }

    // The final weights (the one vector that crosses to the host on request) agree too.
    void weightsAgree() {
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
        cfg.stepSize = 0.5;
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
        QVERIFY(
            opencl_test::close(oclRaw->gradientNormSquared(), cpuRaw->gradientNormSquared(), 1e-9));
    }

    // All operations of a slot are issued together: the kernels launched per slot do not grow
    // with S (one for the slot's ops, and two for the objectives when it has updates).
    void launchesPerSlotDoNotGrowWithS() {
        std::vector<double> perSlot;
        for (int S : {4, 16}) {
            ExperimentConfig c = baseConfig(false);
            c.data.dim = 64;
            c.stages = S;
            auto objective = buildObjective(c);
            PipelineReplayConfig cfg;
            ScheduleParams p;
            p.kind = ScheduleKind::PipeDream;
            p.stages = S;
            p.microbatches = 3 * S;
            cfg.timeline = buildTimeline(p);
            cfg.stepSize = 0.01;
            auto backend = std::make_unique<gpu::OpenClBackend>(opencl_test::context());
            gpu::OpenClBackend* raw = backend.get();
            PipelineReplay replay(objective, std::move(backend), cfg);
            const long long before = raw->kernelEnqueues();
            replay.runToEnd();
            perSlot.push_back(static_cast<double>(raw->kernelEnqueues() - before) /
                              cfg.timeline.totalSlots);
            QVERIFY2(perSlot.back() <= 3.0, qPrintable(QString::number(perSlot.back())));
        }
        QVERIFY(std::abs(perSlot[0] - perSlot[1]) < 0.25);
    }

    // pipelens-cli: `devices` lists the device, and `run --backend opencl` gives the CPU run's
    // numbers.
    void commandLine() {
        QProcess list;
        list.start(PIPELENS_CLI_PATH, {"devices", "--json"});
        QVERIFY(list.waitForFinished(60000));
        QCOMPARE(list.exitCode(), 0);
        auto devices = nlohmann::json::parse(list.readAllStandardOutput().toStdString());
        QVERIFY(devices.is_array() && !devices.empty());
        QCOMPARE(QString::fromStdString(devices[0]["name"].get<std::string>()),
                 QString::fromStdString(opencl_test::context()->info().name));
        QVERIFY(devices[0].contains("fp64") && devices[0].contains("compute_units"));

        QTemporaryDir dir;
        ExperimentConfig c = baseConfig(true);
        c.methods = {methodSpec("pd", 0.5), methodSpec("localsgd", 0.5), methodSpec("rpd", 0.5)};
        const QString config = dir.filePath("config.json");
        {
            QFile f(config);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(c.toJson().dump(2)));
        }
        std::map<std::string, nlohmann::json> summaries;
        for (const char* backend : {"cpu", "opencl"}) {
            QProcess run;
            run.start(PIPELENS_CLI_PATH, {"run", config, "--backend", backend, "--device", "0",
                                          "--out", dir.filePath(backend), "--quiet"});
            QVERIFY(run.waitForFinished(120000));
            QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
            QFile f(dir.filePath(backend) + "/summary.json");
            QVERIFY(f.open(QIODevice::ReadOnly));
            summaries[backend] = nlohmann::json::parse(f.readAll().toStdString());
        }
        const std::string shown = summaries["opencl"].dump();
        QVERIFY2(shown.find("opencl") != std::string::npos, shown.c_str());
        QCOMPARE(summaries["cpu"]["backend"].get<std::string>(), std::string("cpu"));
        const auto& a = summaries["cpu"]["methods"];
        const auto& b = summaries["opencl"]["methods"];
        QCOMPARE(b.size(), a.size());
        for (size_t i = 0; i < a.size(); ++i) {
            QVERIFY(opencl_test::close(b[i]["final_objective"].get<double>(),
                                       a[i]["final_objective"].get<double>(), 1e-9));
        }
    }
};

QTEST_APPLESS_MAIN(TestOpenClRuns)
#include "tst_opencl_runs.moc"

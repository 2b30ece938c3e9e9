// The OpenCL fault paths, simulated: no platform, a device chosen by a bad index or name, an
// allocation larger than the device allows, a kernel source with an error, and a device lost
// mid-run. Each gives a clear message; a run stops cleanly (an exception, never a crash) or, when
// the person allowed it, continues on the CPU engine with the same numbers.
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>
#include <nlohmann/json.hpp>
#include <utility>

#include "backend_select.hpp"
#include "cl_error.hpp"
#include "compute/cpu_backend.hpp"
#include "errors.hpp"
#include "experiment/run/experiment.hpp"
#include "fallback_backend.hpp"
#include "opencl_backend.hpp"
#include "opencl_test_support.hpp"
#include "replay/replay.hpp"

using namespace pipelens;
using pipelens::gpu::ClError;

namespace {

ExperimentConfig smallConfig(const std::string& methodName) {
    ExperimentConfig c;
    c.data.kind = "logistic";
    c.data.rows = 120;
    c.data.dim = 30;
    c.objective.loss = LossKind::Logistic;
    c.objective.l2 = 1e-3;
    c.stages = 4;
    c.batchSize = 6;
    c.budget.microbatches = 24;
    MethodSpec m;
    m.method = parseMethod(methodName);
    m.step.value = 0.5;
    m.delta = 5;
    m.localSteps = 2;
    c.methods = {m};
    return c;
}

// An OpenCL backend that "loses its device" after `lossAfter` calls, optionally wrapped so the
// run falls back to the CPU engine; `notices` collects what a person would be told.
BackendProvider failingProvider(long long lossAfter, bool fallback,
                                const std::shared_ptr<std::vector<std::string>>& notices) {
    return [=]() -> std::unique_ptr<ComputeBackend> {
        gpu::OpenClBackendOptions o;
        o.simulateDeviceLossAfter = lossAfter;
        auto primary = std::make_unique<gpu::OpenClBackend>(opencl_test::context(), o);
        if (!fallback) return primary;
        return std::make_unique<gpu::FallbackBackend>(
            std::move(primary), [] { return std::make_unique<CpuBackend>(); },
            [notices](const std::string& m) { notices->push_back(m); });
    };
}

QString cliOutput(QProcess& p) {
    return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
}

}  // namespace

class TestOpenClFaults : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void badDeviceIndexOrName() {
        for (const char* spec : {"99", "no-such-accelerator"}) {
            gpu::ContextOptions o;
            o.device = spec;
            try {
                gpu::OpenClContext ctx(o);
                QFAIL("a bad device choice was accepted");
            } catch (const ConfigError& e) {
                const QString m = e.what();
                QVERIFY2(
                    m.contains(spec) && m.contains("is not allowed") &&
                        m.contains(QString::fromStdString(opencl_test::context()->info().name)),
                    e.what());
            }
            // A bad choice is the person's mistake: no silent fallback, even when allowed.
            QTemporaryDir dir;
            QProcess run;
            run.start(PIPELENS_CLI_PATH, {"run", "--default", "--backend", "opencl", "--device",
                                          spec, "--out", dir.filePath("out")});
            QVERIFY(run.waitForFinished(60000));
            const QString text = cliOutput(run);
            QCOMPARE(run.exitCode(), 1);
            QVERIFY2(text.contains("device = \"" + QString(spec) + "\" is not allowed"),
                     qPrintable(text));
        }
    }

    void allocationLargerThanTheDeviceAllows() {
        const auto& ctx = *opencl_test::context();
        try {
            ctx.buffer(ctx.maxAllocBytes() + 1, "a test buffer");
            QFAIL("an allocation over the device's limit was accepted");
        } catch (const ClError& e) {
            QCOMPARE(e.status(), CL_MEM_OBJECT_ALLOCATION_FAILURE);
            QVERIFY(e.deviceFailure());
            QVERIFY2(QString(e.what()).contains("device out of memory") &&
                         QString(e.what()).contains("a test buffer"),
                     e.what());
        }
        // A device too small for the run's data: the run cannot start on it...
        gpu::ContextOptions small;
        small.memoryLimitBytes = 16 << 10;
        auto tiny = std::make_shared<gpu::OpenClContext>(small);
        ExperimentConfig c = smallConfig("pd");
        auto objective = buildObjective(c);
        ExperimentPlan plan = planExperiment(c, *objective);
        BackendProvider noFallback = [tiny] { return std::make_unique<gpu::OpenClBackend>(tiny); };
        try {
            runOne(c, plan.runs.front(), 0.5, objective, noFallback);
            QFAIL("a run larger than the device started");
        } catch (const ClError& e) {
            QVERIFY2(QString(e.what()).contains("device out of memory") &&
                         QString(e.what()).contains("MiB"),
                     e.what());
        }
        // ...and with a fallback allowed it runs on the CPU engine, with the CPU's numbers.
        auto notices = std::make_shared<std::vector<std::string>>();
        BackendProvider withFallback = [tiny, notices] {
            return std::make_unique<gpu::FallbackBackend>(
                std::make_unique<gpu::OpenClBackend>(tiny),
                [] { return std::make_unique<CpuBackend>(); },
                [notices](const std::string& m) { notices->push_back(m); });
        };
        RunResult r = runOne(c, plan.runs.front(), 0.5, objective, withFallback);
        RunResult cpu = runOne(c, plan.runs.front(), 0.5, objective, cpuBackendProvider());
        QVERIFY(r.finished);
        QCOMPARE(r.objectivePerSlot, cpu.objectivePerSlot);
        QCOMPARE(notices->size(), size_t{1});
        QVERIFY(QString::fromStdString(notices->front()).contains("CPU engine"));
    }

    void kernelSourceWithAnError() {
        gpu::ContextOptions o;
        o.extraKernelSource =
            "__kernel void broken(__global real* x) { x[0] = undeclared_variable_xyz; }\n";
        auto ctx = std::make_shared<gpu::OpenClContext>(o);
        try {
            gpu::OpenClBackend backend(ctx);
            QFAIL("a program with an error was built");
        } catch (const ClError& e) {
            QCOMPARE(QString::fromStdString(e.call()), QString("clBuildProgram"));
            QCOMPARE(e.status(), CL_BUILD_PROGRAM_FAILURE);
            // The device's build log names the problem.
            QVERIFY2(QString(e.what()).contains("build log") &&
                         QString(e.what()).contains("undeclared_variable_xyz"),
                     e.what());
        }
    }

    // The device disappears after some calls: without a fallback the run stops with a ClError
    // (and runExperiment reports it, writing nothing); with one, it finishes on the CPU engine
    // from the same state, so its numbers are the CPU run's.
    void deviceLostMidRun_data() {
        QTest::addColumn<QString>("method");
        QTest::newRow("pd") << "pd";
        QTest::newRow("rpd") << "rpd";
        QTest::newRow("localsgd") << "localsgd";
    }
    void deviceLostMidRun() {
        QFETCH(QString, method);
        ExperimentConfig c = smallConfig(method.toStdString());
        auto objective = buildObjective(c);
        ExperimentPlan plan = planExperiment(c, *objective);
        const MethodRun& run = plan.runs.front();
        auto notices = std::make_shared<std::vector<std::string>>();
        try {
            runOne(c, run, 0.5, objective, failingProvider(25, false, notices));
            QFAIL("a lost device went unnoticed");
        } catch (const ClError& e) {
            QCOMPARE(e.status(), CL_DEVICE_NOT_AVAILABLE);
            QVERIFY2(QString(e.what()).contains("clEnqueueNDRangeKernel"), e.what());
        }
        RunOptions options;
        options.backend = failingProvider(25, false, notices);
        QVERIFY_THROWS_EXCEPTION(ClError, runExperiment(c, options));

        RunResult fell = runOne(c, run, 0.5, objective, failingProvider(25, true, notices));
        RunResult cpu = runOne(c, run, 0.5, objective, cpuBackendProvider());
        QVERIFY(fell.finished);
        QCOMPARE(notices->size(), size_t{1});
        QVERIFY(QString::fromStdString(notices->front()).contains("simulated device loss"));
        QCOMPARE(fell.objectivePerSlot.size(), cpu.objectivePerSlot.size());
        QCOMPARE(fell.objectivePerUpdate.size(), cpu.objectivePerUpdate.size());
        for (size_t i = 0; i < cpu.objectivePerUpdate.size(); ++i) {
            QVERIFY2(
                opencl_test::close(fell.objectivePerUpdate[i], cpu.objectivePerUpdate[i], 1e-9),
                qPrintable(QString("update %1").arg(i)));
        }
    }

    // The backend choice as a person makes it, through the command-line tool: "cpu" the CPU
    // engine, "auto" the CPU engine for a small run and the OpenCL device once the run is large
    // enough (here by lowering the threshold), precision float is honoured, bad values are refused.
    void backendChoice() {
        QTemporaryDir dir;
        ExperimentConfig c = smallConfig("pd");
        auto backendOf = [&](const std::string& backend, const std::string& precision,
                             int expectedExit, const QString& minWork = {}) -> std::string {
            // As a file says it, so that values outside the tables can be tried too.
            nlohmann::json cfg = c.toJson();
            cfg["backend"] = backend;
            cfg["precision"] = precision;
            const QString config = dir.filePath("c.json");
            QFile f(config);
            if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return "unwritable";
            f.write(QByteArray::fromStdString(cfg.dump()));
            f.close();
            const QString out = dir.filePath(QString::fromStdString(backend + precision) + minWork);
            QProcess run;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove("PIPELENS_AUTO_OPENCL_MIN_WORK");
            if (!minWork.isEmpty()) env.insert("PIPELENS_AUTO_OPENCL_MIN_WORK", minWork);
            run.setProcessEnvironment(env);
            run.start(PIPELENS_CLI_PATH, {"run", config, "--out", out, "--quiet"});
            run.waitForFinished(60000);
            if (run.exitCode() != expectedExit) return "exit " + std::to_string(run.exitCode());
            if (expectedExit != 0) return "refused";
            QFile summary(out + "/summary.json");
            if (!summary.open(QIODevice::ReadOnly)) return "no summary";
            return nlohmann::json::parse(summary.readAll().toStdString())["backend"];
        };
        QCOMPARE(backendOf("cpu", "double", 0), std::string("cpu"));
        QCOMPARE(backendOf("auto", "double", 0), std::string("cpu"));  // 120 x 30 x 24: small
        const std::string automatic = backendOf("auto", "double", 0, "0");
        QVERIFY2(automatic.rfind("opencl", 0) == 0 && automatic.find("double") != std::string::npos,
                 automatic.c_str());
        const std::string single = backendOf("opencl", "float", 0);
        QVERIFY2(single.rfind("opencl", 0) == 0 && single.find("float") != std::string::npos,
                 single.c_str());
        QCOMPARE(backendOf("opencl", "half", 1), std::string("refused"));
        QCOMPARE(backendOf("gpu", "double", 1), std::string("refused"));
    }

    // "auto" with the default threshold (1e9 = n x d x microbatches), chosen without running:
    // the small run stays on the CPU engine with a notice saying why, the OpenCL
    // benchmark's large run (65536 x 8192, 64 microbatches) goes to the device, and an explicit
    // "opencl" goes to the device whatever the size.
    void autoChoosesBySize() {
        qunsetenv("PIPELENS_AUTO_OPENCL_MIN_WORK");
        ExperimentConfig small = smallConfig("pd");
        small.data.rows = 600;
        small.data.dim = 512;
        small.stages = 32;
        small.batchSize = 10;
        small.budget.microbatches = 300;
        std::vector<std::string> notices;
        QCOMPARE(selectBackend(small, notices).name, std::string("cpu"));
        QCOMPARE(notices.size(), size_t(1));
        QVERIFY2(notices[0].find("small run") != std::string::npos &&
                     notices[0].find("9.22e+07 < 1e+09") != std::string::npos,
                 notices[0].c_str());

        ExperimentConfig large = small;
        large.data.rows = 65536;
        large.data.dim = 8192;
        large.budget.microbatches = 64;
        notices.clear();
        const std::string device = selectBackend(large, notices).name;
        QVERIFY2(device.rfind("opencl", 0) == 0, device.c_str());
        QVERIFY(notices.empty());

        small.backend = BackendKind::OpenCl;
        const std::string chosen = selectBackend(small, notices).name;
        QVERIFY2(chosen.rfind("opencl", 0) == 0, chosen.c_str());
    }

    // No OpenCL platform at all (the ICD loader pointed at an empty vendor list): `devices`
    // says so, "auto" runs on the CPU engine with a notice, and "opencl" without a permitted
    // fallback is refused with a clear message.
    void noPlatform() {
        QTemporaryDir dir;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OCL_ICD_VENDORS", dir.filePath("no-vendors"));
        env.remove("PIPELENS_AUTO_OPENCL_MIN_WORK");
        QProcess list;
        list.setProcessEnvironment(env);
        list.start(PIPELENS_CLI_PATH, {"devices"});
        QVERIFY(list.waitForFinished(60000));
        QCOMPARE(list.exitCode(), 0);
        QVERIFY(cliOutput(list).contains("No OpenCL device found"));

        ExperimentConfig c = smallConfig("pd");
        const QString config = dir.filePath("c.json");
        auto write = [&](const ExperimentConfig& cfg) {
            QFile f(config);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(QByteArray::fromStdString(cfg.toJson().dump()));
        };
        write(c);
        // The config through the command-line tool with `env`: exit code and output.
        auto runCli = [&](const QString& out) {
            QProcess run;
            run.setProcessEnvironment(env);
            run.start(PIPELENS_CLI_PATH, {"run", config, "--out", dir.filePath(out)});
            const bool finished = run.waitForFinished(60000);
            return std::make_pair(finished ? run.exitCode() : -1, cliOutput(run));
        };
        // A small run under "auto" never asks the ICD loader, so nothing is said about devices.
        const auto [smallExit, smallText] = runCli("small");
        QVERIFY2(smallExit == 0, qPrintable(smallText));
        QVERIFY2(smallText.contains("a small run") && !smallText.contains("OpenCL device"),
                 qPrintable(smallText));

        // Large enough for OpenCL (threshold lowered to 0): no platform, so the CPU engine.
        env.insert("PIPELENS_AUTO_OPENCL_MIN_WORK", "0");
        const auto [autoExit, autoText] = runCli("auto");
        QVERIFY2(autoExit == 0, qPrintable(autoText));
        QVERIFY2(
            autoText.contains("notice: no OpenCL device found") && autoText.contains("CPU engine"),
            qPrintable(autoText));

        c.backend = BackendKind::OpenCl;
        c.allowCpuFallback = false;
        write(c);
        const auto [strictExit, strictText] = runCli("strict");
        QCOMPARE(strictExit, 1);
        QVERIFY2(strictText.contains("no OpenCL device found"), qPrintable(strictText));
        QVERIFY(!QFile::exists(dir.filePath("strict") + "/summary.json"));
    }
};

QTEST_APPLESS_MAIN(TestOpenClFaults)
#include "tst_opencl_faults.moc"

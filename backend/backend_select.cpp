#include "backend_select.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>

#include "cmdline/environment.hpp"
#include "compute/cpu_backend.hpp"
#include "errors.hpp"
#include "experiment/config/lm_config.hpp"
#include "experiment/run/run_work.hpp"
#include "lm_calibration.hpp"
#include "objective/lm/lm_threads.hpp"

#ifdef PIPELENS_HAVE_OPENCL
#include "cl_error.hpp"
#include "clblast_tuning.hpp"
#include "devices.hpp"
#include "fallback_backend.hpp"
#include "lm_opencl_executor.hpp"
#include "lm_opencl_rpd_executor.hpp"
#include "opencl_backend.hpp"
#include "opencl_context.hpp"
#endif

namespace pipelens {
namespace {

BackendChoice cpuChoice() {
    return {cpuBackendProvider(), "cpu"};
}

#ifdef PIPELENS_HAVE_OPENCL
// The device precision the config names.
gpu::Precision devicePrecision(const ExperimentConfig& config) {
    return config.precision == Precision::Float ? gpu::Precision::Float : gpu::Precision::Double;
}
#endif

// Below this estimated work the CPU engine finishes before OpenCL would have started (PoCL's
// platform discovery and program load cost 0.25-0.3 s of CPU), and per-slot launch latency
// keeps the device slower anyway (docs/opencl.md, "backend auto": the measurements).
constexpr double kDefaultAutoOpenClMinWork = 1e9;

double autoOpenClMinWork() {
    // PIPELENS_AUTO_OPENCL_MIN_WORK overrides the threshold (0: auto always tries OpenCL).
    // A bad value is refused (cmdline/environment.cpp has the rule).
    return environmentNumber("PIPELENS_AUTO_OPENCL_MIN_WORK", kDefaultAutoOpenClMinWork);
}

std::string workText(double v) {
    std::ostringstream s;
    s.precision(3);
    s << v;
    return s.str();
}

#ifdef PIPELENS_HAVE_OPENCL

std::function<void(const std::string&)> stderrNotice() {
    return [](const std::string& message) {
        static std::mutex mutex;
        std::lock_guard lock(mutex);
        std::cerr << "notice: " << message << '\n';
    };
}

// The context of config.device. Where `mayFallBack`, no device at all or an unusable platform
// gives null and a notice ending in `cpuWhat`; a bad device choice is the person's mistake and
// stays an error.
std::shared_ptr<gpu::OpenClContext> openContext(const ExperimentConfig& config, bool mayFallBack,
                                                std::vector<std::string>& notices,
                                                const std::string& cpuWhat) {
    try {
        gpu::ContextOptions options;
        options.device = config.device;
        return std::make_shared<gpu::OpenClContext>(options);
    } catch (const ConfigError& e) {
        if (mayFallBack && gpu::listDevices().empty()) {
            notices.push_back(std::string(e.what()) + ": " + cpuWhat);
            return nullptr;
        }
        throw;
    } catch (const gpu::ClError& e) {
        if (!mayFallBack) throw;
        notices.push_back("OpenCL is not usable (" + std::string(e.what()) + "): " + cpuWhat);
        return nullptr;
    }
}

BackendChoice openClChoice(const ExperimentConfig& config, std::vector<std::string>& notices,
                           std::function<void(const std::string&)> runtimeNotice) {
    const bool automatic = config.backend == BackendKind::Auto;
    const gpu::Precision wanted = devicePrecision(config);
    const auto context = openContext(config, automatic || config.allowCpuFallback, notices,
                                     "running on the CPU engine");
    if (!context) return cpuChoice();
    gpu::Precision precision = wanted;
    if (!context->supports(precision)) {
        notices.push_back("precision double is not available on " + context->info().name +
                          " (no cl_khr_fp64): running in float");
        precision = gpu::Precision::Float;
    }
    const bool allowFallback = config.allowCpuFallback;
    if (!runtimeNotice) runtimeNotice = stderrNotice();
    BackendChoice choice;
    choice.name = context->describe(precision);
    choice.provider = [context, precision, allowFallback,
                       runtimeNotice]() -> std::unique_ptr<ComputeBackend> {
        gpu::OpenClBackendOptions options;
        options.precision = precision;
        try {
            auto primary = std::make_unique<gpu::OpenClBackend>(context, options);
            if (!allowFallback) return primary;
            return std::make_unique<gpu::FallbackBackend>(
                std::move(primary), [] { return std::make_unique<CpuBackend>(); }, runtimeNotice);
        } catch (const gpu::ClError& e) {
            if (!allowFallback) throw;
            runtimeNotice("the OpenCL backend could not start (" + std::string(e.what()) +
                          "): this run uses the CPU engine");
            return std::make_unique<CpuBackend>();
        }
    };
    return choice;
}

#endif

}  // namespace

BackendChoice selectBackend(const ExperimentConfig& config, std::vector<std::string>& notices,
                            std::function<void(const std::string&)> runtimeNotice) {
    if (config.backend == BackendKind::Cpu) return cpuChoice();
    if (config.backend == BackendKind::Auto) {
        // Decided before any OpenCL call, so a small run never loads the OpenCL driver.
        const double work = estimatedRunWork(config);
        const double minWork = autoOpenClMinWork();
        if (work < minWork) {
            notices.push_back(
                "backend auto: a small run (n x d x microbatches = " + workText(work) + " < " +
                workText(minWork) + ") runs on the CPU engine");
            return cpuChoice();
        }
    }
    if (config.objective.gradientNoise > 0.0) {
        // The noise is drawn on the host in processing order; only the CPU engine adds it.
        if (config.backend == BackendKind::OpenCl && !config.allowCpuFallback) {
            throw ConfigError(
                "backend = \"opencl\" is not allowed with objective.gradient_noise > 0: "
                "only the CPU engine adds gradient noise (use cpu or auto, or "
                "allow_cpu_fallback)");
        }
        notices.push_back(
            "objective.gradient_noise > 0: running on the CPU engine (the OpenCL "
            "backend does not add gradient noise)");
        return cpuChoice();
    }
#ifdef PIPELENS_HAVE_OPENCL
    return openClChoice(config, notices, std::move(runtimeNotice));
#else
    (void)runtimeNotice;
    if (config.backend == BackendKind::OpenCl) {
        if (!config.allowCpuFallback) {
            throw ConfigError(
                "backend = \"opencl\" is not available: this build has no OpenCL "
                "backend (allowed: cpu, auto)");
        }
        notices.push_back("this build has no OpenCL backend: running on the CPU engine");
    } else {
        notices.push_back("no OpenCL backend in this build: running on the CPU engine");
    }
    return cpuChoice();
#endif
}

namespace {

// Below this many floating-point operations `auto` runs the language model on the CPU engine
// without measuring (or opening) any device: on this project's 2-core machine that is a couple
// of minutes of CPU work, less than a first calibration on PoCL can cost (CLBlast builds its
// kernels on first use).
constexpr double kDefaultAutoLmMinFlops = 1e13;

double autoLmMinFlops() {
    // PIPELENS_AUTO_LM_MIN_FLOPS overrides the threshold (0: auto always measures).
    // A bad value is refused (cmdline/environment.cpp has the rule).
    return environmentNumber("PIPELENS_AUTO_LM_MIN_FLOPS", kDefaultAutoLmMinFlops);
}

// The model's size before its corpus is read: the vocabulary taken as 96 characters.
long long roughLmParameters(const ExperimentConfig& c) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    const long long C = m.width;
    const long long V = 96;
    return (c.stages - 2) * (12 * C * C + 13 * C) + 2 * V * C +
           static_cast<long long>(m.context) * C + 2 * C;
}

long long roughTrainBatches(const ExperimentConfig& c) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    long long chars = m.corpusCharacters;
    if (!m.corpus.empty()) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(m.corpus, ec);
        if (!ec) chars = static_cast<long long>(size);
    }
    return std::max(1LL, chars / std::max(1LL, static_cast<long long>(c.batchSize) * m.context));
}

std::string secondsText(double s) {
    std::ostringstream o;
    o.precision(s < 10 ? 2 : 3);
    o << s << " s";
    return o.str();
}

#ifdef PIPELENS_HAVE_OPENCL
// The language model's OpenCL backend as results name it: the device and precision, and the
// CLBlast parameters its products run with (so a figure says what produced it, and a calibration
// cached under other parameters is not reused).
std::string lmDeviceName(const gpu::OpenClContext& context, gpu::Precision precision) {
    return context.describe(precision) + "; " + gpu::clblastTuningLine(context);
}

// The same backend as a run's summary names it for a person.
std::string lmEngineOn(const gpu::OpenClContext& context) {
    return "OpenCL on " + context.info().name + " (" + context.info().platform + ")";
}

// The measured cost of one microbatch cycle on a backend, from the cache or measured now.
LmCycleCost lmCost(const ExperimentConfig& config, const std::string& backend,
                   const LmExecutorFactory& executor, int threads,
                   std::vector<std::string>& notices, bool& measured) {
    const std::string key = lmCalibrationKey(config, backend);
    if (auto cached = cachedLmCycles(key)) return *cached;
    const LmCycleCost cost = measureLmCycles(config, executor, 0.3, threads);
    measured = true;
    std::string error;
    if (!storeLmCycles(key, cost, &error)) {
        notices.push_back("backend auto: the language-model calibration could not be cached (" +
                          error + "); it is measured again next time");
    }
    return cost;
}
#endif

LmBackendChoice autoLmChoice(const ExperimentConfig& config, std::vector<std::string>& notices) {
    const double flops = lmRunFlops(config, roughTrainBatches(config), roughLmParameters(config));
    const double minFlops = autoLmMinFlops();
    if (flops < minFlops) {
        notices.push_back("backend auto: a small language-model run (about " + workText(flops) +
                          " floating-point operations < " + workText(minFlops) +
                          ") runs on the CPU engine");
        return {};
    }
#ifdef PIPELENS_HAVE_OPENCL
    const gpu::Precision precision = devicePrecision(config);
    const auto context =
        openContext(config, true, notices, "the language model runs on the CPU engine");
    if (!context) return {};
    if (!context->supports(precision)) {
        notices.push_back("backend auto: precision = \"double\" is not available on " +
                          context->info().name + ": the language model runs on the CPU engine");
        return {};
    }
    LmBackendChoice device;
    device.name = lmDeviceName(*context, precision);
    device.engine = lmEngineOn(*context);
    device.executor = gpu::lmOpenClExecutorFactory(context);
    device.rpdExecutor = gpu::lmOpenClRpdExecutorFactory(context);
    bool measured = false;
    // The methods run side by side (lm_experiment.cpp): on the CPU engine each with its share
    // of the cores, so as many at once as there are cores for; on the device one after another
    // in effect, sharing it.
    const int runs = std::max<int>(1, static_cast<int>(config.methods.size()));
    const int cpuThreads = lmk::threadsPerRun(0, static_cast<std::size_t>(runs));
    const int atOnce = std::min(runs, lmk::threadsPerRun(0, 1));
    const std::string onThreads =
        "on " + std::to_string(cpuThreads) + (cpuThreads == 1 ? " thread" : " threads");
    const std::string cpuName = "cpu " + onThreads;
    const LmCycleCost cpu = lmCost(config, cpuName, {}, cpuThreads, notices, measured);
    const LmCycleCost dev = lmCost(config, device.name, device.executor, 1, notices, measured);
    const double cycles = lmRunCycles(config, roughTrainBatches(config));
    const double cpuSeconds = cycles * cpu.cycle(config.stages) / atOnce;
    const double devSeconds = cycles * dev.cycle(config.stages);
    const bool onDevice = devSeconds < cpuSeconds;
    std::ostringstream why;
    why << "backend auto: the language model runs on "
        << (onDevice ? device.name : std::string("the CPU engine")) << ": predicted "
        << secondsText(onDevice ? devSeconds : cpuSeconds) << " there against "
        << secondsText(onDevice ? cpuSeconds : devSeconds) << " on "
        << (onDevice ? std::string("the CPU engine") : device.name) << " (one microbatch through "
        << config.stages << " stages: " << secondsText(cpu.cycle(config.stages)) << " on the CPU "
        << "engine " << onThreads << ", " << atOnce << " of the " << runs << " method"
        << (runs == 1 ? "" : "s") << " at once; " << secondsText(dev.cycle(config.stages))
        << " on the device; " << (measured ? "measured now" : "measured earlier") << ", cached in "
        << lmCalibrationCachePath() << ")";
    notices.push_back(why.str());
    if (onDevice) return device;
    return {};
#else
    notices.push_back(
        "backend auto: no OpenCL backend in this build: the language model runs on "
        "the CPU engine");
    return {};
#endif
}

}  // namespace

LmBackendChoice selectLmBackend(const ExperimentConfig& config, std::vector<std::string>& notices) {
    if (config.backend == BackendKind::Cpu) return {};
    if (config.backend == BackendKind::Auto) return autoLmChoice(config, notices);
#ifdef PIPELENS_HAVE_OPENCL
    const gpu::Precision precision = devicePrecision(config);
    const auto context = openContext(config, config.allowCpuFallback, notices,
                                     "the language model runs on the CPU engine");
    if (!context) return {};
    if (!context->supports(precision)) {
        const std::string why = "precision = \"double\" is not available on " +
                                context->info().name + " (no cl_khr_fp64)";
        if (!config.allowCpuFallback) {
            throw ConfigError(why +
                              ": allowed there: float (or backend cpu, or allow_cpu_fallback)");
        }
        notices.push_back(why + ": the language model runs on the CPU engine");
        return {};
    }
    LmBackendChoice choice;
    choice.name = lmDeviceName(*context, precision);
    choice.engine = lmEngineOn(*context);
    choice.executor = gpu::lmOpenClExecutorFactory(context);
    choice.rpdExecutor = gpu::lmOpenClRpdExecutorFactory(context);
    return choice;
#else
    if (!config.allowCpuFallback) {
        throw ConfigError(
            "backend = \"opencl\" is not available: this build has no OpenCL "
            "backend (allowed: cpu, auto)");
    }
    notices.push_back(
        "this build has no OpenCL backend: the language model runs on the CPU engine");
    return {};
#endif
}

void chooseEngine(const ExperimentConfig& config, RunOptions& options,
                  std::vector<std::string>& notices,
                  std::function<void(const std::string&)> runtimeNotice) {
    if (config.languageModel()) {
        LmBackendChoice choice = selectLmBackend(config, notices);
        options.lmExecutor = std::move(choice.executor);
        options.lmRpdExecutor = std::move(choice.rpdExecutor);
        options.backendName = std::move(choice.name);
        options.engine = std::move(choice.engine);
        return;
    }
    BackendChoice choice = selectBackend(config, notices, std::move(runtimeNotice));
    options.backend = std::move(choice.provider);
    options.engine = choice.name == "cpu" ? "CPU engine" : choice.name;
    options.backendName = std::move(choice.name);
}

ExperimentResult runOnChosenEngine(const ExperimentConfig& config, RunOptions& options) {
    std::vector<std::string> notices;
    chooseEngine(config, options, notices);
    ExperimentResult result = runExperiment(config, options);
    result.notices.insert(result.notices.begin(), notices.begin(), notices.end());
    return result;
}

}  // namespace pipelens

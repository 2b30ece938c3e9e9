// Whole runs, OpenCL against the CPU engine on the same machine (docs/benchmarks.md, "OpenCL"):
//   small: logistic regression d = 512, n = 600, b = 10, S = 32, 300 PD microbatches, the
//          objective logged after every block update;
//   large: quadratic d = 8192, n = 65536, b = 256, S = 16, 64 PD microbatches (--large; X takes
//          4 GiB in double).
// Times are wall-clock seconds of the replay itself (data made and the OpenCL program built
// beforehand; the one-off build is reported on its own line), best of --repeats.
// Every run must finish, and OpenCL's objective after every slot must agree with the CPU
// engine's (docs/opencl.md: relative 1e-9 in double, 1e-4 |f| + 1e-5 f(w0) in float); otherwise
// the benchmark fails (exit 2) instead of printing a time for work it did not do.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute/cpu_backend.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "opencl_backend.hpp"
#include "opencl_context.hpp"

using namespace pipelens;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

bool openClOnly = false;  // --opencl-only: diagnostics (e.g. with PIPELENS_CL_PROFILE=1)
int largeRows = 65536;    // --large-rows: a smaller "large" run for diagnostics

ExperimentConfig smallConfig() {
    ExperimentConfig c;
    c.name = "small";
    c.data.kind = "logistic";
    c.data.rows = 600;
    c.data.dim = 512;
    c.objective.loss = LossKind::Logistic;
    c.objective.l2 = 1e-4;
    c.stages = 32;
    c.batchSize = 10;
    c.budget.microbatches = 300;
    MethodSpec m;
    m.method = Method::PipeDream;
    m.step.value = 0.25;
    c.methods = {m};
    return c;
}

ExperimentConfig largeConfig() {
    ExperimentConfig c;
    c.name = "large";
    c.data.kind = "random";
    c.data.rows = largeRows;
    c.data.dim = 8192;
    c.objective.loss = LossKind::Quadratic;
    c.stages = 16;
    c.batchSize = 256;
    c.budget.microbatches = 64;
    MethodSpec m;
    m.method = Method::PipeDream;
    m.step.value = 1.0 / 8192.0;
    c.methods = {m};
    return c;
}

struct Timing {
    double best = 1e300;   // whole run: preparation (data upload) + replay
    double prepare = 0.0;  // of the best run
    double finalObjective = 0.0;
    long long updates = 0;
    std::vector<double> objectivePerSlot;  // of the last run, checked against the CPU engine
};

// The first slot where OpenCL's objective leaves the CPU engine's margin, or -1.
long long firstDisagreement(const Timing& cpu, const Timing& ocl, gpu::Precision precision) {
    if (cpu.objectivePerSlot.size() != ocl.objectivePerSlot.size()) return 0;
    const double f0 = cpu.objectivePerSlot.front();
    const bool dbl = precision == gpu::Precision::Double;
    for (size_t t = 0; t < cpu.objectivePerSlot.size(); ++t) {
        const double want = cpu.objectivePerSlot[t];
        const double margin = dbl ? 1e-9 * (std::abs(want) + std::abs(f0))
                                  : 1e-4 * std::abs(want) + 1e-5 * std::abs(f0);
        if (!(std::abs(ocl.objectivePerSlot[t] - want) <= margin)) return static_cast<long long>(t);
    }
    return -1;
}

Timing timeRun(const ExperimentConfig& c, const std::shared_ptr<const LinearObjective>& objective,
               const BackendProvider& backend, int repeats) {
    ExperimentPlan plan = planExperiment(c, *objective);
    Timing t;
    for (int r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        auto replay =
            makeReplay(c, plan.runs.front(), plan.runs.front().spec.step.value, objective, backend);
        const auto prepared = Clock::now();
        replay->runToEnd();
        const double total = seconds(start, Clock::now());
        const RunResult& result = replay->result();
        if (!result.finished) {
            throw std::runtime_error(
                c.name + ": the run did not finish (" +
                (result.divergence.diverged ? result.divergence.reason : std::string("stopped")) +
                ")");
        }
        if (total < t.best) {
            t.best = total;
            t.prepare = seconds(start, prepared);
        }
        t.finalObjective = result.objectivePerSlot.back();
        t.updates = result.updates;
        t.objectivePerSlot = result.objectivePerSlot;
    }
    return t;
}

void compare(const char* label, const ExperimentConfig& c, int repeats,
             const std::shared_ptr<gpu::OpenClContext>& context, gpu::Precision precision) {
    auto t0 = Clock::now();
    std::shared_ptr<LinearObjective> objective = buildObjective(c);
    objective->setOptimum(0.0);  // f* is not part of what is timed
    std::printf("%s: data made in %.1f s (n=%d, d=%d, S=%d)\n", label, seconds(t0, Clock::now()),
                objective->rows(), objective->dim(), c.stages);
    // --opencl-only still runs the CPU engine once, as the reference the runs are checked against.
    const Timing cpu = timeRun(c, objective, cpuBackendProvider(), openClOnly ? 1 : repeats);
    gpu::OpenClBackendOptions o;
    o.precision = precision;
    BackendProvider ocl = [&] { return std::make_unique<gpu::OpenClBackend>(context, o); };
    Timing gpuRun = timeRun(c, objective, ocl, repeats);
    if (gpuRun.updates != cpu.updates) {
        throw std::runtime_error(std::string(label) + ": OpenCL did " +
                                 std::to_string(gpuRun.updates) +
                                 " block updates, the CPU engine " + std::to_string(cpu.updates));
    }
    if (const long long slot = firstDisagreement(cpu, gpuRun, precision); slot >= 0) {
        throw std::runtime_error(std::string(label) +
                                 ": OpenCL leaves the CPU engine's objective "
                                 "at slot " +
                                 std::to_string(slot));
    }
    if (openClOnly) {
        std::printf("%s: %lld block updates; OpenCL (%s) %.3f s (prepare %.3f); final f %.12g\n",
                    label, gpuRun.updates, gpu::precisionName(precision).c_str(), gpuRun.best,
                    gpuRun.prepare, gpuRun.finalObjective);
        std::fflush(stdout);
        return;
    }
    std::printf(
        "%s: %lld block updates; CPU engine %.3f s (prepare %.3f), OpenCL (%s) %.3f s "
        "(prepare %.3f): OpenCL/CPU = %.2f; final f: CPU %.12g, OpenCL %.12g "
        "(every slot agrees)\n",
        label, cpu.updates, cpu.best, cpu.prepare, gpu::precisionName(precision).c_str(),
        gpuRun.best, gpuRun.prepare, gpuRun.best / cpu.best, cpu.finalObjective,
        gpuRun.finalObjective);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    bool large = false;
    bool floatToo = false;
    int repeats = 3;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--large"))
            large = true;
        else if (!std::strcmp(argv[i], "--float"))
            floatToo = true;
        else if (!std::strcmp(argv[i], "--opencl-only"))
            openClOnly = true;
        else if (!std::strcmp(argv[i], "--large-rows") && i + 1 < argc) {
            largeRows = std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr,
                         "usage: bench_opencl_runs [--large] [--float] [--repeats N] "
                         "[--opencl-only] [--large-rows N]\n");
            return 1;
        }
    }
    try {
        auto t0 = Clock::now();
        auto context = std::make_shared<gpu::OpenClContext>();
        context->program(gpu::Precision::Double);
        std::printf("device: %s; program build (PoCL cache %s) %.2f s\n",
                    context->info().name.c_str(), gpu::ensureKernelCacheDir().c_str(),
                    seconds(t0, Clock::now()));
        compare("small logistic S=32", smallConfig(), repeats, context, gpu::Precision::Double);
        if (floatToo) {
            compare("small logistic S=32", smallConfig(), repeats, context, gpu::Precision::Float);
        }
        if (large) {
            compare("large quadratic S=16", largeConfig(), 1, context, gpu::Precision::Double);
            if (floatToo) {
                compare("large quadratic S=16", largeConfig(), 1, context, gpu::Precision::Float);
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_opencl_runs: %s\n", e.what());
        return 2;
    }
    return 0;
}

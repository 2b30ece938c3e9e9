// Cost per block update of PipeDream with each staleness corrector (docs/correctors.md) against
// plain PipeDream on the same objective (issue #33's target: within 1.3x). Logistic regression,
// n rows (default 20000), d = 512, b = 10, S = 8, N microbatches (default 500: 4000 block
// updates), the objective once per slot, CpuBackend, to the end. Each timed run includes the
// replay's set-up (the corrector plan is made there). After one untimed warm-up run, the runs
// are interleaved, one repetition of every variant after another, so that load changes hit
// them alike; the minimum is reported. A smaller n makes an update's fixed cost (X_block * delta
// over all n rows, for the objective) smaller and the correctors' share larger.
// Every run must finish without diverging, and every repetition of a variant must end at the
// same objective as its first (the engine is deterministic); plain PD's must also be below
// f(w0). On OpenCL each variant's final objective must also agree with the CPU engine's (one
// untimed CPU run per variant; double: relative 1e-9, float: the run tolerance of
// docs/opencl.md).
//
// Usage: bench_correctors [--reps N (default 5)] [--rows n] [--microbatches N] [--per-update]
//                         [--backend cpu|opencl] [--precision double|float]
//   --per-update: the objective after every update (as the app's charts), not per slot.
//   --backend opencl: the OpenCL backend on the first device (a build with OpenCL only), in
//   --precision (default double).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_timing.hpp"
#include "compute/corrector.hpp"
#include "compute/cpu_backend.hpp"
#include "data/synthetic.hpp"
#include "objective/linear_objective.hpp"
#include "replay/pipeline_replay.hpp"
#include "schedule/timeline.hpp"
#if PIPELENS_BENCH_OPENCL
#include "opencl_backend.hpp"
#include "opencl_context.hpp"
#endif

namespace {

using namespace pipelens;
using namespace pipelens::bench;

constexpr int kStages = 8;
constexpr double kStepSize = 0.05;

struct Variant {
    std::string name;
    CorrectorSpec correctors;
    std::vector<double> seconds;     // wall
    std::vector<double> cpuSeconds;  // process CPU time: less sensitive to a loaded machine
    double finalObjective = 0.0;
    bool first = true;
};

void require(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error("benchmark did not do the intended work: " + what);
}

std::vector<Variant> variants() {
    std::vector<Variant> v;
    v.push_back({"plain PD", {}, {}, {}, 0.0, true});
    CorrectorSpec c;
    c.delayAdaptive = true;
    v.push_back({"delay_adaptive", c, {}, {}, 0.0, true});
    c = {};
    c.delayAdaptive = true;
    c.perBlock = true;
    v.push_back({"delay_adaptive per_block", c, {}, {}, 0.0, true});
    c = {};
    c.prediction = true;
    v.push_back({"prediction (exact s)", c, {}, {}, 0.0, true});
    c.steps = PredictionSteps::PipeOptim;
    v.push_back({"prediction (pipeoptim)", c, {}, {}, 0.0, true});
    c = {};
    c.dc = true;
    v.push_back({"dc (lambda=0.5)", c, {}, {}, 0.0, true});
    c = {};
    c.lookahead = true;
    c.beta = 0.5;
    v.push_back({"lookahead (beta=0.5)", c, {}, {}, 0.0, true});
    c = {};
    c.accumulate = 2;
    v.push_back({"accumulate (k=2)", c, {}, {}, 0.0, true});
    c = {};
    c.prediction = true;
    c.dc = true;
    c.delayAdaptive = true;
    v.push_back({"prediction + dc + delay_adaptive", c, {}, {}, 0.0, true});
    return v;
}

int runMain(int argc, char** argv) {
    int reps = 5;
    int microbatches = 500;
    int rows = 20000;
    bool perUpdate = false;
    std::string backendName = "cpu";
    std::string precision = "double";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--reps" && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else if (arg == "--rows" && i + 1 < argc) {
            rows = std::atoi(argv[++i]);
        } else if (arg == "--microbatches" && i + 1 < argc) {
            microbatches = std::atoi(argv[++i]);
        } else if (arg == "--per-update") {
            perUpdate = true;
        } else if (arg == "--backend" && i + 1 < argc) {
            backendName = argv[++i];
        } else if (arg == "--precision" && i + 1 < argc) {
            precision = argv[++i];
        } else {
            std::cerr << "usage: bench_correctors [--reps N (>= 1)] [--rows n (>= 10)] "
                         "[--microbatches N (>= 1)] [--per-update] [--backend cpu|opencl] "
                         "[--precision double|float]\n";
            return 2;
        }
    }
    if (reps < 1 || microbatches < 1 || rows < 10) {
        std::cerr << "--reps and --microbatches must be >= 1, --rows >= 10\n";
        return 2;
    }
    if (backendName != "cpu" && backendName != "opencl") {
        std::cerr << "--backend = " << backendName << " is not allowed: cpu or opencl\n";
        return 2;
    }
    if (precision != "double" && precision != "float") {
        std::cerr << "--precision = " << precision << " is not allowed: double or float\n";
        return 2;
    }
    const bool openCl = backendName == "opencl";
    std::function<std::unique_ptr<ComputeBackend>()> makeBackend = [] {
        return std::make_unique<CpuBackend>();
    };
    std::string device = "CpuBackend";
    if (openCl) {
#if PIPELENS_BENCH_OPENCL
        auto context = std::make_shared<gpu::OpenClContext>();
        gpu::OpenClBackendOptions o;
        o.precision = precision == "float" ? gpu::Precision::Float : gpu::Precision::Double;
        device = "OpenCL (" + precision + ") on " + context->info().name;
        makeBackend = [context, o] { return std::make_unique<gpu::OpenClBackend>(context, o); };
#else
        std::cerr << "--backend opencl: this build has no OpenCL backend\n";
        return 2;
#endif
    }

    SyntheticSpec spec;
    spec.kind = "logistic";
    spec.rows = rows;
    spec.dim = 512;
    spec.seed = 1;
    auto objective =
        std::make_shared<LinearObjective>(makeSynthetic(spec), LossKind::Logistic, 1e-4, 10);
    objective->optimum();  // f* and L once, outside the timed runs
    objective->smoothness();
    std::shared_ptr<const LinearObjective> shared = objective;
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = kStages;
    p.microbatches = microbatches;
    const Timeline timeline = buildTimeline(p);
    const long long updates = static_cast<long long>(kStages) * microbatches;

    // One variant's run: PD on `timeline`, the variant's correctors.
    const auto configOf = [&](const Variant& v) {
        PipelineReplayConfig cfg;
        cfg.method = Method::PipeDream;
        cfg.timeline = timeline;
        cfg.stepSize = kStepSize;
        cfg.correctors = v.correctors;
        cfg.sampling.objectivePerUpdate = perUpdate;
        return cfg;
    };
    std::vector<Variant> all = variants();
    double initial = 0.0;
    for (int r = -1; r < reps; ++r) {
        for (Variant& v : all) {
            if (r < 0 && &v != &all[0]) continue;  // the warm-up: plain PD once, untimed
            const double c0 = cpuSeconds();
            const auto t0 = Clock::now();
            PipelineReplay replay(shared, makeBackend(), configOf(v));
            replay.runToEnd();
            const double took = std::chrono::duration<double>(Clock::now() - t0).count();
            const double cpu = cpuSeconds() - c0;
            if (r >= 0) {
                v.seconds.push_back(took);
                v.cpuSeconds.push_back(cpu);
            }
            const RunResult& res = replay.result();
            require(res.finished && !res.divergence.diverged, v.name + " ran to the end");
            require(res.updates == updates, v.name + " made every block update");
            const double f = res.finalObjective();
            require(std::isfinite(f), v.name + " ended finite");
            if (v.first) {
                v.finalObjective = f;
                v.first = false;
                initial = res.initialObjective;
            } else {
                require(f == v.finalObjective, v.name + " ended where its first run did");
            }
        }
    }
    require(all[0].finalObjective < initial, "plain PD lowered the objective");
    if (openCl) {
        // The device's runs against the CPU engine's, untimed (docs/opencl.md's tolerances).
        const bool dbl = precision == "double";
        for (const Variant& v : all) {
            PipelineReplay cpu(shared, std::make_unique<CpuBackend>(), configOf(v));
            cpu.runToEnd();
            const double want = cpu.result().finalObjective();
            const double tol = dbl ? 1e-9 * std::abs(want) : 1e-4 * std::abs(want) + 1e-5 * initial;
            require(std::abs(v.finalObjective - want) <= tol,
                    v.name + " ended at the CPU engine's objective (" +
                        std::to_string(v.finalObjective) + " vs " + std::to_string(want) + ")");
        }
    }

    std::cout << "# Correctors on PipeDream: cost per block update\n\n"
              << "logistic n = " << rows << ", d = 512, b = 10, S = " << kStages
              << ", N = " << microbatches << " (" << updates << " block updates), step "
              << kStepSize << ", objective " << (perUpdate ? "after every update" : "once per slot")
              << ", " << device << "; " << reps << " interleaved repetitions, min (median)\n"
              << "load average at end: " << loadAverage() << "\n\n"
              << "| variant | wall ns/update, min (median) | wall min / plain's | CPU ns/update, "
                 "min (median) | CPU min / plain's | final f |\n|---|---|---|---|---|---|\n";
    auto least = [](const std::vector<double>& x) { return *std::min_element(x.begin(), x.end()); };
    const double plainWall = least(all[0].seconds);
    const double plainCpu = least(all[0].cpuSeconds);
    const double nsScale = 1e9 / static_cast<double>(updates);
    bool within = true;
    for (const Variant& v : all) {
        const double wallRatio = least(v.seconds) / plainWall;
        const double cpuRatio = least(v.cpuSeconds) / plainCpu;
        within = within && wallRatio <= 1.3 && cpuRatio <= 1.3;
        char line[256];
        std::snprintf(line, sizeof line,
                      "| %s | %.0f (%.0f) | %.3f | %.0f (%.0f) | %.3f | %.6f |\n", v.name.c_str(),
                      nsScale * least(v.seconds), nsScale * median(v.seconds), wallRatio,
                      nsScale * least(v.cpuSeconds), nsScale * median(v.cpuSeconds), cpuRatio,
                      v.finalObjective);
        std::cout << line;
    }
    std::cout << "\n"
              << (within ? "every corrected run is within 1.3x of plain PD (min, wall and CPU)\n"
                         : "some corrected run is ABOVE 1.3x of plain PD (min, wall or CPU)\n");
    return 0;  // reported, not enforced: timings depend on the machine's load
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return runMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "bench_correctors: " << e.what() << "\n";
        return 1;
    }
}

#pragma once
// Running a sweep: every point is the sweep's experiment with the axis set to one value, each
// method tuned by its step-size rule over the sweep's seeds. runSweepPoint is the unit of work
// (a later step hands points to MPI ranks); runSweep spreads the methods of all points not yet
// done over the cores, reports progress with the time left, and stops between runs on cancel,
// keeping every point that finished.
#include <atomic>
#include <functional>
#include <string>

#include "experiment/run/experiment.hpp"
#include "experiment/sweep/point_result.hpp"
#include "experiment/sweep/sweep_folder.hpp"
#include "experiment/sweep/sweep_spec.hpp"

namespace pipelens {

struct SweepProgress {
    std::size_t pointsDone = 0;  // including points done before this run (resume)
    std::size_t points = 0;
    double fractionDone = 0.0;  // of this run's work (runs weighted by grid size x seeds)
    double elapsedSeconds = 0.0;
    double remainingSeconds = -1.0;  // estimate from the work done so far; -1 before any
};

// "points 3/5, 64% of the work, 1m12s elapsed, about 41s left" (the CLI's line, the app's label).
std::string sweepProgressLine(const SweepProgress& progress);

struct SweepRunOptions {
    BackendProvider backend;  // the linear models' engine (default: the CPU engine)
    // The language model's executors of PD and LocalSGD and of RPD (empty: the CPU engine).
    LmExecutorFactory lmExecutor;
    LmRpdExecutorFactory lmRpdExecutor;
    int threads = 0;  // 0: one per hardware thread
    const std::atomic<bool>* cancel = nullptr;
    // Called on a worker thread (one at a time) as each point completes, e.g. to write it.
    std::function<void(const PointResult&)> onPoint;
    // Called (one at a time) after each finished method of a point.
    std::function<void(const SweepProgress&)> onProgress;
};

// One point, computed on the calling thread. Throws ConfigError / DataError for a bad point;
// returns nullopt if cancelled before it finished.
std::optional<PointResult> runSweepPoint(const SweepSpec& spec, std::size_t index,
                                         const SweepRunOptions& options = {});

// Builds a point's result from its experiment's method outcomes (in config order).
PointResult makePointResult(const SweepSpec& spec, std::size_t index, double optimum,
                            const std::vector<MethodRun>& methods);

struct SweepOutcome {
    SweepPoints points;  // every point done, those given plus those computed
    bool cancelled = false;
};

// Computes the points missing from `done` (same size as spec.values, or empty for none done).
SweepOutcome runSweep(const SweepSpec& spec, SweepPoints done, const SweepRunOptions& options = {});

}  // namespace pipelens

#pragma once
// From a config to results: build the objective, plan each method's share of the budget, run
// the methods (each on its own thread), tune step sizes on a grid, collect the results.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compute.hpp"
#include "experiment/config.hpp"
#include "experiment/point_result.hpp"
#include "replay/replay.hpp"

namespace pipelens {

using BackendProvider = std::function<std::unique_ptr<ComputeBackend>()>;
BackendProvider cpuBackendProvider();

// Synthesises or loads the data set and wraps it in the objective (DataError / ConfigError).
std::shared_ptr<LinearObjective> buildObjective(const ExperimentConfig& config);

struct RunPlan {
    MethodSpec spec;
    std::string label;
    bool pipeline = true;        // false for RPD
    ScheduleParams schedule;     // pipeline methods
    int replicas = 1;
    double stepScale = 1.0;
    long long updates = 0;       // RPD: K
    long long delta = 0;         // RPD: ring depth - 1
    int truncateSlots = 0;       // budget.rule = truncate: the run stops after this many slots
};

struct ExperimentPlan {
    int pipeDreamMicrobatches = 0;  // PD's N for the budget
    int slotBudget = 0;             // simulated time every pipeline method gets
    long long updateBudget = 0;     // block updates (compare = updates, and RPD)
    std::vector<RunPlan> runs;      // one per method, in config order
};

ExperimentPlan planExperiment(const ExperimentConfig& config, const LinearObjective& objective);

std::unique_ptr<Replay> makeReplay(const ExperimentConfig& config, const RunPlan& plan,
                                   double stepSize,
                                   std::shared_ptr<const LinearObjective> objective,
                                   const BackendProvider& backend);

struct SweepPoint {
    double stepSize = 0.0;
    double finalGap = 0.0;  // f - f* at the end
    bool diverged = false;  // non-finite, blew up, or ended above the starting value
};

struct MethodOutcome {
    RunPlan plan;
    RunResult result;                 // the run (for a grid: the chosen one), seed 0
    std::vector<SweepPoint> sweep;    // grid runs, empty for a fixed step size
    bool allDiverged = false;
    // Every step size over the seeds (one entry for a fixed step), the rule's choice and its
    // f - f* curve as mean and sd over seeds.
    std::vector<GridStep> grid;
    int chosen = 0;
    CurveStats curve;
};

struct ExperimentResult {
    ExperimentConfig config;
    ExperimentPlan plan;
    std::vector<MethodOutcome> methods;
    double optimum = 0.0;
    double smoothness = 0.0;
    std::string backendName;
    std::vector<std::string> notices;  // e.g. "no OpenCL device: running on the CPU engine"
    bool cancelled = false;
};

struct RunOptions {
    BackendProvider backend;                       // default: the CPU engine
    std::string backendName = "cpu";
    std::function<void(const std::string&)> progress;  // one line per finished run
    std::function<void(const std::string&)> onStage;   // a line before each slow set-up step
    const std::atomic<bool>* cancel = nullptr;
    int threads = 0;                               // 0: one per hardware thread
    // Called on the running thread between chunks with the result so far and the fraction of
    // the run done (for live curves); it must be quick and must not keep the reference.
    std::function<void(const RunResult&, double)> onChunk;
};

ExperimentResult runExperiment(const ExperimentConfig& config, const RunOptions& options = {});

// Runs one planned method over its seeds: with a fixed step size once per seed; with a grid
// {2^a}, every step, keeping the one the method's rule picks (best_final: the lowest final
// f - f* among those that did not diverge; stable: SPEC section 6); if nothing is usable, the
// smallest step's run and allDiverged.
MethodOutcome runMethod(const ExperimentConfig& config, const RunPlan& plan,
                        std::shared_ptr<const LinearObjective> objective,
                        const RunOptions& options);

// The config and plan of seed `seed` (0 = unchanged): seed i adds i to the batch order seed, the
// RPD seed and the gradient-noise seed.
ExperimentConfig seededConfig(const ExperimentConfig& config, int seed);
RunPlan seededPlan(const RunPlan& plan, int seed);

// Runs one planned method with one step size to the end.
RunResult runOne(const ExperimentConfig& config, const RunPlan& plan, double stepSize,
                 std::shared_ptr<const LinearObjective> objective, const BackendProvider& backend,
                 const std::atomic<bool>* cancel = nullptr,
                 const std::function<void(const RunResult&, double)>& onChunk = {});

}  // namespace pipelens

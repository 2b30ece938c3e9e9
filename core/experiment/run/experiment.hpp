#pragma once
// From a config to results, for every objective: build the objective (a linear model's data set
// or the language model), plan each method's share of the budget, run the methods in parallel,
// tune step sizes on a grid, collect one ExperimentResult. The command-line tool, the desktop app
// and the paper's protocols all run experiments through runExperiment.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compute/compute.hpp"
#include "compute/lm_pipeline_executor.hpp"
#include "compute/lm_rpd_executor.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/objective_cache.hpp"
#include "experiment/sweep/point_result.hpp"
#include "replay/replay.hpp"
#include "replay/replay_config.hpp"
#include "schedule/delays.hpp"

namespace pipelens {

struct CharTransformerProblem;
struct LmMethodExtras;

using BackendProvider = std::function<std::unique_ptr<ComputeBackend>()>;
BackendProvider cpuBackendProvider();

// Synthesises or loads the data set and wraps it in the objective (DataError / ConfigError).
std::shared_ptr<LinearObjective> buildObjective(const ExperimentConfig& config);

struct SweepPoint {
    double stepSize = 0.0;
    double finalGap = 0.0;  // f - f* at the end
    bool diverged = false;  // non-finite, blew up, or ended above the starting value
};

// One method's run in an experiment: what the plan gives it (its schedule and share of the
// budget), then, once run, what it found. planExperiment fills the first part, runMethod the rest.
struct MethodRun {
    MethodSpec spec;
    std::string label;
    ScheduleParams schedule;  // pipeline methods
    int replicas = 1;
    double stepScale = 1.0;
    long long updates = 0;  // RPD: K
    long long delta = 0;    // RPD: ring depth - 1

    int truncateSlots = 0;  // budget.rule = truncate: the run stops after this many slots
    // Cut from the run of schedule.microbatches itself (truncate with a microbatch or epoch
    // budget), not from the endless run (truncate with a slot budget).
    bool cutOwnRun = false;
    // Built once per method and shared by the runs of all its step sizes and seeds
    // (withSharedSchedules): the pipeline's timeline, and PD's delay table for RPD with PipeDream
    // delays or order. Null in a plan and in a result.
    std::shared_ptr<const Timeline> sharedTimeline;
    std::shared_ptr<const DelayTable> sharedPipeDreamTable;
    // objective.noise_stream = shared (shared_noise.hpp): where the noise generator of each of
    // this method's runs starts, [seed * steps + step index] (filled when the objective is
    // prepared), and the start of the one run a replay is made for (makeReplay; set by
    // runMethod). Empty and null otherwise: each run draws from a fresh default_rng(noise seed).
    std::vector<std::shared_ptr<const NumpyRandom>> noiseStarts;
    std::shared_ptr<const NumpyRandom> noiseStart;

    RunResult result;               // the run (for a grid: the chosen one), seed 0
    std::vector<SweepPoint> sweep;  // grid runs, empty for a fixed step size
    bool allDiverged = false;
    // Every step size over the seeds (one entry for a fixed step), the rule's choice and its
    // f - f* curve as mean and sd over seeds.
    std::vector<GridStep> grid;
    int chosen = 0;
    CurveStats curve;
    // Slot in which block update k happened, in the replay's order (filled by placeUpdates; RPD
    // has no slots of its own: its update k sits at the slot of PipeDream's update k).
    std::vector<int> updateSlot;
    // The language model's extras of the chosen run (its log, final weights, memory, sampled
    // text; experiment/lm_experiment.hpp); null for the linear models and before the run.
    std::shared_ptr<const LmMethodExtras> lm;

    bool pipeline() const { return isPipeline(spec.method); }  // false for RPD
    // Block updates done before slot `slot` starts (i.e. by the end of slot - 1).
    long long updatesBefore(int slot) const;
};

// What every method shares (SPEC section 5).
struct ExperimentBudget {
    int pipeDreamMicrobatches = 0;  // PD's N for the budget
    int slotBudget = 0;             // simulated time every pipeline method gets
    long long updateBudget = 0;     // block updates (compare = updates, and RPD)
};

struct ExperimentPlan {
    ExperimentBudget budget;
    std::vector<MethodRun> runs;  // one per method, in config order, not run yet
};

ExperimentPlan planExperiment(const ExperimentConfig& config, const LinearObjective& objective);
// What planning needs of the objective: M batches per epoch, and the n x d of the data and model
// for the memory estimate (the language model: rows 0 and d its parameter count).
struct PlanSizes {
    int batches = 1;
    std::int64_t rows = 0;
    std::int64_t dim = 0;
};
ExperimentPlan planExperiment(const ExperimentConfig& config, const PlanSizes& sizes);
// The sizes a config fixes without reading data (synthetic data); nullopt for data files.
std::optional<PlanSizes> planSizesFromConfig(const ExperimentConfig& config);

std::unique_ptr<Replay> makeReplay(const ExperimentConfig& config, const MethodRun& run,
                                   double stepSize,
                                   std::shared_ptr<const LinearObjective> objective,
                                   const BackendProvider& backend);
// The config of an RPD replay of planned method `run` (what makeReplay runs it with).
RpdReplayConfig rpdReplayConfig(const ExperimentConfig& config, const MethodRun& run,
                                double stepSize, const LinearObjective& objective);
// The gradient noise of a config's runs: sigma, and the seed of a run's own generator
// (objective.noise_seed, else the data seed; 0 for data from files). No shared stream's start.
GradientNoiseSpec noiseFor(const ExperimentConfig& config);

// One experiment's result, whatever its objective. The linear models fill optimum and
// smoothness; the language model (config.languageModel()) has no f* or L and fills lmProblem and
// each method's MethodRun::lm instead.
struct ExperimentResult {
    ExperimentConfig config;
    ExperimentBudget budget;
    std::vector<MethodRun> methods;  // in config order
    double optimum = 0.0;
    double smoothness = 0.0;
    std::shared_ptr<const CharTransformerProblem> lmProblem;  // the corpus and model
    // What the runs ran on: "cpu" or the OpenCL device (RunOptions::backendName), and the same
    // for a person (RunOptions::engine).
    std::string backendName = "cpu";
    std::string engine = "CPU engine";
    std::vector<std::string> notices;   // e.g. "no OpenCL device: running on the CPU engine"
    std::vector<std::string> warnings;  // settings that do not do what they say (run_warnings)
    bool cancelled = false;
};

// Fills each method's updateSlot (for views that follow one cursor counting slots).
void placeUpdates(ExperimentResult& result);

// Where a chunk of a run in flight belongs, for live views.
struct ChunkPosition {
    size_t method = 0;      // index in config.methods
    int gridIndex = 0;      // point of the step-size grid being run (0 for a fixed step size)
    int gridPoints = 1;     // points in that grid (1 for a fixed step size)
    double fraction = 0.0;  // of this point's run done, 0 ... 1
    // Of the whole method: every grid point counts the same.
    double methodFraction() const { return (gridIndex + fraction) / std::max(1, gridPoints); }
};

// How to run an experiment. backend/backend_select.hpp (chooseEngine) fills the engine's fields
// from a config, for either objective.
struct RunOptions {
    // The linear models' compute backend (default: the CPU engine).
    BackendProvider backend;
    // The language model's executors of PD and LocalSGD and of RPD (empty: the CPU engine).
    LmExecutorFactory lmExecutor;
    LmRpdExecutorFactory lmRpdExecutor;
    // What the engine is, e.g. "cpu" or "opencl: pthread-haswell (Portable Computing Language),
    // double", and the same for a person: "CPU engine", "OpenCL on DEVICE (PLATFORM)".
    std::string backendName = "cpu";
    std::string engine = "CPU engine";
    std::function<void(const std::string&)> progress;  // one line per finished method
    std::function<void(const std::string&)> onStage;   // a line before each slow set-up step
    const std::atomic<bool>* cancel = nullptr;
    int threads = 0;  // 0: one per hardware thread
    // Keeps the objective (data set, f*, L) between runs of configs that share it.
    ObjectiveCache* objectives = nullptr;
    // A method whose run would be identical to one in `previous` (same data, pipeline, budget
    // and method parameters) is taken from it instead of being run again.
    const ExperimentResult* previous = nullptr;
    // Live hooks, called on the worker threads; they must be quick and keep no reference.
    // onPlanned: once, before any method runs (the plan, no results yet).
    std::function<void(const ExperimentResult&)> onPlanned;
    // onChunk: between chunks of a run with the result so far; once, whole, for a reused method.
    std::function<void(const ChunkPosition&, const RunResult&)> onChunk;
};

// Fills each pipeline method's schedule views (timeline, utilization, delays: what depends only
// on its schedule, fillScheduleViews) and what its run will be (label, N or K), no results.
void fillPlannedViews(ExperimentResult& planned);
// The experiment as planned, before any run, with fillPlannedViews and placeUpdates done: what
// the app shows at once while S changes (optimum and smoothness are left 0).
ExperimentResult plannedViews(const ExperimentConfig& config, const LinearObjective& objective);

// The one run orchestration (CLI, app, protocols), for every objective: objective, plan,
// warnings, every method in parallel (cancellable between chunks, reused from
// options.previous when unchanged), step-size grids resolved per method. The objective's own
// part (experiment/objective_run.hpp) builds the data or model and runs one method.
ExperimentResult runExperiment(const ExperimentConfig& config, const RunOptions& options = {});

// Runs one planned method over its seeds: with a fixed step size once per seed; with a grid
// {2^a}, every step, keeping the one the method's rule picks (best_final: the lowest final
// f - f* among those that did not diverge; stable: SPEC section 6); if nothing is usable, the
// smallest step's run and allDiverged. `method` is the index passed to options.onChunk.
MethodRun runMethod(const ExperimentConfig& config, const MethodRun& planned,
                    std::shared_ptr<const LinearObjective> objective, const RunOptions& options,
                    size_t method = 0);

// The config and plan of seed `seed` (0 = unchanged): seed i adds i to the batch order seed, the
// RPD seed and the gradient-noise seed.
ExperimentConfig seededConfig(const ExperimentConfig& config, int seed);
MethodRun seededPlan(const MethodRun& planned, int seed);

// How many steps a run advances between two looks at its cancel flag: halved while a chunk
// takes longer than kChunkTarget, doubled while it takes under a quarter of it.
class ChunkSizer {
  public:
    static constexpr std::chrono::milliseconds kChunkTarget{20};
    static constexpr long long kMaxSteps = 4096;
    long long steps() const { return steps_; }
    void took(std::chrono::steady_clock::duration elapsed);

  private:
    long long steps_ = 1;
};

// Runs one planned method with one step size to the end; onChunk gets the result so far and the
// fraction done.
RunResult runOne(const ExperimentConfig& config, const MethodRun& run, double stepSize,
                 std::shared_ptr<const LinearObjective> objective, const BackendProvider& backend,
                 const std::atomic<bool>* cancel = nullptr,
                 const std::function<void(const RunResult&, double)>& onChunk = {});

// A planned pipeline method's timeline: whole, or cut at the budget (budget.rule = truncate).
Timeline plannedTimeline(const MethodRun& run);

// The part of a replay's config that the plan decides, the same for every objective
// (replay/replay_config.hpp): a pipeline method's label, timeline, replicas and step size; RPD's
// K, delta, delays, order, seed (0: the experiment's) and PD's delay table where it is used.
void fillPipelineConfig(PipelineRunConfig& cfg, const MethodRun& plan, double stepSize);
void fillRpdConfig(RpdRunConfig& cfg, const ExperimentConfig& c, const MethodRun& plan,
                   double stepSize);

// The plan with its timeline and PD's delay table built once, for every run of its grid.
MethodRun withSharedSchedules(const ExperimentConfig& config, const MethodRun& planned);

// RPD's PipeDream delays and order for K = `updates`: the delay table of PD's run of
// ceil(K / S) microbatches with the config's costs.
std::shared_ptr<const DelayTable> pipeDreamDelayTable(const ExperimentConfig& config,
                                                      long long updates);

// Advances a replay to its end in chunks sized by time, looking at `cancel` between them (a
// cancelled replay is told so and stops); onChunk gets the result so far and the fraction done.
void advanceInChunks(Replay& replay, const std::atomic<bool>* cancel,
                     const std::function<void(const RunResult&, double)>& onChunk = {});

}  // namespace pipelens

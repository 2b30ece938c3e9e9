#pragma once
// An experiment on the language model (objective.kind = "char_transformer"): the corpus and model
// from the config, the same plan as the linear experiments (equal simulated time, PD's budget,
// RPD's K), each method run on the LM replays with a fixed step size or a grid picked by its
// rule, then a few lines of text sampled from each method's final weights.
#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "experiment/experiment.hpp"
#include "replay/lm_replay.hpp"

namespace pipelens {

// Weight and activation copies one stage held at once, against what is predicted: pipelines
// stash weights to the timeline's depth (SPEC section 3); RPD holds versions of each block, at
// most delta + 1, and no activations between steps.
struct LmStageMemory {
    int stashedWeights = 0;   // measured peak (RPD: versions of the block)
    int predictedStash = 0;   // the timeline's stash depth; RPD: min(delta + 1, K + 1)
    int keptInputs = 0;       // measured peak of kept input activations
    long long weightBytes = 0;      // stashedWeights x the stage's parameters x sizeof(Real)
    long long activationBytes = 0;  // keptInputs x N C x sizeof(Real)
};

struct LmMethodResult {
    MethodRun run;            // plan, the chosen run's RunResult, the grid and the choice
    LmLog log;                // of the chosen run
    double finalLoss = 0.0;   // what best_final compares (lmFinalLoss)
    Eigen::VectorXd weights;  // final weights of the chosen run (pipelines: replica average)
    std::vector<LmStageMemory> memory;  // per stage (empty for a run stopped early)
    std::vector<std::string> samples;   // sample_lines lines of text
};

struct LmExperimentResult {
    ExperimentConfig config;
    ExperimentBudget budget;
    std::shared_ptr<const CharTransformerProblem> problem;
    std::vector<LmMethodResult> methods;  // in config order
    std::vector<std::string> warnings;
    bool cancelled = false;
    // What PD and LocalSGD ran on: "cpu" or the OpenCL device and precision, with the CLBlast
    // parameters (RunOptions::lmExecutorName), and the same for a person (RunOptions::lmEngine).
    std::string backend = "cpu";
    std::string engine = "CPU engine";
};

// The run's final training loss, as best_final compares it: the mean of the last ceil(10 %) of
// its last-stage forward losses (one per microbatch; RPD: one per update), which smooths the
// batch-to-batch noise of a single forward. +inf for a diverged run or no forward.
double lmFinalLoss(const RunResult& result, const LmLog& log);

// The curve the stable rule reads: the last-stage forward loss after each slot (pipelines; rows
// before the first forward dropped) or after each block update (RPD).
std::vector<double> lmRuleCurve(const RunResult& result);

// Loads or generates the corpus, builds the model and w0, plans, runs every method (in parallel,
// options.threads) and samples text; options.onPlanned gets the plan before any method runs and
// options.onChunk every chunk of a run in flight, as runExperiment does. options.backend is not
// used: PD and LocalSGD run on options.lmExecutor (backend/backend_select.hpp, selectLmBackend,
// makes it; empty: the CPU engine), RPD on the CPU engine (a warning says so).
LmExperimentResult runLmExperiment(const ExperimentConfig& config, const RunOptions& options = {});

}  // namespace pipelens

#pragma once
// The language model as an objective of runExperiment (objective.kind = "char_transformer",
// objective_run.hpp: languageModelRun): the corpus and model from the config, the same plan as
// the linear models (equal simulated time, PD's budget, RPD's K), each method run on the LM
// replays with a fixed step size or a grid picked by its rule, then a few lines of text sampled
// from each method's final weights. This header holds what its results have beyond the linear
// models' (MethodRun::lm, ExperimentResult::lmProblem). PD and LocalSGD run on
// RunOptions::lmExecutor (empty: the CPU engine), RPD on lmRpdExecutor (a warning says when that
// is the CPU engine while PD's is not); RunOptions::backend is not used.
#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "experiment/run/experiment.hpp"
#include "replay/lm_replay.hpp"

namespace pipelens {

// Weight and activation copies one stage held at once, against what is predicted: pipelines
// stash weights to the timeline's depth (SPEC section 3); RPD holds versions of each block, at
// most delta + 1, and no activations between steps.
struct LmStageMemory {
    int stashedWeights = 0;         // measured peak (RPD: versions of the block)
    int predictedStash = 0;         // the timeline's stash depth; RPD: min(delta + 1, K + 1)
    int keptInputs = 0;             // measured peak of kept input activations
    long long weightBytes = 0;      // stashedWeights x the stage's parameters x sizeof(Real)
    long long activationBytes = 0;  // keptInputs x N C x sizeof(Real)
};

// What a language-model method has beyond every objective's MethodRun (MethodRun::lm).
struct LmMethodExtras {
    LmLog log;                // of the chosen run
    double finalLoss = 0.0;   // what best_final compares (lmFinalLoss)
    Eigen::VectorXd weights;  // final weights of the chosen run (pipelines: replica average)
    std::vector<LmStageMemory> memory;  // per stage (empty for a run stopped early)
    std::vector<std::string> samples;   // sample_lines lines of text
};

// A language-model method's extras (MethodRun::lm); empty ones for a run without them.
const LmMethodExtras& lmOf(const MethodRun& run);

// The run's final training loss, as best_final compares it: the mean of the last ceil(10 %) of
// its last-stage forward losses (one per microbatch; RPD: one per update), which smooths the
// batch-to-batch noise of a single forward. +inf for a diverged run or no forward.
double lmFinalLoss(const RunResult& result, const LmLog& log);

// The curve the stable rule reads: the last-stage forward loss after each slot (pipelines; rows
// before the first forward dropped) or after each block update (RPD).
std::vector<double> lmRuleCurve(const RunResult& result);

}  // namespace pipelens

#pragma once
// What the language-model replays share: the curves they log (../shared/golden-lm/README.md,
// "Logged curves"), the run options, and a base that checks every forward loss for divergence
// (the replays' executors run the model and evaluate the full and held-out objectives).
#include <Eigen/Dense>
#include <limits>
#include <memory>
#include <vector>

#include "compute/corrector.hpp"
#include "compute/optimizer.hpp"
#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_model.hpp"
#include "replay/replay.hpp"

namespace pipelens {

struct LmForwardLoss {
    int microbatch = 0;  // pipelines: the microbatch; RPD: the update index k
    int slot = 0;        // slot of the last-stage forward (-1 for RPD)
    int batch = 0;       // dataset batch
    double loss = 0.0;
};

// The curves the authors log go into the RunResult: objectivePerSlot[t] is the loss of the most
// recent last-stage forward in slots 0 .. t-1 (NaN before the first), objectivePerUpdate[k-1]
// the most recent one at block update k (RPD: the loss of update k's own forward at its stale
// point). The rest is here.
struct LmLog {
    std::vector<LmForwardLoss> forwardLosses;  // every last-stage forward, in order
    // When asked: the mean loss over all dataset batches at the current weights (the replica
    // average). Per slot [0] = f(w0) and [t] after slot t (after any averaging); per update
    // [k-1] right after update k.
    std::vector<double> fullObjectivePerSlot;
    std::vector<double> fullObjectivePerBlockUpdate;
    // When asked: (block updates done, mean loss over the held-out batches).
    std::vector<std::pair<long long, double>> heldOutLoss;
    // Peak copies held at once per stage (pipelines): stashed weights (the timeline's stash
    // depth), and input activations, held from the forward of stage s-1 that produced them to
    // B(m, s), so activations waiting for a busy stage count too (stage 0: its stashes).
    // RPD: peakStashedWeights are the versions of each block held at once (at most delta + 1),
    // and it keeps no activations between steps (peakKeptInputs empty).
    std::vector<int> peakStashedWeights;
    std::vector<int> peakKeptInputs;
};

struct LmRunOptions {
    bool fullObjectivePerSlot = false;
    bool fullObjectivePerUpdate = false;
    long long heldOutEvery = 0;  // held-out loss every this many block updates (0: never)
    // Divergence: a non-finite loss, or one above this factor times log(V) (uniform guessing).
    double blowUpFactor = 100.0;
};

// Correctors on the language model (docs/correctors.md): the guards of a run's settings that
// validate() checks before (each block update a step of its own; lookahead only with sgd).
void requireCorrectorsRun(const CorrectorSpec& spec, const OptimizerSpec& optimizer,
                          double stepScale);
// delay_adaptive's step-size factor tau_ref / max(tau_ref, tau) for an update of delay tau
// (tau_ref = tauRefFor(spec, stages)), the ratio first so that tau <= tau_ref gives exactly 1.
double delayAdaptiveFactor(const CorrectorSpec& spec, int stages, long long tau);

// The non-template face of every LM replay.
class LmReplay : public Replay {
  public:
    const LmLog& log() const { return log_; }
    // The current weights in double (pipelines: the replica average).
    virtual Eigen::VectorXd weights() const = 0;

  protected:
    LmLog log_;
};

template <typename Real>
class LmReplayBase : public LmReplay {
  protected:
    LmReplayBase(std::shared_ptr<const CharTransformerProblem> problem, LmRunOptions options);

    // Records a divergence (and returns false) for a non-finite or blown-up loss.
    bool acceptLoss(double loss, long long updatesDone, int slot, const char* what);

    std::shared_ptr<const CharTransformerProblem> problem_;
    LmRunOptions options_;
    double blowUpLimit_ = 0.0;
};

}  // namespace pipelens

#pragma once
// Optimizers with state for the linear models' block updates (docs/correctors.md, "Optimizers"):
// plain SGD, heavy-ball and Nesterov momentum, Adam and AdamW. The state of each block (and, for
// LocalSGD, of each replica) lives beside the weights it updates and changes only when that
// block is updated; a stashed weight copy never carries state (docs/correctors.md says why).
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "objective/linear_objective.hpp"
#include "schedule/timeline.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

enum class OptimizerKind : std::uint8_t { Sgd, Momentum, Nesterov, Adam, AdamW };
inline constexpr EnumNames<OptimizerKind, 5> kOptimizerKinds{{{OptimizerKind::Sgd, "sgd"},
                                                              {OptimizerKind::Momentum, "momentum"},
                                                              {OptimizerKind::Nesterov, "nesterov"},
                                                              {OptimizerKind::Adam, "adam"},
                                                              {OptimizerKind::AdamW, "adamw"}}};

// One method's optimizer (config: methods[i].optimizer). Only the fields of `kind` are used.
struct OptimizerSpec {
    OptimizerKind kind = OptimizerKind::Sgd;
    double beta = 0.9;         // momentum, nesterov
    double beta1 = 0.9;        // adam, adamw
    double beta2 = 0.999;      // adam, adamw
    double eps = 1e-8;         // adam, adamw
    double weightDecay = 0.0;  // coupled (g += wd * w) except adamw (decoupled)

    // Plain SGD without decay: the engines' original update w -= step * g, with no state.
    bool plain() const { return kind == OptimizerKind::Sgd && weightDecay == 0.0; }
    bool operator==(const OptimizerSpec&) const = default;
};

// The default weight decay of a kind: 0.01 for adamw (as PyTorch), 0 otherwise.
double defaultWeightDecay(OptimizerKind kind);
// The spec with the fields `kind` does not use reset to their defaults.
OptimizerSpec normalizedOptimizer(const OptimizerSpec& spec);

// The state of every block of every replica and the update rule. Memory: v (momentum) or m and
// s (Adam) per replica, d numbers each, and one step count per replica and block.
class OptimizerState {
  public:
    void prepare(const OptimizerSpec& spec, const std::vector<BlockRange>& blocks, int replicas);
    // delta = the change of block `stage` of `replica` for gradient g (already including the
    // objective's l2 and any gradient noise) at the block's current weights w, step size `step`.
    void step(int replica, int stage, const Eigen::Ref<const Eigen::VectorXd>& w,
              const Eigen::Ref<const Eigen::VectorXd>& g, double stepSize, Eigen::VectorXd& delta);
    // LocalSGD's averaging: the state vectors are averaged over replicas (the counts stay).
    void averageReplicas();
    const OptimizerSpec& spec() const { return spec_; }

  private:
    OptimizerSpec spec_;
    std::vector<BlockRange> blocks_;
    Eigen::MatrixXd first_;         // v (momentum) or m (Adam): d x replicas
    Eigen::MatrixXd second_;        // s (Adam): d x replicas
    std::vector<long long> steps_;  // per replica * S + stage
    Eigen::VectorXd scratch_;
};

// A stateful optimizer on synchronous steps of M = 1 / stepScale microbatches (stepScale != 1):
// per event of `events` (replayOrder), whether a backward closes its block's step (1) or only
// adds its gradient to the step's sum (0). A step closes at its M-th backward on a block, or
// where that block (of the same replica, microbatch mod replicas) is read next or the run ends,
// whichever comes first: 2BW reads the next step's forwards before this step's updates, so the
// last two steps' updates meet with no read between them. Forwards are marked 1.
std::vector<char> synchronousStepEnds(const std::vector<ReplayEvent>& events, int stages,
                                      int replicas, double stepScale);

}  // namespace pipelens

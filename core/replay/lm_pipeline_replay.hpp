#pragma once
// PipeDream (weight stashing) and LocalSGD (replicas, averaging) on the language model's real
// activations (../shared/golden-lm/README.md, "Pipeline semantics"). F(m, s) stashes the weights
// it read and keeps its input; B(m, s) recomputes the stage's forward from that input with the
// stash (activation recomputation: the authors' choice, same numbers as keeping internals),
// backpropagates the gradient from B(m, s+1), updates the current weights and passes its input
// gradient to stage s-1. Weights, stashes and activations are in Real (double or float).
// The replay walks the timeline and keeps the logs; an executor (lm_pipeline_executor.hpp: the
// CPU's or OpenCL's) holds the weights and runs the stages.
#include <memory>
#include <string>
#include <vector>

#include "compute/lm_pipeline_executor.hpp"
#include "method.hpp"
#include "replay/lm_replay.hpp"
#include "replay/replay_config.hpp"
#include "schedule/timeline.hpp"
#include "util/task_team.hpp"

namespace pipelens {

// PD or LocalSGD, on a timeline of the problem's S stages.
struct LmPipelineConfig : PipelineRunConfig {
    LmRunOptions options;
    // Threads that run the stages' ops of one slot side by side (they are independent within a
    // slot). Bit-identical to 1 (tested); the bookkeeping stays in the timeline's order. Runs
    // that log the full objective or the held-out loss per block update stay on one thread.
    int slotThreads = 1;
};

template <typename Real>
class LmPipelineReplay final : public LmReplayBase<Real> {
  public:
    // A null executor: the CPU's.
    LmPipelineReplay(std::shared_ptr<const CharTransformerProblem> problem, LmPipelineConfig config,
                     std::unique_ptr<LmPipelineExecutor> executor = nullptr);
    long long advance(long long maxSlots) override;
    long long stepsDone() const override { return slot_; }
    long long totalSteps() const override { return config_.timeline.totalSlots; }
    Eigen::VectorXd weights() const override;

  private:
    bool forwardDone(const LmSlotOp& op, double loss);
    bool backwardDone();
    bool parallelSlots() const;
    void logFullObjective(std::vector<double>& curve);

    LmPipelineConfig config_;
    std::vector<ReplayEvent> events_;
    // Stateful optimizer on a synchronous step: per event, whether a backward ends its block's
    // step (synchronousStepEnds). Empty otherwise.
    std::vector<char> endsStep_;
    // Correctors (replay/corrector_plan.hpp), per event: the forward's read shift, the backward's
    // step factor and whether its update takes effect. Empty without correctors.
    std::vector<double> readShift_, stepFactor_;
    std::vector<char> applies_;
    std::size_t nextEvent_ = 0;
    std::size_t nextAveraging_ = 0;
    int slot_ = 0;
    double latestForwardLoss_;
    std::unique_ptr<LmPipelineExecutor> executor_;
    std::vector<LmSlotOp> slotOps_;   // the slot in flight
    std::unique_ptr<TaskTeam> team_;  // parallelSlots(): the executor's threads for a slot
};

// The run in the problem's precision, on the executor `executor` makes (empty: the CPU's).
std::unique_ptr<LmReplay> makeLmPipelineReplay(
    std::shared_ptr<const CharTransformerProblem> problem, LmPipelineConfig config,
    const LmExecutorFactory& executor = {});

}  // namespace pipelens

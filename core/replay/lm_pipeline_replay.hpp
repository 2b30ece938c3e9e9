#pragma once
// PipeDream (weight stashing) and LocalSGD (replicas, averaging) on the language model's real
// activations (../shared/golden-lm/README.md, "Pipeline semantics"). F(m, s) stashes the weights
// it read and keeps its input; B(m, s) recomputes the stage's forward from that input with the
// stash (activation recomputation: the authors' choice, same numbers as keeping internals),
// backpropagates the gradient from B(m, s+1), updates the current weights and passes its input
// gradient to stage s-1. Weights, stashes and activations are in Real (double or float).
#include <memory>
#include <string>
#include <vector>

#include "method.hpp"
#include "replay/lm_replay.hpp"
#include "schedule/timeline.hpp"
#include "util/task_team.hpp"

namespace pipelens {

struct LmPipelineConfig {
    Method method = Method::PipeDream;  // PD or LocalSGD (a label; the timeline decides the order)
    std::string label;
    Timeline timeline;          // PD or LocalSGD timeline of the problem's S stages
    int replicas = 1;           // LocalSGD: R (microbatch m acts on replica m mod R)
    double stepSize = 0.1;
    std::vector<int> batchOf;   // dataset batch of each microbatch (default: m mod M)
    LmRunOptions options;
    // Threads that run the stages' ops of one slot side by side (they are independent within a
    // slot). Bit-identical to 1 (tested); the bookkeeping stays in the timeline's order. Runs
    // that log the full objective or the held-out loss per block update stay on one thread.
    int slotThreads = 1;
};

// A small pool of equal-size buffers owned by microbatch keys; reused, so steady state does not
// allocate. Its peak is the stash depth SPEC section 3 predicts.
template <typename Real>
class LmBufferPool {
public:
    explicit LmBufferPool(std::size_t size = 0) : size_(size) {}
    Real* acquire(int key);  // logic_error if key already holds one
    Real* get(int key);      // logic_error if key holds none
    void release(int key);
    // Counts as released now (for the peak) but keeps the buffer's contents and lends it to
    // no one until reclaim(): a slot's ops still read it while others acquire.
    void releaseDeferred(int key);
    void reclaim();
    int peak() const { return peak_; }
    int buffers() const { return static_cast<int>(buffers_.size()); }

private:
    void releaseAs(int key, int mark);  // owner becomes mark (-1 or -2)

    std::size_t size_;
    std::vector<std::vector<Real>> buffers_;
    std::vector<int> owner_;  // key, -1 (free) or -2 (released, not yet reclaimed)
    int inUse_ = 0;
    int peak_ = 0;
};

template <typename Real>
class LmPipelineReplay final : public LmReplayBase<Real> {
public:
    LmPipelineReplay(std::shared_ptr<const CharTransformerProblem> problem, LmPipelineConfig config);
    long long advance(long long maxSlots) override;
    long long stepsDone() const override { return slot_; }
    long long totalSteps() const override { return config_.timeline.totalSlots; }
    Eigen::VectorXd weights() const override;

private:
    bool forward(int m, int s);
    bool backward(int m, int s);
    bool parallelSlots() const;
    bool runSlotInParallel(std::size_t first, std::size_t last);  // events [first, last)
    void averageReplicas();
    const Real* currentPoint();  // the replica average (or the only replica)
    void logFullObjective(std::vector<double>& curve);

    LmPipelineConfig config_;
    std::vector<ReplayEvent> events_;
    std::size_t nextEvent_ = 0;
    std::size_t nextAveraging_ = 0;
    int slot_ = 0;
    double latestForwardLoss_;
    std::vector<std::vector<Real>> replicas_;
    std::vector<Real> average_, gradW_, logits_, gradLogits_, scratchOut_;
    std::vector<LmBufferPool<Real>> stash_, input_, gradOut_;  // per stage
    std::vector<int> lastForward_;  // per stage: microbatch whose internals the runner holds
    // Parallel slots: one op per stage, with its buffers resolved in the timeline's order.
    struct SlotOp {
        const ReplayEvent* event;
        Real *stash, *out, *gradIn;
        const Real *in, *gradOut;
        double loss;
    };
    std::vector<SlotOp> slotOps_;
    std::vector<std::size_t> slotOrder_;               // slotOps_ indices, costliest first
    std::vector<std::vector<Real>> stageGradW_, stageScratch_;  // per stage
    std::unique_ptr<TaskTeam> team_;
};

// The run in the problem's precision.
std::unique_ptr<LmReplay> makeLmPipelineReplay(std::shared_ptr<const CharTransformerProblem> problem,
                                               LmPipelineConfig config);

}  // namespace pipelens

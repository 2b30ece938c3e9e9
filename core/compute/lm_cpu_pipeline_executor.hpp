#pragma once
// The CPU executor of PD and LocalSGD on the language model (LmPipelineExecutor): replicas,
// stashes and kept activations in host memory, the stages of core/objective/lm (Eigen), in the
// problem's precision Real. Given a team, runSlot runs the ops of one slot side by side,
// bit-identical to one after the other.
#include <memory>
#include <optional>
#include <vector>

#include "compute/lm_pipeline_executor.hpp"
#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_model.hpp"

namespace pipelens {

// A small pool of equal-size host buffers owned by microbatch keys (LmSlotPool's bookkeeping).
template <typename Real>
class LmBufferPool {
  public:
    explicit LmBufferPool(std::size_t size = 0) : size_(size) {}
    Real* acquire(int key);  // logic_error if key already holds one
    Real* get(int key);      // logic_error if key holds none
    void release(int key) { slots_.release(key); }
    void releaseDeferred(int key) { slots_.releaseDeferred(key); }  // LmSlotPool's
    void reclaim() { slots_.reclaim(); }
    int peak() const { return slots_.peak(); }

  private:
    std::size_t size_;
    LmSlotPool slots_;
    std::vector<std::vector<Real>> buffers_;
};

// An optimizer with state (OptimizerState, in double) on the language model's blocks in Real: a
// block is one stage's parameters (LmLayout). Shared by the CPU executors of PD/LocalSGD and RPD.
template <typename Real>
class LmBlockOptimizer {
  public:
    // `synchronous`: a step sums its backwards' gradients (LmSlotOp::endsStep) and applies
    // gradientScale times the sum; otherwise every update applies its own gradient.
    void prepare(const OptimizerSpec& spec, const LmLayout& layout, int replicas,
                 double gradientScale, bool synchronous);
    // `to` (the block's next weights; may be `from`) = `from` (its current weights) plus the
    // optimizer's update for gradient g with step size stepSize. false (nothing written): the
    // op is part of a synchronous step that has not ended (endsStep false).
    bool update(int replica, int stage, const Real* from, const Real* g, double stepSize,
                bool endsStep, Real* to);
    // Asynchronous updates with correctors: as update() for one that ends its step, from a
    // gradient in Real or double (accumulate's mean). `change` (the block's last applied change
    // d, or null): lookahead adds beta * d to the optimizer's change first; the change applied
    // is written back to it.
    template <typename G>
    void correctedUpdate(int replica, int stage, const Real* from, const G* g, double stepSize,
                         Real* to, Real* change, bool lookahead, double beta);
    void averageReplicas() { state_.averageReplicas(); }

  private:
    // The update of block `stage`, chunk by chunk, from gradient g (Real, or double: a sum);
    // `change` and `beta` as in correctedUpdate (beta 0 and a null change: the plain update).
    template <typename G>
    void apply(int replica, int stage, const Real* from, const G* g, double stepSize, Real* to,
               Real* change = nullptr, bool lookahead = false, double beta = 0.0);

    const LmLayout* layout_ = nullptr;
    OptimizerState state_;  // its blocks are the chunks of the stages
    std::vector<BlockRange> chunks_;
    std::vector<int> firstChunk_;  // per stage, and the total at the end
    double gradientScale_ = 1.0;
    Eigen::MatrixXd pending_;  // synchronous steps: the step's gradient sum, d x replicas
    Eigen::VectorXd grad_, weights_, delta_;  // one chunk; grad_, weights_: float's widened
    Eigen::VectorXd stepGrad_;                // a synchronous step's scaled sum
};

template <typename Real>
class LmCpuPipelineExecutor final : public LmPipelineExecutor {
  public:
    LmCpuPipelineExecutor(std::shared_ptr<const CharTransformerProblem> problem, int replicas);
    std::string describe() const override;
    double forward(int m, int s, int replica, int batch) override;
    void backward(int m, int s, int replica, int batch, double stepSize) override;
    bool runSlot(const std::vector<LmSlotOp>& ops, double stepSize, TaskTeam* team,
                 const LmSlotDone& done) override;
    void setOptimizer(const OptimizerSpec& spec, double gradientScale) override;
    void setCorrectors(const CorrectorSpec& spec) override;
    void averageReplicas() override;
    double meanLoss(const TokenBatches& batches) override;
    Eigen::VectorXd weights() const override;
    std::vector<int> peakStashedWeights() const override;
    std::vector<int> peakKeptInputs() const override;

  protected:
    double forwardOp(const LmSlotOp& op) override;
    void backwardOp(const LmSlotOp& op, double stepSize) override;

  private:
    const Real* currentPoint();  // the replica average (or the only replica)
    // F's stash of `op`'s block: the replica's current weights, or w + readShift * d.
    void readBlock(const LmSlotOp& op, Real* stash);
    // B's weight update of `op`'s block from the stage's gradient g taken at `stash`.
    void applyUpdate(const LmSlotOp& op, Real* g, const Real* stash, double stepSize);
    // applyUpdate with correctors: dc changes g in place, accumulate sums it.
    void correctedUpdate(const LmSlotOp& op, Real* g, const Real* stash, double stepSize);
    template <typename G>
    void correctedStep(const LmSlotOp& op, const G* g, double stepSize);
    // forward() and backward() with the op's correctors and endsStep.
    double forwardStep(const LmSlotOp& op);
    void backwardStep(const LmSlotOp& op, double stepSize);
    bool runSlotSideBySide(const std::vector<LmSlotOp>& ops, double stepSize, TaskTeam& team,
                           const LmSlotDone& done);

    std::shared_ptr<const CharTransformerProblem> problem_;
    CharTransformer<Real> model_;
    std::vector<std::vector<Real>> replicas_;
    std::vector<Real> average_, gradW_, logits_, gradLogits_, scratchOut_;
    std::vector<LmBufferPool<Real>> stash_, input_, gradOut_;  // per stage
    std::vector<int> lastForward_;  // per stage: microbatch whose internals the runner holds
    // Side-by-side slots: one op per stage, with its buffers resolved in the slot's order.
    struct SlotBuffers {
        Real *stash, *out, *gradIn;
        const Real *in, *gradOut;
        double loss;
    };
    std::vector<SlotBuffers> slotBuffers_;
    std::vector<std::size_t> slotOrder_;                        // ops indices, costliest first
    std::vector<std::vector<Real>> stageGradW_, stageScratch_;  // per stage (made on first use)
    std::optional<LmBlockOptimizer<Real>> optimizer_;  // set only for one that is not plain()
    // Correctors (setCorrectors), each replica's and block's own numbers, so the ops of a slot
    // (one per block) never share them. Looked at only where corrected_.
    bool corrected_ = false;
    CorrectorSpec correctors_;
    std::vector<std::vector<Real>> change_;  // per replica: d, prediction or lookahead (or empty)
    Eigen::MatrixXd gradSum_;                // accumulate: the blocks' gradient sums, d x R
    Eigen::VectorXd meanGrad_;               // accumulate: one block's mean gradient
};

// The CPU executor in the problem's precision.
std::unique_ptr<LmPipelineExecutor> makeLmCpuPipelineExecutor(
    std::shared_ptr<const CharTransformerProblem> problem, int replicas);

}  // namespace pipelens

#pragma once
// The OpenCL executor of PD and LocalSGD on the language model (LmPipelineExecutor,
// core/compute/lm_pipeline_executor.hpp): the R replicas' flat weights, every stage's weight
// stashes, kept input activations and passed gradients, and the corpus's token ids live on the
// device; the stages and the corpora's ids are gpu/lm_opencl_model.hpp. Only losses (one value per
// row of a last-stage forward, summed on the host) and weights() cross to the host.
//
// Each stage has an in-order queue of its own, so that the device may run the ops of different
// stages side by side (PoCL otherwise spends about a quarter of a small model's run between
// one command and the next). Only the data decide the order between queues: F(m, s) waits for
// F(m, s-1) (its input), B(m, s) for B(m, s+1) (its output gradient), and a kept input or
// passed gradient's buffer is written again only after the op that read it last has run.
// Weights, stashes and scratch are per stage. The whole-model passes (the replica average,
// meanLoss, weights()) wait for every queue first. PIPELENS_CL_STAGE_QUEUES=0 puts every stage
// on one queue (for comparison; the results are the same bit for bit).
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "compute/lm_pipeline_executor.hpp"
#include "lm_opencl_model.hpp"
#include "lm_opencl_optimizer.hpp"
#include "objective/lm/char_transformer.hpp"

namespace pipelens::gpu {

template <typename Real>
class LmOpenClExecutor final : public LmPipelineExecutor {
  public:
    // Throws ConfigError when the device lacks fp64 for a double problem, ClError when it
    // cannot hold the buffers.
    LmOpenClExecutor(std::shared_ptr<OpenClContext> context,
                     std::shared_ptr<const CharTransformerProblem> problem, int replicas);
    ~LmOpenClExecutor() override;
    std::string describe() const override;
    double forward(int m, int s, int replica, int batch) override;
    void backward(int m, int s, int replica, int batch, double stepSize) override;
    // Optimizers with state as the CPU executor applies them (LmOpenClOptimizer).
    void setOptimizer(const OptimizerSpec& spec, double gradientScale) override;
    // Every corrector as the CPU executor applies it: each replica's and block's last applied
    // change d and accumulate's sums live on the device beside the weights.
    void setCorrectors(const CorrectorSpec& spec) override;
    void averageReplicas() override;
    double meanLoss(const TokenBatches& batches) override;
    Eigen::VectorXd weights() const override;
    std::vector<int> peakStashedWeights() const override;
    std::vector<int> peakKeptInputs() const override;

    long long kernelEnqueues() const { return model_.ops().kernelEnqueues(); }
    // The in-order queues the stages' ops go to: one per stage, or one.
    int queues() const { return model_.ops().queues(); }

  protected:
    double forwardOp(const LmSlotOp& op) override;
    void backwardOp(const LmSlotOp& op, double stepSize) override;

  private:
    // forward() reading w + op.readShift * d where a corrector moves the read.
    double forwardStep(const LmSlotOp& op);
    // backward() with the op's endsStep (a synchronous step's partial backward only sums),
    // stepFactor and applies.
    void backwardStep(const LmSlotOp& op, double stepSize);
    // Equal-size device buffers owned by microbatch keys; per buffer, the end of the op that
    // read it last before it was released (null where that op ran on the queue that writes it
    // next, whose order suffices).
    struct Pool {
        std::size_t size = 0;
        std::string what;
        LmSlotPool keys;
        std::vector<cl::Buffer> buffers;
        std::vector<cl::Event> freed;
    };
    // A buffer for `key`; the selected queue's next command waits until its last reader ran.
    DeviceRef acquire(Pool& pool, int key);
    DeviceRef get(Pool& pool, int key);
    void release(Pool& pool, int key, const cl::Event& lastReader);
    int queueOf(int s) const { return stageQueues_ ? s : 0; }
    // The selected queue's next command waits for microbatch m's op in `done` (forwardDone_ or
    // backwardDone_), which is then forgotten; nothing when there is none (one queue).
    void waitForOp(std::map<int, cl::Event>& done, int m);
    // Every queue's work done, queue 0 selected: before and after the whole-model passes.
    void joinQueues() const;
    DeviceRef replicaBlock(int replica, int s);
    DeviceRef currentPoint();  // the replica average (or the only replica)

    std::shared_ptr<const CharTransformerProblem> problem_;
    int replicas_;
    long long size_;
    mutable LmOpenClModel<Real> model_;
    LmOpenClOps<Real>& ops_;
    cl::Buffer weights_, average_;
    std::vector<Pool> stash_, input_, gradOut_;  // per stage
    // Per stage: the weight gradient, the output of a recomputed forward (the last stage
    // recomputes into the model's logits), which microbatch's internals the stage holds.
    std::vector<cl::Buffer> gradW_, recomputed_;
    std::vector<int> lastForward_;
    bool stageQueues_ = true;
    // Per stage, by microbatch: the end of F(m, s) until F(m, s+1) has waited for it, and of
    // B(m, s) until B(m, s-1) has.
    std::vector<std::map<int, cl::Event>> forwardDone_, backwardDone_;
    std::unique_ptr<LmOpenClOptimizer<Real>> optimizer_;  // set only for one that is not plain()
    // Correctors (setCorrectors; unset: the original update): d (prediction, lookahead),
    // accumulate's sums, and a one-element stand-in for the buffers a run does not use.
    std::optional<CorrectorSpec> correctors_;
    cl::Buffer change_, gradSum_, standIn_;
};

// An executor factory for makeLmPipelineReplay on `context` (the problem's precision).
LmExecutorFactory lmOpenClExecutorFactory(std::shared_ptr<OpenClContext> context);

}  // namespace pipelens::gpu

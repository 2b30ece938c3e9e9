#pragma once
// The OpenCL executor of PD and LocalSGD on the language model (LmPipelineExecutor,
// core/replay/lm_pipeline_executor.hpp): the R replicas' flat weights, every stage's weight
// stashes, kept input activations and passed gradients, and the corpus's token ids live on the
// device; the stages and the corpora's ids are gpu/lm_opencl_model.hpp. Only losses (one value per row of a
// last-stage forward, summed on the host) and weights() cross to the host.
#include <memory>
#include <vector>

#include "lm_opencl_model.hpp"
#include "objective/lm/char_transformer.hpp"
#include "replay/lm_pipeline_executor.hpp"

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
    void averageReplicas() override;
    double meanLoss(const TokenBatches& batches) override;
    Eigen::VectorXd weights() const override;
    std::vector<int> peakStashedWeights() const override;
    std::vector<int> peakKeptInputs() const override;

    long long kernelEnqueues() const { return model_.ops().kernelEnqueues(); }

  private:
    // Equal-size device buffers owned by microbatch keys.
    struct Pool {
        std::size_t size = 0;
        std::string what;
        LmSlotPool keys;
        std::vector<cl::Buffer> buffers;
    };
    DeviceRef acquire(Pool& pool, int key);
    DeviceRef get(Pool& pool, int key);
    DeviceRef replicaBlock(int replica, int s);
    DeviceRef currentPoint();  // the replica average (or the only replica)

    std::shared_ptr<const CharTransformerProblem> problem_;
    int replicas_;
    long long size_;
    mutable LmOpenClModel<Real> model_;
    LmOpenClOps<Real>& ops_;
    cl::Buffer weights_, average_, gradW_;
    std::vector<Pool> stash_, input_, gradOut_;  // per stage
    std::vector<int> lastForward_;
};

// An executor factory for makeLmPipelineReplay on `context` (the problem's precision).
LmExecutorFactory lmOpenClExecutorFactory(std::shared_ptr<OpenClContext> context);

}  // namespace pipelens::gpu

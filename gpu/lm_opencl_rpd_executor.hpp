#pragma once
// The OpenCL executor of Randomized PipeDream on the language model (LmRpdExecutor,
// core/compute/lm_rpd_executor.hpp): every block's held versions, one device buffer each (reused
// as versions fall out of the delay window), and the corpus's token ids live on the device; a
// step is one whole-model forward at the mixed stale point and a backward down to the drawn
// stage (gpu/lm_opencl_model.hpp). Only the step's loss (one value per row, summed on the host)
// and weights() cross to the host.
#include <deque>
#include <memory>
#include <vector>

#include "compute/lm_rpd_executor.hpp"
#include "lm_opencl_model.hpp"
#include "lm_opencl_optimizer.hpp"

namespace pipelens::gpu {

template <typename Real>
class LmOpenClRpdExecutor final : public LmRpdExecutor {
  public:
    // Throws ConfigError when the device lacks fp64 for a double problem, ClError when it
    // cannot hold the buffers.
    LmOpenClRpdExecutor(std::shared_ptr<OpenClContext> context,
                        std::shared_ptr<const CharTransformerProblem> problem);
    std::string describe() const override;
    double step(const std::vector<int>& point, int stage, int batch, int from, int to,
                double stepSize) override;
    // Optimizers with state (LmOpenClOptimizer): one step per update, on buffer `from`'s copy.
    void setOptimizer(const OptimizerSpec& spec) override;
    // delay_adaptive (the replay scales stepSize) and dc, with w_now buffer `from` (the block's
    // newest version) and w_read the version the step read.
    void setCorrectors(const CorrectorSpec& spec) override;
    double meanLoss(const std::vector<int>& point, const TokenBatches& batches) override;
    Eigen::VectorXd weights(const std::vector<int>& point) const override;

  private:
    DeviceRef buffer(int block, int index);  // made on first use

    std::shared_ptr<const CharTransformerProblem> problem_;
    mutable LmOpenClModel<Real> model_;
    std::vector<std::deque<cl::Buffer>> versions_;  // block, buffer index (stable references)
    cl::Buffer gradW_;
    std::unique_ptr<LmOpenClOptimizer<Real>> optimizer_;  // set only for one that is not plain()
    bool dc_ = false;                                     // the dc corrector, with lambda_
    double lambda_ = 0.0;
    cl::Buffer standIn_;  // lm_corrected_update's unused buffers
};

// An executor factory for makeLmRpdReplay on `context` (the problem's precision).
LmRpdExecutorFactory lmOpenClRpdExecutorFactory(std::shared_ptr<OpenClContext> context);

}  // namespace pipelens::gpu

#pragma once
// The whole character transformer on an OpenCL device, shared by the language model's OpenCL
// executors (PD and LocalSGD: lm_opencl_executor.hpp; RPD: lm_opencl_rpd_executor.hpp): the
// queue and kernels, one LmOpenClStage per stage, the corpora's token ids (each uploaded once:
// a batch is an offset), and whole-model passes whose weights may come from different places.
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "lm_opencl_stages.hpp"
#include "objective/lm/char_transformer.hpp"

namespace pipelens::gpu {

template <typename Real>
class LmOpenClModel {
  public:
    // Throws ConfigError when the device lacks fp64 for Real = double (OpenClContext's check).
    LmOpenClModel(std::shared_ptr<OpenClContext> context, const CharTransformerProblem& problem);
    LmOpenClModel(const LmOpenClModel&) = delete;
    LmOpenClModel& operator=(const LmOpenClModel&) = delete;

    LmOpenClOps<Real>& ops() { return ops_; }
    const LmOpenClOps<Real>& ops() const { return ops_; }
    LmOpenClStage<Real>& stage(int s) { return *stages_[static_cast<std::size_t>(s)]; }
    const LmLayout& layout() const { return problem_.layout; }
    // Batch `batch`'s token ids (shift 0) or targets (shift 1) on the device.
    DeviceRef tokens(const TokenBatches& batches, int batch, int shift);
    // Scratch of one microbatch: logits and their gradient [N, V], two activations [N, C].
    DeviceRef logits() { return {&logits_, 0}; }
    DeviceRef gradLogits() { return {&gradLogits_, 0}; }
    DeviceRef scratchA() { return {&scratchA_, 0}; }
    DeviceRef scratchB() { return {&scratchB_, 0}; }

    // Where block s of the weights of a whole-model pass is.
    using BlockOf = std::function<DeviceRef(int s)>;
    // Mean batch loss over `batches` (each batch's mean, then the mean over batches, summed on
    // the host in the CPU's order). The stages' saved internals are overwritten.
    double meanLoss(const BlockOf& blockOf, const TokenBatches& batches);
    // Forward through every stage on training batch `batch`, backward from the last stage down
    // to `lowestStage`; gradW receives block lowestStage's gradient. Returns the forward loss.
    double lossAndStageGradient(const BlockOf& blockOf, int batch, int lowestStage,
                                DeviceRef gradW);

  private:
    struct Ids {
        cl::Buffer buffer;
        const int* base = nullptr;
    };
    const Ids& ids(const TokenBatches& batches);

    const CharTransformerProblem& problem_;
    LmOpenClOps<Real> ops_;
    std::vector<std::unique_ptr<LmOpenClStage<Real>>> stages_;
    cl::Buffer logits_, gradLogits_, scratchA_, scratchB_, meanRows_, gradW_;
    std::vector<cl::Buffer> outputs_;  // lossAndStageGradient: each block stage's output
    std::size_t meanRowsCount_ = 0;
    std::map<const TokenBatches*, Ids> ids_;
};

}  // namespace pipelens::gpu

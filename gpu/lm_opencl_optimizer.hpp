#pragma once
// An optimizer with state on the language model's blocks on the device (LmBlockOptimizer's
// semantics, core/compute/lm_cpu_pipeline_executor.hpp): the state (v, or Adam's m and s) and a
// synchronous step's pending sum sit in device buffers laid out like the replicas' weights
// (replica r's block s at r * P + the block's offset); the blocks' step counts stay on the host,
// which passes Adam's bias corrections 1 - beta^t to the kernel. Shared by the OpenCL executors
// of PD/LocalSGD and RPD.
#include <vector>

#include "compute/optimizer.hpp"
#include "lm_opencl_stages.hpp"
#include "objective/lm/lm_layout.hpp"

namespace pipelens::gpu {

template <typename Real>
class LmOpenClOptimizer {
  public:
    // `synchronous`: a step sums its backwards' gradients (LmSlotOp::endsStep) and applies
    // gradientScale times the sum; otherwise every update applies its own gradient.
    LmOpenClOptimizer(LmOpenClOps<Real>& ops, const OptimizerSpec& spec, const LmLayout& layout,
                      int replicas, double gradientScale, bool synchronous);
    // Block `stage` of `replica` at w (moved in place) by the optimizer's change for gradient g
    // with step size stepSize. false (w untouched): the op is part of a synchronous step that
    // has not ended (endsStep false) and its gradient only joined the step's sum.
    bool update(int replica, int stage, DeviceRef w, DeviceRef g, double stepSize, bool endsStep);
    // The optimizer's part of an update with correctors (LmOpenClOps::correctedStep): its kind,
    // settings and step size, Adam's bias corrections for the block's next step (counted only
    // where the update applies, as the weights move only there) and the state buffers.
    void correctedArgs(int replica, int stage, double stepSize, bool applies,
                       typename LmOpenClOps<Real>::OptimizerArgs& a,
                       typename LmOpenClOps<Real>::CorrectorBuffers& c);
    // LocalSGD: every replica's state becomes the replicas' mean (the step counts stay);
    // `scratch` holds P reals. On the selected queue, after every other queue's work.
    void averageReplicas(const cl::Buffer& scratch);

  private:
    // a's kind and settings from the spec.
    void fill(typename LmOpenClOps<Real>::OptimizerArgs& a, double stepSize) const;
    LmOpenClOps<Real>& ops_;
    OptimizerSpec spec_;
    const LmLayout& layout_;
    int replicas_;
    double gradientScale_;
    bool synchronous_;
    bool momentum_, adam_;
    cl::Buffer first_, second_, pending_;  // a one-element stand-in where unused
    std::vector<long long> steps_;         // per replica * S + stage
};

}  // namespace pipelens::gpu

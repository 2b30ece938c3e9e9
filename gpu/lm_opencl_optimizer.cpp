#include "lm_opencl_optimizer.hpp"

#include <cmath>

namespace pipelens::gpu {

template <typename Real>
LmOpenClOptimizer<Real>::LmOpenClOptimizer(LmOpenClOps<Real>& ops, const OptimizerSpec& spec,
                                           const LmLayout& layout, int replicas,
                                           double gradientScale, bool synchronous)
    : ops_(ops),
      spec_(spec),
      layout_(layout),
      replicas_(replicas),
      gradientScale_(gradientScale),
      synchronous_(synchronous),
      momentum_(spec.kind != OptimizerKind::Sgd),
      adam_(spec.kind == OptimizerKind::Adam || spec.kind == OptimizerKind::AdamW) {
    const std::size_t full = toSize(replicas) * toSize(layout.size());
    auto zeroed = [&](bool needed, const std::string& what) {
        const std::size_t count = needed ? full : 1;
        cl::Buffer b = ops_.reals(count, what);
        ops_.fill({&b, 0}, count, Real{0});
        return b;
    };
    first_ = zeroed(momentum_, "language model optimizer state (momentum or Adam's m)");
    second_ = zeroed(adam_, "language model optimizer state (Adam's s)");
    pending_ = zeroed(synchronous_, "language model synchronous steps' gradient sums");
    steps_.assign(toSize(replicas) * toSize(layout.stages()), 0);
}

template <typename Real>
bool LmOpenClOptimizer<Real>::update(int replica, int stage, DeviceRef w, DeviceRef g,
                                     double stepSize, bool endsStep) {
    const auto& block = layout_.stage(stage);
    typename LmOpenClOps<Real>::OptimizerArgs a;
    fill(a, stepSize);
    a.mode = synchronous_ ? (endsStep ? 2 : 1) : 0;
    a.gradScale = gradientScale_;
    if (a.mode != 1) {
        // The step count moves only when the weights do; the bias corrections in double here,
        // as OptimizerState computes them.
        const long long t = ++steps_[toSize(replica) * toSize(layout_.stages()) + toSize(stage)];
        a.c1 = 1.0 - std::pow(spec_.beta1, static_cast<double>(t));
        a.c2 = 1.0 - std::pow(spec_.beta2, static_cast<double>(t));
    }
    ops_.optimizerStep(w, g, block.size, first_, second_, pending_,
                       replica * layout_.size() + block.offset, a);
    return a.mode != 1;
}

template <typename Real>
void LmOpenClOptimizer<Real>::fill(typename LmOpenClOps<Real>::OptimizerArgs& a,
                                   double stepSize) const {
    a.step = stepSize;
    a.beta = spec_.beta;
    a.beta1 = spec_.beta1;
    a.beta2 = spec_.beta2;
    a.eps = spec_.eps;
    a.wd = spec_.weightDecay;
    switch (spec_.kind) {
        case OptimizerKind::Sgd:
            a.kind = 1;
            break;
        case OptimizerKind::Momentum:
            a.kind = 2;
            break;
        case OptimizerKind::Nesterov:
            a.kind = 3;
            break;
        case OptimizerKind::Adam:
            a.kind = 4;
            break;
        case OptimizerKind::AdamW:
            a.kind = 5;
            break;
    }
}

template <typename Real>
void LmOpenClOptimizer<Real>::correctedArgs(int replica, int stage, double stepSize, bool applies,
                                            typename LmOpenClOps<Real>::OptimizerArgs& a,
                                            typename LmOpenClOps<Real>::CorrectorBuffers& c) {
    fill(a, stepSize);
    if (applies) {
        const long long t = ++steps_[toSize(replica) * toSize(layout_.stages()) + toSize(stage)];
        a.c1 = 1.0 - std::pow(spec_.beta1, static_cast<double>(t));
        a.c2 = 1.0 - std::pow(spec_.beta2, static_cast<double>(t));
    }
    c.first = &first_;
    c.second = &second_;
}

template <typename Real>
void LmOpenClOptimizer<Real>::averageReplicas(const cl::Buffer& scratch) {
    if (replicas_ < 2) return;
    const long long P = layout_.size();
    for (const cl::Buffer* state : {&first_, &second_}) {
        if (state == &first_ ? !momentum_ : !adam_) continue;
        ops_.average(*state, replicas_, P, scratch);
        for (int r = 0; r < replicas_; ++r) ops_.copy({&scratch, 0}, {state, r * P}, toSize(P));
    }
}

template class LmOpenClOptimizer<double>;
template class LmOpenClOptimizer<float>;

}  // namespace pipelens::gpu

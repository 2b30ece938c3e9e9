#include "fallback_backend.hpp"

#include "cl_error.hpp"

namespace pipelens::gpu {

FallbackBackend::FallbackBackend(std::unique_ptr<ComputeBackend> primary, Factory fallback,
                                 Notify notify)
    : active_(std::move(primary)), fallback_(std::move(fallback)), notify_(std::move(notify)) {
    primaryName_ = active_->name();
}

std::string FallbackBackend::name() const {
    return fellBack_ ? active_->name() + " (fell back from " + primaryName_ + ")" : active_->name();
}

template <typename F>
auto FallbackBackend::guarded(F&& f) -> decltype(f(std::declval<ComputeBackend&>())) {
    if (fellBack_) return f(*active_);
    try {
        return f(*active_);
    } catch (const ClError& e) {
        switchToFallback(e);
    }
    return f(*active_);
}

void FallbackBackend::switchToFallback(const std::exception& why) {
    if (notify_) {
        notify_(std::string("the OpenCL device failed mid-run (") + why.what() +
                "); the run continues on the CPU engine from the same state");
    }
    active_.reset();  // release the device before rebuilding on the host
    active_ = fallback_();
    fellBack_ = true;
    // Rebuild the state by replaying every completed call (samples are not needed again).
    std::vector<UpdateSample> ignored;
    if (mode_ == Mode::Pipeline) {
        active_->preparePipeline(*objective_, layout_, w0_);
    } else if (mode_ == Mode::Rpd) {
        active_->prepareRpd(*objective_, blocks_, depth_, w0_);
    }
    if (optimizer_) active_->setOptimizer(optimizer_->first, optimizer_->second);
    if (correctors_) active_->setCorrectors(*correctors_);
    for (const Call& c : log_) {
        switch (c.kind) {
            case Call::Ops:
                ignored.clear();
                active_->runOps(c.ops, c.stepSize, false, ignored);
                break;
            case Call::Average:
                active_->averageReplicas();
                break;
            case Call::Rpd:
                active_->rpdStep(c.delays, c.stage, c.batch, c.stepSize, false);
                break;
        }
    }
    log_.clear();
    log_.shrink_to_fit();
}

void FallbackBackend::preparePipeline(const LinearObjective& objective,
                                      const PipelineLayout& layout, const Eigen::VectorXd& w0) {
    mode_ = Mode::Pipeline;
    objective_ = &objective;
    layout_ = layout;
    w0_ = w0;
    log_.clear();
    optimizer_.reset();
    correctors_.reset();
    // The log replays from this state; a failure here replays nothing.
    mode_ = Mode::None;
    guarded([&](ComputeBackend& b) { b.preparePipeline(objective, layout, w0); });
    mode_ = Mode::Pipeline;
}

void FallbackBackend::runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                             std::vector<UpdateSample>& samples) {
    const std::size_t before = samples.size();
    guarded([&](ComputeBackend& b) {
        samples.resize(before);  // a failed attempt may have appended some
        b.runOps(ops, stepSize, sample, samples);
    });
    if (!fellBack_) {
        Call c;
        c.kind = Call::Ops;
        c.ops.assign(ops.begin(), ops.end());
        c.stepSize = stepSize;
        log_.push_back(std::move(c));
    }
}

void FallbackBackend::averageReplicas() {
    guarded([&](ComputeBackend& b) { b.averageReplicas(); });
    if (!fellBack_) log_.push_back(Call{Call::Average, {}, {}, 0, 0, 0.0});
}

void FallbackBackend::prepareRpd(const LinearObjective& objective,
                                 const std::vector<BlockRange>& blocks, int depth,
                                 const Eigen::VectorXd& w0) {
    objective_ = &objective;
    blocks_ = blocks;
    depth_ = depth;
    w0_ = w0;
    log_.clear();
    optimizer_.reset();
    correctors_.reset();
    mode_ = Mode::None;
    guarded([&](ComputeBackend& b) { b.prepareRpd(objective, blocks, depth, w0); });
    mode_ = Mode::Rpd;
}

UpdateSample FallbackBackend::rpdStep(std::span<const int> delays, int stage, int batch,
                                      double stepSize, bool sample) {
    UpdateSample s = guarded(
        [&](ComputeBackend& b) { return b.rpdStep(delays, stage, batch, stepSize, sample); });
    if (!fellBack_) {
        Call c;
        c.kind = Call::Rpd;
        c.delays.assign(delays.begin(), delays.end());
        c.stage = stage;
        c.batch = batch;
        c.stepSize = stepSize;
        log_.push_back(std::move(c));
    }
    return s;
}

void FallbackBackend::setOptimizer(const OptimizerSpec& spec, double gradientScale) {
    guarded([&](ComputeBackend& b) { b.setOptimizer(spec, gradientScale); });
    if (!fellBack_) optimizer_.emplace(spec, gradientScale);
}

void FallbackBackend::setCorrectors(const CorrectorSpec& spec) {
    guarded([&](ComputeBackend& b) { b.setCorrectors(spec); });
    if (!fellBack_) correctors_ = spec;
}

double FallbackBackend::objective() {
    return guarded([](ComputeBackend& b) { return b.objective(); });
}

double FallbackBackend::gradientNormSquared() {
    return guarded([](ComputeBackend& b) { return b.gradientNormSquared(); });
}

Eigen::VectorXd FallbackBackend::weights() {
    return guarded([](ComputeBackend& b) { return b.weights(); });
}

}  // namespace pipelens::gpu

#include "compute/lm_pipeline_executor.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "errors.hpp"

namespace pipelens {

int LmSlotPool::acquire(int key) {
    if (std::find(owner_.begin(), owner_.end(), key) != owner_.end()) {
        throw std::logic_error("buffer of microbatch " + std::to_string(key) + " already in use");
    }
    auto freeSlot = std::find(owner_.begin(), owner_.end(), -1);
    int i = 0;
    if (freeSlot == owner_.end()) {
        owner_.push_back(key);
        i = static_cast<int>(owner_.size()) - 1;
    } else {
        *freeSlot = key;
        i = static_cast<int>(freeSlot - owner_.begin());
    }
    peak_ = std::max(peak_, ++inUse_);
    return i;
}

int LmSlotPool::get(int key) const {
    auto it = std::find(owner_.begin(), owner_.end(), key);
    if (it == owner_.end()) {
        throw std::logic_error("no buffer held for microbatch " + std::to_string(key));
    }
    return static_cast<int>(it - owner_.begin());
}

void LmSlotPool::release(int key) {
    releaseAs(key, -1);
}

void LmSlotPool::releaseDeferred(int key) {
    releaseAs(key, -2);
}

void LmSlotPool::reclaim() {
    std::replace(owner_.begin(), owner_.end(), -2, -1);
}

void LmSlotPool::releaseAs(int key, int mark) {
    auto it = std::find(owner_.begin(), owner_.end(), key);
    if (it == owner_.end()) {
        throw std::logic_error("releasing a buffer microbatch " + std::to_string(key) +
                               " does not hold");
    }
    *it = mark;
    --inUse_;
}

bool LmPipelineExecutor::runSlot(const std::vector<LmSlotOp>& ops, double stepSize,
                                 TaskTeam* /*team*/, const LmSlotDone& done) {
    for (std::size_t k = 0; k < ops.size(); ++k) {
        const LmSlotOp& op = ops[k];
        double loss = std::numeric_limits<double>::quiet_NaN();
        if (op.forward) {
            loss = forwardOp(op);
        } else {
            backwardOp(op, stepSize);
        }
        if (!done(k, loss)) return false;
    }
    return true;
}

double LmPipelineExecutor::forwardOp(const LmSlotOp& op) {
    return forward(op.microbatch, op.stage, op.replica, op.batch);
}

void LmPipelineExecutor::backwardOp(const LmSlotOp& op, double stepSize) {
    backward(op.microbatch, op.stage, op.replica, op.batch, stepSize);
}

void LmPipelineExecutor::setOptimizer(const OptimizerSpec& spec, double /*gradientScale*/) {
    refuseLmOptimizer(spec, describe());
}

void LmPipelineExecutor::setCorrectors(const CorrectorSpec& spec) {
    refuseLmCorrectors(spec, describe());
}

void refuseLmOptimizer(const OptimizerSpec& spec, const std::string& executor) {
    if (spec.plain()) return;
    throw ConfigError("optimizer.kind = \"" + std::string(enumName(kOptimizerKinds, spec.kind)) +
                      "\" (or a weight_decay) is not supported by the language model's " +
                      executor +
                      " executor: plain sgd only; use the CPU engine (backend = \"cpu\")");
}

void refuseLmCorrectors(const CorrectorSpec& spec, const std::string& executor) {
    if (!spec.any()) return;
    throw ConfigError("correctors (" + correctorSummary(spec) +
                      ") are not supported by the language model's " + executor +
                      " executor: none; use the CPU engine (backend = \"cpu\")");
}

}  // namespace pipelens

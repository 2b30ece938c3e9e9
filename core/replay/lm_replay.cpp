#include "replay/lm_replay.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "errors.hpp"

namespace pipelens {

void requireCorrectorsRun(const CorrectorSpec& spec, const OptimizerSpec& optimizer,
                          double stepScale) {
    if (!spec.any()) return;
    if (stepScale != 1.0) {
        // validate() refuses correctors on synchronous steps; a guard for direct callers.
        throw std::logic_error(
            "correctors need every block update to be a step of its own (stepScale = 1)");
    }
    if (spec.lookahead && optimizer.kind != OptimizerKind::Sgd) {
        throw ConfigError("correctors: lookahead with optimizer.kind = \"" +
                          std::string(enumName(kOptimizerKinds, optimizer.kind)) +
                          "\" is not allowed: sgd only (lookahead is the momentum)");
    }
}

double delayAdaptiveFactor(const CorrectorSpec& spec, int stages, long long tau) {
    if (!spec.delayAdaptive) return 1.0;
    const double ref = tauRefFor(spec, stages);
    return ref / std::max(ref, static_cast<double>(tau));
}

template <typename Real>
LmReplayBase<Real>::LmReplayBase(std::shared_ptr<const CharTransformerProblem> problem,
                                 LmRunOptions options)
    : problem_(std::move(problem)), options_(options) {
    blowUpLimit_ =
        options_.blowUpFactor * std::log(static_cast<double>(problem_->corpus.vocabSize()));
    blowUpLimit_ = std::max(blowUpLimit_, options_.blowUpFactor);  // V = 1 has log V = 0
}

template <typename Real>
bool LmReplayBase<Real>::acceptLoss(double loss, long long updatesDone, int slot,
                                    const char* what) {
    std::ostringstream reason;
    if (!std::isfinite(loss)) {
        reason << "the " << what << " became " << (std::isnan(loss) ? "NaN" : "infinite");
    } else if (loss > blowUpLimit_) {
        reason << "the " << what << " blew up: " << loss << " exceeds " << options_.blowUpFactor
               << " x log(V) = " << blowUpLimit_;
    } else {
        return true;
    }
    result_.divergence =
        divergenceRecord(updatesDone, slot, loss, reason.str(), result_.stepSize, true);
    return false;
}

template class LmReplayBase<double>;
template class LmReplayBase<float>;

}  // namespace pipelens

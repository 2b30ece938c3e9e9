#include "replay/lm_replay.hpp"

#include <cmath>
#include <sstream>

namespace pipelens {

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

#include "replay/lm_replay.hpp"

#include <cmath>
#include <sstream>

namespace pipelens {

template <typename Real>
LmReplayBase<Real>::LmReplayBase(std::shared_ptr<const CharTransformerProblem> problem,
                                 LmRunOptions options)
    : problem_(std::move(problem)), options_(options), model_(problem_->layout) {
    blowUpLimit_ = options_.blowUpFactor * std::log(static_cast<double>(problem_->corpus.vocabSize()));
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

template <typename Real>
void LmReplayBase<Real>::maybeHeldOut(const Real* w, long long updatesDone) {
    if (options_.heldOutEvery <= 0 || !problem_->heldOut) return;
    if (updatesDone % options_.heldOutEvery != 0) return;
    log_.heldOutLoss.emplace_back(updatesDone, model_.meanLoss(w, *problem_->heldOut));
}

template <typename Real>
std::vector<Real> LmReplayBase<Real>::toReal(const Eigen::VectorXd& w) const {
    std::vector<Real> out(static_cast<std::size_t>(w.size()));
    for (Eigen::Index i = 0; i < w.size(); ++i) out[static_cast<std::size_t>(i)] = static_cast<Real>(w[i]);
    return out;
}

template class LmReplayBase<double>;
template class LmReplayBase<float>;

}  // namespace pipelens

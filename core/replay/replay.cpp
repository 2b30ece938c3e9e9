#include "replay/replay.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <sstream>
#include <stdexcept>

#include "errors.hpp"
#include "random/numpy_random.hpp"
#include "replay/replay_checks.hpp"

namespace pipelens {

double RunResult::finalObjective() const {
    if (endObjective) return *endObjective;
    if (!objectivePerUpdate.empty()) return objectivePerUpdate.back();
    if (!objectivePerSlot.empty()) return objectivePerSlot.back();
    return initialObjective;
}

std::vector<int> batchSequence(long long microbatches, int batches, bool shufflePerEpoch,
                               std::uint64_t seed) {
    // The authors' order (SPEC section 6): one default_rng(seed); per epoch arange(M), shuffled
    // if asked, appended; cut at N.
    std::vector<int> out;
    out.reserve(static_cast<size_t>(microbatches));
    std::vector<int> epoch(static_cast<size_t>(batches));
    NumpyRandom rng(seed);
    while (static_cast<long long>(out.size()) < microbatches) {
        std::iota(epoch.begin(), epoch.end(), 0);
        if (shufflePerEpoch) rng.shuffle(std::span<int>(epoch));
        const auto take =
            std::min<long long>(batches, microbatches - static_cast<long long>(out.size()));
        out.insert(out.end(), epoch.begin(), epoch.begin() + take);
    }
    return out;
}

void Replay::startNoise(ComputeBackend& backend, const GradientNoiseSpec& noise) {
    if (!std::isfinite(noise.sigma) || noise.sigma < 0.0) {
        std::ostringstream s;
        s << "objective.gradient_noise = " << noise.sigma
          << " is not allowed: a finite number >= 0";
        throw ConfigError(s.str());
    }
    // sigma = 0 never reaches the backend: a run without noise is the run it always was.
    if (!(noise.sigma > 0.0)) return;
    if (noise.start) {
        backend.setGradientNoise(noise.sigma, *noise.start);
    } else {
        backend.setGradientNoise(noise.sigma, NumpyRandom(noise.seed));
    }
}

void Replay::adoptConstants(const LinearObjective& objective) {
    const bool aside = objective.optimumComing();
    optimumPending_ = !objective.hasOptimum() && aside;
    smoothnessPending_ = !objective.hasSmoothness() && aside;
    coming_ = aside ? &objective : nullptr;
    result_.optimum = objective.hasOptimum() ? objective.optimum() : 0.0;
    result_.smoothness = objective.hasSmoothness() ? objective.smoothness() : 0.0;
    lowestObjective_ = result_.initialObjective;
}

void Replay::settleOptimum() {
    if (!optimumPending_) return;
    result_.optimum = coming_->optimum();
    optimumPending_ = false;
}

void Replay::settleConstants() {
    settleOptimum();
    if (smoothnessPending_) {
        result_.smoothness = coming_->smoothness();
        smoothnessPending_ = false;
    }
}

bool Replay::blewUp(double f) {
    const double f0 = result_.initialObjective;
    const double factor = sampling_.blowUpFactor;
    if (optimumPending_ && coming_->hasOptimum()) settleOptimum();
    if (optimumPending_ && factor >= 1.0) {
        // Both losses are >= 0, so 0 <= f* <= hi, the least f seen or the objective's own cheap
        // upper bound. Not above f(w0): then f - f* <= f(w0) - f* <= factor (f(w0) - f*). Below
        // factor (f(w0) - hi), with a margin far above rounding: then f - f* <= f <=
        // factor (f(w0) - f*) for every f* in [0, hi].
        if (f <= f0) return false;
        const double hi = std::min(lowestObjective_, coming_->optimumUpperBound());
        if (f <= factor * (f0 - hi) * (1.0 - 1e-9)) return false;
    }
    settleOptimum();  // near the threshold: only f* itself decides
    const double gap0 = std::max(f0 - result_.optimum, 1e-300);
    return f - result_.optimum > factor * gap0;
}

bool Replay::checkObjective(double f, long long updatesDone, int slot) {
    std::string reason;
    if (!std::isfinite(f)) {
        reason = "the objective became " + std::string(std::isnan(f) ? "NaN" : "infinite");
    } else if (blewUp(f)) {
        const double gap0 = std::max(result_.initialObjective - result_.optimum, 1e-300);
        std::ostringstream s;
        s << "the objective blew up: f - f* = " << (f - result_.optimum) << " exceeds "
          << sampling_.blowUpFactor << " x the initial gap " << gap0;
        reason = s.str();
    } else {
        lowestObjective_ = std::min(lowestObjective_, f);
    }
    if (reason.empty()) return true;
    result_.divergence = divergenceRecord(updatesDone, slot, f, reason, result_.stepSize);
    return false;
}

void Replay::recordGradNorm(ComputeBackend& backend, long long k) {
    const double g = backend.gradientNormSquared();
    result_.gradNormUpdates.push_back(k);
    result_.gradNormSq.push_back(g);
    gradNormSum_ += g;
    result_.gradNormRunningMean.push_back(gradNormSum_ /
                                          static_cast<double>(result_.gradNormSq.size()));
}

}  // namespace pipelens

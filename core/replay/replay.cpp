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
        const auto take = std::min<long long>(batches, microbatches - static_cast<long long>(out.size()));
        out.insert(out.end(), epoch.begin(), epoch.begin() + take);
    }
    return out;
}

void Replay::startNoise(ComputeBackend& backend, const GradientNoiseSpec& noise) {
    if (!std::isfinite(noise.sigma) || noise.sigma < 0.0) {
        std::ostringstream s;
        s << "objective.gradient_noise = " << noise.sigma << " is not allowed: a finite number >= 0";
        throw ConfigError(s.str());
    }
    // sigma = 0 never reaches the backend: a run without noise is the run it always was.
    if (noise.sigma > 0.0) backend.setGradientNoise(noise.sigma, noise.seed);
}

bool Replay::checkObjective(double f, long long updatesDone, int slot) {
    const double gap0 = std::max(result_.initialObjective - result_.optimum, 1e-300);
    std::string reason;
    if (!std::isfinite(f)) {
        reason = "the objective became " + std::string(std::isnan(f) ? "NaN" : "infinite");
    } else if (f - result_.optimum > sampling_.blowUpFactor * gap0) {
        std::ostringstream s;
        s << "the objective blew up: f - f* = " << (f - result_.optimum) << " exceeds "
          << sampling_.blowUpFactor << " x the initial gap " << gap0;
        reason = s.str();
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

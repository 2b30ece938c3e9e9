#include "replay/theorem_trace.hpp"

#include <algorithm>
#include <cmath>

namespace pipelens {

std::vector<TheoremTracePoint> theoremTrace(const RunResult& r) {
    std::vector<TheoremTracePoint> out;
    if (r.gradNormUpdates.size() < 2) return out;
    // G at K = k is the largest block-gradient norm up to update k.
    std::vector<double> prefixMax(r.blockGradNormSq.size());
    double g2 = 0.0;
    for (size_t k = 0; k < prefixMax.size(); ++k)
        prefixMax[k] = g2 = std::max(g2, r.blockGradNormSq[k]);
    const size_t samples = std::min(r.gradNormUpdates.size(), r.gradNormRunningMean.size());
    for (size_t j = 0; j < samples; ++j) {
        const long long k = r.gradNormUpdates[j];
        if (k <= 0 || static_cast<size_t>(k) > prefixMax.size()) continue;
        TheoremInputs in;
        in.stages = r.stages;
        in.stepSize = r.stepSize;
        in.smoothness = r.smoothness;
        in.gradientBound = std::sqrt(prefixMax[static_cast<size_t>(k - 1)]);
        in.maxDelay = r.maxDelay;
        in.updates = k;
        in.initialGap = r.initialObjective - r.optimum;
        out.push_back({k, r.gradNormRunningMean[j], theoremBound(in)});
    }
    return out;
}

}  // namespace pipelens

#include "replay/theorem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pipelens {

TheoremBound theoremBound(const TheoremInputs& in) {
    TheoremBound b;
    const double S = in.stages;
    const double g = in.stepSize;
    const double L = in.smoothness;
    const double G2 = in.gradientBound * in.gradientBound;
    const double delta = static_cast<double>(in.maxDelay);
    const double K = static_cast<double>(in.updates);
    b.optimisation = (g > 0.0 && K > 0.0) ? 2.0 * S * in.initialGap / (g * K)
                                          : std::numeric_limits<double>::infinity();
    b.noise = g * S * L * G2;
    b.staleness = g * g * L * L * delta * delta * G2;
    b.total = b.optimisation + b.noise + b.staleness;
    b.stepSizeAllowed = g > 0.0 && g <= 1.0 / L;
    return b;
}

double tunedStepSize(double smoothness, double gradientBound, long long updates,
                     double initialGap) {
    const double cap = 1.0 / smoothness;
    const double denom = smoothness * gradientBound * gradientBound * static_cast<double>(updates);
    if (denom <= 0.0) return cap;
    return std::min(cap, std::sqrt(2.0 * initialGap / denom));
}

}  // namespace pipelens

#include "experiment/step_size/step_rules.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "errors.hpp"
#include "experiment/config/object_reader.hpp"

namespace pipelens {
namespace {

constexpr double kFloor = 1e-16;
constexpr double kTailFraction = 0.2;
constexpr double kMaxRelativeStd = 0.25;
constexpr double kMaxRisingFraction = 0.55;
constexpr double kMaxRiseOfMean = 0.10;
constexpr double kMaxVariationRatio = 10.0;
constexpr double kMaxLogSlope = 1e-3;
constexpr double kWithinBest = 1.05;

// Least-squares slope of y against x = 0, 1, ..., n-1.
double slopeAgainstIndex(const std::vector<double>& y) {
    const auto n = static_cast<double>(y.size());
    if (y.size() < 2) return 0.0;
    const double xMean = (n - 1.0) / 2.0;
    double yMean = 0.0;
    for (double v : y) yMean += v;
    yMean /= n;
    double sxy = 0.0;
    double sxx = 0.0;
    for (size_t i = 0; i < y.size(); ++i) {
        const double dx = static_cast<double>(i) - xMean;
        sxy += dx * (y[i] - yMean);
        sxx += dx * dx;
    }
    return sxy / sxx;
}

}  // namespace

StepRule parseStepRule(const std::string& text) {
    if (text == "best_final") return StepRule::BestFinal;
    if (text == "stable") return StepRule::Stable;
    // Escaped and cut short: the text may come from a damaged point file.
    throw ConfigError("step_rule = " + showConfigValue(nlohmann::json(text)) +
                      " is not allowed: one of best_final, stable");
}

std::string stepRuleName(StepRule rule) {
    return rule == StepRule::Stable ? "stable" : "best_final";
}

TailCheck checkTail(std::span<const double> curve) {
    TailCheck t;
    if (curve.empty()) {
        t.tailMean = std::numeric_limits<double>::infinity();
        return t;
    }
    t.finite = std::all_of(curve.begin(), curve.end(), [](double v) { return std::isfinite(v); });
    t.tailLength =
        static_cast<size_t>(std::ceil(kTailFraction * static_cast<double>(curve.size())));
    t.tailLength = std::clamp<size_t>(t.tailLength, 1, curve.size());
    if (!t.finite) {
        t.tailMean = std::numeric_limits<double>::infinity();
        return t;
    }
    std::vector<double> tail(curve.end() - static_cast<std::ptrdiff_t>(t.tailLength), curve.end());
    for (double& v : tail) v = std::max(v, kFloor);
    const auto n = static_cast<double>(tail.size());
    for (double v : tail) t.tailMean += v;
    t.tailMean /= n;
    double var = 0.0;
    for (double v : tail) var += (v - t.tailMean) * (v - t.tailMean);
    t.tailStd = std::sqrt(var / n);
    size_t rises = 0;
    for (size_t i = 1; i < tail.size(); ++i) {
        const double step = tail[i] - tail[i - 1];
        if (step > 0.0) {
            ++rises;
            t.largestRise = std::max(t.largestRise, step);
        }
        t.totalVariation += std::abs(step);
    }
    if (tail.size() > 1) t.risingFraction = static_cast<double>(rises) / (n - 1.0);
    t.netChange = tail.back() - tail.front();
    std::vector<double> logTail(tail.size());
    std::transform(tail.begin(), tail.end(), logTail.begin(), [](double v) { return std::log(v); });
    t.logSlope = slopeAgainstIndex(logTail);

    t.steadySpread = t.tailStd <= kMaxRelativeStd * t.tailMean;
    t.fewRises = t.risingFraction <= kMaxRisingFraction;
    t.smallRises = t.largestRise <= kMaxRiseOfMean * t.tailMean;
    // Written as a product so that a flat tail (0 / 0) passes and a closed loop (x / 0) fails.
    t.smoothPath = t.totalVariation <= kMaxVariationRatio * std::abs(t.netChange);
    t.notRising = t.logSlope <= kMaxLogSlope;
    return t;
}

int pickBestFinal(std::span<const GridCandidate> grid) {
    int best = -1;
    for (size_t i = 0; i < grid.size(); ++i) {
        const GridCandidate& c = grid[i];
        if (c.diverged || !std::isfinite(c.finalValue)) continue;
        if (best < 0) {
            best = static_cast<int>(i);
            continue;
        }
        const GridCandidate& b = grid[static_cast<size_t>(best)];
        if (c.finalValue < b.finalValue ||
            (c.finalValue == b.finalValue && c.stepSize < b.stepSize)) {
            best = static_cast<int>(i);
        }
    }
    return best;
}

int pickStable(std::span<const GridCandidate> grid) {
    double bestStableMean = std::numeric_limits<double>::infinity();
    for (const GridCandidate& c : grid) {
        if (c.tail.stable()) bestStableMean = std::min(bestStableMean, c.tail.tailMean);
    }
    int pick = -1;
    if (std::isfinite(bestStableMean)) {
        for (size_t i = 0; i < grid.size(); ++i) {
            const GridCandidate& c = grid[i];
            if (!c.tail.stable() || c.tail.tailMean > kWithinBest * bestStableMean) continue;
            if (pick < 0 || c.stepSize < grid[static_cast<size_t>(pick)].stepSize) {
                pick = static_cast<int>(i);
            }
        }
        return pick;
    }
    for (size_t i = 0; i < grid.size(); ++i) {
        const GridCandidate& c = grid[i];
        if (!std::isfinite(c.tail.tailMean)) continue;
        if (pick < 0) {
            pick = static_cast<int>(i);
            continue;
        }
        const GridCandidate& p = grid[static_cast<size_t>(pick)];
        if (c.tail.tailMean < p.tail.tailMean ||
            (c.tail.tailMean == p.tail.tailMean && c.stepSize < p.stepSize)) {
            pick = static_cast<int>(i);
        }
    }
    return pick;
}

int pickStep(StepRule rule, std::span<const GridCandidate> grid) {
    return rule == StepRule::Stable ? pickStable(grid) : pickBestFinal(grid);
}

}  // namespace pipelens

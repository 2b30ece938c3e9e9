#pragma once
// How a step size is chosen from a grid of runs (SPEC section 6): "best_final" keeps the lowest
// final f - f* among the runs that did not diverge; "stable" (the authors' rule for their later
// figures) looks at the tail of each seed-averaged curve and prefers the smallest step whose tail
// is steady and within 5 % of the best. Pure functions over numbers, so they can be tested on
// hand-made curves.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace pipelens {

enum class StepRule { BestFinal, Stable };
StepRule parseStepRule(const std::string& text);  // "best_final" | "stable" (ConfigError)
std::string stepRuleName(StepRule rule);

// The five criteria of the stable rule on one curve, with the numbers behind them.
struct TailCheck {
    std::size_t tailLength = 0;   // ceil(0.2 * curve length)
    double tailMean = 0.0;        // of the clamped tail; +inf for a non-finite curve
    double tailStd = 0.0;         // population standard deviation (ddof = 0)
    double risingFraction = 0.0;  // rising steps / steps in the tail (0 with fewer than 2 points)
    double largestRise = 0.0;     // largest single increase (0 when none rises)
    double totalVariation = 0.0;  // sum of |steps|
    double netChange = 0.0;       // last - first
    double logSlope = 0.0;        // least-squares slope of log(tail) against the point index

    bool finite = false;
    bool steadySpread = false;  // std / mean <= 0.25
    bool fewRises = false;      // rising fraction <= 0.55
    bool smallRises = false;    // largest rise <= 0.10 * mean
    bool smoothPath = false;    // total variation <= 10 * |net change| (a flat tail passes)
    bool notRising = false;     // log slope <= 1e-3

    bool stable() const {
        return finite && steadySpread && fewRises && smallRises && smoothPath && notRising;
    }
};

// Clamps the curve below at 1e-16 and checks its last ceil(0.2 * length) points. A curve with
// any non-finite value is not stable and its tail mean is +inf. An empty curve is not stable.
TailCheck checkTail(std::span<const double> curve);

// One point of a step-size grid, as the rules see it.
struct GridCandidate {
    double stepSize = 0.0;
    double finalValue = 0.0;  // final f - f* (seed mean)
    bool diverged = false;    // any seed non-finite, blew up, or ended above its start
    TailCheck tail;           // of the seed-averaged curve (stable rule only)
};

// best_final: the lowest finalValue among candidates not diverged (ties: the smaller step);
// -1 when all diverged.
int pickBestFinal(std::span<const GridCandidate> grid);

// stable: among stable candidates, those whose tail mean is within 5 % of the best stable tail
// mean; the smallest step among them. With none stable, the lowest tail mean (ties: the smaller
// step); -1 only when every tail mean is non-finite.
int pickStable(std::span<const GridCandidate> grid);

int pickStep(StepRule rule, std::span<const GridCandidate> grid);

}  // namespace pipelens

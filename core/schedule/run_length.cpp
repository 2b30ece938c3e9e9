#include "schedule/run_length.hpp"

#include <algorithm>

namespace pipelens {
namespace {

constexpr long long kMaxCells = 400'000'000;  // as in timeline.cpp

bool unitCosts(const OpCosts& c) {
    return c.forwardSlots == 1 && c.backwardSlots == 1 && c.latencySlots == 0;
}

long long simulatedLength(const ScheduleParams& p) {
    return simulateSchedule(p, [](const TimelineCell&) {}).totalSlots;
}

// Microbatches per independent round (a full drain separates rounds), 0 for none.
long long roundSize(const ScheduleParams& p) {
    const int stages = p.stages;
    if (p.kind == ScheduleKind::FillDrain) return p.flushGroup > 0 ? p.flushGroup : 0;
    if (p.kind == ScheduleKind::LocalSgd) {
        const long long r = p.replicas > 0 ? p.replicas : stages;
        return r * p.localSteps;
    }
    return 0;
}

}  // namespace

int maxMicrobatches(int stages) {
    return static_cast<int>(kMaxCells / (2LL * std::max(1, stages)));
}

std::optional<long long> closedFormRunLength(const ScheduleParams& p) {
    if (!unitCosts(p.costs)) return std::nullopt;
    const long long n = p.microbatches;
    const long long s = p.stages;
    if (p.kind == ScheduleKind::PipeDream && (p.noam == 0 || p.noam == p.stages)) {
        return 2 * n + 2 * (s - 1);
    }
    if (p.kind == ScheduleKind::FillDrain) {
        const long long g = p.flushGroup > 0 ? std::min<long long>(p.flushGroup, n) : n;
        const long long groups = (n + g - 1) / g;
        return 2 * n + 2 * (s - 1) * groups;
    }
    return std::nullopt;
}

long long runLengthSlots(const ScheduleParams& p) {
    if (isProgramKind(p.kind)) return programScheduleRunLength(p);
    validateScheduleParams(p);
    if (auto closed = closedFormRunLength(p)) return *closed;
    if (p.kind == ScheduleKind::LocalSgd && p.replicas == 1 && p.microbatches > 1) {
        // One replica: each microbatch runs alone through the pipeline, one after the other.
        ScheduleParams one = p;
        one.microbatches = 1;
        return static_cast<long long>(p.microbatches) * simulatedLength(one);
    }
    const long long round = roundSize(p);
    if (round > 0 && p.microbatches > round) {
        // Every full round starts on an empty pipeline: one simulated round stands for all.
        ScheduleParams one = p;
        one.microbatches = static_cast<int>(round);
        long long total = (p.microbatches / round) * simulatedLength(one);
        if (const long long rest = p.microbatches % round; rest > 0) {
            one.microbatches = static_cast<int>(rest);
            total += simulatedLength(one);
        }
        return total;
    }
    return simulatedLength(p);
}

BudgetFit fitBudget(ScheduleParams p, long long slotBudget) {
    const int cap = maxMicrobatches(p.stages);
    if (isProgramKind(p.kind)) {
        if (const std::optional<long long> n = programScheduleBudgetFit(p, slotBudget)) {
            BudgetFit fit;
            fit.microbatches = static_cast<int>(std::min<long long>(*n, cap));
            fit.capped = *n > cap;
            return fit;
        }
    }
    auto fits = [&](int n) {
        p.microbatches = n;
        return runLengthSlots(p) <= slotBudget;
    };
    BudgetFit fit;
    if (slotBudget <= 0) return fit;
    p.microbatches = 1;
    const long long lengthOfOne = runLengthSlots(p);
    if (lengthOfOne > slotBudget) return fit;
    // Each microbatch occupies stage 0 for a forward and a backward, one after the other: no
    // more than slotBudget / (F + B) fit, whatever the schedule.
    const long long perMicrobatch = p.costs.forwardSlots + p.costs.backwardSlots;
    const long long bound = slotBudget / perMicrobatch;
    if (bound > cap && fits(cap)) {
        // Capped only if one more would still fit: exactly with a closed form, else when the
        // budget leaves slots unused at the cap.
        fit.microbatches = cap;
        ScheduleParams next = p;
        next.microbatches = cap + 1;
        const std::optional<long long> closed = closedFormRunLength(next);
        p.microbatches = cap;
        fit.capped = closed ? *closed <= slotBudget : runLengthSlots(p) < slotBudget;
        return fit;
    }
    // The largest fit, between lo (fits) and hi (does not, or cap + 1). A run's length grows
    // almost linearly with its microbatches, so the next probe is interpolated from the lengths
    // at both ends (a bisection step whenever that did not halve the interval): about four
    // simulations instead of a bisection's ten. That is most of the plan at S = 128, which the
    // app makes on the GUI thread as S is dragged.
    int lo = 1;
    long long lengthLo = lengthOfOne;
    int hi = static_cast<int>(std::min<long long>(bound, cap)) + 1;
    long long lengthHi = -1;  // not simulated: hi is past the stage-0 bound or the cap
    auto length = [&](int n) {
        p.microbatches = n;
        return runLengthSlots(p);
    };
    if (hi - 1 > lo) {  // the bound itself often fits (a run without bubbles at stage 0)
        const long long l = length(hi - 1);
        if (l <= slotBudget) {
            lo = hi - 1;
            lengthLo = l;
        } else {
            hi -= 1;
            lengthHi = l;
        }
    }
    bool bisect = false;
    while (hi - lo > 1) {
        int probe = lo + (hi - lo) / 2;
        if (!bisect && lengthHi > lengthLo) {
            const double t = static_cast<double>(slotBudget - lengthLo) /
                             static_cast<double>(lengthHi - lengthLo);
            probe = std::clamp(lo + static_cast<int>(t * (hi - lo)), lo + 1, hi - 1);
        }
        const int width = hi - lo;
        const long long l = length(probe);
        if (l <= slotBudget) {
            lo = probe;
            lengthLo = l;
            // Interpolation lands on or just below the answer: try the next one at once.
            if (hi - lo > 1 && !bisect) {
                const long long next = length(lo + 1);
                if (next > slotBudget) {
                    hi = lo + 1;
                    lengthHi = next;
                } else {
                    lo += 1;
                    lengthLo = next;
                }
            }
        } else {
            hi = probe;
            lengthHi = l;
        }
        bisect = !bisect && 2 * (hi - lo) > width;
    }
    fit.microbatches = lo;
    return fit;
}

}  // namespace pipelens

namespace pipelens {

int microbatchesForBudget(const ScheduleParams& params, int slotBudget) {
    return fitBudget(params, slotBudget).microbatches;
}

}  // namespace pipelens

#include "experiment/step_size/step_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "errors.hpp"

namespace pipelens {

bool runDiverged(const RunResult& r) {
    const double f = r.finalObjective();
    return r.divergence.diverged || !std::isfinite(f) || f > r.initialObjective;
}

std::vector<double> ruleCurve(const RunResult& r, const StepRuleSpec& rule) {
    const double offset = rule.value == StepValue::Gap ? r.optimum : 0.0;
    const bool perSlot = !r.objectivePerSlot.empty();
    if (rule.curve == StepCurve::Updates && perSlot && r.objectivePerUpdate.empty() &&
        r.updates > 0) {
        throw ConfigError(
            "sampling.objective_per_update = false is not allowed with step_size.rule.curve = "
            "updates (rule " +
            stepRuleJson(rule).dump() +
            "): the rule reads f after every block update; set it to true or use curve slots");
    }
    std::vector<double> c;
    if (perSlot && rule.curve != StepCurve::Updates) {
        c.reserve(r.objectivePerSlot.size() + 1);
        for (double f : r.objectivePerSlot) c.push_back(f - offset);
    } else {
        c.reserve(r.objectivePerUpdate.size() + 2);
        c.push_back(r.initialObjective - offset);
        for (double f : r.objectivePerUpdate) c.push_back(f - offset);
    }
    if (r.divergence.diverged) c.push_back(std::numeric_limits<double>::infinity());
    return c;
}

std::vector<double> gapCurve(const RunResult& r) {
    return ruleCurve(r, StepRuleSpec{});  // curve auto, value gap
}

TunedSteps tuneSteps(const std::vector<double>& steps, int seeds, const StepRuleSpec& rule,
                     const SeededRun& run, const std::atomic<bool>* cancel) {
    TunedSteps out;
    std::vector<CurveStats> curves;
    std::vector<GridCandidate> candidates;
    // Seed 0's run of the best step so far by final value (best_final's choice), so that the
    // usual case needs no second run; the stable rule may pick another step and rerun it.
    std::optional<RunResult> kept;
    // The rule's curve is the shown f - f* curve unless its curve or value says otherwise.
    const bool sameCurve = rule.curve == StepCurve::Auto && rule.value == StepValue::Gap;
    int keptIndex = -1;
    double keptGap = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < steps.size(); ++i) {
        std::vector<std::vector<double>> seedCurves;
        std::vector<std::vector<double>> seedRuleCurves;  // when the rule reads another curve
        std::vector<double> gaps;
        std::vector<double> objectives;
        bool diverged = false;
        std::optional<RunResult> first;
        for (int s = 0; s < seeds; ++s) {
            if (cancel && cancel->load()) {
                out.cancelled = true;
                break;
            }
            RunResult r = run(i, s);
            if (r.cancelled) {
                out.cancelled = true;
                break;
            }
            diverged = diverged || runDiverged(r);
            seedCurves.push_back(gapCurve(r));
            if (!sameCurve) seedRuleCurves.push_back(ruleCurve(r, rule));
            objectives.push_back(r.finalObjective());
            gaps.push_back(r.finalObjective() - r.optimum);
            if (s == 0) first = std::move(r);
        }
        if (out.cancelled) break;
        size_t length = 0;
        for (const auto& c : seedCurves) length = std::max(length, c.size());
        curves.push_back(curveMeanAndSd(seedCurves, length));
        GridStep g;
        g.stepSize = steps[i];
        g.finalGap = meanAndSd(gaps);
        g.finalObjective = meanAndSd(objectives);
        g.diverged = diverged;
        if (sameCurve) {
            g.tail = checkTail(curves.back().mean, rule.stable);
        } else {
            size_t ruleLength = 0;
            for (const auto& c : seedRuleCurves) ruleLength = std::max(ruleLength, c.size());
            g.tail = checkTail(curveMeanAndSd(seedRuleCurves, ruleLength).mean, rule.stable);
        }
        out.grid.push_back(g);
        candidates.push_back({g.stepSize, g.finalGap.mean, g.diverged, g.tail});
        if (!diverged && g.finalGap.mean < keptGap) {
            kept = std::move(first);
            keptIndex = static_cast<int>(i);
            keptGap = g.finalGap.mean;
        } else if (i == 0) {
            kept = std::move(first);  // the fallback when every step diverges
            keptIndex = 0;
        }
    }
    if (out.grid.empty()) {
        out.cancelled = true;
        return out;
    }
    int pick = pickStep(rule, candidates);
    if (pick < 0) {
        out.allDiverged = true;
        pick = 0;
    }
    out.chosen = pick;
    out.chosenCurve = curves[static_cast<size_t>(pick)];
    if (kept && keptIndex == pick) {
        out.run = std::move(*kept);
    } else if (!out.cancelled) {
        out.run = run(static_cast<size_t>(pick), 0);  // deterministic: the same run again
    }
    return out;
}

}  // namespace pipelens

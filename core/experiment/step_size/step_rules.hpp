#pragma once
// How a step size is chosen from a grid of runs (SPEC section 6): "best_final" keeps the lowest
// final f - f* among the runs that did not diverge; "stable" (the authors' rule for their later
// figures) looks at the tail of each seed-averaged curve and prefers the smallest step whose tail
// is steady and within a tolerance of the best. Its thresholds are parameters with two named
// presets: "lm_script" (SPEC section 6, the language-model script's) and "notebook" (SPEC section
// 7.1, the authors' notebooks of E2 to E4). Pure functions over numbers, so they can be tested on
// hand-made curves.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "util/named_enum.hpp"

namespace pipelens {

enum class StepRule { BestFinal, Stable };
inline constexpr EnumNames<StepRule, 2> kStepRules{
    {{StepRule::BestFinal, "best_final"}, {StepRule::Stable, "stable"}}};
StepRule parseStepRule(const std::string& text);  // "best_final" | "stable" (ConfigError)
std::string stepRuleName(StepRule rule);

// The thresholds of the stable rule (JSON key in brackets).
struct StableThresholds {
    double tailFraction = 0.2;        // tail_frac: the tail is the last
    int minTail = 1;                  // min_tail:  max(min_tail, ceil(tail_frac * length)) points
    double maxRelativeStd = 0.25;     // max_cv: tail std / tail mean <= this
    double maxRisingFraction = 0.55;  // max_rising_fraction
    double maxRiseOfMean = 0.10;      // max_rise: largest single rise <= this * tail mean
    double maxVariationRatio = 10.0;  // max_tv_ratio: total variation <= this * |net change|
    double maxLogSlope = 1e-3;        // max_log_slope
    double withinBest = 0.05;  // within_best: stable candidates with tail mean <= (1+this) * best
    // apply_tests: whether the five tests decide which steps are candidates. false is how the
    // authors' notebooks and language-model script ran (their select_stable_learning_rate builds
    // each row as {"stable": verdict, **metrics}, and the metrics' own "stable" key, true for
    // every finite curve of >= 3 points, overwrites the verdict): every finite curve of at least
    // three points is then a candidate, and the tests are computed and reported only.
    bool applyTests = true;

    bool operator==(const StableThresholds&) const = default;
};

// "lm_script": SPEC section 6 (0.2, 1, 0.25, 0.55, 0.10, 10, 1e-3, 0.05), the defaults above.
// "notebook": SPEC section 7.1 (0.2, 10, 0.15, 0.45, 0.05, 5, 1e-4, 0.05).
// "notebook_as_run": the notebook's thresholds with apply_tests false, as the authors' code ran.
// Another name is a ConfigError naming the field, the value and the names allowed.
StableThresholds stablePreset(const std::string& name, const std::string& field = "preset");
std::vector<std::string> stablePresetNames();

// The curve a rule reads: auto = per slot for pipelines, per block update for RPD.
enum class StepCurve { Auto, Slots, Updates };
inline constexpr EnumNames<StepCurve, 3> kStepCurves{
    {{StepCurve::Auto, "auto"}, {StepCurve::Slots, "slots"}, {StepCurve::Updates, "updates"}}};
// Its values: f - f* (gap) or f itself (objective; the authors' scripts pass f).
enum class StepValue { Gap, Objective };
inline constexpr EnumNames<StepValue, 2> kStepValues{
    {{StepValue::Gap, "gap"}, {StepValue::Objective, "objective"}}};

struct StepRuleSpec {
    StepRule kind = StepRule::BestFinal;
    std::string preset = "lm_script";  // the preset the thresholds started from (stable only)
    StableThresholds stable;           // after the preset and any overrides
    StepCurve curve = StepCurve::Auto;
    StepValue value = StepValue::Gap;

    bool operator==(const StepRuleSpec&) const = default;
};

// A string ("best_final", "stable") or an object {"kind": ..., "preset": ..., threshold keys,
// "curve", "value"}; `field` is the path named in messages ("methods[0].step_size.rule").
StepRuleSpec parseStepRuleSpec(const nlohmann::json& v, const std::string& field);
// The ranges of parseStepRuleSpec for a spec made in code (the app's edits, --step-rule): a
// ConfigError naming `field` and the threshold.
void validateStepRule(const StepRuleSpec& rule, const std::string& field);
// Canonical: the string "best_final" or "stable" when the spec is that default, else the object
// with every threshold. A best_final spec is always the string (it uses no thresholds).
nlohmann::json stepRuleJson(const StepRuleSpec& rule);
// Always the object: kind, and for stable the preset, every threshold, curve and value.
nlohmann::json stepRuleObject(const StepRuleSpec& rule);
// One short word for tables: "best_final", "stable", "stable:notebook"; a "*" is appended when
// thresholds, curve or value differ from the preset's defaults.
std::string stepRuleLabel(const StepRuleSpec& rule);

// The criteria of the stable rule on one curve, with the numbers behind them.
struct TailCheck {
    std::size_t tailLength = 0;   // max(min_tail, ceil(tail_frac * length)), within [1, length]
    double tailMean = 0.0;        // of the clamped tail; +inf for a non-finite curve
    double tailStd = 0.0;         // population standard deviation (ddof = 0)
    double risingFraction = 0.0;  // rising steps / steps in the tail (0 with fewer than 2 points)
    double largestRise = 0.0;     // largest single increase (0 when none rises)
    double totalVariation = 0.0;  // sum of |steps|
    double netChange = 0.0;       // last - first
    double logSlope = 0.0;        // least-squares slope of log(tail) against the point index

    bool finite = false;
    bool steadySpread = false;  // std / mean <= max_cv
    bool fewRises = false;      // rising fraction <= max_rising_fraction
    bool smallRises = false;    // largest rise <= max_rise * mean
    bool smoothPath = false;    // total variation <= max_tv_ratio * |net change| (flat passes)
    bool notRising = false;     // log slope <= max_log_slope

    std::size_t curveLength = 0;  // points of the whole curve

    bool stable() const {
        return finite && steadySpread && fewRises && smallRises && smoothPath && notRising;
    }
    // Whether the rule may choose this step: stable(), or with apply_tests false a finite curve
    // of at least three points.
    bool candidate(const StableThresholds& th) const {
        return th.applyTests ? stable() : finite && curveLength >= 3;
    }
};

// The tail's numbers, each criterion's verdict and `stable` as one JSON object (keys length,
// mean, std, cv, rising_fraction, largest_rise, total_variation, net_change, log_slope, finite,
// steady_spread, few_rises, small_rises, smooth_path, not_rising, stable). `number` writes each
// double: a point file keeps a non-finite value as a string so it reads back exactly,
// summary.json writes null.
nlohmann::json tailCheckJson(const TailCheck& t, nlohmann::json (*number)(double));

// Clamps the curve below at 1e-16 and checks its tail (see TailCheck::tailLength). A curve with
// any non-finite value is not stable and its tail mean is +inf. An empty curve is not stable.
TailCheck checkTail(std::span<const double> curve, const StableThresholds& t = {});

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

// stable: among stable candidates, those whose tail mean is within within_best (5 %) of the best
// stable tail mean; the smallest step among them. With none stable, the lowest tail mean (ties:
// the smaller step); -1 only when every tail mean is non-finite. The candidates' tails must have
// been checked with the same thresholds.
int pickStable(std::span<const GridCandidate> grid, const StableThresholds& t = {});

int pickStep(const StepRuleSpec& rule, std::span<const GridCandidate> grid);

}  // namespace pipelens

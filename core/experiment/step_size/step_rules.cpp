#include "experiment/step_size/step_rules.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "errors.hpp"
#include "experiment/config/field_limits.hpp"
#include "experiment/config/object_reader.hpp"

namespace pipelens {
namespace {

using nlohmann::json;

constexpr double kFloor = 1e-16;
constexpr double kHuge = std::numeric_limits<double>::max();

// The presets: SPEC section 6 (the language-model script) and section 7.1 (the notebooks).
constexpr StableThresholds kLmScript{};
constexpr StableThresholds kNotebook{0.2, 10, 0.15, 0.45, 0.05, 5.0, 1e-4, 0.05};
constexpr StableThresholds kNotebookAsRun{0.2, 10, 0.15, 0.45, 0.05, 5.0, 1e-4, 0.05, false};
const std::array<std::pair<const char*, StableThresholds>, 3> kPresets{
    {{"lm_script", kLmScript}, {"notebook", kNotebook}, {"notebook_as_run", kNotebookAsRun}}};

// Each threshold's key, its member, what is allowed and whether a value is.
struct ThresholdKey {
    const char* key = nullptr;
    double StableThresholds::*member = nullptr;
    RealLimit limit{};
};
const std::array<ThresholdKey, 7> kRealKeys{{
    {"tail_frac", &StableThresholds::tailFraction, {0.0, 1.0, true, "a number in (0, 1]"}},
    {"max_cv", &StableThresholds::maxRelativeStd, {0.0, kHuge, false, "a finite number >= 0"}},
    {"max_rising_fraction",
     &StableThresholds::maxRisingFraction,
     {0.0, 1.0, false, "a number in [0, 1]"}},
    {"max_rise", &StableThresholds::maxRiseOfMean, {0.0, kHuge, false, "a finite number >= 0"}},
    {"max_tv_ratio",
     &StableThresholds::maxVariationRatio,
     {0.0, kHuge, false, "a finite number >= 0"}},
    {"max_log_slope", &StableThresholds::maxLogSlope, {-kHuge, kHuge, false, "a finite number"}},
    {"within_best", &StableThresholds::withinBest, {0.0, kHuge, false, "a finite number >= 0"}},
}};
constexpr IntLimit kMinTail{1, 1'000'000'000, "an integer in [1, 1000000000]"};

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
    return std::string(enumName(kStepRules, rule));
}

StableThresholds stablePreset(const std::string& name, const std::string& field) {
    for (const auto& [key, thresholds] : kPresets) {
        if (name == key) return thresholds;
    }
    std::string allowed;
    for (const std::string& n : stablePresetNames()) allowed += (allowed.empty() ? "" : ", ") + n;
    throw ConfigError(field + " = " + showConfigValue(json(name)) + " is not allowed: one of " +
                      allowed);
}

std::vector<std::string> stablePresetNames() {
    std::vector<std::string> out;
    out.reserve(kPresets.size());
    for (const auto& preset : kPresets) out.emplace_back(preset.first);
    return out;
}

StepRuleSpec parseStepRuleSpec(const json& v, const std::string& field) {
    StepRuleSpec spec;
    if (v.is_string()) {
        const std::string text = v.get<std::string>();
        const std::optional<StepRule> kind = parseEnum(kStepRules, text);
        if (!kind) {
            throw ConfigError(field + " = " + showConfigValue(v) +
                              " is not allowed: one of best_final, stable, or an object "
                              "{\"kind\": ..., \"preset\": ..., thresholds}");
        }
        spec.kind = *kind;
        return spec;
    }
    if (!v.is_object()) {
        throw ConfigError(field + " = " + showConfigValue(v) +
                          " is not allowed: one of best_final, stable, or an object "
                          "{\"kind\": ..., \"preset\": ..., thresholds}");
    }
    ObjectReader r(v, field);
    if (!r.has("kind")) {
        throw ConfigError(r.field("kind") + " is missing: one of " + enumNameList(kStepRules));
    }
    spec.kind = r.choice("kind", StepRule::BestFinal, kStepRules);
    if (spec.kind == StepRule::BestFinal) {
        // best_final reads no curve and no thresholds: any other key is refused.
        for (const auto& item : v.items()) {
            if (item.key() != "kind") {
                throw ConfigError(r.field(item.key()) +
                                  " is not allowed with kind best_final (it takes no "
                                  "thresholds, curve or value; only kind stable does)");
            }
        }
        return spec;
    }
    spec.preset = r.text("preset", "lm_script", stablePresetNames());
    spec.stable = stablePreset(spec.preset, r.field("preset"));
    for (const ThresholdKey& k : kRealKeys) {
        spec.stable.*k.member = r.number(k.key, spec.stable.*k.member, k.limit);
    }
    spec.stable.minTail = static_cast<int>(r.integer("min_tail", spec.stable.minTail, kMinTail));
    spec.stable.applyTests = r.boolean("apply_tests", spec.stable.applyTests);
    spec.curve = r.choice("curve", StepCurve::Auto, kStepCurves);
    spec.value = r.choice("value", StepValue::Gap, kStepValues);
    r.rejectUnknown();
    return spec;
}

void validateStepRule(const StepRuleSpec& rule, const std::string& field) {
    if (rule.kind != StepRule::Stable) return;
    // The reader's checks, on the spec as it would be written (the preset name included).
    StepRuleSpec read = parseStepRuleSpec(stepRuleObject(rule), field);
    (void)read;
}

json stepRuleObject(const StepRuleSpec& rule) {
    json j;
    j["kind"] = stepRuleName(rule.kind);
    if (rule.kind == StepRule::BestFinal) return j;
    j["preset"] = rule.preset;
    for (const ThresholdKey& k : kRealKeys) j[k.key] = rule.stable.*k.member;
    j["min_tail"] = rule.stable.minTail;
    j["apply_tests"] = rule.stable.applyTests;
    j["curve"] = std::string(enumName(kStepCurves, rule.curve));
    j["value"] = std::string(enumName(kStepValues, rule.value));
    return j;
}

json stepRuleJson(const StepRuleSpec& rule) {
    if (rule.kind == StepRule::BestFinal) return stepRuleName(rule.kind);
    StepRuleSpec plain;
    plain.kind = rule.kind;
    if (rule == plain) return stepRuleName(rule.kind);
    return stepRuleObject(rule);
}

std::string stepRuleLabel(const StepRuleSpec& rule) {
    std::string out = stepRuleName(rule.kind);
    if (rule.kind == StepRule::BestFinal) return out;
    if (rule.preset != "lm_script") out += ":" + rule.preset;
    // Overrides are marked; the point file and summary.json hold the whole rule.
    const bool known = std::any_of(kPresets.begin(), kPresets.end(), [&](const auto& p) {
        return rule.preset == p.first && rule.stable == p.second;
    });
    if (!known || rule.curve != StepCurve::Auto || rule.value != StepValue::Gap) out += "*";
    return out;
}

TailCheck checkTail(std::span<const double> curve, const StableThresholds& th) {
    TailCheck t;
    t.curveLength = curve.size();
    if (curve.empty()) {
        t.tailMean = std::numeric_limits<double>::infinity();
        return t;
    }
    t.finite = std::all_of(curve.begin(), curve.end(), [](double v) { return std::isfinite(v); });
    t.tailLength =
        static_cast<size_t>(std::ceil(th.tailFraction * static_cast<double>(curve.size())));
    t.tailLength = std::max(t.tailLength, static_cast<size_t>(std::max(th.minTail, 1)));
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

    t.steadySpread = t.tailStd <= th.maxRelativeStd * t.tailMean;
    t.fewRises = t.risingFraction <= th.maxRisingFraction;
    t.smallRises = t.largestRise <= th.maxRiseOfMean * t.tailMean;
    // Written as a product so that a flat tail (0 / 0) passes and a closed loop (x / 0) fails.
    t.smoothPath = t.totalVariation <= th.maxVariationRatio * std::abs(t.netChange);
    t.notRising = t.logSlope <= th.maxLogSlope;
    return t;
}

nlohmann::json tailCheckJson(const TailCheck& t, nlohmann::json (*number)(double)) {
    return {{"length", t.tailLength},
            {"mean", number(t.tailMean)},
            {"std", number(t.tailStd)},
            {"cv", t.tailMean > 0.0 ? number(t.tailStd / t.tailMean) : nlohmann::json(nullptr)},
            {"rising_fraction", number(t.risingFraction)},
            {"largest_rise", number(t.largestRise)},
            {"total_variation", number(t.totalVariation)},
            {"net_change", number(t.netChange)},
            {"log_slope", number(t.logSlope)},
            {"finite", t.finite},
            {"steady_spread", t.steadySpread},
            {"few_rises", t.fewRises},
            {"small_rises", t.smallRises},
            {"smooth_path", t.smoothPath},
            {"not_rising", t.notRising},
            {"stable", t.stable()}};
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

int pickStable(std::span<const GridCandidate> grid, const StableThresholds& th) {
    double bestStableMean = std::numeric_limits<double>::infinity();
    for (const GridCandidate& c : grid) {
        if (c.tail.candidate(th)) bestStableMean = std::min(bestStableMean, c.tail.tailMean);
    }
    int pick = -1;
    if (std::isfinite(bestStableMean)) {
        for (size_t i = 0; i < grid.size(); ++i) {
            const GridCandidate& c = grid[i];
            if (!c.tail.candidate(th) || c.tail.tailMean > (1.0 + th.withinBest) * bestStableMean)
                continue;
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

int pickStep(const StepRuleSpec& rule, std::span<const GridCandidate> grid) {
    return rule.kind == StepRule::Stable ? pickStable(grid, rule.stable) : pickBestFinal(grid);
}

}  // namespace pipelens

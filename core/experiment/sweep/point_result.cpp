#include "experiment/sweep/point_result.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/config/object_reader.hpp"

namespace pipelens {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity: those are written as the strings "nan", "inf", "-inf".
json number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

const json& field(const json& j, const char* key, const std::string& where) {
    if (!j.is_object() || !j.contains(key)) {
        throw ConfigError("point result: " + where + "." + key + " is missing");
    }
    return j.at(key);
}

double numberFrom(const json& v, const std::string& where) {
    if (v.is_number()) return v.get<double>();
    if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    throw ConfigError("point result: " + where + " = " + showConfigValue(v) +
                      " is not allowed: a number, \"nan\", \"inf\" or \"-inf\"");
}

double readNumber(const json& j, const char* key, const std::string& where) {
    return numberFrom(field(j, key, where), where + "." + key);
}

template <typename T>
T read(const json& j, const char* key, const std::string& where) {
    const json& v = field(j, key, where);
    if constexpr (std::is_same_v<T, bool>) {
        if (v.is_boolean()) return v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (v.is_string()) return v.get<std::string>();
    } else {
        // Integers range-checked before narrowing: -1 must not become a huge index.
        static_assert(std::is_integral_v<T>);
        long long out = 0;
        constexpr auto top = static_cast<unsigned long long>(std::numeric_limits<T>::max());
        constexpr auto llTop =
            static_cast<unsigned long long>(std::numeric_limits<long long>::max());
        constexpr long long hi = static_cast<long long>(top > llTop ? llTop : top);
        constexpr long long lo =
            std::is_signed_v<T> ? static_cast<long long>(std::numeric_limits<T>::min()) : 0;
        if (wholeNumberIn(v, lo, hi, out)) return static_cast<T>(out);
    }
    throw ConfigError("point result: " + where + "." + key + " = " + showConfigValue(v) +
                      " has the wrong type or is out of range");
}

json curveJson(const std::vector<double>& values) {
    json a = json::array();
    for (double v : values) a.push_back(number(v));
    return a;
}

std::vector<double> readCurve(const json& j, const char* key, const std::string& where) {
    const json& a = field(j, key, where);
    if (!a.is_array()) throw ConfigError("point result: " + where + "." + key + " is not a list");
    std::vector<double> out;
    out.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        out.push_back(numberFrom(a[i], where + "." + key + "[" + std::to_string(i) + "]"));
    }
    return out;
}

json meanSdJson(const MeanSd& m) {
    return {{"mean", number(m.mean)}, {"sd", number(m.sd)}};
}

MeanSd readMeanSd(const json& j, const char* key, const std::string& where) {
    const json& o = field(j, key, where);
    const std::string w = where + "." + key;
    return {readNumber(o, "mean", w), readNumber(o, "sd", w)};
}

TailCheck readTail(const json& j, const std::string& w) {
    TailCheck t;
    t.tailLength = read<std::size_t>(j, "length", w);
    t.tailMean = readNumber(j, "mean", w);
    t.tailStd = readNumber(j, "std", w);
    t.risingFraction = readNumber(j, "rising_fraction", w);
    t.largestRise = readNumber(j, "largest_rise", w);
    t.totalVariation = readNumber(j, "total_variation", w);
    t.netChange = readNumber(j, "net_change", w);
    t.logSlope = readNumber(j, "log_slope", w);
    t.finite = read<bool>(j, "finite", w);
    t.steadySpread = read<bool>(j, "steady_spread", w);
    t.fewRises = read<bool>(j, "few_rises", w);
    t.smallRises = read<bool>(j, "small_rises", w);
    t.smoothPath = read<bool>(j, "smooth_path", w);
    t.notRising = read<bool>(j, "not_rising", w);
    return t;
}

}  // namespace

json pointResultToJson(const PointResult& p) {
    json ms = json::array();
    for (const MethodPoint& m : p.methods) {
        json grid = json::array();
        for (const GridStep& g : m.grid) {
            grid.push_back({{"step_size", number(g.stepSize)},
                            {"final_gap", meanSdJson(g.finalGap)},
                            {"final_objective", meanSdJson(g.finalObjective)},
                            {"diverged", g.diverged},
                            {"tail", tailCheckJson(g.tail, number)}});
        }
        json one = {{"label", m.label},
                    {"method", m.method},
                    {"step_rule", stepRuleJson(m.rule)},
                    {"tuned", m.tuned},
                    {"chosen", m.chosen},
                    {"step_size", number(m.stepSize)},
                    {"all_diverged", m.allDiverged},
                    {"final_gap", meanSdJson(m.finalGap)},
                    {"final_objective", meanSdJson(m.finalObjective)},
                    {"updates", m.updates},
                    {"slots", m.totalSlots},
                    {"curve_axis", m.curveAxis},
                    {"curve_mean", curveJson(m.curveMean)},
                    {"curve_sd", curveJson(m.curveSd)},
                    {"grid", grid}};
        if (m.schedule) {
            one["schedule_stats"] = {{"microbatches_per_step", m.schedule->microbatchesPerStep},
                                     {"bubble_fraction", number(m.schedule->bubbleFraction)},
                                     {"peak_stage_memory_units", m.schedule->peakStageMemoryUnits}};
        }
        ms.push_back(std::move(one));
    }
    return {{"index", p.index},
            {"value", number(p.value)},
            {"seeds", p.seeds},
            {"f_star", number(p.optimum)},
            {"methods", ms}};
}

PointResult pointResultFromText(std::string_view text, const std::string& source) {
    // The config reader's discipline: a damaged file cannot nest deep enough to overflow the
    // stack, hide a duplicate key or leak a library message for 1e999.
    return pointResultFromJson(parseConfigText(text, source));
}

PointResult pointResultFromJson(const json& j) {
    PointResult p;
    p.index = read<std::size_t>(j, "index", "point");
    p.value = readNumber(j, "value", "point");
    p.seeds = read<int>(j, "seeds", "point");
    p.optimum = readNumber(j, "f_star", "point");
    const json& ms = field(j, "methods", "point");
    if (!ms.is_array()) throw ConfigError("point result: point.methods is not a list");
    for (size_t i = 0; i < ms.size(); ++i) {
        const json& o = ms[i];
        const std::string w = "methods[" + std::to_string(i) + "]";
        MethodPoint m;
        m.label = read<std::string>(o, "label", w);
        m.method = read<std::string>(o, "method", w);
        m.rule = parseStepRuleSpec(field(o, "step_rule", w), "point result: " + w + ".step_rule");
        m.tuned = read<bool>(o, "tuned", w);
        m.chosen = read<int>(o, "chosen", w);
        m.stepSize = readNumber(o, "step_size", w);
        m.allDiverged = read<bool>(o, "all_diverged", w);
        m.finalGap = readMeanSd(o, "final_gap", w);
        m.finalObjective = readMeanSd(o, "final_objective", w);
        m.updates = read<long long>(o, "updates", w);
        m.totalSlots = read<int>(o, "slots", w);
        m.curveAxis = read<std::string>(o, "curve_axis", w);
        m.curveMean = readCurve(o, "curve_mean", w);
        m.curveSd = readCurve(o, "curve_sd", w);
        const json& grid = field(o, "grid", w);
        if (!grid.is_array()) throw ConfigError("point result: " + w + ".grid is not a list");
        for (size_t k = 0; k < grid.size(); ++k) {
            const std::string gw = w + ".grid[" + std::to_string(k) + "]";
            GridStep g;
            g.stepSize = readNumber(grid[k], "step_size", gw);
            g.finalGap = readMeanSd(grid[k], "final_gap", gw);
            g.finalObjective = readMeanSd(grid[k], "final_objective", gw);
            g.diverged = read<bool>(grid[k], "diverged", gw);
            g.tail = readTail(field(grid[k], "tail", gw), gw + ".tail");
            m.grid.push_back(g);
        }
        if (o.is_object() && o.contains("schedule_stats")) {
            const json& st = o["schedule_stats"];
            const std::string sw = w + ".schedule_stats";
            ScheduleStats stats;
            stats.microbatchesPerStep = read<int>(st, "microbatches_per_step", sw);
            stats.bubbleFraction = readNumber(st, "bubble_fraction", sw);
            stats.peakStageMemoryUnits = read<int>(st, "peak_stage_memory_units", sw);
            m.schedule = stats;
        }
        if (m.grid.empty() || m.chosen < 0 || m.chosen >= static_cast<int>(m.grid.size())) {
            throw ConfigError("point result: " + w + ".chosen = " + std::to_string(m.chosen) +
                              " is not an index of its grid");
        }
        p.methods.push_back(std::move(m));
    }
    return p;
}

}  // namespace pipelens

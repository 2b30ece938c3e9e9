#include "experiment/sweep/sweep_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "errors.hpp"
#include "experiment/config/object_reader.hpp"
#include "method.hpp"
#include "util/format_number.hpp"
#include "util/input_file.hpp"

namespace pipelens {
namespace {

using nlohmann::json;

// Values in messages are short escaped excerpts, never a whole (possibly huge or deep) value.
std::string show(const json& v) {
    return showConfigValue(v);
}

// A key as typed when it is short printable ASCII, else escaped and cut short.
std::string showKey(const std::string& key) {
    const bool plain = key.size() <= 60 && std::all_of(key.begin(), key.end(), [](char c) {
                           return c >= 0x20 && c < 0x7f;
                       });
    return plain ? key : show(json(key));
}

struct AxisInfo {
    SweepAxis axis;
    const char* name;
    bool integer;  // values must be whole numbers
    double min;    // smallest allowed value
};

constexpr std::array<AxisInfo, 12> kAxes{{
    {SweepAxis::Stages, "stages", true, 1},
    {SweepAxis::Delta, "delta", true, 0},
    {SweepAxis::LocalSteps, "local_steps", true, 1},
    {SweepAxis::Replicas, "replicas", true, 1},
    {SweepAxis::Noam, "noam", true, 1},
    {SweepAxis::GradientNoise, "gradient_noise", false, 0},
    {SweepAxis::StepSize, "step_size", false, 0},
    {SweepAxis::Rows, "rows", true, 1},
    {SweepAxis::Dim, "dim", true, 1},
    // Its values are the points' positions; the keys are in SweepSpec::schedules.
    {SweepAxis::Schedule, "schedule", true, 0},
    // Positions too: the optimizers and corrector lists are in optimizers and correctors.
    {SweepAxis::Optimizer, "optimizer", true, 0},
    {SweepAxis::Corrector, "corrector", true, 0},
}};

const AxisInfo& axisInfo(SweepAxis axis) {
    for (const AxisInfo& a : kAxes) {
        if (a.axis == axis) return a;
    }
    return kAxes[0];
}

// Sets the parameter of every method of one kind; a sweep over a parameter no method has is
// a mistake, not a no-op.
template <typename Set>
void setOnMethods(ExperimentConfig& c, Method method, const char* axis, Set set) {
    bool any = false;
    for (MethodSpec& m : c.methods) {
        if (m.method == method) {
            set(m);
            any = true;
        }
    }
    if (!any) {
        throw ConfigError(std::string("axis.name = \"") + axis + "\" is not allowed here: no " +
                          methodName(method) + " method in the experiment");
    }
}

void applyAxis(ExperimentConfig& c, SweepAxis axis, double v) {
    // Only integer axes are cast (their values are checked <= 1e9); a step size of 1e11 cast to
    // int was undefined behaviour (found by fuzz_sweep).
    const int n = axisInfo(axis).integer ? static_cast<int>(v) : 0;
    switch (axis) {
        case SweepAxis::Stages:
            c.stages = n;
            break;
        case SweepAxis::Delta:
            setOnMethods(c, Method::RandomizedPipeDream, "delta",
                         [&](MethodSpec& m) { m.delta = n; });
            break;
        case SweepAxis::LocalSteps:
            setOnMethods(c, Method::LocalSgd, "local_steps",
                         [&](MethodSpec& m) { m.localSteps = n; });
            break;
        case SweepAxis::Replicas:
            setOnMethods(c, Method::LocalSgd, "replicas", [&](MethodSpec& m) { m.replicas = n; });
            break;
        case SweepAxis::Noam:
            setOnMethods(c, Method::PipeDream, "noam", [&](MethodSpec& m) { m.noam = n; });
            break;
        case SweepAxis::GradientNoise:
            c.objective.gradientNoise = v;
            break;
        case SweepAxis::StepSize:
            for (MethodSpec& m : c.methods) {
                m.step.grid = false;
                m.step.value = v;
            }
            break;
        case SweepAxis::Rows:
            c.data.rows = n;
            break;
        case SweepAxis::Dim:
            c.data.dim = n;
            break;
        case SweepAxis::Schedule:
        case SweepAxis::Optimizer:
        case SweepAxis::Corrector:
            break;  // pointConfig sets them (the value is not a number)
    }
    if ((axis == SweepAxis::Rows || axis == SweepAxis::Dim) &&
        c.data.source != DataSource::Synthetic) {
        throw ConfigError("axis.name = \"" + sweepAxisName(axis) +
                          "\" is not allowed with data.source = \"" +
                          std::string(enumName(kDataSources, c.data.source)) +
                          "\": only synthetic data can change its size");
    }
}

std::string valueError(SweepAxis axis, size_t i, const json& v) {
    const AxisInfo& a = axisInfo(axis);
    std::ostringstream s;
    s << "axis.values[" << i << "] = " << show(v) << " is not allowed for axis " << a.name << ": "
      << (a.integer ? "an integer" : "a finite number") << " >= " << a.min;
    if (axis == SweepAxis::StepSize) s << " (and > 0)";
    return s.str();
}

bool validAxisValue(SweepAxis axis, double x) {
    const AxisInfo& info = axisInfo(axis);
    return std::isfinite(x) && x >= info.min && !(info.integer && std::floor(x) != x) &&
           !(info.integer && x > 1e9) && !(axis == SweepAxis::StepSize && !(x > 0));
}

// The method a schedule-axis value names; a ConfigError naming axis.values[i], the value and the
// allowed keys otherwise.
Method scheduleMethod(const std::string& key, std::size_t i) {
    const std::string field = "axis.values[" + std::to_string(i) + "]";
    const std::optional<Method> m = findMethod(key);
    if (m == Method::Imported) {
        throw ConfigError(field +
                          " = \"imported\" is not allowed for axis schedule: an imported "
                          "schedule needs its schedule_file, which a key alone cannot "
                          "give; add an \"imported\" method to an experiment instead");
    }
    if (!m) {
        throw ConfigError(field + " = " + show(json(key)) +
                          " is not allowed for axis schedule: one of " + sweepScheduleKeyList());
    }
    return *m;
}

std::string categoricalValueHelp(SweepAxis axis) {
    if (axis == SweepAxis::Schedule) return "a method key, one of " + sweepScheduleKeyList();
    if (axis == SweepAxis::Optimizer) {
        return "an optimizer object {\"kind\": ..., ...} as methods[i].optimizer, or a kind: " +
               enumNameList(kOptimizerKinds);
    }
    return "a corrector list [{\"kind\": ...}, ...] as methods[i].correctors ([] for none), or "
           "one kind alone: " +
           enumNameList(kCorrectorKinds) + ", none";
}

// axis.values[i] of the optimizer axis: {"kind": ...} as a method's optimizer, or a bare kind
// ("momentum" = its defaults).
OptimizerSpec optimizerValue(const json& v, std::size_t i) {
    const std::string field = "axis.values[" + std::to_string(i) + "]";
    if (v.is_object() || v.is_string()) return readOptimizerOrKind(v, field);
    throw ConfigError(field + " = " + show(v) + " is not allowed for axis optimizer: " +
                      categoricalValueHelp(SweepAxis::Optimizer));
}

// axis.values[i] of the corrector axis: a list as a method's correctors, or a bare kind with
// its defaults ("dc" = [{"kind": "dc"}], "none" = []).
CorrectorSpec correctorValue(const json& v, std::size_t i) {
    const std::string field = "axis.values[" + std::to_string(i) + "]";
    if (v.is_array() || v.is_string()) return readCorrectorsOrKind(v, field);
    throw ConfigError(field + " = " + show(v) + " is not allowed for axis corrector: " +
                      categoricalValueHelp(SweepAxis::Corrector));
}

// The parameters of one kind that differ from their defaults, as "(a=1, b=2)", or "".
std::string settings(const std::vector<std::pair<std::string, std::string>>& differing) {
    std::string s;
    for (const auto& [key, value] : differing) s += (s.empty() ? "" : ", ") + key + "=" + value;
    return s.empty() ? s : " (" + s + ")";
}

// The corrector axis's rule for one point (setCorrectorsWhereAllowed, as `run --correctors`):
// every method that can take the list gets it, the others none; a list no method takes is a
// mistake, not a run without it.
void setCorrectors(ExperimentConfig& c, const CorrectorSpec& value, std::size_t index) {
    if (setCorrectorsWhereAllowed(c, value) == 0 && value.any()) {
        throw ConfigError("axis.values[" + std::to_string(index) +
                          "] = " + correctorsJson(value).dump() +
                          " is not allowed for axis corrector here: no method of the experiment "
                          "takes it (correctors apply to pd, localsgd, sgd, imported with update "
                          "\"async\", and rpd for delay_adaptive and dc; lookahead needs "
                          "optimizer sgd)");
    }
}

}  // namespace

bool categoricalSweepAxis(SweepAxis axis) {
    return axis == SweepAxis::Schedule || axis == SweepAxis::Optimizer ||
           axis == SweepAxis::Corrector;
}

std::string optimizerShortName(const OptimizerSpec& o) {
    OptimizerSpec d;
    d.kind = o.kind;
    d.weightDecay = defaultWeightDecay(o.kind);
    std::vector<std::pair<std::string, std::string>> differing;
    const bool momentum = o.kind == OptimizerKind::Momentum || o.kind == OptimizerKind::Nesterov;
    const bool adam = o.kind == OptimizerKind::Adam || o.kind == OptimizerKind::AdamW;
    if (momentum && o.beta != d.beta) differing.emplace_back("beta", formatNumber(o.beta));
    if (adam && o.beta1 != d.beta1) differing.emplace_back("beta1", formatNumber(o.beta1));
    if (adam && o.beta2 != d.beta2) differing.emplace_back("beta2", formatNumber(o.beta2));
    if (adam && o.eps != d.eps) differing.emplace_back("eps", formatNumber(o.eps));
    if (o.weightDecay != d.weightDecay)
        differing.emplace_back("weight_decay", formatNumber(o.weightDecay));
    return std::string(enumName(kOptimizerKinds, o.kind)) + settings(differing);
}

std::string correctorsShortName(const CorrectorSpec& c) {
    const CorrectorSpec d;
    std::vector<std::string> parts;
    if (c.delayAdaptive) {
        std::vector<std::pair<std::string, std::string>> differing;
        if (c.tauRef != d.tauRef) differing.emplace_back("tau_ref", formatNumber(c.tauRef));
        if (c.perBlock) differing.emplace_back("per_block", "true");
        if (c.unit != d.unit)
            differing.emplace_back("unit", std::string(enumName(kDelayUnits, c.unit)));
        parts.push_back("delay_adaptive" + settings(differing));
    }
    if (c.prediction) {
        parts.push_back(c.steps == PredictionSteps::PipeOptim ? "prediction (pipeoptim)"
                                                              : "prediction");
    }
    // One parameter, shown only where it is not the default.
    const auto param = [](bool differs, const char* key, double v) {
        return differs ? settings({{key, formatNumber(v)}}) : std::string();
    };
    if (c.dc) parts.push_back("dc" + param(c.lambda != d.lambda, "lambda", c.lambda));
    if (c.lookahead) parts.push_back("lookahead" + param(c.beta != d.beta, "beta", c.beta));
    if (c.accumulate > 1) parts.push_back("accumulate (k=" + std::to_string(c.accumulate) + ")");
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : " + ") + p;
    return s.empty() ? "none" : s;
}

std::string sweepScheduleKeyList() {
    std::string s;
    for (const MethodInfo& m : kMethods) {
        if (m.method != Method::Imported) s += (s.empty() ? "" : ", ") + std::string(m.key);
    }
    return s;
}

SweepAxis parseSweepAxis(const std::string& text) {
    for (const AxisInfo& a : kAxes) {
        if (text == a.name) return a.axis;
    }
    throw ConfigError("axis.name = " + show(json(text)) + " is not allowed: one of " +
                      sweepAxisList());
}

std::string sweepAxisName(SweepAxis axis) {
    return axisInfo(axis).name;
}

std::string sweepAxisList() {
    std::string s;
    for (const AxisInfo& a : kAxes) s += (s.empty() ? "" : ", ") + std::string(a.name);
    return s;
}

SweepSpec SweepSpec::fromJson(const json& j, const std::string& baseDir) {
    if (!j.is_object()) throw ConfigError("sweep = " + show(j) + " is not allowed: a JSON object");
    for (const auto& item : j.items()) {
        // A plain name, not a structured binding: clang 14 (the fuzz build) cannot capture those.
        const std::string& key = item.key();
        static const std::array<const char*, 5> known{"name", "experiment", "axis", "seeds",
                                                      "step_rule"};
        if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) ==
            known.end()) {
            throw ConfigError("unknown key " + showKey(key) +
                              " (allowed here: axis, experiment, name, seeds, step_rule)");
        }
    }
    SweepSpec s;
    if (j.contains("name")) {
        if (!j["name"].is_string())
            throw ConfigError("name = " + show(j["name"]) + " is not allowed: a string");
        s.name = j["name"].get<std::string>();
    }
    if (!j.contains("experiment")) {
        throw ConfigError("experiment is missing: an experiment config (object) or its file path");
    }
    const json& e = j["experiment"];
    if (e.is_string()) {
        std::filesystem::path p = e.get<std::string>();
        if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
        s.experiment = ExperimentConfig::fromFile(p.string());
    } else {
        s.experiment = ExperimentConfig::fromJson(e, baseDir);
    }
    if (!j.contains("axis") || !j["axis"].is_object()) {
        throw ConfigError("axis is missing: {\"name\": one of " + sweepAxisList() +
                          ", \"values\": [...]}");
    }
    const json& a = j["axis"];
    for (const auto& [key, value] : a.items()) {
        if (key != "name" && key != "values") {
            throw ConfigError("unknown key axis." + showKey(key) + " (allowed here: name, values)");
        }
    }
    if (!a.contains("name") || !a["name"].is_string()) {
        throw ConfigError("axis.name is missing: one of " + sweepAxisList());
    }
    s.axis = parseSweepAxis(a["name"].get<std::string>());
    if (!a.contains("values") || !a["values"].is_array() || a["values"].empty()) {
        throw ConfigError(s.axis == SweepAxis::Schedule
                              ? "axis.values is missing: a non-empty list of method keys (" +
                                    sweepScheduleKeyList() + ")"
                          : categoricalSweepAxis(s.axis)
                              ? "axis.values is missing: a non-empty list, each " +
                                    categoricalValueHelp(s.axis)
                              : "axis.values is missing: a non-empty list of numbers");
    }
    for (size_t i = 0; s.axis == SweepAxis::Optimizer && i < a["values"].size(); ++i) {
        s.optimizers.push_back(optimizerValue(a["values"][i], i));
        s.values.push_back(static_cast<double>(i));
    }
    for (size_t i = 0; s.axis == SweepAxis::Corrector && i < a["values"].size(); ++i) {
        s.correctors.push_back(correctorValue(a["values"][i], i));
        s.values.push_back(static_cast<double>(i));
    }
    for (size_t i = 0; s.axis == SweepAxis::Schedule && i < a["values"].size(); ++i) {
        const json& v = a["values"][i];
        if (!v.is_string()) {
            throw ConfigError("axis.values[" + std::to_string(i) + "] = " + show(v) +
                              " is not allowed for axis schedule: a method key, one of " +
                              sweepScheduleKeyList());
        }
        scheduleMethod(v.get<std::string>(), i);
        s.schedules.push_back(v.get<std::string>());
        s.values.push_back(static_cast<double>(i));
    }
    for (size_t i = 0; !categoricalSweepAxis(s.axis) && i < a["values"].size(); ++i) {
        const json& v = a["values"][i];
        if (!v.is_number() || !validAxisValue(s.axis, v.get<double>())) {
            throw ConfigError(valueError(s.axis, i, v));
        }
        s.values.push_back(v.get<double>());
    }
    s.seeds = s.experiment.seeds;
    if (j.contains("seeds")) {
        const json& v = j["seeds"];
        if (!v.is_number_integer() || !limits::kSeeds.allows(v.get<long long>())) {
            throw ConfigError("seeds = " + show(v) +
                              " is not allowed: " + std::string(limits::kSeeds.allowed));
        }
        s.seeds = v.get<int>();
    }
    if (j.contains("step_rule")) s.stepRule = parseStepRuleSpec(j["step_rule"], "step_rule");
    s.validate();
    return s;
}

void SweepSpec::validate() const {
    experiment.validate();
    if (values.empty()) throw ConfigError("axis.values is missing: a non-empty list of numbers");
    for (size_t i = 0; i < values.size(); ++i) {
        if (!validAxisValue(axis, values[i]))
            throw ConfigError(valueError(axis, i, json(values[i])));
    }
    // The categorical axes' lists: one entry per point on their own axis, none on another.
    struct List {
        SweepAxis axis;
        std::size_t size;
        const char* entry;
    };
    const std::array<List, 3> lists{{{SweepAxis::Schedule, schedules.size(), "key"},
                                     {SweepAxis::Optimizer, optimizers.size(), "optimizer"},
                                     {SweepAxis::Corrector, correctors.size(), "corrector list"}}};
    for (const auto& [listAxis, size, entry] : lists) {
        if (listAxis == axis && size != values.size()) {
            throw ConfigError("axis.values: " + std::to_string(size) + " " + entry + "s for " +
                              std::to_string(values.size()) + " points; the " +
                              sweepAxisName(listAxis) + " axis has one " + entry + " per point");
        }
        if (listAxis != axis && size != 0) {
            throw ConfigError("axis.name = \"" + sweepAxisName(axis) + "\" takes " +
                              (categoricalSweepAxis(axis) ? "its own values" : "numbers") +
                              ", not " + sweepAxisName(listAxis) + " values: use axis.name = \"" +
                              sweepAxisName(listAxis) + "\"");
        }
    }
    for (size_t i = 0; categoricalSweepAxis(axis) && i < values.size(); ++i) {
        // values are the positions 0, 1, ... of the entries (what fromJson makes).
        if (values[i] != static_cast<double>(i)) {
            throw ConfigError("axis.values[" + std::to_string(i) + "] = " + json(values[i]).dump() +
                              " is not allowed for axis " + sweepAxisName(axis) +
                              ": the point's position " + std::to_string(i));
        }
        if (axis == SweepAxis::Schedule) scheduleMethod(schedules[i], i);
    }
    requireWithin("seeds", static_cast<long long>(seeds), limits::kSeeds);
    if (stepRule) validateStepRule(*stepRule, "step_rule");
    // Every point must be a valid experiment before anything runs.
    const AxisInfo& info = axisInfo(axis);
    for (size_t i = 0; i < points(); ++i) {
        try {
            pointConfig(i);
        } catch (const ConfigError& err) {
            throw ConfigError("point " + std::to_string(i) + " (" + info.name + " = " +
                              valueText(i) + "): " + err.what());
        }
    }
}

SweepSpec SweepSpec::fromText(std::string_view text, const std::string& source,
                              const std::string& baseDir) {
    // The config reader's discipline: depth limit, duplicate keys refused, numbers checked.
    return fromJson(parseConfigText(text, source), baseDir);
}

SweepSpec SweepSpec::fromFile(const std::string& path) {
    // A FIFO, a device or a folder is refused before any read; at most kMaxConfigBytes are read.
    const std::string text =
        readInputFile(path, "sweep file", &throwAs<ConfigError>, kMaxConfigBytes,
                      "a sweep file is at most " + std::to_string(kMaxConfigBytes));
    return fromText(text, "sweep file " + showPath(path), folderOf(path));
}

json SweepSpec::toJson() const {
    json j;
    j["name"] = name;
    j["experiment"] = experiment.toJson();
    // Data paths absolute, so the stored sweep.json runs from any folder.
    json& data = j["experiment"]["data"];
    for (const char* key : {"x", "y"}) {
        if (!data.contains(key) || experiment.baseDir.empty()) continue;
        const std::filesystem::path p = data[key].get<std::string>();
        if (p.is_relative()) data[key] = (std::filesystem::path(experiment.baseDir) / p).string();
    }
    if (axis == SweepAxis::Schedule) {
        j["axis"] = {{"name", sweepAxisName(axis)}, {"values", schedules}};
    } else if (axis == SweepAxis::Optimizer) {
        json list = json::array();
        for (const OptimizerSpec& o : optimizers) list.push_back(optimizerJson(o));
        j["axis"] = {{"name", sweepAxisName(axis)}, {"values", list}};
    } else if (axis == SweepAxis::Corrector) {
        json list = json::array();
        for (const CorrectorSpec& k : correctors) list.push_back(correctorsJson(k));
        j["axis"] = {{"name", sweepAxisName(axis)}, {"values", list}};
    } else {
        j["axis"] = {{"name", sweepAxisName(axis)}, {"values", values}};
    }
    j["seeds"] = seeds;
    if (stepRule) j["step_rule"] = stepRuleJson(*stepRule);
    return j;
}

std::string SweepSpec::valueText(std::size_t index) const {
    if (axis == SweepAxis::Schedule) return schedules.at(index);
    if (axis == SweepAxis::Optimizer) return optimizerShortName(optimizers.at(index));
    if (axis == SweepAxis::Corrector) return correctorsShortName(correctors.at(index));
    const double v = values.at(index);
    return axisInfo(axis).integer ? std::to_string(static_cast<long long>(v)) : json(v).dump();
}

ExperimentConfig SweepSpec::pointConfig(std::size_t index) const {
    ExperimentConfig c = experiment;
    if (axis == SweepAxis::Schedule) {
        // Every schedule on equal terms: the same stages, data, batch size and budget, the
        // first method's step-size spec, every other parameter at its default.
        if (c.methods.empty()) {
            throw ConfigError(
                "methods is empty: a schedule sweep takes the step sizes of the "
                "experiment's first method");
        }
        MethodSpec one;
        one.method = scheduleMethod(schedules.at(index), index);
        one.step = c.methods.front().step;
        c.methods = {one};
    }
    if (axis == SweepAxis::Optimizer) {
        for (MethodSpec& m : c.methods) m.optimizer = optimizers.at(index);
    }
    if (axis == SweepAxis::Corrector) setCorrectors(c, correctors.at(index), index);
    applyAxis(c, axis, values.at(index));
    c.seeds = seeds;
    if (stepRule) {
        for (MethodSpec& m : c.methods) m.step.rule = *stepRule;
    }
    c.validate();
    return c;
}

std::optional<ExperimentConfig> SweepSpec::overlayConfig() const {
    if (axis != SweepAxis::Delta || values.empty()) return std::nullopt;
    const ExperimentConfig first = pointConfig(0);
    ExperimentConfig c = first;
    c.methods.clear();
    for (const MethodSpec& m : first.methods) {
        if (m.method != Method::RandomizedPipeDream) {
            c.methods.push_back(m);
            continue;
        }
        for (const double delta : values) {
            MethodSpec one = m;
            one.delta = static_cast<long long>(delta);
            c.methods.push_back(one);
        }
    }
    c.validate();
    return c;
}

}  // namespace pipelens

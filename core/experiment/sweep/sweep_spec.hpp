#pragma once
// A sweep: one experiment, one parameter (the axis) taking a list of values, a number of seeds
// and a step-size rule. Each value is a point: the experiment with that parameter set. The JSON
// form is described in docs/sweeps.md.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "experiment/config/config.hpp"
#include "experiment/step_size/step_rules.hpp"

namespace pipelens {

enum class SweepAxis {
    Stages,         // stages: S
    Delta,          // delta: RPD's delay bound of every rpd method
    LocalSteps,     // local_steps: H of every localsgd method
    Replicas,       // replicas: R of every localsgd method
    Noam,           // noam: microbatches in flight of every pd method
    GradientNoise,  // gradient_noise: sigma of the objective's gradient noise
    StepSize,       // step_size: one fixed step size for every method (no grid)
    Rows,           // rows: n of the synthetic data
    Dim,            // dim: d of the synthetic data
    Schedule,       // schedule: the experiment's methods replaced by one method of each key
    Optimizer,      // optimizer: every method's optimizer (methods[i].optimizer)
    Corrector,      // corrector: the correctors of every method that takes them
};

SweepAxis parseSweepAxis(const std::string& text);  // ConfigError naming the allowed names
std::string sweepAxisName(SweepAxis axis);
std::string sweepAxisList();  // "stages, delta, ..." for messages and help
// The method keys the schedule axis accepts, for messages: every method but "imported" (which
// needs a schedule_file a bare key cannot give).
std::string sweepScheduleKeyList();
// The axes whose values are not numbers (schedule, optimizer, corrector): their `values` are the
// points' positions and the chart names each position (SweepPlot::xLabels).
bool categoricalSweepAxis(SweepAxis axis);
// A short name of an optimizer or a corrector list, as the chart and the summary show a point:
// "adam", "momentum (beta=0.5)", "prediction + dc", "accumulate (k=2)", "none".
std::string optimizerShortName(const OptimizerSpec& optimizer);
std::string correctorsShortName(const CorrectorSpec& correctors);

struct SweepSpec {
    std::string name = "sweep";
    ExperimentConfig experiment;  // the base every point starts from
    SweepAxis axis = SweepAxis::Stages;
    std::vector<double> values;  // one point per value, in this order
    // The schedule axis only: the method key of each point ("pd", "1f1b", ...); its `values`
    // are then the points' positions 0, 1, 2, ... so that every numeric use of them (point
    // files, ordering, resume) keeps working. Empty for the numeric axes.
    std::vector<std::string> schedules;
    // The optimizer axis only: each point's optimizer (positions in `values`, as above).
    std::vector<OptimizerSpec> optimizers;
    // The corrector axis only: each point's corrector list ({} = none).
    std::vector<CorrectorSpec> correctors;
    int seeds = 1;  // runs per grid step, averaged (overrides experiment.seeds)
    std::optional<StepRuleSpec> stepRule;  // overrides every method's rule when set

    // Parses and validates every point (a ConfigError names the point's value and the key).
    // `baseDir` resolves a relative "experiment" file path and the experiment's data paths.
    static SweepSpec fromJson(const nlohmann::json& json, const std::string& baseDir = "");
    // JSON text through parseConfigText (depth limit, duplicate keys, overflow-checked numbers),
    // then fromJson; `source` names the text in messages. What `sweep` and fuzz_sweep call.
    static SweepSpec fromText(std::string_view text, const std::string& source,
                              const std::string& baseDir = "");
    // A regular file of at most kMaxConfigBytes (InputFile), then fromText.
    static SweepSpec fromFile(const std::string& path);
    // The axis's values, the seeds and every point's experiment (what fromJson ends with): for a
    // sweep put together in the app. A ConfigError names the point and the key.
    void validate() const;
    bool operator==(const SweepSpec&) const = default;
    // The normalised form: the experiment inlined, every default written out.
    nlohmann::json toJson() const;

    std::size_t points() const { return values.size(); }
    // Point `index`'s value as a person reads it: "8", "0.05", the schedule's key, or the
    // optimizer's or corrector list's short name.
    std::string valueText(std::size_t index) const;
    // The experiment of point `index`: the base with the axis set to values[index]. On the
    // schedule axis: the base with its methods replaced by ONE method of key schedules[index]
    // that keeps the base's first method's step-size spec and every other parameter's default.
    // On the optimizer axis: every method's optimizer is optimizers[index]. On the corrector
    // axis: every method that can take correctors[index] (requireCorrectorsFit: the
    // asynchronous methods, rpd for the kinds it takes, lookahead only with optimizer sgd) gets
    // it, the others (the synchronous step schedules) none; a list no method takes is a
    // ConfigError (setCorrectorsWhereAllowed, as `run --correctors`).
    ExperimentConfig pointConfig(std::size_t index) const;
    // A sweep over δ as one run, the way the paper draws E2: the first point's methods with
    // every RPD method once per δ of the axis (each a method of its own, under the sweep's
    // step rule), so one loss chart overlays them all; their final values are the points'.
    // None for the other axes (they change the whole pipeline, not one method).
    std::optional<ExperimentConfig> overlayConfig() const;
};

}  // namespace pipelens

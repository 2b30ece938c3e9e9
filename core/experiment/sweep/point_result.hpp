#pragma once
// What a sweep keeps of one point: per method, the step size the rule chose, the final values
// (mean and sd over seeds), the seed-averaged curve of the chosen step and the whole grid. It is
// the unit of work of a sweep (runSweepPoint) and is written as one JSON file per point, so it
// reads back exactly: a point computed here, on another thread or on another machine gives the
// same file.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "experiment/step_size/seed_stats.hpp"
#include "experiment/step_size/step_rules.hpp"

namespace pipelens {

// One step size of a method's grid, over its seeds.
struct GridStep {
    double stepSize = 0.0;
    MeanSd finalGap;        // f - f* at the end
    MeanSd finalObjective;  // f at the end
    bool diverged = false;  // some seed diverged (non-finite, blew up, or ended above its start)
    TailCheck tail;  // of the seed-averaged rule curve (ruleCurve), with the rule's thresholds
};

// What a method's schedule alone decides (no run needed).
struct ScheduleStats {
    // Microbatches per optimizer step: M (fill-drain, 1f1b, zb-h1, imported), m (2bw), NOAM
    // (pd: microbatches in flight between two updates of a stage), 1 (sgd, localsgd).
    int microbatchesPerStep = 0;
    double bubbleFraction = 0.0;  // Utilization::bubbleFraction of the timeline
    // Max over stages of (weight versions + activations held at once), each copy of a stage's
    // weights and each microbatch's activations counting one unit.
    int peakStageMemoryUnits = 0;

    bool operator==(const ScheduleStats&) const = default;
};

struct MethodPoint {
    std::string label;
    std::string method;        // "pd", "rpd", ...
    StepRuleSpec rule;         // as stepRuleJson writes it (old files: a string)
    bool tuned = false;        // a grid (false: one fixed step size)
    int chosen = 0;            // index in grid of the step used
    double stepSize = 0.0;     // grid[chosen].stepSize
    bool allDiverged = false;  // no usable step: chosen is the smallest
    MeanSd finalGap;           // of the chosen step
    MeanSd finalObjective;
    long long updates = 0;          // block updates of a run at the chosen step (seed 0)
    int totalSlots = 0;             // slots of that run (0 for RPD)
    std::string curveAxis;          // "slot" (pipelines: after each slot, [0] = start) or
                                    // "update" (RPD: after each block update, [0] = start)
    std::vector<double> curveMean;  // f - f* of the chosen step, mean over seeds
    std::vector<double> curveSd;
    std::vector<GridStep> grid;  // one entry for a fixed step size
    // The schedule axis only (a point file's "schedule_stats"; absent otherwise, so the files of
    // the numeric axes are unchanged): the schedule's own costs, for the comparison columns.
    std::optional<ScheduleStats> schedule;
};

struct PointResult {
    std::size_t index = 0;  // in the sweep's values
    double value = 0.0;     // the axis value
    int seeds = 1;
    double optimum = 0.0;              // f*
    std::vector<MethodPoint> methods;  // in the experiment's method order
};

nlohmann::json pointResultToJson(const PointResult& point);
// The inverse of pointResultToJson (ConfigError naming the missing or malformed field).
PointResult pointResultFromJson(const nlohmann::json& json);
// A point file's text through parseConfigText (depth limit, duplicate keys, overflow-checked
// numbers), then pointResultFromJson; `source` names it in messages. What --resume calls.
PointResult pointResultFromText(std::string_view text, const std::string& source);
// Point files hold whole curves: a larger limit than a config's, still a limit.
constexpr std::uint64_t kMaxPointFileBytes = 1ull << 30;

}  // namespace pipelens

#pragma once
// Schedules on equal terms: one row per method of an experiment (or per point of a schedule
// sweep) with what a schedule costs and what it buys — microbatches per optimizer step, the step
// size its rule chose, the final value, the slots it took to reach a common target, its bubble,
// its peak memory per stage and its length. Written as schedule_comparison.csv and as JSON
// (docs/sweeps.md, "The schedule axis").
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiment/run/experiment.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

// ScheduleStats (what a method's schedule alone decides) is in sweep/point_result.hpp: a
// schedule sweep's point files keep it.

// Weight versions + activations held at once, max over stages, one unit each: stageMemory's
// rule (schedule/stage_memory.hpp), the same numbers the memory view beside the Gantt chart
// draws (LocalSGD's R replicas hold R copies of each stage's weights).
int peakStageMemoryUnits(const Timeline& timeline);
ScheduleStats scheduleStats(Method method, const Timeline& timeline);
// Of a planned or run pipeline method (its run's timeline, else the plan's); nullopt for RPD.
std::optional<ScheduleStats> scheduleStatsOf(const MethodRun& run);

// The first index i with curve[i] <= target (curve[i]: the value after i slots, [0] the start);
// -1 when it never gets there. NaN entries (no value yet) never count.
int firstSlotAtOrBelow(const std::vector<double>& curve, double target);
// 2 x the smallest finite value of `finals` (the default target); +inf when none is finite.
double defaultComparisonTarget(const std::vector<double>& finals);

struct ScheduleComparisonRow {
    std::string label;
    std::string method;  // the method key: "pd", "1f1b", ...
    int stages = 0;
    double stepSize = 0.0;    // the γ its rule chose (before any 1/M scale of a step)
    double finalValue = 0.0;  // f - f* (linear models) or the final loss (language model)
    int timeToTarget = -1;    // slots until the value first reached the target; -1: never
    std::optional<ScheduleStats> stats;  // none for RPD (no timeline)
    int totalSlots = 0;                  // 0 for RPD
};

struct ScheduleComparison {
    std::string valueName = "f - f*";  // or "loss" (the language model)
    double target = 0.0;
    bool targetGiven = false;                 // false: 2 x the best final value among the rows
    std::vector<ScheduleComparisonRow> rows;  // in config order
};

// One row per method of `result`, with `target` or by default 2 x the best final value.
ScheduleComparison scheduleComparison(const ExperimentResult& result,
                                      std::optional<double> target = std::nullopt);
// Header row, then one line per method: label, method, stages, microbatches_per_step,
// step_size, final_value, target, time_to_target_slots, bubble_fraction,
// peak_stage_memory_units, total_slots (empty cells where a value does not apply).
std::string scheduleComparisonCsv(const ScheduleComparison& comparison);
nlohmann::json scheduleComparisonJson(const ScheduleComparison& comparison);
// The CSV's header names, in order (the app's table uses the same columns).
const std::vector<std::string>& scheduleComparisonColumns();

}  // namespace pipelens

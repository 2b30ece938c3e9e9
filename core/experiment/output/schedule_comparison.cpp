#include "experiment/output/schedule_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "schedule/stage_memory.hpp"
#include "util/csv_writer.hpp"

namespace pipelens {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity: written as null, as results.json writes them.
json finiteOrNull(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

// The time to `target` of one method of a result: its slot curve (the language model: its
// per-slot loss, where index = slot; a linear model: the seed-averaged f - f* curve), or for RPD
// its per-update curve placed at the slots of PipeDream's updates (MethodRun::updateSlot).
int timeToTarget(const ExperimentResult& r, const MethodRun& m, double target) {
    if (m.pipeline()) {
        if (r.config.languageModel()) return firstSlotAtOrBelow(m.result.objectivePerSlot, target);
        return firstSlotAtOrBelow(m.curve.mean, target);
    }
    const std::vector<double>& curve = m.curve.mean;  // after each block update, [0] the start
    const int update = r.config.languageModel() ? -1 : firstSlotAtOrBelow(curve, target);
    if (update <= 0) return update;
    std::vector<int> slots = m.updateSlot;
    if (slots.empty()) {
        // A result straight from runExperiment has not placed its updates (the app does):
        // place this method's alone.
        ExperimentResult one;
        one.config = r.config;
        MethodRun lite;
        lite.spec = m.spec;
        lite.updates = m.updates;
        one.methods.push_back(std::move(lite));
        placeUpdates(one);
        slots = std::move(one.methods.front().updateSlot);
    }
    if (static_cast<std::size_t>(update) > slots.size()) return -1;
    return slots[static_cast<std::size_t>(update - 1)] + 1;
}

}  // namespace

int peakStageMemoryUnits(const Timeline& tl) {
    double peak = 0.0;
    for (const StageMemory& m : stageMemory(tl)) peak = std::max(peak, m.total);
    return static_cast<int>(std::lround(peak));
}

ScheduleStats scheduleStats(Method method, const Timeline& tl) {
    ScheduleStats st;
    // The flushing family (fill-drain, 1f1b, zb-h1, 2bw, imported, interleaved) keeps its step's
    // microbatches in flushGroup, resolved.
    if (tl.params.kind == ScheduleKind::PipeDream) {
        st.microbatchesPerStep = tl.params.noam > 0 ? tl.params.noam : tl.params.stages;
    } else if (tl.params.kind == ScheduleKind::LocalSgd) {
        st.microbatchesPerStep = 1;  // every (local) update takes one microbatch
    } else {
        st.microbatchesPerStep =
            tl.params.flushGroup > 0 ? tl.params.flushGroup : tl.params.microbatches;
    }
    if (method == Method::Imported && tl.params.asyncUpdate) st.microbatchesPerStep = 1;
    st.bubbleFraction = utilization(tl).bubbleFraction;
    st.peakStageMemoryUnits = peakStageMemoryUnits(tl);
    return st;
}

std::optional<ScheduleStats> scheduleStatsOf(const MethodRun& run) {
    if (!run.pipeline()) return std::nullopt;
    ScheduleStats st = run.result.timeline ? scheduleStats(run.spec.method, *run.result.timeline)
                                           : scheduleStats(run.spec.method, plannedTimeline(run));
    // The run's own utilization where it has one (the engine's number, as the views show).
    if (run.result.utilization) st.bubbleFraction = run.result.utilization->bubbleFraction;
    return st;
}

int firstSlotAtOrBelow(const std::vector<double>& curve, double target) {
    for (std::size_t i = 0; i < curve.size(); ++i) {
        if (curve[i] <= target) return static_cast<int>(i);  // NaN compares false
    }
    return -1;
}

double defaultComparisonTarget(const std::vector<double>& finals) {
    double best = std::numeric_limits<double>::infinity();
    for (double v : finals) {
        if (std::isfinite(v)) best = std::min(best, v);
    }
    return 2.0 * best;
}

ScheduleComparison scheduleComparison(const ExperimentResult& r, std::optional<double> target) {
    ScheduleComparison c;
    c.valueName = r.config.languageModel() ? "loss" : "f - f*";
    std::vector<double> finals;
    for (const MethodRun& m : r.methods) {
        ScheduleComparisonRow row;
        row.label = m.label;
        row.method = methodName(m.spec.method);
        row.stages = r.config.stages;
        if (!m.grid.empty()) {
            const GridStep& g = m.grid.at(static_cast<std::size_t>(
                std::clamp(m.chosen, 0, static_cast<int>(m.grid.size()) - 1)));
            row.stepSize = g.stepSize;
            row.finalValue = g.finalGap.mean;
        } else {
            // A planned or cancelled method: the run as it stands.
            row.stepSize = m.spec.step.value;
            row.finalValue = r.config.languageModel() ? m.result.finalObjective()
                                                      : m.result.finalObjective() - r.optimum;
        }
        row.stats = scheduleStatsOf(m);
        row.totalSlots = m.pipeline() ? m.result.totalSlots : 0;
        finals.push_back(row.finalValue);
        c.rows.push_back(std::move(row));
    }
    c.targetGiven = target.has_value();
    c.target = target ? *target : defaultComparisonTarget(finals);
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
        c.rows[i].timeToTarget = timeToTarget(r, r.methods[i], c.target);
    }
    return c;
}

const std::vector<std::string>& scheduleComparisonColumns() {
    static const std::vector<std::string> columns{"label",           "method",
                                                  "stages",          "microbatches_per_step",
                                                  "step_size",       "final_value",
                                                  "target",          "time_to_target_slots",
                                                  "bubble_fraction", "peak_stage_memory_units",
                                                  "total_slots"};
    return columns;
}

std::string scheduleComparisonCsv(const ScheduleComparison& c) {
    CsvWriter s;
    for (const std::string& name : scheduleComparisonColumns()) s.plain(name);
    s.endRow();
    for (const ScheduleComparisonRow& row : c.rows) {
        s.label(row.label).text(row.method).integer(row.stages);
        if (row.stats) {
            s.integer(row.stats->microbatchesPerStep);
        } else {
            s.empty();
        }
        s.number(row.stepSize).number(row.finalValue).number(c.target);
        if (row.timeToTarget >= 0) {
            s.integer(row.timeToTarget);
        } else {
            s.empty();
        }
        if (row.stats) {
            s.number(row.stats->bubbleFraction).integer(row.stats->peakStageMemoryUnits);
        } else {
            s.empty().empty();
        }
        if (row.totalSlots > 0) {
            s.integer(row.totalSlots);
        } else {
            s.empty();
        }
        s.endRow();
    }
    return s.take();
}

json scheduleComparisonJson(const ScheduleComparison& c) {
    json rows = json::array();
    for (const ScheduleComparisonRow& row : c.rows) {
        json j;
        j["label"] = row.label;
        j["method"] = row.method;
        j["stages"] = row.stages;
        j["microbatches_per_step"] = row.stats ? json(row.stats->microbatchesPerStep) : json();
        j["step_size"] = finiteOrNull(row.stepSize);
        j["final_value"] = finiteOrNull(row.finalValue);
        j["time_to_target_slots"] = row.timeToTarget >= 0 ? json(row.timeToTarget) : json();
        j["bubble_fraction"] = row.stats ? json(row.stats->bubbleFraction) : json();
        j["peak_stage_memory_units"] = row.stats ? json(row.stats->peakStageMemoryUnits) : json();
        j["total_slots"] = row.totalSlots > 0 ? json(row.totalSlots) : json();
        rows.push_back(std::move(j));
    }
    return {{"value", c.valueName},
            {"target", finiteOrNull(c.target)},
            {"target_given", c.targetGiven},
            {"rows", rows}};
}

}  // namespace pipelens

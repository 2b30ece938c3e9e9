#pragma once
// What a sweep view draws, computed from the sweep and its finished points without any
// painting: one series per method (the final value against the axis value, mean with an error
// bar of one sd over seeds, clamped for log axes), the axis ranges, and the experiment that
// reopens one point's run with the step size its rule chose.
#include <cstddef>
#include <string>
#include <vector>

#include "experiment/config/config.hpp"
#include "experiment/sweep/sweep_folder.hpp"
#include "experiment/sweep/sweep_spec.hpp"

namespace pipelens {

enum class SweepMetric { FinalGap, FinalObjective };    // f - f* or f at the end
SweepMetric parseSweepMetric(const std::string& text);  // "final_gap" | "final_objective"
std::string sweepMetricName(SweepMetric metric);
std::string sweepMetricTitle(SweepMetric metric);  // "final f − f*", "final f"

// Values at or below zero sit at this floor on a log axis (the stable rule's clamp, SPEC §6).
inline constexpr double kSweepLogFloor = 1e-16;

struct SweepPlotPoint {
    std::size_t point = 0;  // index in the sweep's values
    double x = 0.0;         // the axis value
    double mean = 0.0;      // over seeds
    double sd = 0.0;
    double y = 0.0;         // mean as drawn (at the floor on a log axis)
    double low = 0.0;       // error bar: mean - sd, clamped to the floor on a log axis
    double high = 0.0;      // mean + sd
    double stepSize = 0.0;  // the γ the method's rule chose (or its fixed step)
    bool tuned = false;     // chosen from a grid
    bool allDiverged = false;
    bool finite = true;  // a diverged mean is +inf: not drawn, listed in the tooltip
};

struct SweepPlotSeries {
    std::string label;   // the method's label, numbers that change with the axis shown as "*"
    std::string method;  // "pd", "rpd", ...
    std::vector<SweepPlotPoint> points;  // finished points, in axis order
};

struct SweepPlot {
    std::string xTitle;  // e.g. "stages S"
    std::string yTitle;
    bool logX = false;
    bool logY = true;
    std::size_t pointsDone = 0;
    std::size_t points = 0;
    double xMin = 0.0, xMax = 1.0;  // over all axis values (the full range, not just done ones)
    // A categorical axis (schedule): the name at x = 0, 1, 2, ...; empty for numeric axes.
    std::vector<std::string> xLabels;
    double yMin = 0.0, yMax = 1.0;  // over the drawn error bars; 0 … 1 when nothing finished
    std::vector<SweepPlotSeries> series;  // in the experiment's method order
};

// Log x when every axis value is > 0 and they span a factor of 8 or more; log y always (final
// values of tuned runs span orders of magnitude), unless `logY` is false. The schedule axis:
// x = the point's position with xLabels naming it, one series per point (its one method).
SweepPlot sweepPlot(const SweepSpec& spec, const SweepPoints& points, SweepMetric metric,
                    bool logY = true);

// "S" for stages, "δ" for delta, "H", "R", "NOAM", "σ", "γ", "n", "d", "schedule".
std::string sweepAxisSymbol(SweepAxis axis);
std::string sweepAxisTitle(SweepAxis axis);  // "stages S", "RPD delay bound δ", ...

// Labels of one method across points, with the numbers that differ replaced by "*":
// {"RPD (uniform, delta=8)", "RPD (uniform, delta=30)"} -> "RPD (uniform, delta=*)".
std::string mergeLabels(const std::vector<std::string>& labels);

// The experiment of point `point.index` with every method's step fixed to the one its rule
// chose there and one seed: the run whose timeline, delays and curves a view shows.
ExperimentConfig pointRunConfig(const SweepSpec& spec, const PointResult& point);

// Whether `config` is one of the sweep's experiments: its base, its overlay (every δ in one run),
// a point's, or a point's run with the chosen steps (so opening a point does not make the sweep
// look out of date).
bool sweepIncludes(const SweepSpec& spec, const SweepPoints& points,
                   const ExperimentConfig& config);

// Axis values typed by a person: numbers separated by commas or spaces ("2, 4, 8 16").
// ConfigError naming the text that is not a number; an empty list is an error.
std::vector<double> parseAxisValues(const std::string& text);
// The schedule axis's values typed by a person: method keys separated by commas or spaces
// ("pd, 1f1b zb-h1"); ConfigError for an empty list (SweepSpec::validate checks the keys).
std::vector<std::string> parseScheduleKeys(const std::string& text);

}  // namespace pipelens

#include "experiment/sweep/sweep_plot.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "errors.hpp"

namespace pipelens {
namespace {

// A label cut into runs of digits (with '.') and runs of anything else.
std::vector<std::string> tokens(const std::string& s) {
    std::vector<std::string> out;
    auto digit = [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.';
    };
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        const bool d = digit(s[i]);
        while (j < s.size() && digit(s[j]) == d) ++j;
        out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

bool isNumberToken(const std::string& t) {
    return !t.empty() && std::isdigit(static_cast<unsigned char>(t.front())) != 0;
}

// A point's marker: the final value (mean ± sd over seeds), clamped to `floor` on a log axis.
SweepPlotPoint plotPoint(const PointResult& p, const MethodPoint& mp, SweepMetric metric,
                         double floor) {
    const MeanSd& v = metric == SweepMetric::FinalGap ? mp.finalGap : mp.finalObjective;
    SweepPlotPoint q;
    q.point = p.index;
    q.x = p.value;
    q.mean = v.mean;
    q.sd = v.sd;
    q.finite = std::isfinite(v.mean) && std::isfinite(v.sd);
    q.y = std::max(v.mean, floor);
    q.low = std::max(v.mean - v.sd, floor);
    q.high = std::max(v.mean + v.sd, floor);
    q.stepSize = mp.stepSize;
    q.tuned = mp.tuned;
    q.allDiverged = mp.allDiverged;
    return q;
}

void setYRange(SweepPlot& plot, double yLo, double yHi) {
    if (yLo <= yHi) {
        plot.yMin = yLo;
        plot.yMax = yHi;
    } else if (plot.logY) {
        plot.yMin = 1e-3;
        plot.yMax = 1.0;
    }
}

// The schedule axis is categorical: x is the point's position, named by xLabels, and every
// point is a series of its own (one method each), so each schedule keeps its family's colour
// and its legend entry.
SweepPlot schedulePlot(const SweepSpec& spec, const SweepPoints& points, SweepMetric metric,
                       SweepPlot plot) {
    plot.xLabels = spec.schedules;
    plot.logX = false;
    plot.xMin = 0.0;
    plot.xMax = spec.points() > 0 ? static_cast<double>(spec.points() - 1) : 0.0;
    const double floor = plot.logY ? kSweepLogFloor : -std::numeric_limits<double>::infinity();
    double yLo = std::numeric_limits<double>::infinity();
    double yHi = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < spec.points(); ++i) {
        const ExperimentConfig c = spec.pointConfig(i);
        SweepPlotSeries series;
        const MethodSpec& ms = c.methods.front();
        series.label = ms.label.empty() ? defaultMethodLabel(ms, c.stages) : ms.label;
        series.method = methodName(ms.method);
        if (i < points.size() && points[i] && !points[i]->methods.empty()) {
            ++plot.pointsDone;
            const SweepPlotPoint q =
                plotPoint(*points[i], points[i]->methods.front(), metric, floor);
            if (q.finite) {
                yLo = std::min(yLo, q.low);
                yHi = std::max(yHi, q.high);
            }
            series.points.push_back(q);
        }
        plot.series.push_back(std::move(series));
    }
    setYRange(plot, yLo, yHi);
    return plot;
}

}  // namespace

SweepMetric parseSweepMetric(const std::string& text) {
    if (text == "final_gap") return SweepMetric::FinalGap;
    if (text == "final_objective") return SweepMetric::FinalObjective;
    throw ConfigError("metric = \"" + text +
                      "\" is not allowed: one of final_gap, final_objective");
}

std::string sweepMetricName(SweepMetric metric) {
    return metric == SweepMetric::FinalGap ? "final_gap" : "final_objective";
}

std::string sweepMetricTitle(SweepMetric metric) {
    return metric == SweepMetric::FinalGap ? "final f − f*" : "final f";
}

std::string sweepAxisSymbol(SweepAxis axis) {
    switch (axis) {
        case SweepAxis::Stages:
            return "S";
        case SweepAxis::Delta:
            return "δ";
        case SweepAxis::LocalSteps:
            return "H";
        case SweepAxis::Replicas:
            return "R";
        case SweepAxis::Noam:
            return "NOAM";
        case SweepAxis::GradientNoise:
            return "σ";
        case SweepAxis::StepSize:
            return "γ";
        case SweepAxis::Rows:
            return "n";
        case SweepAxis::Dim:
            return "d";
        case SweepAxis::Schedule:
            return "schedule";
        case SweepAxis::Optimizer:
            return "optimizer";
        case SweepAxis::Corrector:
            return "corrector";
    }
    return "";
}

std::string sweepAxisTitle(SweepAxis axis) {
    switch (axis) {
        case SweepAxis::Stages:
            return "stages S";
        case SweepAxis::Delta:
            return "RPD delay bound δ";
        case SweepAxis::LocalSteps:
            return "LocalSGD local steps H";
        case SweepAxis::Replicas:
            return "LocalSGD replicas R";
        case SweepAxis::Noam:
            return "PipeDream microbatches in flight NOAM";
        case SweepAxis::GradientNoise:
            return "gradient noise σ";
        case SweepAxis::StepSize:
            return "step size γ (fixed)";
        case SweepAxis::Rows:
            return "rows n";
        case SweepAxis::Dim:
            return "dimension d";
        case SweepAxis::Schedule:
            return "schedule";
        case SweepAxis::Optimizer:
            return "optimizer (every method)";
        case SweepAxis::Corrector:
            return "correctors (methods that take them)";
    }
    return "";
}

std::string mergeLabels(const std::vector<std::string>& labels) {
    if (labels.empty()) return {};
    std::vector<std::string> merged = tokens(labels.front());
    for (std::size_t l = 1; l < labels.size(); ++l) {
        const std::vector<std::string> other = tokens(labels[l]);
        if (other.size() != merged.size()) return labels.front();  // not the same shape
        for (std::size_t i = 0; i < merged.size(); ++i) {
            if (merged[i] == other[i]) continue;
            if (!isNumberToken(merged[i]) && merged[i] != "*") return labels.front();
            if (!isNumberToken(other[i])) return labels.front();
            merged[i] = std::string(1, '*');
        }
    }
    std::string out;
    for (const std::string& t : merged) out += t;
    return out;
}

SweepPlot sweepPlot(const SweepSpec& spec, const SweepPoints& points, SweepMetric metric,
                    bool logY) {
    SweepPlot plot;
    plot.xTitle = sweepAxisTitle(spec.axis);
    plot.yTitle = sweepMetricTitle(metric);
    if (spec.seeds > 1) {
        plot.yTitle.append(" (mean ± sd over ")
            .append(std::to_string(spec.seeds))
            .append(" seeds)");
    }
    plot.logY = logY;
    plot.points = spec.points();
    if (spec.axis == SweepAxis::Schedule) return schedulePlot(spec, points, metric, plot);
    if (!spec.values.empty()) {
        const auto [lo, hi] = std::minmax_element(spec.values.begin(), spec.values.end());
        plot.xMin = *lo;
        plot.xMax = *hi;
        plot.logX = *lo > 0 && *hi / *lo >= 8.0;
    }
    // Points in axis order (the values need not be sorted).
    std::vector<std::size_t> order(spec.points());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return spec.values[a] < spec.values[b]; });

    const double floor = logY ? kSweepLogFloor : -std::numeric_limits<double>::infinity();
    plot.series.resize(spec.experiment.methods.size());
    double yLo = std::numeric_limits<double>::infinity();
    double yHi = -std::numeric_limits<double>::infinity();
    for (std::size_t i : order) {
        if (i >= points.size() || !points[i]) continue;
        const PointResult& p = *points[i];
        ++plot.pointsDone;
        for (std::size_t m = 0; m < p.methods.size() && m < plot.series.size(); ++m) {
            SweepPlotPoint q = plotPoint(p, p.methods[m], metric, floor);
            q.point = i;
            if (q.finite) {
                yLo = std::min(yLo, q.low);
                yHi = std::max(yHi, q.high);
            }
            plot.series[m].points.push_back(q);
        }
    }
    // Labels from every point's experiment, finished or not, so the legend does not change as
    // points arrive.
    std::vector<std::vector<std::string>> planned(plot.series.size());
    for (std::size_t i = 0; i < spec.points(); ++i) {
        const ExperimentConfig c = spec.pointConfig(i);
        for (std::size_t m = 0; m < planned.size(); ++m) {
            const MethodSpec& ms = c.methods[m];
            planned[m].push_back(ms.label.empty() ? defaultMethodLabel(ms, c.stages) : ms.label);
        }
    }
    if (categoricalSweepAxis(spec.axis)) {
        // Categorical: x is the point's position, named by xLabels; a series is one method of
        // the base across the points, named as the base names it without the swept setting.
        plot.xLabels.clear();
        for (std::size_t i = 0; i < spec.points(); ++i) plot.xLabels.push_back(spec.valueText(i));
        plot.logX = false;
        for (std::size_t m = 0; m < planned.size(); ++m) {
            MethodSpec base = spec.experiment.methods[m];
            if (spec.axis == SweepAxis::Optimizer) base.optimizer = {};
            if (spec.axis == SweepAxis::Corrector) base.correctors = {};
            planned[m] = {base.label.empty() ? defaultMethodLabel(base, spec.experiment.stages)
                                             : base.label};
        }
    }
    for (std::size_t m = 0; m < plot.series.size(); ++m) {
        plot.series[m].label = planned[m].empty() ? std::string() : mergeLabels(planned[m]);
        plot.series[m].method = methodName(spec.experiment.methods[m].method);
    }
    setYRange(plot, yLo, yHi);
    return plot;
}

ExperimentConfig pointRunConfig(const SweepSpec& spec, const PointResult& point) {
    ExperimentConfig c = spec.pointConfig(point.index);
    c.seeds = 1;
    for (std::size_t m = 0; m < c.methods.size() && m < point.methods.size(); ++m) {
        c.methods[m].step.grid = false;
        c.methods[m].step.value = point.methods[m].stepSize;
    }
    c.validate();
    return c;
}

bool sweepIncludes(const SweepSpec& spec, const SweepPoints& points,
                   const ExperimentConfig& config) {
    // Compared as runs: normalized, the view aside.
    auto comparable = [](ExperimentConfig c) {
        c.view.reset();
        c.normalize();
        return c;
    };
    const ExperimentConfig wanted = comparable(config);
    if (comparable(spec.experiment) == wanted) return true;
    if (const auto overlay = spec.overlayConfig(); overlay && comparable(*overlay) == wanted)
        return true;
    for (std::size_t i = 0; i < spec.points(); ++i) {
        if (comparable(spec.pointConfig(i)) == wanted) return true;
        if (i < points.size() && points[i] &&
            comparable(pointRunConfig(spec, *points[i])) == wanted) {
            return true;
        }
    }
    return false;
}

std::vector<double> parseAxisValues(const std::string& text) {
    std::vector<double> values;
    std::size_t i = 0;
    auto separator = [](char c) {
        return c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c)) != 0;
    };
    while (i < text.size()) {
        while (i < text.size() && separator(text[i])) ++i;
        if (i >= text.size()) break;
        std::size_t j = i;
        while (j < text.size() && !separator(text[j])) ++j;
        const std::string word = text.substr(i, j - i);
        char* end = nullptr;
        const double v = std::strtod(word.c_str(), &end);
        if (end != word.c_str() + word.size() || !std::isfinite(v)) {
            throw ConfigError("axis values: \"" + word +
                              "\" is not allowed: numbers separated by commas or spaces");
        }
        values.push_back(v);
        i = j;
    }
    if (values.empty()) {
        throw ConfigError("axis values = \"" + text +
                          "\" is not allowed: at least one number (e.g. 2, 4, 8)");
    }
    return values;
}

std::vector<std::string> parseScheduleKeys(const std::string& text) {
    std::vector<std::string> keys;
    std::string word;
    for (const char c : text + " ") {
        if (c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c)) != 0) {
            if (!word.empty()) keys.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    if (keys.empty()) {
        throw ConfigError("axis values = \"" + text +
                          "\" is not allowed: at least one method key (e.g. pd, 1f1b, zb-h1)");
    }
    return keys;
}

}  // namespace pipelens

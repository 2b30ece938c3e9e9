#include "experiment/sweep/sweep_folder.hpp"

#include <unistd.h>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "errors.hpp"
#include "experiment/output/results.hpp"
#include "experiment/output/schedule_comparison.hpp"
#include "util/csv_writer.hpp"
#include "util/format_number.hpp"
#include "util/input_file.hpp"

namespace pipelens {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kMarker = kSweepMarker;

// A file of the sweep folder, through InputFile: a FIFO or a device put there is refused
// instead of blocking or being read without end.
std::string readText(const fs::path& p, const std::string& what, std::uint64_t maxBytes) {
    return readInputFile(p.string(), what, &throwAs<IoError>, maxBytes,
                         "a " + what + " is at most " + std::to_string(maxBytes));
}

// Creates `dir` with the marker and sweep.json through a temporary sibling (the same rules as a
// results folder: its marker names it and this process until it is in place), so a folder that
// exists always holds a complete sweep.json. The rename replaces an empty folder and nothing
// else: a link, a file or a folder that filled up meanwhile makes it fail, and is left alone.
void createFolder(const fs::path& dir, const std::string& specText) {
    fs::path tmp = dir;
    tmp += ".tmp-" + std::to_string(::getpid());
    createTemporaryFolder(tmp);
    std::error_code ec;
    try {
        markFolder(tmp, kSweepMarker, temporaryMarker(kSweepTitle, tmp));
        fs::create_directory(tmp / "points", ec);
        if (ec) throw IoError("cannot create sweep folder " + tmp.string() + ": " + ec.message());
        writeFileAtomically((tmp / "sweep.json").string(), specText);
        fs::rename(tmp, dir, ec);
        if (ec) throw IoError("cannot create sweep folder " + dir.string() + ": " + ec.message());
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    markFolder(dir, kSweepMarker, finalMarker(kSweepTitle));
}

}  // namespace

std::string SweepFolder::pointFileName(std::size_t index) {
    std::ostringstream s;
    s << "point-" << std::setw(4) << std::setfill('0') << index << ".json";
    return s.str();
}

SweepFolder SweepFolder::open(const std::string& dirText, const SweepSpec& spec, bool resume) {
    // The same path policy as run and reproduce: no link, no file, not the current folder.
    const fs::path dir = checkResultsPath(dirText, "--out");
    SweepFolder f;
    f.dir_ = dir.string();
    f.finished_.assign(spec.points(), std::nullopt);
    const std::string specText = spec.toJson().dump(2) + "\n";
    std::error_code ec;
    const bool exists = fs::exists(fs::symlink_status(dir, ec));
    const bool empty = exists && fs::is_directory(dir, ec) && fs::is_empty(dir, ec);
    if (!exists || empty) {
        createFolder(dir, specText);
        f.created_ = true;
        return f;
    }
    if (!fs::is_directory(dir) || !fs::exists(dir / kMarker) || !fs::exists(dir / "sweep.json")) {
        throw ConfigError(
            "--out " + dir.string() +
            " exists and is not a PipeLens sweep folder: choose a new or empty folder");
    }
    if (!resume) {
        throw ConfigError("--out " + dir.string() +
                          " already holds a sweep: pass --resume to continue it, or choose a new "
                          "folder");
    }
    json stored;
    const fs::path storedPath = dir / "sweep.json";
    const std::string storedText = readText(storedPath, "stored sweep file", kMaxConfigBytes);
    try {
        // Depth limit, duplicate keys and number range as for any config: a damaged sweep.json
        // cannot overflow the stack.
        stored = parseConfigText(storedText, showPath(storedPath.string()));
    } catch (const ConfigError& e) {
        throw IoError(std::string("--resume: ") + e.what());
    }
    if (stored != spec.toJson()) {
        throw ConfigError("--resume: " + dir.string() +
                          " holds a different sweep (its sweep.json differs from the one given); "
                          "choose a new folder");
    }
    fs::create_directories(dir / "points");
    for (size_t i = 0; i < spec.points(); ++i) {
        const fs::path p = dir / "points" / pointFileName(i);
        if (!fs::exists(p)) continue;
        const std::string text = readText(p, "point file", kMaxPointFileBytes);
        PointResult r;
        try {
            r = pointResultFromText(text, "it");
        } catch (const std::exception& e) {
            throw IoError("--resume: " + showPath(p.string()) + " cannot be read back (" +
                          e.what() + "); remove it to compute that point again");
        }
        if (r.index != i || r.value != spec.values[i]) {
            throw ConfigError("--resume: " + p.string() + " is for another point (index " +
                              std::to_string(r.index) + ")");
        }
        f.finished_[i] = std::move(r);
    }
    return f;
}

bool SweepFolder::discardIfUnused() const {
    if (!created_) return false;
    const fs::path dir(dir_);
    std::error_code ec;
    if (!fs::is_empty(dir / "points", ec) || ec) return false;
    if (!fs::is_regular_file(fs::symlink_status(dir / kMarker, ec))) return false;
    return fs::remove_all(dir, ec) > 0 && !ec;
}

void SweepFolder::writePoint(const PointResult& point) const {
    const fs::path p = fs::path(dir_) / "points" / pointFileName(point.index);
    writeFileAtomically(p.string(), pointResultToJson(point).dump(2) + "\n");
}

void SweepFolder::writeSummary(const SweepSpec& spec, const SweepPoints& points) const {
    writeFileAtomically((fs::path(dir_) / "summary.csv").string(), sweepSummaryCsv(spec, points));
    writeFileAtomically((fs::path(dir_) / "summary.json").string(),
                        sweepSummaryJson(spec, points).dump(2) + "\n");
}

double scheduleSweepTarget(const SweepPoints& points) {
    std::vector<double> finals;
    for (const auto& p : points) {
        if (!p) continue;
        for (const MethodPoint& m : p->methods) finals.push_back(m.finalGap.mean);
    }
    return defaultComparisonTarget(finals);
}

int pointTimeToTarget(const MethodPoint& m, double target) {
    return m.curveAxis == "slot" ? firstSlotAtOrBelow(m.curveMean, target) : -1;
}

ScheduleComparison scheduleSweepComparison(const SweepSpec& spec, const SweepPoints& points) {
    ScheduleComparison c;
    c.valueName = spec.experiment.languageModel() ? "loss" : "f - f*";
    c.target = scheduleSweepTarget(points);
    for (const auto& p : points) {
        if (!p || p->index >= spec.points()) continue;
        const int stages = spec.pointConfig(p->index).stages;
        for (const MethodPoint& m : p->methods) {
            ScheduleComparisonRow row;
            row.label = m.label;
            row.method = m.method;
            row.stages = stages;
            row.stepSize = m.stepSize;
            row.finalValue = m.finalGap.mean;
            row.timeToTarget = pointTimeToTarget(m, c.target);
            row.stats = m.schedule;
            row.totalSlots = m.totalSlots;
            c.rows.push_back(std::move(row));
        }
    }
    return c;
}

std::string sweepSummaryCsv(const SweepSpec& spec, const SweepPoints& points) {
    const bool schedule = spec.axis == SweepAxis::Schedule;
    const double target = schedule ? scheduleSweepTarget(points) : 0.0;
    CsvWriter s;
    s.plain("point")
        .text(sweepAxisName(spec.axis))
        .plain(
            "method,label,step_rule,step_size,final_gap_mean,final_gap_sd,final_objective_mean,"
            "final_objective_sd,all_diverged,seeds,updates,slots");
    if (schedule) {
        s.plain(
            "stages,microbatches_per_step,target,time_to_target_slots,bubble_fraction,"
            "peak_stage_memory_units");
    }
    s.endRow();
    // The sweep's numbers in their shortest round-trip form (formatNumber), as before.
    auto shortest = [&](double v) -> CsvWriter& { return s.plain(formatNumber(v)); };
    for (const auto& p : points) {
        if (!p) continue;
        for (const MethodPoint& m : p->methods) {
            s.integer(p->index);
            if (categoricalSweepAxis(spec.axis)) {
                // The schedule's key, the optimizer's or the corrector list's short name.
                s.text(p->index < spec.points() ? spec.valueText(p->index) : m.method);
            } else {
                shortest(p->value);
            }
            s.text(m.method).label(m.label).text(m.tuned ? stepRuleLabel(m.rule) : "fixed");
            shortest(m.stepSize);
            shortest(m.finalGap.mean);
            shortest(m.finalGap.sd);
            shortest(m.finalObjective.mean);
            shortest(m.finalObjective.sd)
                .integer(m.allDiverged ? 1 : 0)
                .integer(p->seeds)
                .integer(m.updates)
                .integer(m.totalSlots);
            if (schedule) {
                s.integer(spec.experiment.stages);  // the same for every schedule
                if (m.schedule) {
                    s.integer(m.schedule->microbatchesPerStep);
                } else {
                    s.empty();
                }
                shortest(target);
                const int time = pointTimeToTarget(m, target);
                if (time >= 0) {
                    s.integer(time);
                } else {
                    s.empty();
                }
                if (m.schedule) {
                    shortest(m.schedule->bubbleFraction).integer(m.schedule->peakStageMemoryUnits);
                } else {
                    s.empty().empty();
                }
            }
            s.endRow();
        }
    }
    return s.take();
}

json sweepSummaryJson(const SweepSpec& spec, const SweepPoints& points) {
    json j;
    j["name"] = spec.name;
    j["axis"] = sweepAxisName(spec.axis);
    const bool schedule = spec.axis == SweepAxis::Schedule;
    if (schedule) {
        j["values"] = spec.schedules;
        const double target = scheduleSweepTarget(points);
        j["target"] = std::isfinite(target) ? json(target) : json();
    } else if (categoricalSweepAxis(spec.axis)) {
        // The names the summary.csv and the chart show; the settings are in sweep.json.
        json names = json::array();
        for (std::size_t i = 0; i < spec.points(); ++i) names.push_back(spec.valueText(i));
        j["values"] = names;
    } else {
        j["values"] = spec.values;
    }
    j["seeds"] = spec.seeds;
    size_t done = 0;
    json ps = json::array();
    for (const auto& p : points) {
        if (!p) continue;
        ++done;
        json full = pointResultToJson(*p);
        // The summary keeps the numbers a figure needs; the curves stay in the point files.
        for (json& m : full["methods"]) {
            m.erase("curve_mean");
            m.erase("curve_sd");
            for (json& g : m["grid"]) g["stable"] = g["tail"]["stable"];
            for (json& g : m["grid"]) g.erase("tail");
        }
        if (schedule) {
            const double target = scheduleSweepTarget(points);
            for (std::size_t k = 0; k < p->methods.size(); ++k) {
                const int time = pointTimeToTarget(p->methods[k], target);
                full["methods"][k]["time_to_target_slots"] = time >= 0 ? json(time) : json();
            }
            if (p->index < spec.schedules.size()) full["schedule"] = spec.schedules[p->index];
        }
        ps.push_back(full);
    }
    j["points_done"] = done;
    j["complete"] = done == spec.points();
    j["points"] = ps;
    return j;
}

}  // namespace pipelens

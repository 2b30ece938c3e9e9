#include "experiment/results.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "errors.hpp"
#include "replay/schedule_tables.hpp"
#include "util/csv_writer.hpp"
#include "util/text_builder.hpp"

namespace pipelens {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string num(double v) { return TextBuilder().number(v).take(); }

json finiteOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

void writeText(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
    out.close();
    if (!out) throw IoError("cannot write " + path.string());
}

// Columns of equal-index series, one per method; shorter series leave empty cells.
std::string seriesCsv(const std::string& indexName, long long firstIndex,
                      const std::vector<std::string>& names,
                      const std::vector<const std::vector<double>*>& series, double shift) {
    CsvWriter out;
    out.plain(indexName);
    for (const auto& n : names) out.label(n);
    out.endRow();
    size_t rows = 0;
    for (auto* s : series) rows = std::max(rows, s->size());
    for (size_t i = 0; i < rows; ++i) {
        out.integer(static_cast<long long>(i) + firstIndex);
        for (auto* s : series) {
            if (i < s->size()) out.number((*s)[i] - shift);
            else out.empty();
        }
        out.endRow();
    }
    return out.take();
}

// What is at `path`: nothing, an empty folder, PipeLens results, or something of the user's.
enum class Target { Absent, EmptyFolder, Results, Other };

Target classify(const fs::path& path, std::string& what) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(path, ec);
    if (ec || st.type() == fs::file_type::not_found) return Target::Absent;
    if (st.type() != fs::file_type::directory) {
        what = st.type() == fs::file_type::symlink ? "a symbolic link" : "a file";
        return Target::Other;
    }
    if (fs::is_empty(path, ec) && !ec) return Target::EmptyFolder;
    if (fs::is_regular_file(path / kResultsMarker, ec)) return Target::Results;
    what = "a folder that PipeLens did not write (it has no " + std::string(kResultsMarker) + ")";
    return Target::Other;
}

// Normalised absolute path without a trailing separator; empty for "", "/", "." or "..".
fs::path normalised(const std::string& folder) {
    if (folder.empty()) return {};
    fs::path p = fs::path(folder).lexically_normal();
    while (!p.empty() && !p.has_filename() && p.has_parent_path() && p != p.root_path()) {
        p = p.parent_path();
    }
    p = fs::absolute(p).lexically_normal();
    if (!p.has_filename()) p = p.parent_path();
    const std::string name = p.filename().string();
    if (name.empty() || name == "." || name == ".." || p == p.root_path()) return {};
    return p;
}

bool processAlive(long pid) {
    return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

// Removes `<name>.tmp-PID` and `<name>.old-PID` folders of runs that are no longer alive (an
// earlier PipeLens killed while writing); only folders that are empty or carry the marker.
void removeStaleTemporaries(const fs::path& target) {
    std::error_code ec;
    const std::string base = target.filename().string();
    for (fs::directory_iterator it(target.parent_path(), ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        for (const char* tag : {".tmp-", ".old-"}) {
            const std::string prefix = base + tag;
            if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) {
                continue;
            }
            const std::string pidText = name.substr(prefix.size());
            if (pidText.find_first_not_of("0123456789") != std::string::npos ||
                pidText.size() > 9 || processAlive(std::stol(pidText))) {
                continue;
            }
            std::string what;
            const Target kind = classify(it->path(), what);
            if (kind == Target::Results || kind == Target::EmptyFolder) {
                std::error_code ignored;
                fs::remove_all(it->path(), ignored);
            }
        }
    }
}

void checkReplaceable(const fs::path& target, const std::string& field, const std::string& shown) {
    std::string what;
    if (classify(target, what) == Target::Other) {
        throw ConfigError(field + " = \"" + shown + "\" is not allowed: it is " + what +
                          "; PipeLens only replaces an empty folder or results it wrote itself: "
                          "choose a new folder");
    }
}

// Swaps `tmp` into `target` in one step; afterwards `tmp` holds what was at `target`.
void swapInto(const fs::path& tmp, const fs::path& target, bool hadOld) {
    const unsigned flags = hadOld ? RENAME_EXCHANGE : RENAME_NOREPLACE;
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), flags) == 0) return;
    const int err = errno;
    if (err != EINVAL && err != ENOSYS) {
        throw IoError("cannot move the results into " + target.string() + ": " +
                      std::strerror(err));
    }
    // A file system without renameat2 flags: two renames, the old folder kept until the end.
    std::error_code ec;
    fs::path old = target;
    old += ".old-" + std::to_string(::getpid());
    if (hadOld) {
        fs::rename(target, old, ec);
        if (ec) throw IoError("cannot replace results folder " + target.string() + ": " + ec.message());
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        if (hadOld) fs::rename(old, target, ec);
        throw IoError("cannot move the results into " + target.string() + ": " + ec.message());
    }
    if (hadOld) fs::rename(old, tmp, ec);
}

}  // namespace

std::string prepareResultsFolder(const std::string& folder, const std::string& field) {
    const fs::path target = normalised(folder);
    if (target.empty()) {
        throw ConfigError(field + " = \"" + folder +
                          "\" is not allowed: the path of a results folder (not empty, not /, . or ..)");
    }
    checkReplaceable(target, field, folder);
    std::error_code ec;
    if (fs::exists(target, ec) && ::access(target.c_str(), W_OK | X_OK) != 0) {
        throw ConfigError(field + " = \"" + folder + "\" is not allowed: the folder cannot be "
                          "replaced (" + std::strerror(errno) + ")");
    }
    // The nearest existing ancestor must be a folder we may write into.
    fs::path parent = target.parent_path();
    while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.root_path()) {
        parent = parent.parent_path();
    }
    if (!fs::is_directory(parent, ec)) {
        throw ConfigError(field + " = \"" + folder + "\" is not allowed: " + parent.string() +
                          " is not a folder");
    }
    if (::access(parent.c_str(), W_OK | X_OK) != 0) {
        throw ConfigError(field + " = \"" + folder + "\" is not allowed: cannot write in " +
                          parent.string() + " (" + std::strerror(errno) + ")");
    }
    if (fs::exists(target.parent_path(), ec)) removeStaleTemporaries(target);
    return target.string();
}

void writeFileAtomically(const std::string& path, const std::string& content) {
    fs::path target(path);
    fs::path tmp = target;
    tmp += ".tmp-" + std::to_string(::getpid());
    writeText(tmp, content);
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw IoError("cannot write " + path + ": " + ec.message());
    }
}

json summaryJson(const ExperimentResult& r) {
    json j;
    j["name"] = r.config.name;
    j["backend"] = r.backendName;
    j["stages"] = r.config.stages;
    j["f_star"] = r.optimum;
    j["L"] = r.smoothness;
    j["slot_budget"] = r.budget.slotBudget;
    j["update_budget"] = r.budget.updateBudget;
    j["pd_microbatches"] = r.budget.pipeDreamMicrobatches;
    j["notices"] = r.notices;
    j["warnings"] = r.warnings;
    j["cancelled"] = r.cancelled;
    json ms = json::array();
    for (const MethodRun& o : r.methods) {
        const RunResult& res = o.result;
        json m;
        m["label"] = o.label;
        m["method"] = methodName(o.spec.method);
        m["step_size"] = res.stepSize;
        m["microbatches"] = res.microbatches;
        m["block_updates"] = res.updates;
        m["slots"] = res.totalSlots;
        m["initial_objective"] = finiteOrNull(res.initialObjective);
        m["final_objective"] = finiteOrNull(res.finalObjective());
        m["final_gap"] = finiteOrNull(res.finalObjective() - res.optimum);
        m["gradient_bound_G"] = res.gradientBound;
        m["max_delay"] = res.maxDelay;
        m["finished"] = res.finished;
        m["diverged"] = res.divergence.diverged;
        if (res.divergence.diverged) {
            m["divergence"] = {{"update", res.divergence.update},
                               {"slot", res.divergence.slot},
                               {"message", res.divergence.reason}};
        }
        if (res.utilization) {
            m["utilization"] = res.utilization->overall;
            m["bubble_fraction"] = res.utilization->bubbleFraction;
            m["utilization_per_stage"] = res.utilization->perStage;
        }
        if (res.timeline) m["peak_stashed_copies"] = res.timeline->peakStash;
        if (res.delayStats) {
            const DelayStats& d = *res.delayStats;
            m["delay_stats"] = {{"max", d.max},        {"mean", d.mean},
                                {"p10", d.p10},        {"p50", d.p50},
                                {"p90", d.p90},        {"formula_max", d.formulaMax},
                                {"formula_mean", d.formulaMean}, {"samples", d.samples}};
        }
        if (res.theorem) {
            const TheoremBound& t = *res.theorem;
            m["theorem"] = {{"optimisation", t.optimisation},
                            {"noise", t.noise},
                            {"staleness", t.staleness},
                            {"total", t.total},
                            {"step_size_allowed", t.stepSizeAllowed},
                            {"note", "the bound holds for randomized PipeDream, not for PD"}};
            if (!res.gradNormRunningMean.empty()) {
                m["theorem"]["mean_grad_norm_sq"] = res.gradNormRunningMean.back();
            }
        }
        if (!o.sweep.empty()) {
            json sw = json::array();
            for (const SweepPoint& p : o.sweep) {
                sw.push_back({{"step_size", p.stepSize},
                              {"final_gap", finiteOrNull(p.finalGap)},
                              {"diverged", p.diverged}});
            }
            m["sweep"] = sw;
            m["all_diverged"] = o.allDiverged;
        }
        ms.push_back(m);
    }
    j["methods"] = ms;
    return j;
}

std::string summaryText(const ExperimentResult& r) {
    std::ostringstream s;
    s << r.config.name << ": S=" << r.config.stages << ", budget " << r.budget.slotBudget
      << " slots / " << r.budget.updateBudget << " block updates, f*=" << num(r.optimum)
      << ", L=" << num(r.smoothness) << ", backend " << r.backendName << '\n';
    for (const auto& n : r.notices) s << "  notice: " << n << '\n';
    for (const auto& w : r.warnings) s << "  warning: " << w << '\n';
    for (const MethodRun& o : r.methods) {
        const RunResult& res = o.result;
        s << "  " << std::left << std::setw(34) << o.label << " gamma=" << std::setw(10)
          << res.stepSize << " updates=" << std::setw(8) << res.updates
          << " f-f*=" << num(res.finalObjective() - res.optimum);
        if (res.divergence.diverged) s << "  DIVERGED: " << res.divergence.reason;
        if (o.allDiverged) s << "  (every step size of the grid diverged)";
        s << '\n';
    }
    return s.str();
}

std::vector<std::string> writeFolderAtomically(
    const std::string& folder, const std::function<void(const fs::path& tmp)>& fill,
    const std::atomic<bool>* cancel) {
    const fs::path target = normalised(folder);
    if (target.empty()) throw IoError("cannot write results into \"" + folder + "\": not a folder path");
    std::string what;
    if (classify(target, what) == Target::Other) {
        throw IoError("refusing to replace " + target.string() + ": it is " + what);
    }
    fs::path tmp = target;
    tmp += ".tmp-" + std::to_string(::getpid());
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (!fs::create_directories(tmp, ec) && ec) {
        throw IoError("cannot create results folder " + tmp.string() + ": " + ec.message());
    }
    const auto stopped = [&] { return cancel && cancel->load(); };
    try {
        writeText(tmp / kResultsMarker, "PipeLens results: this folder may be replaced by the next run\n");
        fill(tmp);
        if (stopped()) throw Interrupted("writing results to " + target.string());
        // Checked again just before the swap: the target may have changed in the meantime.
        if (classify(target, what) == Target::Other) {
            throw IoError("refusing to replace " + target.string() + ": it is " + what);
        }
        swapInto(tmp, target, fs::exists(fs::symlink_status(target, ec)));
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    // tmp now holds the previous results (if any); the new ones are in place.
    std::vector<std::string> warnings;
    if (fs::exists(tmp, ec)) {
        fs::remove_all(tmp, ec);
        if (ec) {
            warnings.push_back("the previous results, now at " + tmp.string() +
                               ", could not be removed: " + ec.message() + "; remove them by hand");
        }
    }
    return warnings;
}

std::vector<std::string> writeResults(const ExperimentResult& r, const std::string& folder,
                                      const std::atomic<bool>* cancel) {
    // Checked between files: a signal handler or the app sets the flag, the write stops cleanly.
    auto put = [&](const fs::path& path, const std::string& content) {
        if (cancel && cancel->load()) throw Interrupted("writing results to " + folder);
        writeText(path, content);
    };
    return writeFolderAtomically(folder, [&](const fs::path& tmp) {
        put(tmp / "summary.json", summaryJson(r).dump(2) + "\n");
        put(tmp / "config.json", r.config.toJson().dump(2) + "\n");
        std::vector<std::string> names;
        std::vector<const std::vector<double>*> perSlot;
        std::vector<const std::vector<double>*> perUpdate;
        for (const auto& o : r.methods) {
            names.push_back(o.label);
            perSlot.push_back(&o.result.objectivePerSlot);
            perUpdate.push_back(&o.result.objectivePerUpdate);
        }
        put(tmp / "objective_per_slot.csv", seriesCsv("slots_completed", 0, names, perSlot, 0.0));
        put(tmp / "objective_per_update.csv",
                  seriesCsv("block_update", 1, names, perUpdate, 0.0));
        put(tmp / "gap_per_update.csv",
                  seriesCsv("block_update", 1, names, perUpdate, r.optimum));
        // Gradient norms: long format (method, k, value, running mean).
        CsvWriter g;
        g.header("method,block_update,grad_norm_sq,running_mean");
        bool anyGrad = false;
        for (const auto& o : r.methods) {
            const RunResult& res = o.result;
            for (size_t i = 0; i < res.gradNormSq.size(); ++i) {
                anyGrad = true;
                g.label(o.label).integer(res.gradNormUpdates[i]).number(res.gradNormSq[i])
                    .number(res.gradNormRunningMean[i]).endRow();
            }
        }
        if (anyGrad) put(tmp / "grad_norm.csv", g.take());
        CsvWriter th;
        th.header("method,optimisation,noise,staleness,total,mean_grad_norm_sq");
        bool anyTheorem = false;
        CsvWriter sw;
        sw.header("method,step_size,final_gap,diverged");
        bool anySweep = false;
        for (size_t i = 0; i < r.methods.size(); ++i) {
            const MethodRun& o = r.methods[i];
            const RunResult& res = o.result;
            if (res.theorem) {
                anyTheorem = true;
                th.label(o.label).number(res.theorem->optimisation).number(res.theorem->noise)
                    .number(res.theorem->staleness).number(res.theorem->total);
                if (res.gradNormRunningMean.empty()) th.empty();
                else th.number(res.gradNormRunningMean.back());
                th.endRow();
            }
            for (const SweepPoint& p : o.sweep) {
                anySweep = true;
                sw.label(o.label).number(p.stepSize).number(p.finalGap)
                    .integer(p.diverged ? 1 : 0).endRow();
            }
            if (res.timeline) {
                put(tmp / ("timeline_" + std::to_string(i) + ".csv"),
                    ganttTableCsv(*res.timeline, res.delays ? &*res.delays : nullptr, o.label));
            }
            if (res.delays) {
                put(tmp / ("delays_" + std::to_string(i) + ".csv"),
                    delayTableCsv(*res.delays, o.label));
            }
        }
        if (anyTheorem) put(tmp / "theorem.csv", th.take());
        if (anySweep) put(tmp / "sweep.csv", sw.take());
    }, cancel);
}

}  // namespace pipelens

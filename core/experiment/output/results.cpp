#include "experiment/output/results.hpp"

#include "experiment/output/lm_results.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "errors.hpp"
#include "experiment/output/schedule_comparison.hpp"
#include "schedule/delay_units.hpp"
#include "schedule/schedule_tables.hpp"
#include "util/csv_writer.hpp"
#include "util/file_target.hpp"
#include "util/text_builder.hpp"

namespace pipelens {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string num(double v) {
    return TextBuilder().number(v).take();
}

json finiteOrNull(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

// A new file in a temporary folder; the message carries the system's reason ("No space left on
// device").
void writeText(const fs::path& path, const std::string& content) {
    writeNewFile(path.string(), content.data(), content.size());
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
            if (i < s->size())
                out.number((*s)[i] - shift);
            else
                out.empty();
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

// The identity of this process, recorded in a temporary folder's marker.
std::string readFirstLine(const fs::path& p, std::size_t limit = 4096) {
    std::ifstream in(p, std::ios::binary);
    std::string line;
    if (in) std::getline(in, line);
    if (line.size() > limit) line.clear();
    return line;
}

std::string bootId() {
    return readFirstLine("/proc/sys/kernel/random/boot_id");
}

// Field 22 of /proc/PID/stat: when the process started, in clock ticks after boot.
std::optional<unsigned long long> processStartTime(const std::string& pid) {
    std::ifstream in("/proc/" + pid + "/stat", std::ios::binary);
    std::string stat;
    if (!in || !std::getline(in, stat)) return std::nullopt;
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream rest(stat.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 22; ++i) {
        if (!(rest >> field)) return std::nullopt;
    }
    if (field.empty() || field.find_first_not_of("0123456789") != std::string::npos) {
        return std::nullopt;
    }
    return std::stoull(field);
}

// The marker's key: value lines.
std::map<std::string, std::string> readMarker(const fs::path& marker) {
    std::map<std::string, std::string> keys;
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(marker, ec)) || fs::file_size(marker, ec) > 4096) {
        return keys;
    }
    std::ifstream in(marker, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t colon = line.find(": ");
        if (colon != std::string::npos) keys[line.substr(0, colon)] = line.substr(colon + 2);
    }
    return keys;
}

// Whether the process a temporary's marker names is provably gone: another boot, no process
// with that PID, or one that started at another time (the PID was reused).
bool recordedWriterGone(const std::map<std::string, std::string>& m) {
    const auto get = [&](const char* k) {
        const auto it = m.find(k);
        return it == m.end() ? std::string() : it->second;
    };
    const std::string pid = get("pid");
    const std::string boot = get("boot_id");
    const std::string start = get("start_time");
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) {
        return false;
    }
    const std::string now = bootId();
    if (!boot.empty() && !now.empty() && boot != now) return true;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) return true;
    const auto started = processStartTime(pid);
    return started && !start.empty() && std::to_string(*started) != start;
}

// A folder (not a link) whose marker (results or sweep) says it is a temporary of exactly this
// name, written by a process that is provably gone.
bool isStaleTemporary(const fs::path& folder) {
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(folder, ec))) return false;
    const std::string name = folder.filename().string();
    const std::size_t dash = name.rfind('-');
    const std::string pidText = dash == std::string::npos ? std::string() : name.substr(dash + 1);
    for (const char* markerName : {kResultsMarker, kSweepMarker}) {
        const auto m = readMarker(folder / markerName);
        const auto at = [&](const char* k) {
            const auto f = m.find(k);
            return f == m.end() ? std::string() : f->second;
        };
        if (at("state") == "temporary" && at("folder") == name && at("pid") == pidText &&
            recordedWriterGone(m)) {
            return true;
        }
    }
    return false;
}

// Removes `<name>.tmp-PID` and `<name>.old-PID` folders that an earlier PipeLens left when it was
// killed while writing. A folder is removed only when its marker (results or sweep) says it is a
// temporary of exactly that name and the process that wrote it is provably gone: the user's
// copies (`res.old-20241201`, a `cp -r` of a results folder) never match.
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
            std::error_code sec;
            if (pidText.find_first_not_of("0123456789") != std::string::npos ||
                !fs::is_directory(fs::symlink_status(it->path(), sec))) {
                continue;
            }
            if (isStaleTemporary(it->path())) {
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
        if (fs::exists(target / kResultsMarker, ec)) {
            markFolder(target, kResultsMarker, temporaryMarker(kResultsTitle, old));
        }
        fs::rename(target, old, ec);
        if (ec)
            throw IoError("cannot replace results folder " + target.string() + ": " + ec.message());
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        if (hadOld) {
            fs::rename(old, target, ec);
            if (!ec) markFolder(target, kResultsMarker, finalMarker(kResultsTitle));
        }
        throw IoError("cannot move the results into " + target.string() + ": " + ec.message());
    }
    if (hadOld) fs::rename(old, tmp, ec);
}

}  // namespace

std::string temporaryMarker(const std::string& title, const fs::path& tmp) {
    const auto started = processStartTime("self");
    return title + "\nstate: temporary\nfolder: " + tmp.filename().string() +
           "\npid: " + std::to_string(::getpid()) + "\nboot_id: " + bootId() +
           "\nstart_time: " + (started ? std::to_string(*started) : std::string()) + "\n";
}

std::string finalMarker(const std::string& title) {
    return title + "\nstate: final\n";
}

void markFolder(const fs::path& folder, const char* markerName, const std::string& text) {
    replaceFileAtomically((folder / markerName).string(), text.data(), text.size());
}

std::string checkResultsPath(const std::string& folder, const std::string& field) {
    const fs::path target = normalised(folder);
    const std::string shown = field + " = \"" + folder + "\" is not allowed: ";
    if (target.empty()) {
        throw ConfigError(shown + "the path of a results folder (not empty, not /, . or ..)");
    }
    // The folder is replaced as a whole: never the current folder or one that holds it.
    std::error_code ec;
    const fs::path here = fs::current_path(ec);
    if (!ec) {
        const fs::path real = fs::weakly_canonical(target, ec);
        if (!ec) {
            const fs::path rel = here.lexically_relative(real);
            if (!rel.empty() && *rel.begin() != "..") {
                throw ConfigError(shown +
                                  (rel == "."
                                       ? "it is the current folder"
                                       : "it holds the current folder (" + here.string() + ")") +
                                  ", which would be replaced from under the shell: choose "
                                  "another folder");
            }
        }
    }
    // The temporaries beside it add ".tmp-PID" (at most 7 digits) to its name.
    const std::size_t length = target.filename().string().size();
    constexpr std::size_t kNameMax = NAME_MAX;
    if (length + kTemporarySuffixBytes > kNameMax) {
        throw ConfigError(shown + "its name is " + std::to_string(length) +
                          " bytes long, and the temporary folder beside it needs " +
                          std::to_string(kTemporarySuffixBytes) + " more, over the limit of " +
                          std::to_string(kNameMax) + " bytes a name may have: at most " +
                          std::to_string(kNameMax - kTemporarySuffixBytes) + " bytes");
    }
    const fs::file_status st = fs::symlink_status(target, ec);
    if (!ec && st.type() != fs::file_type::not_found && st.type() != fs::file_type::directory) {
        throw ConfigError(shown + "it is " +
                          (st.type() == fs::file_type::symlink ? "a symbolic link" : "a file") +
                          "; PipeLens only replaces an empty folder or results it wrote itself: "
                          "choose a new folder");
    }
    if (fs::exists(target, ec) && ::access(target.c_str(), W_OK | X_OK) != 0) {
        throw ConfigError(shown + "the folder cannot be replaced (" + std::strerror(errno) + ")");
    }
    // The nearest existing ancestor must be a folder we may write into.
    fs::path parent = target.parent_path();
    while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.root_path()) {
        parent = parent.parent_path();
    }
    if (!fs::is_directory(parent, ec)) {
        throw ConfigError(shown + parent.string() + " is not a folder");
    }
    if (::access(parent.c_str(), W_OK | X_OK) != 0) {
        throw ConfigError(shown + "cannot write in " + parent.string() + " (" +
                          std::strerror(errno) + ")");
    }
    if (fs::exists(target.parent_path(), ec)) removeStaleTemporaries(target);
    return target.string();
}

std::string prepareResultsFolder(const std::string& folder, const std::string& field) {
    std::string target = checkResultsPath(folder, field);
    checkReplaceable(target, field, folder);
    return target;
}

void createTemporaryFolder(const fs::path& tmp) {
    std::error_code ec;
    if (isStaleTemporary(tmp)) fs::remove_all(tmp, ec);
    if (!fs::create_directory(tmp, ec)) {
        throw IoError("cannot create the temporary folder " + tmp.string() + ": " +
                      (ec ? ec.message() : std::string("something of that name exists")));
    }
}

void writeFileAtomically(const std::string& path, const std::string& content) {
    replaceFileAtomically(path, content.data(), content.size());
}

namespace {

// Set by SIGINT / SIGTERM while results are written; the writer then removes its temporary
// folder and the signal is raised again with its default action.
std::atomic<bool> gStopWriting{false};
std::atomic<int> gStopSignal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void onStopSignal(int sig) {
    gStopSignal.store(sig);
    gStopWriting.store(true);
}

}  // namespace

std::vector<std::string> writeStoppable(
    const std::function<std::vector<std::string>(const std::atomic<bool>*)>& write) {
    struct sigaction stop {};
    stop.sa_handler = onStopSignal;
    sigemptyset(&stop.sa_mask);
    struct sigaction oldInt {};
    struct sigaction oldTerm {};
    gStopWriting.store(false);
    sigaction(SIGINT, &stop, &oldInt);
    sigaction(SIGTERM, &stop, &oldTerm);
    auto restore = [&] {
        sigaction(SIGINT, &oldInt, nullptr);
        sigaction(SIGTERM, &oldTerm, nullptr);
    };
    try {
        std::vector<std::string> warnings = write(&gStopWriting);
        restore();
        if (gStopWriting.load()) ::raise(gStopSignal.load());  // arrived after the swap
        return warnings;
    } catch (...) {
        // Whatever the write threw once stopped (Interrupted, a cancelled run), its temporaries
        // are gone by now: the signal ends the process as it would have.
        restore();
        if (gStopWriting.load()) ::raise(gStopSignal.load());
        throw;
    }
}

std::optional<RunLengthCounts> runLengthCounts(const MethodRun& run) {
    const RunResult& res = run.result;
    if (!run.pipeline() || !res.timeline) return std::nullopt;
    const Timeline& tl = *res.timeline;
    RunLengthCounts out;
    out.microbatchesPlanned = res.microbatches;
    // The slots that ran: the timeline's, or fewer where a diverged run stopped.
    out.slotsRun = res.totalSlots > 0 ? std::min(res.totalSlots, tl.totalSlots) : tl.totalSlots;
    out.cutAtSlot = run.truncateSlots > 0 ? run.truncateSlots : -1;
    // A microbatch is done when its backward on the first stage (its last operation) has ended
    // inside the run; a truncated timeline holds only operations that did.
    out.microbatchesFinished =
        std::count_if(tl.cells.begin(), tl.cells.end(), [&](const TimelineCell& c) {
            return c.stage == 0 && c.op == OpKind::Backward && c.endSlot < out.slotsRun;
        });
    return out;
}

json runLengthJson(const MethodRun& run) {
    const std::optional<RunLengthCounts> counts = runLengthCounts(run);
    if (!counts) return json::object();
    return {{"microbatches_planned", counts->microbatchesPlanned},
            {"microbatches_finished", counts->microbatchesFinished},
            {"slots_run", counts->slotsRun},
            {"cut_at_slot", counts->cutAtSlot >= 0 ? json(counts->cutAtSlot) : json(nullptr)}};
}

json summaryJson(const ExperimentResult& r) {
    if (r.config.languageModel()) return lmSummaryJson(r);
    json j;
    j["name"] = r.config.name;
    j["backend"] = r.backendName;
    j["stages"] = r.config.stages;
    j["f_star"] = r.optimum;
    j["L"] = r.smoothness;
    j["slot_budget"] = r.budget.slotBudget;
    j["update_budget"] = r.budget.updateBudget;
    j["pd_microbatches"] = r.budget.pipeDreamMicrobatches;
    j["budget_compare"] = enumName(kBudgetCompares, r.config.budget.compare);
    j["budget_rule"] = enumName(kBudgetRules, r.config.budget.rule);
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
        m.update(runLengthJson(o));
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
        if (res.timeline) {
            const Timeline& tl = *res.timeline;
            m["peak_stashed_copies"] = tl.peakStash;
            // The schedule family's own memory and step count (program_schedules.hpp).
            if (isProgramKind(tl.params.kind)) {
                m["stage_rank"] = tl.stageRank;
                m["weight_versions"] = tl.weightVersions;
                m["peak_activations"] = tl.peakActivations;
                m["optimizer_steps"] = tl.stepEndSlots.size();
            }
        }
        if (res.delays) {
            // SPEC section 2.1's three units of the largest delay (max_delay: block updates).
            const auto most = maxDelayByUnit(*res.delays);
            json units;
            for (size_t u = 0; u < most.size(); ++u)
                units[std::string(enumName(kDelayUnits, static_cast<DelayUnit>(u)))] = most[u];
            m["max_delay_by_unit"] = units;
            m["microbatches_per_step"] = res.delays->stepMicrobatches();
        }
        if (res.delayStats) {
            const DelayStats& d = *res.delayStats;
            m["delay_stats"] = {{"max", d.max},
                                {"mean", d.mean},
                                {"p10", d.p10},
                                {"p50", d.p50},
                                {"p90", d.p90},
                                {"formula_max", d.formulaMax},
                                {"formula_mean", d.formulaMean},
                                {"samples", d.samples}};
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
            // Which rule chose the step, with every threshold, and each step's verdict.
            m["step_rule"] = stepRuleObject(o.spec.step.rule);
            m["chosen"] = o.chosen;
            json sw = json::array();
            for (size_t i = 0; i < o.sweep.size(); ++i) {
                const SweepPoint& p = o.sweep[i];
                json e = {{"step_size", p.stepSize},
                          {"final_gap", finiteOrNull(p.finalGap)},
                          {"diverged", p.diverged}};
                if (i < o.grid.size()) {
                    e["tail"] = tailCheckJson(o.grid[i].tail, finiteOrNull);
                    e["stable"] = o.grid[i].tail.stable();
                    if (o.spec.step.rule.kind == StepRule::Stable) {
                        e["candidate"] = o.grid[i].tail.candidate(o.spec.step.rule.stable);
                    }
                }
                sw.push_back(e);
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
    if (r.config.languageModel()) return lmSummaryText(r);
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

std::vector<std::string> writeFolderAtomically(const std::string& folder,
                                               const std::function<void(const fs::path& tmp)>& fill,
                                               const std::atomic<bool>* cancel) {
    const fs::path target = normalised(folder);
    if (target.empty())
        throw IoError("cannot write results into \"" + folder + "\": not a folder path");
    std::string what;
    if (classify(target, what) == Target::Other) {
        throw IoError("refusing to replace " + target.string() + ": it is " + what);
    }
    fs::path tmp = target;
    tmp += ".tmp-" + std::to_string(::getpid());
    std::error_code ec;
    if (!fs::exists(target.parent_path(), ec)) fs::create_directories(target.parent_path(), ec);
    createTemporaryFolder(tmp);
    const auto stopped = [&] { return cancel && cancel->load(); };
    try {
        markFolder(tmp, kResultsMarker, temporaryMarker(kResultsTitle, tmp));
        fill(tmp);
        if (stopped()) throw Interrupted("writing results to " + target.string());
        // Checked again just before the swap: the target may have changed in the meantime.
        if (classify(target, what) == Target::Other) {
            throw IoError("refusing to replace " + target.string() + ": it is " + what);
        }
        // Finished: the marker no longer names a process or a temporary.
        markFolder(tmp, kResultsMarker, finalMarker(kResultsTitle));
        swapInto(tmp, target, fs::exists(fs::symlink_status(target, ec)));
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    // The previous results, now at tmp, are marked as this process's temporary before they go,
    // so that if the process dies now the next run removes them.
    if (fs::exists(tmp / kResultsMarker, ec)) {
        try {
            markFolder(tmp, kResultsMarker, temporaryMarker(kResultsTitle, tmp));
        } catch (const std::exception&) {
        }
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
                                      const std::atomic<bool>* cancel,
                                      const ExtraResultFiles& extra) {
    if (r.config.languageModel()) return writeLmResults(r, folder, cancel, extra);
    // Checked between files: a signal handler or the app sets the flag, the write stops cleanly.
    auto put = [&](const fs::path& path, const std::string& content) {
        if (cancel && cancel->load()) throw Interrupted("writing results to " + folder);
        writeText(path, content);
    };
    return writeFolderAtomically(
        folder,
        [&](const fs::path& tmp) {
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
            put(tmp / "objective_per_slot.csv",
                seriesCsv("slots_completed", 0, names, perSlot, 0.0));
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
                    g.label(o.label)
                        .integer(res.gradNormUpdates[i])
                        .number(res.gradNormSq[i])
                        .number(res.gradNormRunningMean[i])
                        .endRow();
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
                    th.label(o.label)
                        .number(res.theorem->optimisation)
                        .number(res.theorem->noise)
                        .number(res.theorem->staleness)
                        .number(res.theorem->total);
                    if (res.gradNormRunningMean.empty())
                        th.empty();
                    else
                        th.number(res.gradNormRunningMean.back());
                    th.endRow();
                }
                for (const SweepPoint& p : o.sweep) {
                    anySweep = true;
                    sw.label(o.label)
                        .number(p.stepSize)
                        .number(p.finalGap)
                        .integer(p.diverged ? 1 : 0)
                        .endRow();
                }
                if (res.timeline) {
                    put(tmp / ("timeline_" + std::to_string(i) + ".csv"),
                        ganttTableCsv(*res.timeline, res.delays ? &*res.delays : nullptr, o.label));
                }
                if (res.delays) {
                    put(tmp / ("delays_" + std::to_string(i) + ".csv"),
                        delayTableCsv(*res.delays, o.label));
                    put(tmp / ("delay_units_" + std::to_string(i) + ".csv"),
                        delayUnitsCsv(*res.delays, o.label));
                }
                if (res.effectiveDelays) {
                    put(tmp / ("effective_delays_" + std::to_string(i) + ".csv"),
                        delayTableCsv(*res.effectiveDelays, o.label));
                }
            }
            if (anyTheorem) put(tmp / "theorem.csv", th.take());
            if (anySweep) put(tmp / "sweep.csv", sw.take());
            // Schedules on equal terms: final value, time to target, bubble, peak memory.
            if (r.methods.size() > 1)
                put(tmp / "schedule_comparison.csv", scheduleComparisonCsv(scheduleComparison(r)));
            if (extra) extra(tmp);
        },
        cancel);
}

}  // namespace pipelens

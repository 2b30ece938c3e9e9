#pragma once
// Writes an experiment's results as CSV and JSON into a folder. Everything is written into a
// temporary sibling folder first and swapped into place atomically at the end, so a failed or
// interrupted write never leaves a half-written folder and never destroys earlier results. Only a
// folder PipeLens wrote (it holds kResultsMarker) or an empty one is ever replaced.
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiment/run/experiment.hpp"

namespace pipelens {

// Files written (docs/results.md describes each column):
//   summary.json, config.json, objective_per_slot.csv, objective_per_update.csv,
//   grad_norm.csv (when sampled), theorem.csv (RPD), sweep.csv (step-size grids),
//   delays_<i>.csv and timeline_<i>.csv per pipeline method i.
// Throws IoError (disk, permissions, a target that is not PipeLens's) or Interrupted when
// `cancel` became true while writing (the temporary folder is removed first). Returns warnings,
// e.g. that the previous results could not be removed after the swap.
// `extra` (optional) adds files of its own into the temporary folder before the swap, so they
// land with the rest or not at all (pipelens-cli run --figures: the figures and index.html).
using ExtraResultFiles = std::function<void(const std::filesystem::path& tmp)>;
std::vector<std::string> writeResults(const ExperimentResult& result, const std::string& folder,
                                      const std::atomic<bool>* cancel = nullptr,
                                      const ExtraResultFiles& extra = {});

// The file that marks a folder written by PipeLens (a sweep folder: kSweepMarker). Its lines:
//   PipeLens results: this folder may be replaced by the next run     (kResultsTitle)
//   state: final
// and in a temporary folder being written (DIR.tmp-PID, or DIR.old-PID on a file system without
// renameat2), which the next run removes once its writer is provably gone:
//   state: temporary
//   folder: DIR.tmp-PID          the temporary's own name: a copy under another name is not it
//   pid: PID
//   boot_id: (/proc/sys/kernel/random/boot_id)
//   start_time: (field 22 of /proc/self/stat: the PID is not mistaken for a later process's)
inline constexpr const char* kResultsMarker = ".pipelens-results";
inline constexpr const char* kSweepMarker = ".pipelens-sweep";
inline constexpr const char* kResultsTitle =
    "PipeLens results: this folder may be replaced by the next run";
inline constexpr const char* kSweepTitle = "PipeLens sweep folder";
// The bytes a temporary's name adds to the folder's: ".tmp-" and a PID of up to 7 digits.
inline constexpr std::size_t kTemporarySuffixBytes = 12;

// The marker text of a temporary folder `tmp` this process writes, and of a finished folder.
std::string temporaryMarker(const std::string& title, const std::filesystem::path& tmp);
std::string finalMarker(const std::string& title);
// Writes a marker file into `folder` (atomically). Throws IoError.
void markFolder(const std::filesystem::path& folder, const char* markerName,
                const std::string& text);

// The one policy for the path of a results folder, shared by run, sweep and reproduce (ConfigError
// naming `field`): not empty, /, . or ..; not the current folder or one that holds it; a name
// short enough for its temporaries (NAME_MAX); not a symbolic link or a file; replaceable, and
// in a folder that can be written. Removes the stale temporaries beside it. Returns the
// absolute, normalised path (no trailing slash).
std::string checkResultsPath(const std::string& folder, const std::string& field = "--out");

// Creates the temporary folder `tmp` (removing a stale temporary of that name first); throws
// IoError when something else has that name.
void createTemporaryFolder(const std::filesystem::path& tmp);

// Runs `write` with SIGINT / SIGTERM turned into a clean stop: the flag it gets becomes true, the
// write removes its temporaries and throws, and the signal is raised again with its previous
// action once `write` returned or threw.
std::vector<std::string> writeStoppable(
    const std::function<std::vector<std::string>(const std::atomic<bool>*)>& write);

// Checks a results folder before a run, so that a bad path fails at once and not after the run:
// checkResultsPath, and an existing folder must be empty or PipeLens results.
std::string prepareResultsFolder(const std::string& folder, const std::string& field = "--out");

nlohmann::json summaryJson(const ExperimentResult& result);

// How long a pipeline method ran (docs/results.md, summary.json): the N of its timeline before
// any cut (under budget.rule = truncate a longer timeline than ran, whose later microbatches never
// started), the microbatches that finished (their last backward, stage 1's, ended before
// slotsRun), the slots run (the timeline's, or where a diverged run stopped), and the slot at
// which a truncate budget cut the run (-1: not cut).
struct RunLengthCounts {
    long long microbatchesPlanned = 0;
    long long microbatchesFinished = 0;
    int slotsRun = 0;
    int cutAtSlot = -1;
};
// From the method's result timeline; nullopt for RPD (no timeline).
std::optional<RunLengthCounts> runLengthCounts(const MethodRun& run);
// Those counts as summary.json fields: microbatches_planned, microbatches_finished, slots_run,
// cut_at_slot (null when not cut); an empty object for RPD.
nlohmann::json runLengthJson(const MethodRun& run);

// Creates `folder` atomically: `fill` writes into a temporary sibling folder (marked with
// kResultsMarker), which is swapped with `folder` in one step (renameat2 RENAME_EXCHANGE) only
// when `fill` returns; if it throws, or `cancel` became true (Interrupted), the temporary folder
// is removed and `folder` is untouched. Refuses (IoError) to replace anything but an empty folder
// or one PipeLens wrote. Returns warnings, as writeResults.
std::vector<std::string> writeFolderAtomically(
    const std::string& folder, const std::function<void(const std::filesystem::path& tmp)>& fill,
    const std::atomic<bool>* cancel = nullptr);

// Writes `content` to `path` atomically (replaceFileAtomically: refuses a target that is not a
// regular file, writes through a symbolic link, removes its temporary on failure). Throws IoError.
void writeFileAtomically(const std::string& path, const std::string& content);

// A short human-readable table, one line per method.
std::string summaryText(const ExperimentResult& result);

}  // namespace pipelens

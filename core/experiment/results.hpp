#pragma once
// Writes an experiment's results as CSV and JSON into a folder. Everything is written into a
// temporary sibling folder first and swapped into place atomically at the end, so a failed or
// interrupted write never leaves a half-written folder and never destroys earlier results. Only a
// folder PipeLens wrote (it holds kResultsMarker) or an empty one is ever replaced.
#include <atomic>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/experiment.hpp"

namespace pipelens {

// Files written (docs/results.md describes each column):
//   summary.json, config.json, objective_per_slot.csv, objective_per_update.csv,
//   grad_norm.csv (when sampled), theorem.csv (RPD), sweep.csv (step-size grids),
//   delays_<i>.csv and timeline_<i>.csv per pipeline method i.
// Throws IoError (disk, permissions, a target that is not PipeLens's) or Interrupted when
// `cancel` became true while writing (the temporary folder is removed first). Returns warnings,
// e.g. that the previous results could not be removed after the swap.
std::vector<std::string> writeResults(const ExperimentResult& result, const std::string& folder,
                                      const std::atomic<bool>* cancel = nullptr);

// The file that marks a folder written by PipeLens.
inline constexpr const char* kResultsMarker = ".pipelens-results";

// Checks a results folder before a run, so that a bad path fails at once and not after the run:
// refuses (ConfigError naming `field`) an empty path, the root, an existing file, an existing
// folder that is neither empty nor PipeLens results, a read-only one, and a parent that cannot
// be written. Removes temporaries that interrupted runs left beside it. Returns the absolute,
// normalised path (no trailing slash).
std::string prepareResultsFolder(const std::string& folder, const std::string& field = "--out");

nlohmann::json summaryJson(const ExperimentResult& result);

// Creates `folder` atomically: `fill` writes into a temporary sibling folder (marked with
// kResultsMarker), which is swapped with `folder` in one step (renameat2 RENAME_EXCHANGE) only
// when `fill` returns; if it throws, or `cancel` became true (Interrupted), the temporary folder
// is removed and `folder` is untouched. Refuses (IoError) to replace anything but an empty folder
// or one PipeLens wrote. Returns warnings, as writeResults.
std::vector<std::string> writeFolderAtomically(
    const std::string& folder, const std::function<void(const std::filesystem::path& tmp)>& fill,
    const std::atomic<bool>* cancel = nullptr);

// Writes `content` to `path` atomically (temporary name, then rename). Throws IoError.
void writeFileAtomically(const std::string& path, const std::string& content);

// A short human-readable table, one line per method.
std::string summaryText(const ExperimentResult& result);

}  // namespace pipelens

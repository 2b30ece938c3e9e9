#pragma once
// Writes an experiment's results as CSV and JSON into a folder. Everything is written into a
// temporary sibling folder first and renamed into place at the end, so a failed or interrupted
// write never leaves a half-written folder and never destroys earlier results.
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
void writeResults(const ExperimentResult& result, const std::string& folder);

nlohmann::json summaryJson(const ExperimentResult& result);

// Creates `folder` atomically: `fill` writes into a temporary sibling folder, which replaces
// `folder` only when `fill` returns; if it throws, the temporary folder is removed and `folder`
// is untouched. Throws IoError.
void writeFolderAtomically(const std::string& folder,
                           const std::function<void(const std::filesystem::path& tmp)>& fill);

// Writes `content` to `path` atomically (temporary name, then rename). Throws IoError.
void writeFileAtomically(const std::string& path, const std::string& content);

// A short human-readable table, one line per method.
std::string summaryText(const ExperimentResult& result);

}  // namespace pipelens

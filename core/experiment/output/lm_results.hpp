#pragma once
// The language model's part of the one results writer: writeResults, summaryJson and
// summaryText (results.hpp) call these for a result whose config is a language model
// (docs/results.md, "Language model"). The linear models' f*, L and theorem do not exist here and
// are absent from the files, not zero. Callers use results.hpp.
#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"

namespace pipelens {

// summary.json, config.json, loss_per_slot.csv, loss_per_update.csv, forward_losses.csv,
// memory.csv, samples.txt; full_objective_per_slot.csv and full_objective_per_update.csv when
// objective.full_objective is set; held_out.csv with a held-out part; sweep.csv for step-size
// grids. Throws IoError or Interrupted as writeResults; returns its warnings.
std::vector<std::string> writeLmResults(const ExperimentResult& result, const std::string& folder,
                                        const std::atomic<bool>* cancel = nullptr,
                                        const ExtraResultFiles& extra = {});

nlohmann::json lmSummaryJson(const ExperimentResult& result);

// A head line (sizes, budget, the engine PD and LocalSGD ran on), then one line per method: step
// size (and how it was chosen), updates, final loss, divergence.
std::string lmSummaryText(const ExperimentResult& result);

}  // namespace pipelens

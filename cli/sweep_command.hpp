#pragma once
// What `pipelens-cli sweep` shares between its single-process and its MPI form: the parsed
// command, the progress line and the closing line.
#include <ostream>
#include <string>
#include <vector>

#include "backend_select.hpp"
#include "experiment/sweep/sweep.hpp"

namespace pipelens {

struct SweepCommand {
    SweepSpec spec;        // with --backend / --device applied
    std::string specPath;  // the sweep file as given
    std::string outDir;
    bool resume = false;
    bool quiet = false;
    int threads = 0;         // 0: one per core
    std::string stepRule;    // --step-rule as given ("" when absent), for the resume command
    std::string budgetRule;  // --budget-rule as given ("" when absent), for the resume command
};

// --step-rule RULE: best_final, stable, stable:PRESET or a JSON object (docs/config.md); a
// ConfigError naming --step-rule, the value and what is allowed.
StepRuleSpec parseStepRuleOption(const std::string& text);

// One backend for every point: chosen for a point with gradient noise if there is one.
BackendChoice selectSweepBackend(const SweepSpec& spec, std::vector<std::string>& notices);

// "points 3/8, 40% of the work, 12s elapsed, about 18s left"
void printSweepProgress(std::ostream& err, const SweepProgress& progress);

// "pipelens-cli sweep SWEEP.json --out DIR --resume" (and its --step-rule) with the command's paths
// (shell-quoted where needed): what continues an interrupted or failed sweep.
std::string sweepResumeCommand(const SweepCommand& command);

// After a sweep stopped by an error with its folder in place: how to continue it.
void printSweepResumeHint(const SweepCommand& command, std::ostream& err);

// The end of a run: 0, or 130 with a note on stderr when points are missing (interrupted).
int reportSweepEnd(const SweepCommand& command, const std::string& folderPath,
                   const SweepPoints& points, std::ostream& out, std::ostream& err);

}  // namespace pipelens

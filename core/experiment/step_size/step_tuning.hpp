#pragma once
// Runs one method over a list of step sizes and several seeds, and picks a step by a rule
// (SPEC section 6): each step's final values as mean and sd over seeds, its seed-averaged rule
// curve (ruleCurve) checked by the stable rule, and the run of the chosen step for seed 0. It knows
// nothing of plans or schedules: the caller passes the function that runs one (step, seed).
#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "experiment/step_size/seed_stats.hpp"
#include "experiment/step_size/step_rules.hpp"
#include "experiment/sweep/point_result.hpp"
#include "replay/run_result.hpp"

namespace pipelens {

// Runs the method with steps[stepIndex] and seed index (0 ... seeds-1) to the end (the index, so
// live views know the grid point without reading it back from the step size).
using SeededRun = std::function<RunResult(size_t stepIndex, int seed)>;

struct TunedSteps {
    std::vector<GridStep> grid;  // one per step size, in the order given
    int chosen = 0;              // index into grid
    bool allDiverged = false;    // the rule found nothing usable: chosen is the first step
    CurveStats chosenCurve;      // f - f* of the chosen step (gapCurve), over seeds
    RunResult run;               // the chosen step's run for seed 0
    bool cancelled = false;      // stopped early: grid holds the steps that finished
};

// f - f* along a run's own axis: after each slot for pipelines (from objectivePerSlot), after
// each block update for RPD; [0] is the start. A diverged run ends with +inf.
std::vector<double> gapCurve(const RunResult& run);
// The curve a step rule reads (its tail is checked by the stable rule): per slot or per block
// update as rule.curve says (auto: gapCurve's axis; slots on RPD, which has no per-slot curve:
// its per-update curve), of f - f* or f as rule.value says; [0] is the start and a diverged run
// ends with +inf. curve = updates on a run without objectivePerUpdate is a ConfigError naming
// sampling.objective_per_update.
std::vector<double> ruleCurve(const RunResult& run, const StepRuleSpec& rule);
// True when the run is unusable for step selection: diverged, non-finite at the end, or ended
// above where it started.
bool runDiverged(const RunResult& run);

// Steps in increasing order are expected (the smallest is the fallback when all diverge).
// `cancel` is polled between runs; a cancelled tuning returns what it has with cancelled set.
TunedSteps tuneSteps(const std::vector<double>& steps, int seeds, const StepRuleSpec& rule,
                     const SeededRun& run, const std::atomic<bool>* cancel = nullptr);

}  // namespace pipelens

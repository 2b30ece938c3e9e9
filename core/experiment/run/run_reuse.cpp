#include "experiment/run/run_reuse.hpp"

namespace pipelens {
namespace {

// Everything a method's run depends on besides its own parameters: the config without its name,
// its view and its methods, normalized (a key the other objective or source leaves unused is no
// difference).
ExperimentConfig runInputs(const ExperimentConfig& c) {
    ExperimentConfig inputs = c;
    inputs.name.clear();
    inputs.view.reset();
    inputs.methods.clear();
    inputs.normalize();
    return inputs;
}

}  // namespace

const MethodRun* reusableRun(const ExperimentResult& previous, const ExperimentConfig& config,
                             const ExperimentBudget& budget, const MethodSpec& spec) {
    if (previous.cancelled) return nullptr;
    // A shared noise stream makes a run's noise depend on every run before it (and on where its
    // method stands in the list): such runs are always run again.
    if (config.objective.noiseStream == NoiseStream::Shared) return nullptr;
    if (budget.slotBudget != previous.budget.slotBudget ||
        budget.updateBudget != previous.budget.updateBudget ||
        runInputs(config) != runInputs(previous.config)) {
        return nullptr;
    }
    const MethodSpec wanted = normalizedMethod(spec);
    for (const MethodRun& run : previous.methods) {
        const bool complete =
            run.result.finished || run.result.divergence.diverged || run.allDiverged;
        if (complete && normalizedMethod(run.spec) == wanted) return &run;
    }
    return nullptr;
}

}  // namespace pipelens

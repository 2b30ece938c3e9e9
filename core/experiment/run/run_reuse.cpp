#include "experiment/run/run_reuse.hpp"

namespace pipelens {
namespace {

// Everything a method's run depends on besides its own parameters.
std::string runKey(const ExperimentConfig& c, const ExperimentBudget& budget, const MethodSpec& m) {
    nlohmann::json j = c.toJson();
    j.erase("methods");
    j.erase("name");
    ExperimentConfig one;
    one.methods = {m};
    j["method"] = one.toJson()["methods"][0];
    j["slot_budget"] = budget.slotBudget;
    j["update_budget"] = budget.updateBudget;
    j["base"] = c.baseDir;
    return j.dump();
}

}  // namespace

const MethodRun* reusableRun(const ExperimentResult& previous, const ExperimentConfig& config,
                             const ExperimentBudget& budget, const MethodSpec& spec) {
    if (previous.cancelled) return nullptr;
    const std::string key = runKey(config, budget, spec);
    for (const MethodRun& run : previous.methods) {
        const bool complete =
            run.result.finished || run.result.divergence.diverged || run.allDiverged;
        if (complete && runKey(previous.config, previous.budget, run.spec) == key) return &run;
    }
    return nullptr;
}

}  // namespace pipelens

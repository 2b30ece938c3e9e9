#pragma once
// The smallest language-model experiment the workbench's tests run: S = 3, C = 16, T = 8, b = 4
// on 5000 built-in characters, PD, LocalSGD (R = 3, H = 2) and RPD at γ = 0.5 over `slotBudget`
// slots on the CPU engine. Seconds in Release, also under the sanitizers.
#include "controls/lm_objective_fields.hpp"
#include "experiment/config/config.hpp"

namespace pipelens::ui::test {

inline ExperimentConfig tinyLanguageModel(int slotBudget) {
    ExperimentConfig c = defaultExperiment();
    c.methods.clear();
    LmObjectiveFields::switchToLanguageModel(c);
    c.name = "tiny-lm";
    c.backend = BackendKind::Cpu;
    c.stages = 3;
    c.batchSize = 4;
    LanguageModelSpec& m = *c.objective.languageModel;
    m.width = 16;
    m.heads = 2;
    m.context = 8;
    m.corpusCharacters = 5000;
    m.sampleLines = 2;
    m.sampleLength = 40;
    c.budget = {};
    c.budget.totalSlots = slotBudget;
    MethodSpec pd;
    pd.step.value = 0.5;
    MethodSpec local = pd;
    local.method = Method::LocalSgd;
    local.replicas = 3;
    local.localSteps = 2;
    MethodSpec rpd = pd;
    rpd.method = Method::RandomizedPipeDream;
    c.methods = {pd, local, rpd};
    return c;
}

}  // namespace pipelens::ui::test

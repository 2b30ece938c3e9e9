#include "cmdline/experiment_arg.hpp"

#include <optional>

#include "errors.hpp"
#include "util/named_enum.hpp"

namespace pipelens::cmdline {

BudgetRule parseBudgetRuleOption(const std::string& text) {
    if (const std::optional<BudgetRule> rule = parseEnum(kBudgetRules, text)) return *rule;
    throw ConfigError(std::string("--budget-rule = \"") + shownValue(text) +
                      "\" is not allowed: one of " + enumNameList(kBudgetRules));
}

void applyBudgetRuleOption(const ParsedArgs& a, ExperimentConfig& config) {
    if (a.has("budget-rule")) config.budget.rule = parseBudgetRuleOption(a.get("budget-rule"));
}

ExperimentConfig experimentOf(const ParsedArgs& a, const std::string& command) {
    ExperimentConfig config;
    if (a.has("default")) {
        if (!a.positional().empty()) {
            throw ConfigError("give either a config file or --default, not both");
        }
        config = defaultExperiment();
    } else {
        if (a.positional().size() != 1) {
            throw ConfigError(command + " needs one config file (or --default); see --help");
        }
        config = ExperimentConfig::fromFile(a.positional()[0]);
    }
    applyBudgetRuleOption(a, config);
    return config;
}

}  // namespace pipelens::cmdline

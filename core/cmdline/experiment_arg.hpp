#pragma once
// The experiment a command runs, as `run` and `animate` take it: one config file, or --default.
#include <string>

#include "cmdline/args.hpp"
#include "experiment/config/config.hpp"

namespace pipelens::cmdline {

// The config file named by the command's one positional argument, or the default experiment
// with --default. ConfigError when both or neither are given (naming `command`), or the file is
// refused.
// With --budget-rule (run, animate), the config's budget.rule replaced by it.
ExperimentConfig experimentOf(const ParsedArgs& a, const std::string& command);

// --budget-rule RULE: fit, truncate or reach (budget.rule, docs/config.md); a ConfigError naming
// --budget-rule, the value and the allowed ones.
BudgetRule parseBudgetRuleOption(const std::string& text);
// The config's budget.rule replaced by --budget-rule when it is given (run, sweep, animate).
void applyBudgetRuleOption(const ParsedArgs& a, ExperimentConfig& config);

}  // namespace pipelens::cmdline

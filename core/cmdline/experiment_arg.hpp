#pragma once
// The experiment a command runs, as `run` and `animate` take it: one config file, or --default.
#include <string>

#include "cmdline/args.hpp"
#include "experiment/config/config.hpp"

namespace pipelens::cmdline {

// The config file named by the command's one positional argument, or the default experiment
// with --default. ConfigError when both or neither are given (naming `command`), or the file is
// refused.
ExperimentConfig experimentOf(const ParsedArgs& a, const std::string& command);

}  // namespace pipelens::cmdline

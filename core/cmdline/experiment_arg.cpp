#include "cmdline/experiment_arg.hpp"

#include "errors.hpp"

namespace pipelens::cmdline {

ExperimentConfig experimentOf(const ParsedArgs& a, const std::string& command) {
    if (a.has("default")) {
        if (!a.positional().empty()) {
            throw ConfigError("give either a config file or --default, not both");
        }
        return defaultExperiment();
    }
    if (a.positional().size() != 1) {
        throw ConfigError(command + " needs one config file (or --default); see --help");
    }
    return ExperimentConfig::fromFile(a.positional()[0]);
}

}  // namespace pipelens::cmdline

#pragma once
// Chooses the compute backend for a run from the config (backend, device, precision) and the
// devices present; explains the choice in `notices`.
#include <string>
#include <vector>

#include "experiment/config.hpp"
#include "experiment/experiment.hpp"

namespace pipelens {

struct BackendChoice {
    BackendProvider provider;
    std::string name;
};

BackendChoice selectBackend(const ExperimentConfig& config, std::vector<std::string>& notices);

}  // namespace pipelens

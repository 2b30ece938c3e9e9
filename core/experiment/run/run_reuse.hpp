#pragma once
// An edit in the app reruns only what it affects: a method whose run would be identical to one
// of the previous result is taken from it.
#include "experiment/run/experiment.hpp"

namespace pipelens {

// The run of `previous` that `spec` would repeat under `config` and `budget` (same data,
// pipeline, budget and method parameters), or null. Only complete runs are reused: finished or
// diverged, never cancelled.
const MethodRun* reusableRun(const ExperimentResult& previous, const ExperimentConfig& config,
                             const ExperimentBudget& budget, const MethodSpec& spec);

}  // namespace pipelens

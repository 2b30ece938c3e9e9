#pragma once
// Runs an experiment for the workbench: the engine's runOne for every method (in parallel, each
// cancellable between chunks), step-size grids resolved as the command-line tool does, and the
// objective (data set, f*, L) cached between runs, so a change of S, gamma or a method does not
// synthesise the data and solve for f* again.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "experiment/experiment.hpp"

namespace pipelens::ui {

class ObjectiveCache {
public:
    // The objective for `config` with f* and L already computed (safe to share across threads).
    std::shared_ptr<const LinearObjective> get(const ExperimentConfig& config);

private:
    std::mutex mutex_;
    std::string key_;
    std::shared_ptr<const LinearObjective> objective_;
};

// Hooks for live curves, called on worker threads: `planned` once before any method runs (the
// plan, no results yet), `chunk` between chunks of method i's run (also once, with the whole
// result, for a method taken from `previous`).
struct LiveHooks {
    std::function<void(const ExperimentResult&)> planned;
    std::function<void(size_t, const RunResult&, double)> chunk;
};

// Same result as pipelens::runExperiment (the tests compare them), with the cache above. Methods
// whose run would be identical to one in `previous` (same data, pipeline, budget and method
// parameters) are taken from it instead of being run again: an edit reruns only what it affects.
ExperimentResult runExperimentCached(const ExperimentConfig& config, const RunOptions& options,
                                     ObjectiveCache& cache,
                                     const ExperimentResult* previous = nullptr,
                                     const LiveHooks* live = nullptr);

}  // namespace pipelens::ui

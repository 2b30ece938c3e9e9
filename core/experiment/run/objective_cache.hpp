#pragma once
// Keeps the objective of the last config (data set, f*, L), so a change of S, gamma or a method
// does not synthesise the data and solve for f* again. Safe to share between threads.
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "experiment/config/config.hpp"

namespace pipelens {

class LinearObjective;

using StageReport = std::function<void(const std::string&)>;

// Builds the objective of `config` and computes f* and L, announcing each slow step on `onStage`
// (so it can be shared between threads afterwards).
std::shared_ptr<const LinearObjective> prepareObjective(const ExperimentConfig& config,
                                                        const StageReport& onStage = {});

// The same, but f* and L are computed on a thread of their own while the caller goes on (the
// runs start at once; replays judge divergence from bounds on f* until it arrives). The future
// waits for that thread.
struct ObjectiveAside {
    std::shared_ptr<const LinearObjective> objective;
    std::future<void> constants;
};
ObjectiveAside prepareObjectiveAside(const ExperimentConfig& config,
                                     const StageReport& onStage = {});

// What the objective depends on: data, loss, batch size and where relative paths point. Not S:
// a change of S (dragged in the app) must not synthesise the data and solve for f* again.
struct ObjectiveInputs {
    DataSpec data;
    ObjectiveSpec objective;
    int batchSize = 0;
    std::string baseDir;

    static ObjectiveInputs of(const ExperimentConfig& config);
    bool operator==(const ObjectiveInputs&) const = default;
};

class ObjectiveCache {
  public:
    // The objective for `config` with f* and L already computed (safe to share across threads).
    std::shared_ptr<const LinearObjective> get(const ExperimentConfig& config,
                                               const StageReport& onStage = {});

    // The cached objective if it is `config`'s, else null; never builds one nor waits for a
    // build in progress (for the GUI thread).
    std::shared_ptr<const LinearObjective> peek(const ExperimentConfig& config);

  private:
    std::mutex mutex_;
    ObjectiveInputs key_;
    std::shared_ptr<const LinearObjective> objective_;
};

}  // namespace pipelens

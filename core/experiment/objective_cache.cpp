#include "experiment/objective_cache.hpp"

#include "experiment/experiment.hpp"

namespace pipelens {
namespace {

// What the objective depends on: data, loss, batch size, S (it checks S <= d) and where
// relative paths point.
std::string objectiveKey(const ExperimentConfig& c) {
    nlohmann::json j = c.toJson();
    return nlohmann::json{{"data", j["data"]}, {"objective", j["objective"]},
                          {"batch_size", c.batchSize}, {"stages", c.stages},
                          {"base", c.baseDir}}
        .dump();
}

}  // namespace

std::shared_ptr<const LinearObjective> prepareObjective(const ExperimentConfig& config,
                                                        const StageReport& onStage) {
    if (onStage) onStage("setup: building the data set");
    std::shared_ptr<LinearObjective> objective = buildObjective(config);
    if (onStage) {
        onStage("setup: computing f* and L (n = " + std::to_string(objective->rows()) +
                ", d = " + std::to_string(objective->dim()) + ")");
    }
    objective->optimum();  // computed once here, before threads share it
    objective->smoothness();
    return objective;
}

std::shared_ptr<const LinearObjective> ObjectiveCache::get(const ExperimentConfig& config,
                                                           const StageReport& onStage) {
    const std::string key = objectiveKey(config);
    std::lock_guard<std::mutex> lock(mutex_);
    if (objective_ && key == key_) return objective_;
    auto objective = prepareObjective(config, onStage);
    key_ = key;
    objective_ = std::move(objective);
    return objective_;
}

}  // namespace pipelens

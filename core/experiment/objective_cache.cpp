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

std::shared_ptr<const LinearObjective> ObjectiveCache::get(const ExperimentConfig& config) {
    const std::string key = objectiveKey(config);
    std::lock_guard<std::mutex> lock(mutex_);
    if (objective_ && key == key_) return objective_;
    auto objective = buildObjective(config);
    objective->optimum();  // computed once here, before threads share it
    objective->smoothness();
    key_ = key;
    objective_ = std::move(objective);
    return objective_;
}

}  // namespace pipelens

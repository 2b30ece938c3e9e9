#include "experiment/run/objective_cache.hpp"

#include "experiment/run/experiment.hpp"

namespace pipelens {

ObjectiveInputs ObjectiveInputs::of(const ExperimentConfig& c) {
    // Normalized: a data key the source leaves unused is no difference.
    ExperimentConfig n = c;
    n.normalize();
    return {n.data, n.objective, n.batchSize, n.baseDir};
}

namespace {

std::shared_ptr<LinearObjective> buildAnnounced(const ExperimentConfig& config,
                                                const StageReport& onStage, const char* when) {
    if (onStage) onStage("setup: building the data set");
    std::shared_ptr<LinearObjective> objective = buildObjective(config);
    if (onStage) {
        onStage("setup: computing f* and L (n = " + std::to_string(objective->rows()) +
                ", d = " + std::to_string(objective->dim()) + ")" + when);
    }
    return objective;
}

}  // namespace

std::shared_ptr<const LinearObjective> prepareObjective(const ExperimentConfig& config,
                                                        const StageReport& onStage) {
    std::shared_ptr<LinearObjective> objective = buildAnnounced(config, onStage, "");
    objective->optimum();  // computed once here, before threads share it
    objective->smoothness();
    return objective;
}

ObjectiveAside prepareObjectiveAside(const ExperimentConfig& config, const StageReport& onStage) {
    std::shared_ptr<LinearObjective> objective =
        buildAnnounced(config, onStage, " beside the runs");
    ObjectiveAside out;
    out.constants = objective->computeConstantsAside();
    out.objective = std::move(objective);
    return out;
}

std::shared_ptr<const LinearObjective> ObjectiveCache::get(const ExperimentConfig& config,
                                                           const StageReport& onStage) {
    const ObjectiveInputs key = ObjectiveInputs::of(config);
    std::lock_guard<std::mutex> lock(mutex_);
    if (objective_ && key == key_) {
        splitBlocks(objective_->dim(), config.stages);  // S <= d, with the standard message
        return objective_;
    }
    auto objective = prepareObjective(config, onStage);
    key_ = key;
    objective_ = std::move(objective);
    return objective_;
}

std::shared_ptr<const LinearObjective> ObjectiveCache::peek(const ExperimentConfig& config) {
    const ObjectiveInputs key = ObjectiveInputs::of(config);
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || !objective_ || key != key_) return nullptr;
    return objective_;
}

}  // namespace pipelens

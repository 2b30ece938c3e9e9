#include "experiment_runner.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>
#include <vector>

namespace pipelens::ui {
namespace {

// What the objective depends on: data, loss, batch size and where relative paths point.
std::string objectiveKey(const ExperimentConfig& c) {
    nlohmann::json j = c.toJson();
    return nlohmann::json{{"data", j["data"]}, {"objective", j["objective"]},
                          {"batch_size", c.batchSize}, {"stages", c.stages},
                          {"base", c.baseDir}}
        .dump();
}

// Everything a method's run depends on besides its own parameters.
std::string runKey(const ExperimentConfig& c, const ExperimentPlan& plan, const MethodSpec& m) {
    nlohmann::json j = c.toJson();
    j.erase("methods");
    j.erase("name");
    ExperimentConfig one;
    one.methods = {m};
    j["method"] = one.toJson()["methods"][0];
    j["slot_budget"] = plan.slotBudget;
    j["update_budget"] = plan.updateBudget;
    j["base"] = c.baseDir;
    return j.dump();
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

ExperimentResult runExperimentCached(const ExperimentConfig& config, const RunOptions& options,
                                     ObjectiveCache& cache, const ExperimentResult* previous,
                                     const LiveHooks* live) {
    ExperimentResult res;
    res.config = config;
    const auto objective = cache.get(config);
    res.optimum = objective->optimum();
    res.smoothness = objective->smoothness();
    res.plan = planExperiment(config, *objective);
    res.backendName = options.backendName;
    res.methods.resize(res.plan.runs.size());
    std::vector<std::exception_ptr> failures(res.plan.runs.size());
    if (live && live->planned) live->planned(res);
    // One thread per method: they are independent and each polls the cancel flag.
    std::vector<std::thread> threads;
    for (size_t i = 0; i < res.plan.runs.size(); ++i) {
        if (previous && !previous->cancelled) {
            const std::string key = runKey(config, res.plan, config.methods[i]);
            bool reused = false;
            for (size_t j = 0; j < previous->methods.size() && !reused; ++j) {
                const MethodOutcome& o = previous->methods[j];
                if (o.result.finished || o.result.divergence.diverged || o.allDiverged) {
                    if (runKey(previous->config, previous->plan, o.plan.spec) == key) {
                        res.methods[i] = o;
                        reused = true;
                    }
                }
            }
            if (reused) {
                if (live && live->chunk) live->chunk(i, res.methods[i].result, 1.0);
                continue;
            }
        }
        threads.emplace_back([&, i] {
            try {
                RunOptions own = options;
                if (live && live->chunk) {
                    own.onChunk = [live, i](const RunResult& r, double done) {
                        live->chunk(i, r, done);
                    };
                }
                res.methods[i] = runMethod(config, res.plan.runs[i], objective, own);
            } catch (...) {
                failures[i] = std::current_exception();
            }
        });
    }
    for (auto& t : threads) t.join();
    for (const auto& f : failures) {
        if (f) std::rethrow_exception(f);
    }
    res.cancelled = options.cancel && options.cancel->load();
    return res;
}

}  // namespace pipelens::ui

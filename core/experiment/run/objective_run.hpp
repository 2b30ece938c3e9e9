#pragma once
// The part of an experiment that depends on its objective, as a plug-in of runExperiment: how the
// data set or model is built and planned, how one planned method runs (its step-size grid
// included), and what is said about it. runExperiment (experiment.cpp) does everything else once
// for every objective: the plan's announcement, methods side by side, reuse of unchanged runs,
// progress lines, cancellation. A new objective is one more implementation of this interface.
#include <memory>
#include <string>
#include <vector>

#include "experiment/run/experiment.hpp"

namespace pipelens {

class ObjectiveRun {
  public:
    virtual ~ObjectiveRun() = default;
    // Builds the objective and plans every method; fills what the result knows before any run
    // (f* and L when they are known at once, the language model's problem).
    virtual ExperimentPlan prepare(ExperimentResult& result) = 0;
    // Settings of the planned result that do not do what they say (run_warnings.hpp).
    virtual std::vector<std::string> warnings(const ExperimentResult& result) const = 0;
    // The line announced before the methods start (RunOptions::onStage).
    virtual std::string runningLine(const ExperimentResult& result) const = 0;
    // Runs planned method `index` (config order) to its end or a cancel, on a worker thread.
    virtual MethodRun run(const MethodRun& planned, std::size_t index) = 0;
    // What RunOptions::progress says of a finished method after "LABEL: K block updates".
    virtual std::string doneDetail(const MethodRun& run) const = 0;
    // After every method ran: what was computed beside the runs (the linear models' f* and L).
    virtual void finish(ExperimentResult& result) = 0;
};

std::unique_ptr<ObjectiveRun> linearModelRun(const ExperimentConfig& config,
                                             const RunOptions& options);
std::unique_ptr<ObjectiveRun> languageModelRun(const ExperimentConfig& config,
                                               const RunOptions& options);

}  // namespace pipelens

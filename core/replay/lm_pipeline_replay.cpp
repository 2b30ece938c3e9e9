#include "replay/lm_pipeline_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "compute/lm_cpu_pipeline_executor.hpp"
#include "errors.hpp"
#include "objective/lm/lm_threads.hpp"
#include "replay/corrector_plan.hpp"
#include "replay/replay_checks.hpp"
#include "schedule/program_schedules.hpp"

namespace pipelens {

// ------------------------------------------------------------------------------ replay

template <typename Real>
LmPipelineReplay<Real>::LmPipelineReplay(std::shared_ptr<const CharTransformerProblem> problem,
                                         LmPipelineConfig config,
                                         std::unique_ptr<LmPipelineExecutor> executor)
    : LmReplayBase<Real>(std::move(problem), config.options),
      config_(std::move(config)),
      executor_(std::move(executor)) {
    const CharTransformerProblem& p = *this->problem_;
    const Timeline& tl = config_.timeline;
    const int S = p.layout.stages();
    const int N = tl.params.microbatches;
    if (tl.params.stages != S) {
        throw ConfigError("stages = " + std::to_string(tl.params.stages) +
                          " of the timeline does not match the model's " + std::to_string(S));
    }
    requireReplicas(config_.replicas);
    requireStepSize(config_.stepSize);
    if (static_cast<int>(config_.batchOf.size()) < N) {
        config_.batchOf = batchSequence(N, p.train.batches(), false, 0);
    }
    if (!executor_) executor_ = makeLmCpuPipelineExecutor(this->problem_, config_.replicas);
    // Not plain: stepScale (a synchronous step's 1 / M) scales the step's gradient sum instead.
    executor_->setOptimizer(config_.optimizer, config_.stepScale);
    events_ = replayOrder(tl);
    if (!config_.optimizer.plain() && config_.stepScale != 1.0) {
        endsStep_ = synchronousStepEnds(events_, S, config_.replicas, config_.stepScale);
    }
    std::optional<DelayTable> effectiveDelays;
    if (config_.correctors.any()) {
        requireCorrectorsRun(config_.correctors, config_.optimizer, config_.stepScale);
        executor_->setCorrectors(config_.correctors);
        CorrectorPlan plan = planCorrectors(events_, tl, config_.replicas, config_.correctors);
        readShift_ = std::move(plan.readShift);
        stepFactor_ = std::move(plan.stepFactor);
        applies_ = std::move(plan.applies);
        effectiveDelays = std::move(plan.effective);
    }
    if (isProgramKind(tl.params.kind)) {
        if (auto bad = backpropOrderViolation(tl)) {
            throw ConfigError("the " + scheduleKindName(tl.params.kind) +
                              " schedule cannot train the language model: " + *bad +
                              ", but its backward needs the gradient from block " +
                              "s + 1 first (use update = sync, or a schedule whose W ops run "
                              "from the last stage to the first)");
        }
    }
    if (parallelSlots()) team_ = std::make_unique<TaskTeam>(config_.slotThreads);
    slotOps_.reserve(static_cast<std::size_t>(S));
    latestForwardLoss_ = std::numeric_limits<double>::quiet_NaN();

    RunResult& r = this->result_;
    r.method = config_.method;
    r.label = config_.label.empty() ? methodName(config_.method) : config_.label;
    r.stages = S;
    r.stepSize = config_.stepSize * config_.stepScale;
    r.microbatches = N;
    r.totalSlots = tl.totalSlots;
    r.timeline = tl;
    r.utilization = utilization(tl);
    if (config_.replicas == 1) {
        r.delays = DelayTable(tl);
        r.effectiveDelays = std::move(effectiveDelays);  // accumulate only
    }
    r.objectivePerSlot.reserve(static_cast<std::size_t>(tl.totalSlots) + 1);
    r.objectivePerSlot.push_back(latestForwardLoss_);  // no forward loss before the first slot
    r.initialObjective = latestForwardLoss_;
    if (config_.options.fullObjectivePerSlot) {
        logFullObjective(this->log_.fullObjectivePerSlot);
        r.initialObjective = this->log_.fullObjectivePerSlot.back();
    }
}

template <typename Real>
void LmPipelineReplay<Real>::logFullObjective(std::vector<double>& curve) {
    curve.push_back(executor_->meanLoss(this->problem_->train));
}

template <typename Real>
bool LmPipelineReplay<Real>::forwardDone(const LmSlotOp& op, double loss) {
    if (op.stage != this->problem_->layout.stages() - 1) return true;
    latestForwardLoss_ = loss;
    this->log_.forwardLosses.push_back({op.microbatch, slot_, op.batch, latestForwardLoss_});
    return this->acceptLoss(latestForwardLoss_, this->result_.updates, slot_, "forward loss");
}

template <typename Real>
bool LmPipelineReplay<Real>::backwardDone() {
    RunResult& r = this->result_;
    ++r.updates;
    ++r.versionChecks;
    r.objectivePerUpdate.push_back(latestForwardLoss_);
    bool ok = true;
    if (config_.options.fullObjectivePerUpdate) {
        logFullObjective(this->log_.fullObjectivePerBlockUpdate);
        ok = this->acceptLoss(this->log_.fullObjectivePerBlockUpdate.back(), r.updates, slot_,
                              "full objective");
    }
    if (config_.options.heldOutEvery > 0 && r.updates % config_.options.heldOutEvery == 0 &&
        this->problem_->heldOut) {
        this->log_.heldOutLoss.emplace_back(r.updates,
                                            executor_->meanLoss(*this->problem_->heldOut));
    }
    return ok;
}

template <typename Real>
bool LmPipelineReplay<Real>::parallelSlots() const {
    // Logging the full objective or the held-out loss between two ops of a slot asks the
    // executor for a whole-model pass mid-slot, so those runs hand it no team.
    // A program schedule's slot may hold several ops of one stage, in an order that matters.
    return config_.slotThreads > 1 && !config_.options.fullObjectivePerUpdate &&
           config_.options.heldOutEvery == 0 && !isProgramKind(config_.timeline.params.kind);
}

template <typename Real>
long long LmPipelineReplay<Real>::advance(long long maxSlots) {
    if (this->done()) return 0;
    const Timeline& tl = config_.timeline;
    RunResult& r = this->result_;
    // An optimizer other than plain SGD takes stepScale as its gradient's scale (setOptimizer).
    const double stepSize =
        config_.optimizer.plain() ? config_.stepSize * config_.stepScale : config_.stepSize;
    long long taken = 0;
    while (taken < maxSlots && slot_ < tl.totalSlots) {
        if (this->cancelRequested()) {
            r.cancelled = true;
            return taken;
        }
        slotOps_.clear();
        for (; nextEvent_ < events_.size() && events_[nextEvent_].slot == slot_; ++nextEvent_) {
            const ReplayEvent& e = events_[nextEvent_];
            slotOps_.push_back({e.op == OpKind::Forward, e.microbatch, e.stage,
                                e.microbatch % config_.replicas,
                                config_.batchOf[static_cast<std::size_t>(e.microbatch)],
                                endsStep_.empty() || endsStep_[nextEvent_] != 0});
            if (!readShift_.empty()) {
                LmSlotOp& op = slotOps_.back();
                op.readShift = readShift_[nextEvent_];
                op.stepFactor = stepFactor_[nextEvent_];
                op.applies = applies_[nextEvent_] != 0;
            }
        }
        // Ops side by side on the slot threads take the cores: no op splits itself as well.
        std::optional<lmk::ScopedThreads> serialOps;
        if (team_) serialOps.emplace(1);
        bool ok =
            executor_->runSlot(slotOps_, stepSize, team_.get(), [this](std::size_t k, double loss) {
                const LmSlotOp& op = slotOps_[k];
                return op.forward ? forwardDone(op, loss) : backwardDone();
            });
        if (ok && nextAveraging_ < tl.averagingSlots.size() &&
            tl.averagingSlots[nextAveraging_] == slot_) {
            executor_->averageReplicas();
            ++nextAveraging_;
        }
        r.objectivePerSlot.push_back(latestForwardLoss_);
        if (ok && config_.options.fullObjectivePerSlot) {
            logFullObjective(this->log_.fullObjectivePerSlot);
            ok = this->acceptLoss(this->log_.fullObjectivePerSlot.back(), r.updates, slot_,
                                  "full objective");
        }
        ++slot_;
        ++taken;
        if (!ok) {
            r.totalSlots = slot_;
            return taken;
        }
    }
    if (slot_ >= tl.totalSlots && !r.finished) {
        r.finished = true;
        this->log_.peakStashedWeights = executor_->peakStashedWeights();
        this->log_.peakKeptInputs = executor_->peakKeptInputs();
        if (r.delays) {
            r.delayStats = delayStats(*r.delays, 0.5);
            r.maxDelay = r.delays->maxDelay();
        }
    }
    return taken;
}

template <typename Real>
Eigen::VectorXd LmPipelineReplay<Real>::weights() const {
    return executor_->weights();
}

std::unique_ptr<LmReplay> makeLmPipelineReplay(
    std::shared_ptr<const CharTransformerProblem> problem, LmPipelineConfig config,
    const LmExecutorFactory& executor) {
    std::unique_ptr<LmPipelineExecutor> e;
    if (executor) e = executor(problem, std::max(config.replicas, 1));
    if (problem->params.precision == LmPrecision::Float) {
        return std::make_unique<LmPipelineReplay<float>>(std::move(problem), std::move(config),
                                                         std::move(e));
    }
    return std::make_unique<LmPipelineReplay<double>>(std::move(problem), std::move(config),
                                                      std::move(e));
}

template class LmPipelineReplay<double>;
template class LmPipelineReplay<float>;

}  // namespace pipelens

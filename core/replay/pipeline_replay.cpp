#include "replay/pipeline_replay.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>

#include "compute/optimizer.hpp"
#include "errors.hpp"
#include "random/numpy_random.hpp"
#include "replay/corrector_plan.hpp"
#include "replay/replay_checks.hpp"
#include "replay/schedule_views.hpp"

namespace pipelens {

PipelineReplay::PipelineReplay(std::shared_ptr<const LinearObjective> objective,
                               std::unique_ptr<ComputeBackend> backend, PipelineReplayConfig config)
    : objective_(std::move(objective)), backend_(std::move(backend)), config_(std::move(config)) {
    const Timeline& tl = config_.timeline;
    const int S = tl.params.stages;
    const int N = tl.params.microbatches;
    requireReplicas(config_.replicas);
    requireStepSize(config_.stepSize);
    if (static_cast<int>(config_.batchOf.size()) < N) {
        config_.batchOf = batchSequence(N, objective_->batches(), false, 0);
    }
    sampling_ = config_.sampling;
    PipelineLayout layout;
    layout.blocks = splitBlocks(objective_->dim(), S);
    layout.replicas = config_.replicas;
    layout.stashSlots.resize(S);
    for (int s = 0; s < S; ++s) layout.stashSlots[s] = std::max(1, tl.peakStash[s]);
    activationSlots_ = std::max(1, tl.peakStash[0]);
    layout.activationSlots = activationSlots_;
    Eigen::VectorXd w0 = Eigen::VectorXd::Zero(objective_->dim());
    backend_->preparePipeline(*objective_, layout, w0);
    startNoise(*backend_, config_.noise);
    backend_->setOptimizer(config_.optimizer, config_.stepScale);

    events_ = replayOrder(tl);
    if (!config_.optimizer.plain() && config_.stepScale != 1.0) {
        // Where each block's synchronous step closes (optimizer.hpp, synchronousStepEnds).
        endsStep_ = synchronousStepEnds(events_, S, config_.replicas, config_.stepScale);
    }
    std::optional<DelayTable> effectiveDelays;
    if (config_.correctors.any()) {
        if (config_.stepScale != 1.0) {
            // validate() refuses correctors on synchronous steps; a guard for direct callers.
            throw std::logic_error(
                "correctors need every block update to be a step of its own "
                "(stepScale = 1)");
        }
        backend_->setCorrectors(config_.correctors);
        CorrectorPlan plan = planCorrectors(events_, tl, config_.replicas, config_.correctors);
        readShift_ = std::move(plan.readShift);
        stepFactor_ = std::move(plan.stepFactor);
        applies_ = std::move(plan.applies);
        effectiveDelays = std::move(plan.effective);
    }
    blockVersion_.assign(static_cast<size_t>(config_.replicas) * S, 0);
    versionAtForward_.assign(static_cast<size_t>(N) * S, -1);
    stashOwner_.resize(S);
    for (int s = 0; s < S; ++s) stashOwner_[s].assign(layout.stashSlots[s], -1);

    result_.method = config_.method;
    result_.label = config_.label.empty() ? methodName(config_.method) : config_.label;
    result_.stages = S;
    result_.stepSize = config_.stepSize * config_.stepScale;
    result_.microbatches = N;
    result_.totalSlots = tl.totalSlots;
    result_.initialObjective = backend_->objective();
    // f* and L are not computed here (they can cost more than the run on large problems): the
    // experiment layer computes them first or beside the run.
    adoptConstants(*objective_);
    result_.objectivePerSlot.reserve(static_cast<size_t>(tl.totalSlots) + 1);
    result_.objectivePerSlot.push_back(result_.initialObjective);
    if (sampling_.objectivePerUpdate) {
        result_.objectivePerUpdate.reserve(static_cast<size_t>(N) * S);
    }
    result_.blockGradNormSq.reserve(static_cast<size_t>(N) * S);
    if (sampling_.gradNormEvery > 0) recordGradNorm(*backend_, 0);
    // Delays and their statistics depend only on the schedule: known even if the run diverges.
    const bool withDelays = config_.replicas == 1 && config_.recordDelays;
    fillScheduleViews(result_, tl, withDelays);
    if (withDelays && effectiveDelays) result_.effectiveDelays = std::move(effectiveDelays);
    if (!checkObjective(result_.initialObjective, 0, 0)) return;
}

long long PipelineReplay::advance(long long maxSlots) {
    if (done()) return 0;
    const Timeline& tl = config_.timeline;
    const int S = tl.params.stages;
    // An optimizer other than plain SGD takes stepScale as its gradient's scale (setOptimizer).
    const double step =
        config_.optimizer.plain() ? config_.stepSize * config_.stepScale : config_.stepSize;
    long long taken = 0;
    while (taken < maxSlots && slot_ < tl.totalSlots) {
        if (cancelRequested()) {
            result_.cancelled = true;
            return taken;
        }
        ops_.clear();
        for (; nextEvent_ < events_.size() && events_[nextEvent_].slot == slot_; ++nextEvent_) {
            const ReplayEvent& e = events_[nextEvent_];
            const int replica = e.microbatch % config_.replicas;
            const int stash = e.microbatch % static_cast<int>(stashOwner_[e.stage].size());
            const size_t mi = static_cast<size_t>(e.microbatch) * S + e.stage;
            int& version = blockVersion_[static_cast<size_t>(replica) * S + e.stage];
            if (e.op == OpKind::Forward) {
                if (stashOwner_[e.stage][stash] != -1) {
                    throw std::logic_error("stash slot still in use: schedule and layout disagree");
                }
                stashOwner_[e.stage][stash] = e.microbatch;
                versionAtForward_[mi] = version;
            } else {
                // Weight stashing: the backward must read exactly the copy its forward used.
                if (stashOwner_[e.stage][stash] != e.microbatch || versionAtForward_[mi] < 0) {
                    throw std::logic_error("version check failed: B(" +
                                           std::to_string(e.microbatch) + ", " +
                                           std::to_string(e.stage) + ") lost its stashed copy");
                }
                stashOwner_[e.stage][stash] = -1;
                ++version;
                ++result_.versionChecks;
            }
            ops_.push_back({e.op, e.stage, config_.batchOf[static_cast<size_t>(e.microbatch)],
                            replica, stash, e.microbatch % activationSlots_,
                            endsStep_.empty() || endsStep_[nextEvent_] != 0});
            if (!readShift_.empty()) {
                PipelineOp& op = ops_.back();
                op.readShift = readShift_[nextEvent_];
                op.stepFactor = stepFactor_[nextEvent_];
                op.applies = applies_[nextEvent_] != 0;
            }
        }
        samples_.clear();
        const bool anyUpdate = std::any_of(ops_.begin(), ops_.end(),
                                           [](const auto& o) { return o.op == OpKind::Backward; });
        if (!ops_.empty()) backend_->runOps(ops_, step, sampling_.objectivePerUpdate, samples_);
        const long long updatesBefore = result_.updates;
        for (const PipelineOp& op : ops_) {
            if (op.op == OpKind::Backward) ++result_.updates;
        }
        bool ok = true;
        // One sample per backward, in order.
        for (size_t i = 0; i < samples_.size() && ok; ++i) {
            result_.blockGradNormSq.push_back(samples_[i].blockGradNormSq);
            result_.gradientBound =
                std::max(result_.gradientBound, std::sqrt(samples_[i].blockGradNormSq));
            if (!sampling_.objectivePerUpdate) continue;
            result_.objectivePerUpdate.push_back(samples_[i].objective);
            ok = checkObjective(samples_[i].objective,
                                updatesBefore + static_cast<long long>(i) + 1, slot_);
        }
        if (nextAveraging_ < tl.averagingSlots.size() &&
            tl.averagingSlots[nextAveraging_] == slot_) {
            backend_->averageReplicas();
            ++nextAveraging_;
        }
        const bool averaged = nextAveraging_ > 0 && tl.averagingSlots[nextAveraging_ - 1] == slot_;
        const double f =
            (anyUpdate || averaged) ? backend_->objective() : result_.objectivePerSlot.back();
        result_.objectivePerSlot.push_back(f);
        if (ok && !sampling_.objectivePerUpdate) ok = checkObjective(f, result_.updates, slot_);
        if (sampling_.gradNormEvery > 0 && anyUpdate) {
            // Sample at the first update count that crossed a multiple of gradNormEvery.
            const long long last = result_.gradNormUpdates.back();
            if (result_.updates / sampling_.gradNormEvery > last / sampling_.gradNormEvery) {
                recordGradNorm(*backend_, result_.updates);
            }
        }
        ++slot_;
        ++taken;
        if (!ok) {
            result_.totalSlots = slot_;
            return taken;
        }
    }
    if (slot_ >= tl.totalSlots) finish();
    return taken;
}

void PipelineReplay::finish() {
    result_.finished = true;
    settleConstants();
}

}  // namespace pipelens

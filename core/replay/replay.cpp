#include "replay/replay.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <sstream>
#include <stdexcept>

#include "errors.hpp"
#include "random/numpy_random.hpp"
#include "replay/replay_checks.hpp"

namespace pipelens {

double RunResult::finalObjective() const {
    if (endObjective) return *endObjective;
    if (!objectivePerUpdate.empty()) return objectivePerUpdate.back();
    if (!objectivePerSlot.empty()) return objectivePerSlot.back();
    return initialObjective;
}

std::vector<int> batchSequence(long long microbatches, int batches, bool shufflePerEpoch,
                               std::uint64_t seed) {
    // The authors' order (SPEC section 6): one default_rng(seed); per epoch arange(M), shuffled
    // if asked, appended; cut at N.
    std::vector<int> out;
    out.reserve(static_cast<size_t>(microbatches));
    std::vector<int> epoch(static_cast<size_t>(batches));
    NumpyRandom rng(seed);
    while (static_cast<long long>(out.size()) < microbatches) {
        std::iota(epoch.begin(), epoch.end(), 0);
        if (shufflePerEpoch) rng.shuffle(std::span<int>(epoch));
        const auto take = std::min<long long>(batches, microbatches - static_cast<long long>(out.size()));
        out.insert(out.end(), epoch.begin(), epoch.begin() + take);
    }
    return out;
}

void Replay::startNoise(ComputeBackend& backend, const GradientNoiseSpec& noise) {
    if (!std::isfinite(noise.sigma) || noise.sigma < 0.0) {
        std::ostringstream s;
        s << "objective.gradient_noise = " << noise.sigma << " is not allowed: a finite number >= 0";
        throw ConfigError(s.str());
    }
    // sigma = 0 never reaches the backend: a run without noise is the run it always was.
    if (noise.sigma > 0.0) backend.setGradientNoise(noise.sigma, noise.seed);
}

bool Replay::checkObjective(double f, long long updatesDone, int slot) {
    const double gap0 = std::max(result_.initialObjective - result_.optimum, 1e-300);
    std::string reason;
    if (!std::isfinite(f)) {
        reason = "the objective became " + std::string(std::isnan(f) ? "NaN" : "infinite");
    } else if (f - result_.optimum > sampling_.blowUpFactor * gap0) {
        std::ostringstream s;
        s << "the objective blew up: f - f* = " << (f - result_.optimum) << " exceeds "
          << sampling_.blowUpFactor << " x the initial gap " << gap0;
        reason = s.str();
    }
    if (reason.empty()) return true;
    Divergence& d = result_.divergence;
    d.diverged = true;
    d.update = updatesDone;
    d.slot = slot;
    d.value = f;
    std::ostringstream msg;
    msg << "diverged at block update " << updatesDone;
    if (slot >= 0) msg << " (slot " << slot << ")";
    msg << ": " << reason << " (step size " << result_.stepSize << ")";
    d.reason = msg.str();
    return false;
}

void Replay::recordGradNorm(ComputeBackend& backend, long long k) {
    const double g = backend.gradientNormSquared();
    result_.gradNormUpdates.push_back(k);
    result_.gradNormSq.push_back(g);
    gradNormSum_ += g;
    result_.gradNormRunningMean.push_back(gradNormSum_ /
                                          static_cast<double>(result_.gradNormSq.size()));
}

// ---------------------------------------------------------------- PipelineReplay

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

    events_ = replayOrder(tl);
    blockVersion_.assign(static_cast<size_t>(config_.replicas) * S, 0);
    versionAtForward_.assign(static_cast<size_t>(N) * S, -1);
    stashOwner_.resize(S);
    for (int s = 0; s < S; ++s) stashOwner_[s].assign(layout.stashSlots[s], -1);

    result_.method = config_.method;
    result_.label = config_.label.empty() ? config_.method : config_.label;
    result_.stages = S;
    result_.stepSize = config_.stepSize * config_.stepScale;
    result_.microbatches = N;
    result_.totalSlots = tl.totalSlots;
    result_.initialObjective = backend_->objective();
    // f* and L are not computed here (they can cost more than the run on large problems): the
    // experiment layer computes them first; unknown, f* is bounded below by 0 for both losses.
    result_.optimum = objective_->hasOptimum() ? objective_->optimum() : 0.0;
    result_.smoothness = objective_->hasSmoothness() ? objective_->smoothness() : 0.0;
    result_.objectivePerSlot.reserve(static_cast<size_t>(tl.totalSlots) + 1);
    result_.objectivePerSlot.push_back(result_.initialObjective);
    if (sampling_.objectivePerUpdate) {
        result_.objectivePerUpdate.reserve(static_cast<size_t>(N) * S);
    }
    result_.blockGradNormSq.reserve(static_cast<size_t>(N) * S);
    if (sampling_.gradNormEvery > 0) recordGradNorm(*backend_, 0);
    result_.timeline = tl;
    result_.utilization = utilization(tl);
    if (config_.replicas == 1 && config_.recordDelays) {
        result_.delays = DelayTable(tl);
    }
    if (!checkObjective(result_.initialObjective, 0, 0)) return;
}

long long PipelineReplay::advance(long long maxSlots) {
    if (done()) return 0;
    const Timeline& tl = config_.timeline;
    const int S = tl.params.stages;
    const double step = config_.stepSize * config_.stepScale;
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
                            replica, stash, e.microbatch % activationSlots_});
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
            ok = checkObjective(samples_[i].objective, updatesBefore + static_cast<long long>(i) + 1,
                                slot_);
        }
        if (nextAveraging_ < tl.averagingSlots.size() && tl.averagingSlots[nextAveraging_] == slot_) {
            backend_->averageReplicas();
            ++nextAveraging_;
        }
        const bool averaged = nextAveraging_ > 0 && tl.averagingSlots[nextAveraging_ - 1] == slot_;
        const double f = (anyUpdate || averaged) ? backend_->objective()
                                                 : result_.objectivePerSlot.back();
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
    if (result_.delays) {
        result_.delayStats = delayStats(*result_.delays, 0.5);
        result_.maxDelay = result_.delays->maxDelay();
    }
}

// ---------------------------------------------------------------- RpdReplay

DelayMode parseDelayMode(const std::string& text) {
    if (text == "uniform") return DelayMode::Uniform;
    if (text == "max") return DelayMode::Max;
    if (text == "zero") return DelayMode::Zero;
    if (text == "pd" || text == "pipedream") return DelayMode::PipeDream;
    throw ConfigError("delay_mode = \"" + text +
                      "\" is not allowed: one of uniform, max, zero, pd");
}

std::string delayModeName(DelayMode mode) {
    switch (mode) {
        case DelayMode::Uniform: return "uniform";
        case DelayMode::Max: return "max";
        case DelayMode::Zero: return "zero";
        case DelayMode::PipeDream: return "pd";
    }
    return "?";
}

StageOrder parseStageOrder(const std::string& text) {
    if (text == "uniform") return StageOrder::Uniform;
    if (text == "pd" || text == "pipedream") return StageOrder::PipeDream;
    throw ConfigError("order = \"" + text + "\" is not allowed: one of uniform, pd");
}

std::string stageOrderName(StageOrder order) {
    return order == StageOrder::Uniform ? "uniform" : "pd";
}

RpdReplay::RpdReplay(std::shared_ptr<const LinearObjective> objective,
                     std::unique_ptr<ComputeBackend> backend, RpdReplayConfig config)
    : objective_(std::move(objective)), backend_(std::move(backend)), config_(std::move(config)),
      rng_(config_.seed) {
    const int S = config_.stages;
    resolveRpdSettings(S, config_.delayMode, config_.order, config_.pipeDream, config_.updates,
                       config_.maxDelay);
    requireStepSize(config_.stepSize);
    // The batch schedule RPD indexes: PD's N microbatches (N = ceil(K / S) without a table).
    const long long pdMicrobatches = config_.pipeDream ? config_.pipeDream->microbatches()
                                                       : (config_.updates + S - 1) / S;
    if (static_cast<long long>(config_.batchOf.size()) < std::max(1LL, pdMicrobatches)) {
        config_.batchOf = batchSequence(std::max(1LL, pdMicrobatches), objective_->batches(),
                                        false, 0);
    }
    sampling_ = config_.sampling;
    delays_.assign(S, 0);
    const auto blocks = splitBlocks(objective_->dim(), S);
    backend_->prepareRpd(*objective_, blocks, static_cast<int>(config_.maxDelay + 1),
                         Eigen::VectorXd::Zero(objective_->dim()));
    startNoise(*backend_, config_.noise);

    result_.method = "rpd";
    result_.label = config_.label.empty() ? "rpd" : config_.label;
    result_.stages = S;
    result_.stepSize = config_.stepSize;
    result_.maxDelay = config_.maxDelay;
    result_.initialObjective = backend_->objective();
    result_.optimum = objective_->hasOptimum() ? objective_->optimum() : 0.0;
    result_.smoothness = objective_->smoothness();  // the theorem needs L
    if (sampling_.objectivePerUpdate) {
        result_.objectivePerUpdate.reserve(static_cast<size_t>(config_.updates));
    }
    result_.blockGradNormSq.reserve(static_cast<size_t>(config_.updates));
    if (sampling_.gradNormEvery > 0) recordGradNorm(*backend_, 0);
    checkObjective(result_.initialObjective, 0, -1);
}

long long RpdReplay::advance(long long maxUpdates) {
    if (done()) return 0;
    const int S = config_.stages;
    long long taken = 0;
    while (taken < maxUpdates && k_ < config_.updates) {
        if (cancelRequested()) {
            result_.cancelled = true;
            return taken;
        }
        const long long cap = std::min(config_.maxDelay, k_);
        int stage = 0;
        int batch = 0;
        // The authors' stream (SPEC section 6): stage, then the index into PD's batch schedule,
        // then the delays (integers(0, cap + 1) draws nothing while cap = 0).
        if (config_.order == StageOrder::PipeDream) {
            const BlockUpdateInfo& u = config_.pipeDream->update(k_);
            stage = u.stage;
            batch = config_.batchOf[static_cast<size_t>(u.microbatch)];
        } else {
            stage = static_cast<int>(rng_.integers(S));
            const auto idx = rng_.integers(static_cast<std::int64_t>(config_.batchOf.size()));
            batch = config_.batchOf[static_cast<size_t>(idx)];
        }
        for (int j = 0; j < S; ++j) {
            switch (config_.delayMode) {
                case DelayMode::Uniform:
                    delays_[j] = static_cast<int>(rng_.integers(cap + 1));
                    break;
                case DelayMode::Max: delays_[j] = static_cast<int>(cap); break;
                case DelayMode::Zero: delays_[j] = 0; break;
                case DelayMode::PipeDream:
                    delays_[j] = static_cast<int>(config_.pipeDream->delay(k_, j));
                    break;
            }
        }
        const UpdateSample smp = backend_->rpdStep(delays_, stage, batch, config_.stepSize,
                                                   sampling_.objectivePerUpdate);
        ++k_;
        ++taken;
        result_.updates = k_;
        result_.blockGradNormSq.push_back(smp.blockGradNormSq);
        result_.gradientBound = std::max(result_.gradientBound, std::sqrt(smp.blockGradNormSq));
        bool ok = true;
        if (sampling_.objectivePerUpdate) {
            result_.objectivePerUpdate.push_back(smp.objective);
            ok = checkObjective(smp.objective, k_, -1);
        } else if (k_ % 256 == 0 || k_ == config_.updates) {
            // Kept, so the final value is the run's and not f(w0) (step-size grids compare it).
            result_.endObjective = backend_->objective();
            ok = checkObjective(*result_.endObjective, k_, -1);
        }
        if (ok && sampling_.gradNormEvery > 0 && k_ % sampling_.gradNormEvery == 0) {
            recordGradNorm(*backend_, k_);
        }
        if (!ok) return taken;
    }
    if (k_ >= config_.updates) finish();
    return taken;
}

void RpdReplay::finish() {
    result_.finished = true;
    TheoremInputs in;
    in.stages = config_.stages;
    in.stepSize = config_.stepSize;
    in.smoothness = result_.smoothness;
    in.gradientBound = result_.gradientBound;
    in.maxDelay = config_.maxDelay;
    in.updates = result_.updates;
    in.initialGap = result_.initialObjective - result_.optimum;
    result_.theorem = theoremBound(in);
}

}  // namespace pipelens

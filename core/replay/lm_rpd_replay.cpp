#include "replay/lm_rpd_replay.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "errors.hpp"
#include "replay/replay_checks.hpp"

namespace pipelens {

template <typename Real>
LmRpdReplay<Real>::LmRpdReplay(std::shared_ptr<const CharTransformerProblem> problem,
                               LmRpdConfig config, std::unique_ptr<LmRpdExecutor> executor)
    : LmReplayBase<Real>(std::move(problem), config.options),
      config_(std::move(config)),
      rng_(config_.seed),
      executor_(std::move(executor)) {
    const CharTransformerProblem& p = *this->problem_;
    const int S = p.layout.stages();
    resolveRpdSettings(S, config_.delayMode, config_.order, config_.pipeDream, config_.updates,
                       config_.maxDelay);
    requireStepSize(config_.stepSize);
    // The batch schedule RPD indexes, as the linear RPD: PD's N microbatches (N = ceil(K / S)
    // without a table), so a uniform draw picks a microbatch of PD's run and uses its batch.
    const long long pdMicrobatches =
        std::max(1LL, config_.pipeDream ? config_.pipeDream->microbatches()
                                        : pipeDreamMicrobatchesFor(config_.updates, S));
    if (static_cast<long long>(config_.batchOf.size()) < pdMicrobatches) {
        config_.batchOf = batchSequence(pdMicrobatches, p.train.batches(), false, 0);
    }
    if (!executor_) executor_ = makeLmCpuRpdExecutor(this->problem_);
    executor_->setOptimizer(config_.optimizer);  // one optimizer step per update
    if (config_.correctors.any()) {
        requireCorrectorsRun(config_.correctors, config_.optimizer, 1.0);
        executor_->setCorrectors(config_.correctors);  // dc; delay_adaptive is advance()'s
    }
    // Buffer 0 of every block is w0's block (LmRpdExecutor).
    history_.assign(static_cast<std::size_t>(S), std::deque<Version>{{0, 0}});
    spare_.resize(static_cast<std::size_t>(S));
    buffers_.assign(static_cast<std::size_t>(S), 1);
    this->log_.peakStashedWeights.assign(static_cast<std::size_t>(S), 1);
    point_.resize(static_cast<std::size_t>(S));

    RunResult& r = this->result_;
    r.method = Method::RandomizedPipeDream;
    r.label = config_.label.empty() ? methodName(r.method) : config_.label;
    r.stages = S;
    r.stepSize = config_.stepSize;
    r.maxDelay = config_.maxDelay;
    r.initialObjective = std::numeric_limits<double>::quiet_NaN();
    if (config_.options.fullObjectivePerSlot || config_.options.fullObjectivePerUpdate) {
        r.initialObjective = executor_->meanLoss(currentPoint(), p.train);
    }
}

template <typename Real>
int LmRpdReplay<Real>::bufferAt(int block, long long iterate) const {
    const auto& h = history_[static_cast<std::size_t>(block)];
    for (auto it = h.rbegin(); it != h.rend(); ++it) {
        if (it->from <= iterate) return it->buffer;
    }
    throw std::logic_error("iterate " + std::to_string(iterate) + " of block " +
                           std::to_string(block) + " is no longer held");
}

template <typename Real>
const std::vector<int>& LmRpdReplay<Real>::currentPoint() {
    current_.resize(history_.size());
    for (std::size_t s = 0; s < history_.size(); ++s) current_[s] = history_[s].back().buffer;
    return current_;
}

template <typename Real>
long long LmRpdReplay<Real>::advance(long long maxUpdates) {
    if (this->done()) return 0;
    const CharTransformerProblem& p = *this->problem_;
    const int S = p.layout.stages();
    RunResult& r = this->result_;
    long long taken = 0;
    while (taken < maxUpdates && k_ < config_.updates) {
        if (this->cancelRequested()) {
            r.cancelled = true;
            return taken;
        }
        int stage = 0;
        int batch = 0;
        const long long cap = std::min(config_.maxDelay, k_);
        if (config_.order == StageOrder::PipeDream) {
            const BlockUpdateInfo& u = config_.pipeDream->update(k_);
            stage = u.stage;
            batch = config_.batchOf[static_cast<std::size_t>(u.microbatch)];
        } else {  // the authors' stream (SPEC section 6): stage, index into PD's batches, delays
            stage = static_cast<int>(rng_.integers(S));
            const auto idx = rng_.integers(static_cast<std::int64_t>(config_.batchOf.size()));
            batch = config_.batchOf[static_cast<std::size_t>(idx)];
        }
        long long tau = 0;  // the largest drawn delay: delay_adaptive's tau_k
        for (int j = 0; j < S; ++j) {
            long long dj = 0;
            switch (config_.delayMode) {
                case DelayMode::Uniform:
                    dj = rng_.integers(cap + 1);  // draws nothing while cap = 0
                    break;
                case DelayMode::Max:
                    dj = cap;
                    break;
                case DelayMode::Zero:
                    dj = 0;
                    break;
                case DelayMode::PipeDream:
                    dj = config_.pipeDream->delay(k_, j);
                    break;
            }
            point_[static_cast<std::size_t>(j)] = bufferAt(j, k_ - dj);
            tau = std::max(tau, dj);
        }
        // w_{k+1}: block `stage` moves into a free buffer, the others keep their version.
        auto& h = history_[static_cast<std::size_t>(stage)];
        auto& spare = spare_[static_cast<std::size_t>(stage)];
        int to = 0;
        if (spare.empty()) {
            to = buffers_[static_cast<std::size_t>(stage)]++;
        } else {
            to = spare.back();
            spare.pop_back();
        }
        const double step = config_.correctors.delayAdaptive
                                ? config_.stepSize * delayAdaptiveFactor(config_.correctors, S, tau)
                                : config_.stepSize;
        const double loss = executor_->step(point_, stage, batch, h.back().buffer, to, step);
        h.push_back({k_ + 1, to});
        // Later steps read iterates >= k + 1 - delta: older versions' buffers become free.
        const long long oldest = k_ + 1 - config_.maxDelay;
        while (h.size() > 1 && h[1].from <= oldest) {
            spare.push_back(h.front().buffer);
            h.pop_front();
        }
        auto& peak = this->log_.peakStashedWeights[static_cast<std::size_t>(stage)];
        peak = std::max(peak, static_cast<int>(h.size()));
        ++k_;
        ++taken;
        r.updates = k_;
        r.objectivePerUpdate.push_back(loss);
        this->log_.forwardLosses.push_back({static_cast<int>(k_ - 1), -1, batch, loss});
        bool ok = this->acceptLoss(loss, k_, -1, "forward loss");
        if (ok && config_.options.fullObjectivePerUpdate) {
            this->log_.fullObjectivePerBlockUpdate.push_back(
                executor_->meanLoss(currentPoint(), p.train));
            ok = this->acceptLoss(this->log_.fullObjectivePerBlockUpdate.back(), k_, -1,
                                  "full objective");
        }
        if (ok && config_.options.heldOutEvery > 0 && k_ % config_.options.heldOutEvery == 0 &&
            p.heldOut) {
            this->log_.heldOutLoss.emplace_back(k_,
                                                executor_->meanLoss(currentPoint(), *p.heldOut));
        }
        if (!ok) return taken;
    }
    if (k_ >= config_.updates) r.finished = true;
    return taken;
}

template <typename Real>
Eigen::VectorXd LmRpdReplay<Real>::weights() const {
    std::vector<int> point(history_.size());
    for (std::size_t s = 0; s < history_.size(); ++s) point[s] = history_[s].back().buffer;
    return executor_->weights(point);
}

std::unique_ptr<LmReplay> makeLmRpdReplay(std::shared_ptr<const CharTransformerProblem> problem,
                                          LmRpdConfig config,
                                          const LmRpdExecutorFactory& executor) {
    std::unique_ptr<LmRpdExecutor> e;
    if (executor) e = executor(problem);
    if (problem->params.precision == LmPrecision::Float) {
        return std::make_unique<LmRpdReplay<float>>(std::move(problem), std::move(config),
                                                    std::move(e));
    }
    return std::make_unique<LmRpdReplay<double>>(std::move(problem), std::move(config),
                                                 std::move(e));
}

template class LmRpdReplay<double>;
template class LmRpdReplay<float>;

}  // namespace pipelens

#include "replay/rpd_replay.hpp"

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
        case DelayMode::Uniform:
            return "uniform";
        case DelayMode::Max:
            return "max";
        case DelayMode::Zero:
            return "zero";
        case DelayMode::PipeDream:
            return "pd";
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

namespace {

// K, delta and the batch schedule as a run uses them (resolveRpdSettings; the batch schedule RPD
// indexes is PD's N microbatches, N = ceil(K / S) without a table).
void resolveRpdConfig(RpdReplayConfig& c, int batches) {
    resolveRpdSettings(c.stages, c.delayMode, c.order, c.pipeDream, c.updates, c.maxDelay);
    const long long pdMicrobatches =
        c.pipeDream ? c.pipeDream->microbatches() : pipeDreamMicrobatchesFor(c.updates, c.stages);
    if (static_cast<long long>(c.batchOf.size()) < std::max(1LL, pdMicrobatches)) {
        c.batchOf = batchSequence(std::max(1LL, pdMicrobatches), batches, false, 0);
    }
}

// Update k's stage (returned), data batch and delays, drawn from `rng` as the authors' stream
// (SPEC section 6): stage, then the index into PD's batch schedule, then the delays
// (integers(0, cap + 1) draws nothing while cap = 0).
int drawUpdate(const RpdReplayConfig& c, NumpyRandom& rng, long long k, int& batch,
               std::vector<int>& delays) {
    const int S = c.stages;
    const long long cap = std::min(c.maxDelay, k);
    int stage = 0;
    if (c.order == StageOrder::PipeDream) {
        const BlockUpdateInfo& u = c.pipeDream->update(k);
        stage = u.stage;
        batch = c.batchOf[static_cast<size_t>(u.microbatch)];
    } else {
        stage = static_cast<int>(rng.integers(S));
        const auto idx = rng.integers(static_cast<std::int64_t>(c.batchOf.size()));
        batch = c.batchOf[static_cast<size_t>(idx)];
    }
    for (int j = 0; j < S; ++j) {
        switch (c.delayMode) {
            case DelayMode::Uniform:
                delays[j] = static_cast<int>(rng.integers(cap + 1));
                break;
            case DelayMode::Max:
                delays[j] = static_cast<int>(cap);
                break;
            case DelayMode::Zero:
                delays[j] = 0;
                break;
            case DelayMode::PipeDream:
                delays[j] = static_cast<int>(c.pipeDream->delay(k, j));
                break;
        }
    }
    return stage;
}

}  // namespace

std::int64_t rpdNoiseNormals(RpdReplayConfig config, const LinearObjective& objective) {
    resolveRpdConfig(config, objective.batches());
    const int S = config.stages;
    const auto blocks = splitBlocks(objective.dim(), S);
    // from[s]: the sizes of blocks s ... S-1, what a step on stage s draws.
    std::vector<std::int64_t> from(static_cast<size_t>(S) + 1, 0);
    for (int s = S - 1; s >= 0; --s) {
        from[static_cast<size_t>(s)] =
            from[static_cast<size_t>(s) + 1] + blocks[static_cast<size_t>(s)].size;
    }
    NumpyRandom rng(config.seed);
    std::vector<int> delays(static_cast<size_t>(S), 0);
    std::int64_t total = 0;
    int batch = 0;
    for (long long k = 0; k < config.updates; ++k) {
        total += from[static_cast<size_t>(drawUpdate(config, rng, k, batch, delays))];
    }
    return total;
}

RpdReplay::RpdReplay(std::shared_ptr<const LinearObjective> objective,
                     std::unique_ptr<ComputeBackend> backend, RpdReplayConfig config)
    : objective_(std::move(objective)),
      backend_(std::move(backend)),
      config_(std::move(config)),
      rng_(config_.seed) {
    const int S = config_.stages;
    resolveRpdConfig(config_, objective_->batches());
    requireStepSize(config_.stepSize);
    sampling_ = config_.sampling;
    delays_.assign(S, 0);
    const auto blocks = splitBlocks(objective_->dim(), S);
    backend_->prepareRpd(*objective_, blocks, static_cast<int>(config_.maxDelay + 1),
                         Eigen::VectorXd::Zero(objective_->dim()));
    startNoise(*backend_, config_.noise);
    backend_->setOptimizer(config_.optimizer, 1.0);
    // dc runs in the backend's step; delay_adaptive scales the step size here (advance).
    if (config_.correctors.any()) backend_->setCorrectors(config_.correctors);
    if (config_.correctors.delayAdaptive) tauRef_ = tauRefFor(config_.correctors, S);

    result_.method = Method::RandomizedPipeDream;
    result_.label = config_.label.empty() ? methodName(result_.method) : config_.label;
    result_.stages = S;
    result_.stepSize = config_.stepSize;
    result_.maxDelay = config_.maxDelay;
    result_.initialObjective = backend_->objective();
    adoptConstants(*objective_);
    if (sampling_.objectivePerUpdate) {
        result_.objectivePerUpdate.reserve(static_cast<size_t>(config_.updates));
    }
    result_.blockGradNormSq.reserve(static_cast<size_t>(config_.updates));
    if (sampling_.gradNormEvery > 0) recordGradNorm(*backend_, 0);
    checkObjective(result_.initialObjective, 0, -1);
}

long long RpdReplay::advance(long long maxUpdates) {
    if (done()) return 0;
    long long taken = 0;
    while (taken < maxUpdates && k_ < config_.updates) {
        if (cancelRequested()) {
            result_.cancelled = true;
            return taken;
        }
        int batch = 0;
        const int stage = drawUpdate(config_, rng_, k_, batch, delays_);
        double step = config_.stepSize;
        if (tauRef_ > 0.0) {
            // delay_adaptive: tau_k is the largest drawn delay; the ratio first, so that
            // tau_ref >= tau_k multiplies by exactly 1.
            const int tau = *std::max_element(delays_.begin(), delays_.end());
            step = config_.stepSize * (tauRef_ / std::max(tauRef_, static_cast<double>(tau)));
        }
        const UpdateSample smp =
            backend_->rpdStep(delays_, stage, batch, step, sampling_.objectivePerUpdate);
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
    settleConstants();
    result_.smoothness = objective_->smoothness();  // the theorem needs L: computed if nobody did
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

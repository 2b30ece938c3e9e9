#include "replay/lm_pipeline_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "errors.hpp"
#include "replay/replay_checks.hpp"

namespace pipelens {

// ------------------------------------------------------------------------------ buffer pool

template <typename Real>
Real* LmBufferPool<Real>::acquire(int key) {
    if (std::find(owner_.begin(), owner_.end(), key) != owner_.end()) {
        throw std::logic_error("buffer of microbatch " + std::to_string(key) + " already in use");
    }
    auto freeSlot = std::find(owner_.begin(), owner_.end(), -1);
    std::size_t i = 0;
    if (freeSlot == owner_.end()) {
        buffers_.emplace_back(size_);
        owner_.push_back(key);
        i = owner_.size() - 1;
    } else {
        *freeSlot = key;
        i = static_cast<std::size_t>(freeSlot - owner_.begin());
    }
    peak_ = std::max(peak_, ++inUse_);
    return buffers_[i].data();
}

template <typename Real>
Real* LmBufferPool<Real>::get(int key) {
    auto it = std::find(owner_.begin(), owner_.end(), key);
    if (it == owner_.end()) {
        throw std::logic_error("no buffer held for microbatch " + std::to_string(key));
    }
    return buffers_[static_cast<std::size_t>(it - owner_.begin())].data();
}

template <typename Real>
void LmBufferPool<Real>::release(int key) {
    releaseAs(key, -1);
}

template <typename Real>
void LmBufferPool<Real>::releaseDeferred(int key) {
    releaseAs(key, -2);
}

template <typename Real>
void LmBufferPool<Real>::releaseAs(int key, int mark) {
    auto it = std::find(owner_.begin(), owner_.end(), key);
    if (it == owner_.end()) {
        throw std::logic_error("releasing a buffer microbatch " + std::to_string(key) +
                               " does not hold");
    }
    *it = mark;
    --inUse_;
}

template <typename Real>
void LmBufferPool<Real>::reclaim() {
    std::replace(owner_.begin(), owner_.end(), -2, -1);
}

// ------------------------------------------------------------------------------ replay

template <typename Real>
LmPipelineReplay<Real>::LmPipelineReplay(std::shared_ptr<const CharTransformerProblem> problem,
                                         LmPipelineConfig config)
    : LmReplayBase<Real>(std::move(problem), config.options), config_(std::move(config)) {
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
    const LmDims& d = p.layout.dims();
    const auto nc = static_cast<std::size_t>(d.tokens()) * static_cast<std::size_t>(d.width);
    const auto nv = static_cast<std::size_t>(d.tokens()) * static_cast<std::size_t>(d.vocab);
    replicas_.assign(static_cast<std::size_t>(config_.replicas), this->toReal(p.w0));
    average_.resize(replicas_[0].size());
    long long largest = 0;
    for (int s = 0; s < S; ++s) {
        stash_.emplace_back(static_cast<std::size_t>(p.layout.stage(s).size));
        input_.emplace_back(s == 0 ? 0 : nc);
        gradOut_.emplace_back(s == S - 1 ? 0 : nc);
        largest = std::max(largest, p.layout.stage(s).size);
    }
    gradW_.resize(static_cast<std::size_t>(largest));
    logits_.resize(nv);
    gradLogits_.resize(nv);
    scratchOut_.resize(nc);
    lastForward_.assign(static_cast<std::size_t>(S), -1);
    events_ = replayOrder(tl);
    if (parallelSlots()) {
        team_ = std::make_unique<TaskTeam>(config_.slotThreads);
        for (int s = 0; s < S; ++s) {
            stageGradW_.emplace_back(static_cast<std::size_t>(p.layout.stage(s).size));
            stageScratch_.emplace_back(s == S - 1 ? 0 : nc);
        }
        slotOps_.reserve(static_cast<std::size_t>(S));
        slotOrder_.reserve(static_cast<std::size_t>(S));
    }
    latestForwardLoss_ = std::numeric_limits<double>::quiet_NaN();

    RunResult& r = this->result_;
    r.method = config_.method;
    r.label = config_.label.empty() ? methodName(config_.method) : config_.label;
    r.stages = S;
    r.stepSize = config_.stepSize;
    r.microbatches = N;
    r.totalSlots = tl.totalSlots;
    r.timeline = tl;
    r.utilization = utilization(tl);
    if (config_.replicas == 1) r.delays = DelayTable(tl);
    r.objectivePerSlot.reserve(static_cast<std::size_t>(tl.totalSlots) + 1);
    r.objectivePerSlot.push_back(latestForwardLoss_);  // no forward loss before the first slot
    r.initialObjective = latestForwardLoss_;
    if (config_.options.fullObjectivePerSlot) {
        logFullObjective(this->log_.fullObjectivePerSlot);
        r.initialObjective = this->log_.fullObjectivePerSlot.back();
    }
}

template <typename Real>
const Real* LmPipelineReplay<Real>::currentPoint() {
    if (replicas_.size() == 1) return replicas_[0].data();
    std::fill(average_.begin(), average_.end(), Real(0));
    for (const auto& w : replicas_) {
        for (std::size_t i = 0; i < w.size(); ++i) average_[i] += w[i];
    }
    const auto R = static_cast<Real>(replicas_.size());
    for (Real& v : average_) v /= R;
    return average_.data();
}

template <typename Real>
void LmPipelineReplay<Real>::logFullObjective(std::vector<double>& curve) {
    curve.push_back(this->fullObjective(currentPoint()));
    // The whole-model pass reused the stage runners: their saved internals are gone.
    std::fill(lastForward_.begin(), lastForward_.end(), -1);
}

template <typename Real>
bool LmPipelineReplay<Real>::forward(int m, int s) {
    const CharTransformerProblem& p = *this->problem_;
    const int S = p.layout.stages();
    const int batch = config_.batchOf[static_cast<std::size_t>(m)];
    const auto& block = p.layout.stage(s);
    const Real* current = replicas_[static_cast<std::size_t>(m % config_.replicas)].data() + block.offset;
    Real* stash = stash_[static_cast<std::size_t>(s)].acquire(m);
    std::copy(current, current + block.size, stash);
    const Real* in = s == 0 ? nullptr : input_[static_cast<std::size_t>(s)].get(m);
    Real* out = s == S - 1 ? logits_.data() : input_[static_cast<std::size_t>(s + 1)].acquire(m);
    this->model_.stage(s).forward(stash, p.train.tokens(batch), in, out);
    lastForward_[static_cast<std::size_t>(s)] = m;
    if (s != S - 1) return true;
    const LmDims& d = p.layout.dims();
    latestForwardLoss_ = crossEntropy<Real>(logits_.data(), p.train.targets(batch), d.tokens(),
                                            d.vocab, nullptr);
    this->log_.forwardLosses.push_back({m, slot_, batch, latestForwardLoss_});
    return this->acceptLoss(latestForwardLoss_, this->result_.updates, slot_, "forward loss");
}

template <typename Real>
bool LmPipelineReplay<Real>::backward(int m, int s) {
    const CharTransformerProblem& p = *this->problem_;
    const LmDims& d = p.layout.dims();
    const int S = p.layout.stages();
    const auto su = static_cast<std::size_t>(s);
    const int batch = config_.batchOf[static_cast<std::size_t>(m)];
    const auto& block = p.layout.stage(s);
    // Weight stashing: the backward reads exactly the copy its forward used (get() throws if
    // F(m, s) left none).
    const Real* stash = stash_[su].get(m);
    const Real* in = s == 0 ? nullptr : input_[su].get(m);
    if (lastForward_[su] != m) {  // activation recomputation from the kept input
        this->model_.stage(s).forward(stash, p.train.tokens(batch), in,
                                      s == S - 1 ? logits_.data() : scratchOut_.data());
        lastForward_[su] = m;
    }
    const Real* gradOut = nullptr;
    if (s == S - 1) {
        crossEntropy<Real>(logits_.data(), p.train.targets(batch), d.tokens(), d.vocab,
                           gradLogits_.data());
        gradOut = gradLogits_.data();
    } else {
        gradOut = gradOut_[su].get(m);
    }
    Real* gradIn = s == 0 ? nullptr : gradOut_[su - 1].acquire(m);
    this->model_.stage(s).backward(stash, gradOut, gradW_.data(), gradIn);
    Real* w = replicas_[static_cast<std::size_t>(m % config_.replicas)].data() + block.offset;
    const auto step = static_cast<Real>(config_.stepSize);
    for (long long i = 0; i < block.size; ++i) w[i] -= step * gradW_[static_cast<std::size_t>(i)];
    stash_[su].release(m);
    if (s > 0) input_[su].release(m);
    if (s < S - 1) gradOut_[su].release(m);

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
    if (config_.options.heldOutEvery > 0 && r.updates % config_.options.heldOutEvery == 0) {
        this->maybeHeldOut(currentPoint(), r.updates);
        std::fill(lastForward_.begin(), lastForward_.end(), -1);
    }
    return ok;
}

template <typename Real>
bool LmPipelineReplay<Real>::parallelSlots() const {
    // Logging the full objective or the held-out loss between two ops of a slot reuses the
    // stage runners, so those runs keep the one-thread loop.
    return config_.slotThreads > 1 && !config_.options.fullObjectivePerUpdate &&
           config_.options.heldOutEvery == 0;
}

// The ops of one slot act on different stages, and none reads what another writes in the same
// slot: F(m, s) reads stage s's weights (only B on stage s changes them) and the input F(m, s-1)
// made in an earlier slot; B(m, s) reads the gradient B(m, s+1) made earlier. So they run side
// by side in three phases: (1) in the timeline's order, every buffer is acquired and released as
// the one-thread loop does (same pool peaks), a released buffer being lent again only after the
// slot; (2) in parallel, every F (with its stash copy and, on the last stage, its loss) and every
// B (recomputation, backward into the stage's own gradient); (3) in the timeline's order, the
// weight updates and everything logged, stopping at a rejected forward loss exactly where the
// one-thread loop stops (later ops of that slot then never update anything). Each op computes
// the same numbers on any thread: the results are bit-identical to one thread.
template <typename Real>
bool LmPipelineReplay<Real>::runSlotInParallel(std::size_t first, std::size_t last) {
    const CharTransformerProblem& p = *this->problem_;
    const int S = p.layout.stages();
    slotOps_.clear();
    for (std::size_t i = first; i < last; ++i) {
        const ReplayEvent& e = events_[i];
        const auto su = static_cast<std::size_t>(e.stage);
        SlotOp op{&e, nullptr, nullptr, nullptr, nullptr, nullptr, 0.0};
        for (const SlotOp& o : slotOps_) {
            if (o.event->stage == e.stage) throw std::logic_error("two ops on one stage in a slot");
        }
        if (e.op == OpKind::Forward) {
            op.stash = stash_[su].acquire(e.microbatch);
            op.in = e.stage == 0 ? nullptr : input_[su].get(e.microbatch);
            op.out = e.stage == S - 1 ? logits_.data() : input_[su + 1].acquire(e.microbatch);
        } else {
            op.stash = stash_[su].get(e.microbatch);
            op.in = e.stage == 0 ? nullptr : input_[su].get(e.microbatch);
            op.out = e.stage == S - 1 ? logits_.data() : stageScratch_[su].data();
            op.gradOut = e.stage == S - 1 ? gradLogits_.data() : gradOut_[su].get(e.microbatch);
            op.gradIn = e.stage == 0 ? nullptr : gradOut_[su - 1].acquire(e.microbatch);
            stash_[su].releaseDeferred(e.microbatch);
            if (e.stage > 0) input_[su].releaseDeferred(e.microbatch);
            if (e.stage < S - 1) gradOut_[su].releaseDeferred(e.microbatch);
        }
        slotOps_.push_back(op);
    }
    // Costliest first: a block's backward (with its recomputation), then forwards.
    slotOrder_.clear();
    for (std::size_t i = 0; i < slotOps_.size(); ++i) slotOrder_.push_back(i);
    auto cost = [&](std::size_t i) {
        const ReplayEvent& e = *slotOps_[i].event;
        const bool block = e.stage > 0 && e.stage < S - 1;
        return (block ? 4 : 1) * (e.op == OpKind::Forward ? 1 : 3);
    };
    std::stable_sort(slotOrder_.begin(), slotOrder_.end(),
                     [&](std::size_t a, std::size_t b) { return cost(a) > cost(b); });

    const LmDims& d = p.layout.dims();
    team_->run(slotOrder_.size(), [&](std::size_t k) {
        SlotOp& op = slotOps_[slotOrder_[k]];
        const ReplayEvent& e = *op.event;
        const auto su = static_cast<std::size_t>(e.stage);
        const int batch = config_.batchOf[static_cast<std::size_t>(e.microbatch)];
        auto& stage = this->model_.stage(e.stage);
        if (e.op == OpKind::Forward) {
            const auto& block = p.layout.stage(e.stage);
            const Real* current =
                replicas_[static_cast<std::size_t>(e.microbatch % config_.replicas)].data() +
                block.offset;
            std::copy(current, current + block.size, op.stash);
            stage.forward(op.stash, p.train.tokens(batch), op.in, op.out);
            lastForward_[su] = e.microbatch;
            if (e.stage == S - 1) {
                op.loss = crossEntropy<Real>(logits_.data(), p.train.targets(batch), d.tokens(),
                                             d.vocab, nullptr);
            }
            return;
        }
        if (lastForward_[su] != e.microbatch) {
            stage.forward(op.stash, p.train.tokens(batch), op.in, op.out);
            lastForward_[su] = e.microbatch;
        }
        if (e.stage == S - 1) {
            crossEntropy<Real>(logits_.data(), p.train.targets(batch), d.tokens(), d.vocab,
                               gradLogits_.data());
        }
        stage.backward(op.stash, op.gradOut, stageGradW_[su].data(), op.gradIn);
    });

    bool ok = true;
    RunResult& r = this->result_;
    for (const SlotOp& op : slotOps_) {
        const ReplayEvent& e = *op.event;
        if (e.op == OpKind::Forward) {
            if (e.stage != S - 1) continue;
            latestForwardLoss_ = op.loss;
            const int batch = config_.batchOf[static_cast<std::size_t>(e.microbatch)];
            this->log_.forwardLosses.push_back({e.microbatch, slot_, batch, latestForwardLoss_});
            ok = this->acceptLoss(latestForwardLoss_, r.updates, slot_, "forward loss");
            if (!ok) break;
            continue;
        }
        const auto& block = p.layout.stage(e.stage);
        Real* w = replicas_[static_cast<std::size_t>(e.microbatch % config_.replicas)].data() +
                  block.offset;
        const Real* g = stageGradW_[static_cast<std::size_t>(e.stage)].data();
        const auto step = static_cast<Real>(config_.stepSize);
        for (long long i = 0; i < block.size; ++i) w[i] -= step * g[i];
        ++r.updates;
        ++r.versionChecks;
        r.objectivePerUpdate.push_back(latestForwardLoss_);
    }
    for (auto* pools : {&stash_, &input_, &gradOut_}) {
        for (auto& pool : *pools) pool.reclaim();
    }
    return ok;
}

template <typename Real>
void LmPipelineReplay<Real>::averageReplicas() {
    const Real* avg = currentPoint();
    for (auto& w : replicas_) std::copy(avg, avg + w.size(), w.begin());
}

template <typename Real>
long long LmPipelineReplay<Real>::advance(long long maxSlots) {
    if (this->done()) return 0;
    const Timeline& tl = config_.timeline;
    RunResult& r = this->result_;
    long long taken = 0;
    while (taken < maxSlots && slot_ < tl.totalSlots) {
        if (this->cancelRequested()) {
            r.cancelled = true;
            return taken;
        }
        bool ok = true;
        if (team_) {
            std::size_t last = nextEvent_;
            while (last < events_.size() && events_[last].slot == slot_) ++last;
            ok = runSlotInParallel(nextEvent_, last);
            nextEvent_ = last;
        }
        for (; ok && nextEvent_ < events_.size() && events_[nextEvent_].slot == slot_; ++nextEvent_) {
            const ReplayEvent& e = events_[nextEvent_];
            ok = e.op == OpKind::Forward ? forward(e.microbatch, e.stage)
                                         : backward(e.microbatch, e.stage);
        }
        if (ok && nextAveraging_ < tl.averagingSlots.size() &&
            tl.averagingSlots[nextAveraging_] == slot_) {
            averageReplicas();
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
        for (std::size_t s = 0; s < stash_.size(); ++s) {
            this->log_.peakStashedWeights.push_back(stash_[s].peak());
            this->log_.peakKeptInputs.push_back(s == 0 ? stash_[s].peak() : input_[s].peak());
        }
        if (r.delays) {
            r.delayStats = delayStats(*r.delays, 0.5);
            r.maxDelay = r.delays->maxDelay();
        }
    }
    return taken;
}

template <typename Real>
Eigen::VectorXd LmPipelineReplay<Real>::weights() const {
    Eigen::VectorXd w = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(replicas_[0].size()));
    for (const auto& rep : replicas_) {
        for (std::size_t i = 0; i < rep.size(); ++i) w[static_cast<Eigen::Index>(i)] += static_cast<double>(rep[i]);
    }
    return w / static_cast<double>(replicas_.size());
}

std::unique_ptr<LmReplay> makeLmPipelineReplay(std::shared_ptr<const CharTransformerProblem> problem,
                                               LmPipelineConfig config) {
    if (problem->params.precision == LmPrecision::Float) {
        return std::make_unique<LmPipelineReplay<float>>(std::move(problem), std::move(config));
    }
    return std::make_unique<LmPipelineReplay<double>>(std::move(problem), std::move(config));
}

template class LmBufferPool<double>;
template class LmBufferPool<float>;
template class LmPipelineReplay<double>;
template class LmPipelineReplay<float>;

}  // namespace pipelens

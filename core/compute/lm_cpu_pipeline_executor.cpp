#include "compute/lm_cpu_pipeline_executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "errors.hpp"
#include "util/task_team.hpp"

namespace pipelens {

template <typename Real>
Real* LmBufferPool<Real>::acquire(int key) {
    const auto i = static_cast<std::size_t>(slots_.acquire(key));
    if (i == buffers_.size()) buffers_.emplace_back(size_);
    return buffers_[i].data();
}

template <typename Real>
Real* LmBufferPool<Real>::get(int key) {
    return buffers_[static_cast<std::size_t>(slots_.get(key))].data();
}

namespace {

// The optimizer steps a block in chunks of this many numbers, so that its temporaries (the
// widened weights and gradient, the update) stay in cache: only the state streams from memory.
// Each chunk's step count moves with its block's, so the result is the whole block's.
constexpr long long kOptimizerChunk = 4096;

// The n numbers at x in double: in place for double, widened into `buffer` for float.
template <typename T>
Eigen::Ref<const Eigen::VectorXd> widened(const T* x, Eigen::Index n, Eigen::VectorXd& buffer) {
    if constexpr (std::is_same_v<T, double>) {
        return Eigen::Map<const Eigen::VectorXd>(x, n);
    } else {
        buffer =
            Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(x, n).template cast<double>();
        return buffer;
    }
}

}  // namespace

template <typename Real>
void LmBlockOptimizer<Real>::prepare(const OptimizerSpec& spec, const LmLayout& layout,
                                     int replicas, double gradientScale, bool synchronous) {
    layout_ = &layout;
    if (layout.size() > std::numeric_limits<int>::max()) {
        throw ConfigError("the language model has " + std::to_string(layout.size()) +
                          " parameters: optimizers with state allow at most " +
                          std::to_string(std::numeric_limits<int>::max()));
    }
    std::vector<BlockRange> chunks;
    firstChunk_.clear();
    for (int s = 0; s < layout.stages(); ++s) {
        const auto& b = layout.stage(s);
        firstChunk_.push_back(static_cast<int>(chunks.size()));
        for (long long at = 0; at < b.size; at += kOptimizerChunk) {
            chunks.push_back({static_cast<int>(b.offset + at),
                              static_cast<int>(std::min(kOptimizerChunk, b.size - at))});
        }
    }
    firstChunk_.push_back(static_cast<int>(chunks.size()));
    state_.prepare(spec, chunks, replicas);
    chunks_ = std::move(chunks);
    gradientScale_ = gradientScale;
    pending_ = synchronous ? Eigen::MatrixXd::Zero(layout.size(), replicas) : Eigen::MatrixXd();
}

template <typename Real>
bool LmBlockOptimizer<Real>::update(int replica, int stage, const Real* from, const Real* g,
                                    double stepSize, bool endsStep, Real* to) {
    if (pending_.size() == 0) {
        apply(replica, stage, from, g, stepSize, to);
        return true;
    }
    const auto& block = layout_->stage(stage);
    const auto n = static_cast<Eigen::Index>(block.size);
    auto sum = pending_.col(replica).segment(block.offset, n);
    sum += Eigen::Map<const Eigen::Matrix<Real, Eigen::Dynamic, 1>>(g, n).template cast<double>();
    if (!endsStep) return false;
    stepGrad_ = gradientScale_ * sum;
    sum.setZero();
    apply(replica, stage, from, stepGrad_.data(), stepSize, to);
    return true;
}

template <typename Real>
template <typename G>
void LmBlockOptimizer<Real>::correctedUpdate(int replica, int stage, const Real* from, const G* g,
                                             double stepSize, Real* to, Real* change,
                                             bool lookahead, double beta) {
    apply(replica, stage, from, g, stepSize, to, change, lookahead, beta);
}

template <typename Real>
template <typename G>
void LmBlockOptimizer<Real>::apply(int replica, int stage, const Real* from, const G* g,
                                   double stepSize, Real* to, Real* change, bool lookahead,
                                   double beta) {
    const long long offset = layout_->stage(stage).offset;
    const auto su = static_cast<std::size_t>(stage);
    for (int c = firstChunk_[su]; c < firstChunk_[su + 1]; ++c) {
        const BlockRange& chunk = chunks_[static_cast<std::size_t>(c)];
        const long long at = chunk.offset - offset;
        const Eigen::Ref<const Eigen::VectorXd> w = widened(from + at, chunk.size, weights_);
        state_.step(replica, c, w, widened(g + at, chunk.size, grad_), stepSize, delta_);
        if (change != nullptr) {
            auto d = Eigen::Map<Eigen::Matrix<Real, Eigen::Dynamic, 1>>(change + at, chunk.size);
            // Lookahead (asynchronous Nesterov): delta = beta d + the optimizer's (sgd's) change.
            if (lookahead) delta_ += beta * d.template cast<double>();
            d = delta_.template cast<Real>();
        }
        // Coefficient-wise, so `to` may be `from`; float rounds the new weights once.
        Eigen::Map<Eigen::Matrix<Real, Eigen::Dynamic, 1>>(to + at, chunk.size) =
            (w + delta_).template cast<Real>();
    }
}

template <typename Real>
LmCpuPipelineExecutor<Real>::LmCpuPipelineExecutor(
    std::shared_ptr<const CharTransformerProblem> problem, int replicas)
    : problem_(std::move(problem)), model_(problem_->layout) {
    const CharTransformerProblem& p = *problem_;
    const int S = p.layout.stages();
    const LmDims& d = p.layout.dims();
    const auto nc = static_cast<std::size_t>(d.tokens()) * static_cast<std::size_t>(d.width);
    const auto nv = static_cast<std::size_t>(d.tokens()) * static_cast<std::size_t>(d.vocab);
    std::vector<Real> w0(static_cast<std::size_t>(p.w0.size()));
    for (std::size_t i = 0; i < w0.size(); ++i) {
        w0[i] = static_cast<Real>(p.w0[static_cast<Eigen::Index>(i)]);
    }
    replicas_.assign(static_cast<std::size_t>(replicas), w0);
    average_.resize(w0.size());
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
}

template <typename Real>
std::string LmCpuPipelineExecutor<Real>::describe() const {
    return sizeof(Real) == sizeof(double) ? "cpu, double" : "cpu, float";
}

template <typename Real>
const Real* LmCpuPipelineExecutor<Real>::currentPoint() {
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
double LmCpuPipelineExecutor<Real>::meanLoss(const TokenBatches& batches) {
    const double loss = model_.meanLoss(currentPoint(), batches);
    // The whole-model pass reused the stage runners: their saved internals are gone.
    std::fill(lastForward_.begin(), lastForward_.end(), -1);
    return loss;
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::readBlock(const LmSlotOp& op, Real* stash) {
    const auto& block = problem_->layout.stage(op.stage);
    const auto r = static_cast<std::size_t>(op.replica);
    const Real* current = replicas_[r].data() + block.offset;
    if (op.readShift == 0.0 || change_.empty()) {
        std::copy(current, current + block.size, stash);
        return;
    }
    // Prediction or lookahead: the forward reads, and the backward differentiates at, w + s d.
    const Real* d = change_[r].data() + block.offset;
    const auto shift = static_cast<Real>(op.readShift);
    for (long long i = 0; i < block.size; ++i) stash[i] = current[i] + shift * d[i];
}

template <typename Real>
double LmCpuPipelineExecutor<Real>::forward(int m, int s, int replica, int batch) {
    return forwardStep({true, m, s, replica, batch});
}

template <typename Real>
double LmCpuPipelineExecutor<Real>::forwardOp(const LmSlotOp& op) {
    return forwardStep(op);
}

template <typename Real>
double LmCpuPipelineExecutor<Real>::forwardStep(const LmSlotOp& op) {
    const CharTransformerProblem& p = *problem_;
    const int S = p.layout.stages();
    const int m = op.microbatch;
    const int s = op.stage;
    const int batch = op.batch;
    Real* stash = stash_[static_cast<std::size_t>(s)].acquire(m);
    readBlock(op, stash);
    const Real* in = s == 0 ? nullptr : input_[static_cast<std::size_t>(s)].get(m);
    Real* out = s == S - 1 ? logits_.data() : input_[static_cast<std::size_t>(s) + 1].acquire(m);
    model_.stage(s).forward(stash, p.train.tokens(batch), in, out);
    lastForward_[static_cast<std::size_t>(s)] = m;
    if (s != S - 1) return std::numeric_limits<double>::quiet_NaN();
    const LmDims& d = p.layout.dims();
    return crossEntropy<Real>(logits_.data(), p.train.targets(batch), d.tokens(), d.vocab, nullptr);
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::backward(int m, int s, int replica, int batch, double stepSize) {
    backwardStep({false, m, s, replica, batch}, stepSize);
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::backwardOp(const LmSlotOp& op, double stepSize) {
    backwardStep(op, stepSize);
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::applyUpdate(const LmSlotOp& op, Real* g, const Real* stash,
                                              double stepSize) {
    if (corrected_) {
        correctedUpdate(op, g, stash, stepSize);
        return;
    }
    const auto& block = problem_->layout.stage(op.stage);
    Real* w = replicas_[static_cast<std::size_t>(op.replica)].data() + block.offset;
    if (optimizer_) {
        optimizer_->update(op.replica, op.stage, w, g, stepSize, op.endsStep, w);
        return;
    }
    const auto step = static_cast<Real>(stepSize);
    for (long long i = 0; i < block.size; ++i) w[i] -= step * g[i];
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::correctedUpdate(const LmSlotOp& op, Real* g, const Real* stash,
                                                  double stepSize) {
    const auto& block = problem_->layout.stage(op.stage);
    const Real* w = replicas_[static_cast<std::size_t>(op.replica)].data() + block.offset;
    const long long n = block.size;
    if (correctors_.dc) {
        // DC-ASGD: g + lambda g (.) g (.) (w_now - w_read), w_read the stash.
        const auto lambda = static_cast<Real>(correctors_.lambda);
        for (long long i = 0; i < n; ++i) {
            const Real gi = g[i];
            g[i] = gi + lambda * (gi * gi) * (w[i] - stash[i]);
        }
    }
    const double step = stepSize * op.stepFactor;
    if (correctors_.accumulate <= 1) {
        correctedStep(op, g, step);
        return;
    }
    // Accumulate: the sum (in double) takes every gradient; the k-th applies their mean.
    auto sum = gradSum_.col(op.replica).segment(block.offset, n);
    sum += Eigen::Map<const Eigen::Matrix<Real, Eigen::Dynamic, 1>>(g, n).template cast<double>();
    if (!op.applies) return;
    meanGrad_ = sum / static_cast<double>(correctors_.accumulate);
    sum.setZero();
    correctedStep(op, meanGrad_.data(), step);
}

template <typename Real>
template <typename G>
void LmCpuPipelineExecutor<Real>::correctedStep(const LmSlotOp& op, const G* g, double stepSize) {
    const auto& block = problem_->layout.stage(op.stage);
    const auto r = static_cast<std::size_t>(op.replica);
    Real* w = replicas_[r].data() + block.offset;
    Real* d = change_.empty() ? nullptr : change_[r].data() + block.offset;
    if (optimizer_) {
        optimizer_->correctedUpdate(op.replica, op.stage, w, g, stepSize, w, d,
                                    correctors_.lookahead, correctors_.beta);
        return;
    }
    const auto step = static_cast<Real>(stepSize);
    const long long n = block.size;
    if (d == nullptr) {
        for (long long i = 0; i < n; ++i) w[i] -= step * static_cast<Real>(g[i]);
    } else if (correctors_.lookahead) {
        // Lookahead (asynchronous Nesterov): delta = beta d - gamma_k g; d = delta.
        const auto beta = static_cast<Real>(correctors_.beta);
        for (long long i = 0; i < n; ++i) {
            const Real delta = beta * d[i] - step * static_cast<Real>(g[i]);
            w[i] += delta;
            d[i] = delta;
        }
    } else {
        // w + (-(step g)) is w - step g bit for bit: d records the change applied.
        for (long long i = 0; i < n; ++i) {
            const Real delta = -(step * static_cast<Real>(g[i]));
            w[i] += delta;
            d[i] = delta;
        }
    }
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::backwardStep(const LmSlotOp& op, double stepSize) {
    const int m = op.microbatch;
    const int s = op.stage;
    const int batch = op.batch;
    const CharTransformerProblem& p = *problem_;
    const LmDims& d = p.layout.dims();
    const int S = p.layout.stages();
    const auto su = static_cast<std::size_t>(s);
    // Weight stashing: the backward reads exactly the copy its forward used (get() throws if
    // F(m, s) left none).
    const Real* stash = stash_[su].get(m);
    const Real* in = s == 0 ? nullptr : input_[su].get(m);
    if (lastForward_[su] != m) {  // activation recomputation from the kept input
        model_.stage(s).forward(stash, p.train.tokens(batch), in,
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
    model_.stage(s).backward(stash, gradOut, gradW_.data(), gradIn);
    applyUpdate(op, gradW_.data(), stash, stepSize);
    stash_[su].release(m);
    if (s > 0) input_[su].release(m);
    if (s < S - 1) gradOut_[su].release(m);
}

template <typename Real>
bool LmCpuPipelineExecutor<Real>::runSlot(const std::vector<LmSlotOp>& ops, double stepSize,
                                          TaskTeam* team, const LmSlotDone& done) {
    if (team == nullptr) return LmPipelineExecutor::runSlot(ops, stepSize, team, done);
    return runSlotSideBySide(ops, stepSize, *team, done);
}

// The ops of one slot act on different stages, and none reads what another writes in the same
// slot: F(m, s) reads stage s's weights (only B on stage s changes them) and the input F(m, s-1)
// made in an earlier slot; B(m, s) reads the gradient B(m, s+1) made earlier. So they run side
// by side in three phases: (1) in the slot's order, every buffer is acquired and released as
// forward() and backward() do one after the other (same pool peaks), a released buffer being
// lent again only after the slot; (2) in parallel, every F (with its stash copy and, on the last
// stage, its loss) and every B (recomputation, backward into the stage's own gradient); (3) in
// the slot's order, the weight updates and `done`, stopping where `done` says so exactly where
// one after the other stops (later ops of that slot then never update anything). Each op
// computes the same numbers on any thread: the results are bit-identical to one thread.
template <typename Real>
bool LmCpuPipelineExecutor<Real>::runSlotSideBySide(const std::vector<LmSlotOp>& ops,
                                                    double stepSize, TaskTeam& team,
                                                    const LmSlotDone& done) {
    const CharTransformerProblem& p = *problem_;
    const int S = p.layout.stages();
    const LmDims& d = p.layout.dims();
    if (stageGradW_.empty()) {
        const auto nc = static_cast<std::size_t>(d.tokens()) * static_cast<std::size_t>(d.width);
        for (int s = 0; s < S; ++s) {
            stageGradW_.emplace_back(static_cast<std::size_t>(p.layout.stage(s).size));
            stageScratch_.emplace_back(s == S - 1 ? 0 : nc);
        }
    }
    slotBuffers_.clear();
    for (std::size_t k = 0; k < ops.size(); ++k) {
        const LmSlotOp& e = ops[k];
        const auto su = static_cast<std::size_t>(e.stage);
        for (std::size_t j = 0; j < k; ++j) {
            if (ops[j].stage == e.stage) throw std::logic_error("two ops on one stage in a slot");
        }
        SlotBuffers b{nullptr, nullptr, nullptr, nullptr, nullptr, 0.0};
        if (e.forward) {
            b.stash = stash_[su].acquire(e.microbatch);
            b.in = e.stage == 0 ? nullptr : input_[su].get(e.microbatch);
            b.out = e.stage == S - 1 ? logits_.data() : input_[su + 1].acquire(e.microbatch);
        } else {
            b.stash = stash_[su].get(e.microbatch);
            b.in = e.stage == 0 ? nullptr : input_[su].get(e.microbatch);
            b.out = e.stage == S - 1 ? logits_.data() : stageScratch_[su].data();
            b.gradOut = e.stage == S - 1 ? gradLogits_.data() : gradOut_[su].get(e.microbatch);
            b.gradIn = e.stage == 0 ? nullptr : gradOut_[su - 1].acquire(e.microbatch);
            stash_[su].releaseDeferred(e.microbatch);
            if (e.stage > 0) input_[su].releaseDeferred(e.microbatch);
            if (e.stage < S - 1) gradOut_[su].releaseDeferred(e.microbatch);
        }
        slotBuffers_.push_back(b);
    }
    // Costliest first: a block's backward (with its recomputation), then forwards.
    slotOrder_.clear();
    for (std::size_t k = 0; k < ops.size(); ++k) slotOrder_.push_back(k);
    auto cost = [&](std::size_t k) {
        const LmSlotOp& e = ops[k];
        const bool block = e.stage > 0 && e.stage < S - 1;
        return (block ? 4 : 1) * (e.forward ? 1 : 3);
    };
    std::stable_sort(slotOrder_.begin(), slotOrder_.end(),
                     [&](std::size_t a, std::size_t b) { return cost(a) > cost(b); });

    team.run(slotOrder_.size(), [&](std::size_t i) {
        const std::size_t k = slotOrder_[i];
        const LmSlotOp& e = ops[k];
        SlotBuffers& b = slotBuffers_[k];
        const auto su = static_cast<std::size_t>(e.stage);
        auto& stage = model_.stage(e.stage);
        if (e.forward) {
            readBlock(e, b.stash);
            stage.forward(b.stash, p.train.tokens(e.batch), b.in, b.out);
            lastForward_[su] = e.microbatch;
            if (e.stage == S - 1) {
                b.loss = crossEntropy<Real>(logits_.data(), p.train.targets(e.batch), d.tokens(),
                                            d.vocab, nullptr);
            }
            return;
        }
        if (lastForward_[su] != e.microbatch) {
            stage.forward(b.stash, p.train.tokens(e.batch), b.in, b.out);
            lastForward_[su] = e.microbatch;
        }
        if (e.stage == S - 1) {
            crossEntropy<Real>(logits_.data(), p.train.targets(e.batch), d.tokens(), d.vocab,
                               gradLogits_.data());
        }
        stage.backward(b.stash, b.gradOut, stageGradW_[su].data(), b.gradIn);
    });

    bool ok = true;
    for (std::size_t k = 0; ok && k < ops.size(); ++k) {
        const LmSlotOp& e = ops[k];
        double loss = std::numeric_limits<double>::quiet_NaN();
        if (e.forward) {
            if (e.stage == S - 1) loss = slotBuffers_[k].loss;
        } else {
            applyUpdate(e, stageGradW_[static_cast<std::size_t>(e.stage)].data(),
                        slotBuffers_[k].stash, stepSize);
        }
        ok = done(k, loss);
    }
    for (auto* pools : {&stash_, &input_, &gradOut_}) {
        for (auto& pool : *pools) pool.reclaim();
    }
    return ok;
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::setOptimizer(const OptimizerSpec& spec, double gradientScale) {
    optimizer_.reset();
    if (spec.plain()) return;
    optimizer_.emplace();
    optimizer_->prepare(spec, problem_->layout, static_cast<int>(replicas_.size()), gradientScale,
                        gradientScale != 1.0);
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::setCorrectors(const CorrectorSpec& spec) {
    corrected_ = spec.any();
    correctors_ = spec;
    change_.clear();
    gradSum_.resize(0, 0);
    if (!corrected_) return;
    const std::size_t size = replicas_[0].size();
    if (spec.prediction || spec.lookahead) {
        change_.assign(replicas_.size(), std::vector<Real>(size, Real(0)));
    }
    if (spec.accumulate > 1) {
        gradSum_ = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(size),
                                         static_cast<Eigen::Index>(replicas_.size()));
    }
}

// Averaging (LocalSGD) moves the weights, not a block update: each replica keeps its d and its
// accumulate sums, as the linear engine does.
template <typename Real>
void LmCpuPipelineExecutor<Real>::averageReplicas() {
    if (optimizer_) optimizer_->averageReplicas();
    const Real* avg = currentPoint();
    for (auto& w : replicas_) std::copy(avg, avg + w.size(), w.begin());
}

template <typename Real>
Eigen::VectorXd LmCpuPipelineExecutor<Real>::weights() const {
    Eigen::VectorXd w = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(replicas_[0].size()));
    for (const auto& rep : replicas_) {
        for (std::size_t i = 0; i < rep.size(); ++i) {
            w[static_cast<Eigen::Index>(i)] += static_cast<double>(rep[i]);
        }
    }
    return w / static_cast<double>(replicas_.size());
}

template <typename Real>
std::vector<int> LmCpuPipelineExecutor<Real>::peakStashedWeights() const {
    std::vector<int> out;
    for (const auto& pool : stash_) out.push_back(pool.peak());
    return out;
}

template <typename Real>
std::vector<int> LmCpuPipelineExecutor<Real>::peakKeptInputs() const {
    std::vector<int> out;
    for (std::size_t s = 0; s < stash_.size(); ++s) {
        out.push_back(s == 0 ? stash_[s].peak() : input_[s].peak());
    }
    return out;
}

std::unique_ptr<LmPipelineExecutor> makeLmCpuPipelineExecutor(
    std::shared_ptr<const CharTransformerProblem> problem, int replicas) {
    if (problem->params.precision == LmPrecision::Float) {
        return std::make_unique<LmCpuPipelineExecutor<float>>(std::move(problem), replicas);
    }
    return std::make_unique<LmCpuPipelineExecutor<double>>(std::move(problem), replicas);
}

template class LmBlockOptimizer<double>;
template class LmBlockOptimizer<float>;
template class LmBufferPool<double>;
template class LmBufferPool<float>;
template class LmCpuPipelineExecutor<double>;
template class LmCpuPipelineExecutor<float>;

}  // namespace pipelens

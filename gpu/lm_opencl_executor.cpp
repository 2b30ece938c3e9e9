#include "lm_opencl_executor.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "cmdline/environment.hpp"

namespace pipelens::gpu {

template <typename Real>
LmOpenClExecutor<Real>::LmOpenClExecutor(std::shared_ptr<OpenClContext> context,
                                         std::shared_ptr<const CharTransformerProblem> problem,
                                         int replicas)
    : problem_(std::move(problem)),
      replicas_(replicas),
      size_(problem_->layout.size()),
      model_(std::move(context), *problem_),
      ops_(model_.ops()) {
    const LmLayout& layout = problem_->layout;
    const LmDims& d = layout.dims();
    const int S = layout.stages();
    const auto nc = toSize(d.tokens()) * toSize(d.width);
    weights_ = ops_.reals(toSize(replicas_) * toSize(size_), "language model replicas");
    std::vector<Real> w0(toSize(size_));
    for (std::size_t i = 0; i < w0.size(); ++i) {
        w0[i] = static_cast<Real>(problem_->w0[static_cast<Eigen::Index>(i)]);
    }
    for (int r = 0; r < replicas_; ++r) ops_.write(weights_, r * size_, w0.data(), w0.size());
    if (replicas_ > 1) average_ = ops_.reals(toSize(size_), "language model replica average");
    for (int s = 0; s < S; ++s) {
        const std::string st = " of stage " + std::to_string(s);
        stash_.push_back({toSize(layout.stage(s).size), "weight stash" + st, {}, {}, {}});
        input_.push_back({s == 0 ? 0 : nc, "kept input" + st, {}, {}, {}});
        gradOut_.push_back({s == S - 1 ? 0 : nc, "output gradient" + st, {}, {}, {}});
        gradW_.push_back(ops_.reals(toSize(layout.stage(s).size), "weight gradient" + st));
        if (s < S - 1) recomputed_.push_back(ops_.reals(nc, "recomputed output" + st));
    }
    lastForward_.assign(toSize(S), -1);
    forwardDone_.resize(toSize(S));
    backwardDone_.resize(toSize(S));
    stageQueues_ = checkedEnvironment("PIPELENS_CL_STAGE_QUEUES").value_or("1") != "0";
    if (stageQueues_) ops_.setQueues(S);
}

template <typename Real>
LmOpenClExecutor<Real>::~LmOpenClExecutor() = default;

template <typename Real>
std::string LmOpenClExecutor<Real>::describe() const {
    return ops_.context().describe(LmOpenClOps<Real>::precision());
}

template <typename Real>
DeviceRef LmOpenClExecutor<Real>::acquire(Pool& pool, int key) {
    const auto i = toSize(pool.keys.acquire(key));
    if (i == pool.buffers.size()) {
        pool.buffers.push_back(ops_.reals(pool.size, pool.what));
        pool.freed.emplace_back();
    }
    ops_.waitFor(pool.freed[i]);
    return {&pool.buffers[i], 0};
}

template <typename Real>
DeviceRef LmOpenClExecutor<Real>::get(Pool& pool, int key) {
    return {&pool.buffers[toSize(pool.keys.get(key))], 0};
}

template <typename Real>
void LmOpenClExecutor<Real>::release(Pool& pool, int key, const cl::Event& lastReader) {
    pool.freed[toSize(pool.keys.get(key))] = lastReader;
    pool.keys.release(key);
}

template <typename Real>
void LmOpenClExecutor<Real>::waitForOp(std::map<int, cl::Event>& done, int m) {
    const auto it = done.find(m);
    if (it == done.end()) return;
    ops_.waitFor(it->second);
    done.erase(it);
}

template <typename Real>
void LmOpenClExecutor<Real>::joinQueues() const {
    ops_.finishAll();
    ops_.useQueue(0);
}

template <typename Real>
DeviceRef LmOpenClExecutor<Real>::replicaBlock(int replica, int s) {
    return {&weights_, replica * size_ + problem_->layout.stage(s).offset};
}

template <typename Real>
DeviceRef LmOpenClExecutor<Real>::currentPoint() {
    if (replicas_ == 1) return {&weights_, 0};
    ops_.average(weights_, replicas_, size_, average_);
    return {&average_, 0};
}

template <typename Real>
double LmOpenClExecutor<Real>::forward(int m, int s, int replica, int batch) {
    return forwardStep({true, m, s, replica, batch});
}

template <typename Real>
double LmOpenClExecutor<Real>::forwardOp(const LmSlotOp& op) {
    return forwardStep(op);
}

template <typename Real>
double LmOpenClExecutor<Real>::forwardStep(const LmSlotOp& op) {
    const int m = op.microbatch;
    const int s = op.stage;
    const int batch = op.batch;
    const LmLayout& layout = problem_->layout;
    const int S = layout.stages();
    const auto su = toSize(s);
    ops_.useQueue(queueOf(s));
    // The stash is written and read on this stage's queue only: its order suffices.
    const DeviceRef stash = acquire(stash_[su], m);
    DeviceRef in;
    if (s > 0) {
        in = get(input_[su], m);
        waitForOp(forwardDone_[su - 1], m);
    }
    const DeviceRef out = s == S - 1 ? model_.logits() : acquire(input_[su + 1], m);
    if (op.readShift == 0.0 || !change_()) {
        ops_.copy(replicaBlock(op.replica, s), stash, toSize(layout.stage(s).size));
    } else {
        // Prediction or lookahead: the forward reads, and the backward differentiates at,
        // w + shift d (d on this stage's queue, like the block's weights).
        ops_.readShift(replicaBlock(op.replica, s),
                       {&change_, op.replica * size_ + layout.stage(s).offset}, stash,
                       layout.stage(s).size, op.readShift);
    }
    model_.stage(s).forward(stash, model_.tokens(problem_->train, batch, 0), in, out);
    lastForward_[su] = m;
    if (s != S - 1) {
        if (stageQueues_) forwardDone_[su][m] = ops_.lastEvent();
        return std::numeric_limits<double>::quiet_NaN();
    }
    const LmDims& d = layout.dims();
    return ops_.crossEntropy(model_.logits(), model_.tokens(problem_->train, batch, 1), d.tokens(),
                             d.vocab, nullptr);
}

template <typename Real>
void LmOpenClExecutor<Real>::backward(int m, int s, int replica, int batch, double stepSize) {
    backwardStep({false, m, s, replica, batch}, stepSize);
}

template <typename Real>
void LmOpenClExecutor<Real>::backwardOp(const LmSlotOp& op, double stepSize) {
    backwardStep(op, stepSize);
}

template <typename Real>
void LmOpenClExecutor<Real>::setOptimizer(const OptimizerSpec& spec, double gradientScale) {
    optimizer_.reset();
    if (spec.plain()) return;
    joinQueues();
    optimizer_ = std::make_unique<LmOpenClOptimizer<Real>>(ops_, spec, problem_->layout, replicas_,
                                                           gradientScale, gradientScale != 1.0);
    ops_.finish();
}

template <typename Real>
void LmOpenClExecutor<Real>::setCorrectors(const CorrectorSpec& spec) {
    correctors_.reset();
    change_ = cl::Buffer();
    gradSum_ = cl::Buffer();
    if (!spec.any()) return;
    joinQueues();
    const std::size_t full = toSize(replicas_) * toSize(size_);
    auto zeroed = [&](std::size_t count, const std::string& what) {
        cl::Buffer b = ops_.reals(count, what);
        ops_.fill({&b, 0}, count, Real{0});
        return b;
    };
    if (spec.prediction || spec.lookahead) {
        change_ = zeroed(full, "language model blocks' last changes (prediction, lookahead)");
    }
    if (spec.accumulate > 1) gradSum_ = zeroed(full, "language model accumulated gradients");
    standIn_ = zeroed(1, "language model corrector stand-in");
    ops_.finish();
    correctors_ = spec;
}

template <typename Real>
void LmOpenClExecutor<Real>::backwardStep(const LmSlotOp& op, double stepSize) {
    const int m = op.microbatch;
    const int s = op.stage;
    const int replica = op.replica;
    const int batch = op.batch;
    const LmLayout& layout = problem_->layout;
    const LmDims& d = layout.dims();
    const int S = layout.stages();
    const auto su = toSize(s);
    ops_.useQueue(queueOf(s));
    // Weight stashing: the backward reads the copy its forward used.
    const DeviceRef stash = get(stash_[su], m);
    const DeviceRef in = s == 0 ? DeviceRef{} : get(input_[su], m);
    if (s < S - 1) {
        waitForOp(backwardDone_[su + 1], m);
    }
    const DeviceRef gradIn = s == 0 ? DeviceRef{} : acquire(gradOut_[su - 1], m);
    if (lastForward_[su] != m) {  // activation recomputation from the kept input
        model_.stage(s).forward(stash, model_.tokens(problem_->train, batch, 0), in,
                                s == S - 1 ? model_.logits() : DeviceRef{&recomputed_[su], 0});
        lastForward_[su] = m;
    }
    DeviceRef gradOut;
    if (s == S - 1) {
        const DeviceRef gl = model_.gradLogits();
        // The loss is not needed, but the kernel pass writing the gradient computes it anyway.
        ops_.crossEntropyRows(model_.logits(), model_.tokens(problem_->train, batch, 1), d.tokens(),
                              d.vocab, model_.scratchB(), &gl);
        gradOut = gl;
    } else {
        gradOut = get(gradOut_[su], m);
    }
    model_.stage(s).backward(stash, gradOut, {&gradW_[su], 0}, gradIn);
    if (correctors_) {
        // On this stage's queue, as d, the sums and the optimizer's state of this block.
        const CorrectorSpec& c = *correctors_;
        typename LmOpenClOps<Real>::CorrectorArgs a;
        typename LmOpenClOps<Real>::CorrectorBuffers bufs;
        bufs.last = change_() ? &change_ : &standIn_;
        bufs.gradSum = gradSum_() ? &gradSum_ : &standIn_;
        bufs.first = &standIn_;
        bufs.second = &standIn_;
        const double step = stepSize * op.stepFactor;
        a.optimizer.step = step;
        if (optimizer_) {
            a.plain = false;
            optimizer_->correctedArgs(replica, s, step, op.applies, a.optimizer, bufs);
        }
        a.dc = c.dc;
        a.lambda = c.lambda;
        a.accumulate = c.accumulate;
        a.applies = op.applies;
        a.keepLast = change_() != nullptr;
        a.lookahead = c.lookahead;
        a.lookBeta = c.beta;
        ops_.correctedStep(replicaBlock(replica, s), {&gradW_[su], 0}, stash, layout.stage(s).size,
                           bufs, replica * size_ + layout.stage(s).offset, a);
    } else if (optimizer_) {
        // On this stage's queue: the block's state is touched by this stage's ops only.
        optimizer_->update(replica, s, replicaBlock(replica, s), {&gradW_[su], 0}, stepSize,
                           op.endsStep);
    } else {
        ops_.sgd(replicaBlock(replica, s), {&gradW_[su], 0}, layout.stage(s).size, stepSize);
    }
    const cl::Event done = stageQueues_ ? ops_.lastEvent() : cl::Event();
    if (s > 0 && stageQueues_) backwardDone_[su][m] = done;
    stash_[su].keys.release(m);
    // The next writer of the kept input is F(m', s-1), of the output gradient B(m', s+1): each
    // on another stage's queue, so each waits for this op.
    if (s > 0) release(input_[su], m, done);
    if (s < S - 1) release(gradOut_[su], m, done);
}

template <typename Real>
void LmOpenClExecutor<Real>::averageReplicas() {
    joinQueues();
    // The state first, with the average's buffer as scratch (currentPoint rewrites it).
    if (optimizer_ && replicas_ > 1) optimizer_->averageReplicas(average_);
    const DeviceRef avg = currentPoint();
    for (int r = 0; r < replicas_; ++r) ops_.copy(avg, {&weights_, r * size_}, toSize(size_));
    ops_.finish();
}

template <typename Real>
double LmOpenClExecutor<Real>::meanLoss(const TokenBatches& batches) {
    joinQueues();
    const DeviceRef w = currentPoint();
    const LmLayout& layout = problem_->layout;
    const double loss =
        model_.meanLoss([&](int s) { return w.at(layout.stage(s).offset); }, batches);
    // The whole-model pass reused the stages: their saved internals are gone.
    std::fill(lastForward_.begin(), lastForward_.end(), -1);
    return loss;
}

template <typename Real>
Eigen::VectorXd LmOpenClExecutor<Real>::weights() const {
    joinQueues();
    std::vector<Real> host(toSize(replicas_) * toSize(size_));
    ops_.read({&weights_, 0}, host.data(), host.size());
    Eigen::VectorXd w = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(size_));
    for (int r = 0; r < replicas_; ++r) {
        for (long long i = 0; i < size_; ++i) {
            w[static_cast<Eigen::Index>(i)] += static_cast<double>(host[toSize(r * size_ + i)]);
        }
    }
    return w / static_cast<double>(replicas_);
}

template <typename Real>
std::vector<int> LmOpenClExecutor<Real>::peakStashedWeights() const {
    std::vector<int> out;
    for (const auto& pool : stash_) out.push_back(pool.keys.peak());
    return out;
}

template <typename Real>
std::vector<int> LmOpenClExecutor<Real>::peakKeptInputs() const {
    std::vector<int> out;
    for (std::size_t s = 0; s < stash_.size(); ++s) {
        out.push_back(s == 0 ? stash_[s].keys.peak() : input_[s].keys.peak());
    }
    return out;
}

LmExecutorFactory lmOpenClExecutorFactory(std::shared_ptr<OpenClContext> context) {
    return [context = std::move(context)](std::shared_ptr<const CharTransformerProblem> problem,
                                          int replicas) -> std::unique_ptr<LmPipelineExecutor> {
        if (problem->params.precision == LmPrecision::Float) {
            return std::make_unique<LmOpenClExecutor<float>>(context, std::move(problem), replicas);
        }
        return std::make_unique<LmOpenClExecutor<double>>(context, std::move(problem), replicas);
    };
}

template class LmOpenClExecutor<double>;
template class LmOpenClExecutor<float>;

}  // namespace pipelens::gpu

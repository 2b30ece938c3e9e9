#include "replay/lm_cpu_pipeline_executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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
double LmCpuPipelineExecutor<Real>::forward(int m, int s, int replica, int batch) {
    const CharTransformerProblem& p = *problem_;
    const int S = p.layout.stages();
    const auto& block = p.layout.stage(s);
    const Real* current = replicas_[static_cast<std::size_t>(replica)].data() + block.offset;
    Real* stash = stash_[static_cast<std::size_t>(s)].acquire(m);
    std::copy(current, current + block.size, stash);
    const Real* in = s == 0 ? nullptr : input_[static_cast<std::size_t>(s)].get(m);
    Real* out = s == S - 1 ? logits_.data() : input_[static_cast<std::size_t>(s + 1)].acquire(m);
    model_.stage(s).forward(stash, p.train.tokens(batch), in, out);
    lastForward_[static_cast<std::size_t>(s)] = m;
    if (s != S - 1) return std::numeric_limits<double>::quiet_NaN();
    const LmDims& d = p.layout.dims();
    return crossEntropy<Real>(logits_.data(), p.train.targets(batch), d.tokens(), d.vocab, nullptr);
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::backward(int m, int s, int replica, int batch, double stepSize) {
    const CharTransformerProblem& p = *problem_;
    const LmDims& d = p.layout.dims();
    const int S = p.layout.stages();
    const auto su = static_cast<std::size_t>(s);
    const auto& block = p.layout.stage(s);
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
    Real* w = replicas_[static_cast<std::size_t>(replica)].data() + block.offset;
    const auto step = static_cast<Real>(stepSize);
    for (long long i = 0; i < block.size; ++i) w[i] -= step * gradW_[static_cast<std::size_t>(i)];
    stash_[su].release(m);
    if (s > 0) input_[su].release(m);
    if (s < S - 1) gradOut_[su].release(m);
}

template <typename Real>
void LmCpuPipelineExecutor<Real>::averageReplicas() {
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

template class LmBufferPool<double>;
template class LmBufferPool<float>;
template class LmCpuPipelineExecutor<double>;
template class LmCpuPipelineExecutor<float>;

}  // namespace pipelens

#include "lm_opencl_model.hpp"

#include <algorithm>

namespace pipelens::gpu {

template <typename Real>
LmOpenClModel<Real>::LmOpenClModel(std::shared_ptr<OpenClContext> context,
                                   const CharTransformerProblem& problem)
    : problem_(problem), ops_(std::move(context)) {
    const LmLayout& layout = problem_.layout;
    const LmDims& d = layout.dims();
    const auto nc = toSize(d.tokens()) * toSize(d.width);
    const auto nv = toSize(d.tokens()) * toSize(d.vocab);
    long long largest = 0;
    for (int s = 0; s < layout.stages(); ++s) {
        stages_.push_back(std::make_unique<LmOpenClStage<Real>>(ops_, layout, s));
        largest = std::max(largest, layout.stage(s).size);
    }
    logits_ = ops_.reals(nv, "language model logits");
    gradLogits_ = ops_.reals(nv, "language model logit gradient");
    scratchA_ = ops_.reals(nc, "language model activations");
    scratchB_ = ops_.reals(nc, "language model activations");
    ids(problem_.train);
}

template <typename Real>
const typename LmOpenClModel<Real>::Ids& LmOpenClModel<Real>::ids(const TokenBatches& batches) {
    auto it = ids_.find(&batches);
    if (it != ids_.end()) return it->second;
    // Batches are windows of one id array: from batch 0's first token to the last target.
    Ids ids;
    ids.base = batches.tokens(0);
    const int last = batches.batches() - 1;
    const auto count = toSize(batches.targets(last) - ids.base) + toSize(batches.tokensPerBatch());
    ids.buffer = ops_.ints(count, "language model token ids");
    ops_.writeInts(ids.buffer, ids.base, count);
    return ids_.emplace(&batches, std::move(ids)).first->second;
}

template <typename Real>
DeviceRef LmOpenClModel<Real>::tokens(const TokenBatches& batches, int batch, int shift) {
    const Ids& i = ids(batches);
    return {&i.buffer, static_cast<long long>(batches.tokens(batch) - i.base) + shift};
}

template <typename Real>
double LmOpenClModel<Real>::meanLoss(const BlockOf& blockOf, const TokenBatches& batches) {
    const LmDims& d = layout().dims();
    const int S = layout().stages();
    const int B = batches.batches();
    const auto rows = toSize(d.tokens());
    if (meanRowsCount_ < toSize(B) * rows) {
        meanRowsCount_ = toSize(B) * rows;
        meanRows_ = ops_.reals(meanRowsCount_, "language model full-objective row losses");
    }
    const cl::Buffer* ping[2] = {&scratchA_, &scratchB_};
    for (int b = 0; b < B; ++b) {
        for (int s = 0; s < S; ++s) {
            const DeviceRef in = s == 0 ? DeviceRef{} : DeviceRef{ping[(s - 1) % 2], 0};
            const DeviceRef out = s == S - 1 ? logits() : DeviceRef{ping[s % 2], 0};
            stages_[toSize(s)]->forward(blockOf(s), tokens(batches, b, 0), in, out);
        }
        ops_.crossEntropyRows(logits(), tokens(batches, b, 1), d.tokens(), d.vocab,
                              {&meanRows_, static_cast<long long>(toSize(b) * rows)}, nullptr);
    }
    std::vector<Real> host(toSize(B) * rows);
    ops_.read({&meanRows_, 0}, host.data(), host.size());
    // The CPU's order: each batch's mean, then the mean over batches.
    double sum = 0.0;
    for (int b = 0; b < B; ++b) {
        double batchSum = 0.0;
        for (std::size_t n = 0; n < rows; ++n)
            batchSum += static_cast<double>(host[toSize(b) * rows + n]);
        sum += batchSum / static_cast<double>(rows);
    }
    return sum / B;
}

template <typename Real>
double LmOpenClModel<Real>::lossAndStageGradient(const BlockOf& blockOf, int batch, int lowestStage,
                                                 DeviceRef gradW) {
    const LmLayout& l = layout();
    const LmDims& d = l.dims();
    const int S = l.stages();
    const auto nc = toSize(d.tokens()) * toSize(d.width);
    // Each stage below the head keeps its output: the next stage's backward reads its input
    // from its own saved internals, but the forward chain needs them all at once.
    while (outputs_.size() + 1 < toSize(S)) {
        outputs_.push_back(ops_.reals(nc, "language model stage output"));
    }
    if (gradW_() == nullptr) {
        long long largest = 0;
        for (int s = 0; s < S; ++s) largest = std::max(largest, l.stage(s).size);
        gradW_ = ops_.reals(toSize(largest), "language model upper stages' weight gradient");
    }
    const DeviceRef targets = tokens(problem_.train, batch, 1);
    for (int s = 0; s < S; ++s) {
        const DeviceRef in = s == 0 ? DeviceRef{} : DeviceRef{&outputs_[toSize(s - 1)], 0};
        const DeviceRef out = s == S - 1 ? logits() : DeviceRef{&outputs_[toSize(s)], 0};
        stages_[toSize(s)]->forward(blockOf(s), tokens(problem_.train, batch, 0), in, out);
    }
    const DeviceRef gl = gradLogits();
    const double loss = ops_.crossEntropy(logits(), targets, d.tokens(), d.vocab, &gl);
    // The gradient flows down through ping-pong buffers; stages above lowestStage write their
    // weight gradient into a scratch that is never read (their backward computes both).
    DeviceRef gradOut = gl;
    for (int s = S - 1; s >= lowestStage; --s) {
        const DeviceRef gradIn = s == 0 ? DeviceRef{} : (s % 2 == 0 ? scratchA() : scratchB());
        stages_[toSize(s)]->backward(blockOf(s), gradOut,
                                     s == lowestStage ? gradW : DeviceRef{&gradW_, 0}, gradIn);
        gradOut = gradIn;
    }
    return loss;
}

template class LmOpenClModel<double>;
template class LmOpenClModel<float>;

}  // namespace pipelens::gpu

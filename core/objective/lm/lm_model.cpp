#include "objective/lm/lm_model.hpp"

#include <algorithm>

namespace pipelens {

template <typename Real>
LmStageRunner<Real>::LmStageRunner(const LmLayout& layout, int stage)
    : kind_(layout.stage(stage).kind) {
    const LmDims& d = layout.dims();
    const long long nc = static_cast<long long>(d.tokens()) * d.width;
    outputSize_ = kind_ == LmStageKind::Head ? static_cast<long long>(d.tokens()) * d.vocab : nc;
    switch (kind_) {
        case LmStageKind::Embedding:
            embedding_ = std::make_unique<EmbeddingStage<Real>>(d);
            break;
        case LmStageKind::Block:
            block_ = std::make_unique<BlockStage<Real>>(d);
            break;
        case LmStageKind::Head:
            head_ = std::make_unique<HeadStage<Real>>(d);
            break;
    }
}

template <typename Real>
void LmStageRunner<Real>::forward(const Real* w, const int* tokens, const Real* input, Real* out) {
    switch (kind_) {
        case LmStageKind::Embedding:
            embedding_->forward(w, tokens, out);
            break;
        case LmStageKind::Block:
            block_->forward(w, input, out);
            break;
        case LmStageKind::Head:
            head_->forward(w, input, out);
            break;
    }
}

template <typename Real>
void LmStageRunner<Real>::backward(const Real* w, const Real* gradOut, Real* gradW, Real* gradIn) {
    switch (kind_) {
        case LmStageKind::Embedding:
            embedding_->backward(gradOut, gradW);
            break;
        case LmStageKind::Block:
            block_->backward(w, gradOut, gradW, gradIn);
            break;
        case LmStageKind::Head:
            head_->backward(w, gradOut, gradW, gradIn);
            break;
    }
}

template <typename Real>
CharTransformer<Real>::CharTransformer(const LmLayout& layout) : layout_(layout) {
    const int S = layout.stages();
    long long largest = 0;
    for (int s = 0; s < S; ++s) {
        runners_.emplace_back(layout, s);
        outputs_.emplace_back(static_cast<std::size_t>(runners_.back().outputSize()));
        largest = std::max(largest, layout.stage(s).size);
    }
    const auto nc = static_cast<std::size_t>(layout.dims().tokens()) *
                    static_cast<std::size_t>(layout.dims().width);
    gradLogits_.resize(outputs_.back().size());
    gradA_.resize(nc);
    gradB_.resize(nc);
    gradW_.resize(static_cast<std::size_t>(largest));
    weights_.resize(static_cast<std::size_t>(S));
}

template <typename Real>
double CharTransformer<Real>::forwardAll(const std::vector<const Real*>& stageWeights,
                                         const int* tokens, const int* targets, bool withGradient) {
    forwardStages(stageWeights, tokens);
    return crossEntropy(outputs_.back().data(), targets, dims().tokens(), dims().vocab,
                        withGradient ? gradLogits_.data() : nullptr);
}

template <typename Real>
void CharTransformer<Real>::forwardStages(const std::vector<const Real*>& stageWeights,
                                          const int* tokens) {
    for (int s = 0; s < stages(); ++s) {
        const Real* in = s == 0 ? nullptr : outputs_[static_cast<std::size_t>(s - 1)].data();
        runners_[static_cast<std::size_t>(s)].forward(stageWeights[static_cast<std::size_t>(s)],
                                                      tokens, in,
                                                      outputs_[static_cast<std::size_t>(s)].data());
    }
}

template <typename Real>
const Real* CharTransformer<Real>::logits(const Real* w, const int* tokens) {
    for (int s = 0; s < stages(); ++s)
        weights_[static_cast<std::size_t>(s)] = w + layout_.stage(s).offset;
    forwardStages(weights_, tokens);
    return outputs_.back().data();
}

template <typename Real>
double CharTransformer<Real>::loss(const Real* w, const int* tokens, const int* targets) {
    for (int s = 0; s < stages(); ++s)
        weights_[static_cast<std::size_t>(s)] = w + layout_.stage(s).offset;
    return forwardAll(weights_, tokens, targets, false);
}

template <typename Real>
void CharTransformer<Real>::backwardDownTo(const std::vector<const Real*>& stageWeights,
                                           int lowestStage,
                                           const std::function<Real*(int)>& gradOf) {
    const Real* gradOut = gradLogits_.data();
    for (int s = stages() - 1; s >= lowestStage; --s) {
        Real* gradIn = (s % 2 == 0) ? gradA_.data() : gradB_.data();  // ping-pong buffers
        runners_[static_cast<std::size_t>(s)].backward(stageWeights[static_cast<std::size_t>(s)],
                                                       gradOut, gradOf(s), gradIn);
        gradOut = gradIn;
    }
}

template <typename Real>
double CharTransformer<Real>::lossAndStageGradient(const std::vector<const Real*>& stageWeights,
                                                   const int* tokens, const int* targets,
                                                   int lowestStage, Real* gradStage) {
    const double l = forwardAll(stageWeights, tokens, targets, true);
    backwardDownTo(stageWeights, lowestStage,
                   [&](int s) { return s == lowestStage ? gradStage : gradW_.data(); });
    return l;
}

template <typename Real>
double CharTransformer<Real>::lossAndGradient(const Real* w, const int* tokens, const int* targets,
                                              Real* grad) {
    for (int s = 0; s < stages(); ++s)
        weights_[static_cast<std::size_t>(s)] = w + layout_.stage(s).offset;
    const double l = forwardAll(weights_, tokens, targets, true);
    backwardDownTo(weights_, 0, [&](int s) { return grad + layout_.stage(s).offset; });
    return l;
}

template <typename Real>
double CharTransformer<Real>::meanLoss(const Real* w, const TokenBatches& batches) {
    double sum = 0.0;
    for (int i = 0; i < batches.batches(); ++i) {
        sum += loss(w, batches.tokens(i), batches.targets(i));
    }
    return sum / batches.batches();
}

template class LmStageRunner<double>;
template class LmStageRunner<float>;
template class CharTransformer<double>;
template class CharTransformer<float>;

}  // namespace pipelens

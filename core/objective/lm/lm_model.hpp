#pragma once
// The character transformer as a chain of stages over one flat parameter vector: a stage runner
// per pipeline stage (for the pipeline replays, which move activations between stages
// themselves), and whole-model passes (loss, gradient, mean loss over many batches) built from
// the same runners.
#include <functional>
#include <memory>
#include <vector>

#include "data/text_corpus.hpp"
#include "objective/lm/lm_layout.hpp"
#include "objective/lm/lm_stages.hpp"

namespace pipelens {

// One stage of the chain: dispatches to the stage kind and keeps its saved state.
template <typename Real>
class LmStageRunner {
  public:
    LmStageRunner(const LmLayout& layout, int stage);
    LmStageKind kind() const { return kind_; }
    // Floats per microbatch of the stage's output: N C, or N V for the head (logits).
    long long outputSize() const { return outputSize_; }

    // w: this stage's block of parameters. Stage 0 reads `tokens`, the others `input`.
    void forward(const Real* w, const int* tokens, const Real* input, Real* out);
    // Uses the state of the last forward. gradIn is ignored on stage 0.
    void backward(const Real* w, const Real* gradOut, Real* gradW, Real* gradIn);

    const BlockStage<Real>* block() const { return block_.get(); }

  private:
    LmStageKind kind_;
    long long outputSize_ = 0;
    std::unique_ptr<EmbeddingStage<Real>> embedding_;
    std::unique_ptr<BlockStage<Real>> block_;
    std::unique_ptr<HeadStage<Real>> head_;
};

template <typename Real>
class CharTransformer {
  public:
    explicit CharTransformer(const LmLayout& layout);
    const LmLayout& layout() const { return layout_; }
    const LmDims& dims() const { return layout_.dims(); }
    int stages() const { return layout_.stages(); }
    LmStageRunner<Real>& stage(int s) { return runners_[static_cast<std::size_t>(s)]; }

    // Loss of one batch at the flat weights w (all stages forward).
    double loss(const Real* w, const int* tokens, const int* targets);
    // Loss and its gradient with respect to every parameter (flat, layout order).
    double lossAndGradient(const Real* w, const int* tokens, const int* targets, Real* grad);
    // The stage weights may come from different places (RPD's mixed stale point): block s of
    // the parameters is stageWeights[s]. Forward through every stage, then backward from the
    // last stage down to `lowestStage`; gradStage receives the gradient of block lowestStage.
    double lossAndStageGradient(const std::vector<const Real*>& stageWeights, const int* tokens,
                                const int* targets, int lowestStage, Real* gradStage);
    // Mean of the batch losses over all batches (the authors' full objective), or over the
    // batches of a held-out part of the corpus.
    double meanLoss(const Real* w, const TokenBatches& batches);
    // The logits [N, V] of one batch's tokens at w (all stages forward); valid until the next pass.
    const Real* logits(const Real* w, const int* tokens);

  private:
    double forwardAll(const std::vector<const Real*>& stageWeights, const int* tokens,
                      const int* targets, bool withGradient);
    void forwardStages(const std::vector<const Real*>& stageWeights, const int* tokens);
    void backwardDownTo(const std::vector<const Real*>& stageWeights, int lowestStage,
                        const std::function<Real*(int)>& gradOf);

    LmLayout layout_;
    std::vector<LmStageRunner<Real>> runners_;
    std::vector<std::vector<Real>> outputs_;  // per stage (the head's: logits)
    std::vector<Real> gradLogits_, gradA_, gradB_, gradW_;
    std::vector<const Real*> weights_;
};

}  // namespace pipelens

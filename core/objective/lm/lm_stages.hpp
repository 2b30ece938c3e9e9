#pragma once
// The three stage kinds of the character transformer, each with its forward and backward side by
// side (../shared/golden-lm/README.md, "Model", has the equations). A stage object owns what its
// backward needs from the last forward and the scratch it works in, so the hot path allocates
// nothing. Activations are row-major [N = b T, width] buffers; weights point into the flat
// parameter vector at the stage's offset. Gradients of the weights are written (not added).
// Instantiated for double (exactness) and float.
#include <vector>

#include "objective/lm/lm_layout.hpp"

namespace pipelens {

// Stage 0: h[n, t, :] = E_tok[X[n, t], :] + E_pos[t, :].
template <typename Real>
class EmbeddingStage {
  public:
    explicit EmbeddingStage(const LmDims& dims) : dims_(dims) {}
    // Keeps the token pointer for backward: it must stay valid until then.
    void forward(const Real* w, const int* tokens, Real* out);
    void backward(const Real* gradOut, Real* gradW) const;

  private:
    LmDims dims_;
    const int* tokens_ = nullptr;
};

// Stages 1 .. S-2: one pre-LayerNorm transformer block.
template <typename Real>
class BlockStage {
  public:
    explicit BlockStage(const LmDims& dims);
    void forward(const Real* w, const Real* x, Real* out);
    void backward(const Real* w, const Real* gradOut, Real* gradW, Real* gradIn);

    // The last forward's internals (the golden stage check compares them).
    const std::vector<Real>& ln1Out() const { return ln1Out_; }
    const std::vector<Real>& qkv() const { return qkv_; }
    const std::vector<Real>& headsMerged() const { return merged_; }
    const std::vector<Real>& attnOut() const { return attnOut_; }
    const std::vector<Real>& ln2In() const { return hMid_; }
    const std::vector<Real>& ln2Out() const { return ln2Out_; }
    const std::vector<Real>& mlpPreGelu() const { return pre_; }
    const std::vector<Real>& mlpGeluOut() const { return act_; }
    const std::vector<Real>& mlpOut() const { return mlpOut_; }

  private:
    void attentionForward();
    void attentionBackward();

    LmDims dims_;
    LmBlockOffsets at_;
    // Saved by forward.
    std::vector<Real> xhat1_, rstd1_, ln1Out_, qkv_, probs_, merged_, attnOut_, hMid_;
    std::vector<Real> xhat2_, rstd2_, ln2Out_, pre_, act_, mlpOut_;
    // Backward scratch.
    std::vector<Real> dAct_, dLn2_, dHMid_, dMerged_, dQkv_, dLn1_, dScores_;
};

// Stage S-1: logits = LN(h; ln_f) W_head^T (no bias).
template <typename Real>
class HeadStage {
  public:
    explicit HeadStage(const LmDims& dims);
    void forward(const Real* w, const Real* x, Real* logits);
    void backward(const Real* w, const Real* gradLogits, Real* gradW, Real* gradIn);

  private:
    LmDims dims_;
    std::vector<Real> xhat_, rstd_, lnOut_, dLn_;
};

// Mean next-character cross-entropy over the N rows of logits [N, V] (natural log); when
// gradLogits is given it receives (softmax(logits) - onehot(targets)) / N.
template <typename Real>
double crossEntropy(const Real* logits, const int* targets, int rows, int vocab, Real* gradLogits);

}  // namespace pipelens

#include "objective/lm/lm_stages.hpp"

#include "objective/lm/lm_kernels.hpp"
#include "objective/lm/lm_threads.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace pipelens {

namespace {

template <typename Real>
using RowMat = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Real>
using Mat = Eigen::Map<RowMat<Real>>;
template <typename Real>
using CMat = Eigen::Map<const RowMat<Real>>;
// A head's columns inside a wider row-major buffer (row stride `stride`).
template <typename Real>
using Strided = Eigen::Map<RowMat<Real>, 0, Eigen::OuterStride<>>;
template <typename Real>
using CStrided = Eigen::Map<const RowMat<Real>, 0, Eigen::OuterStride<>>;
template <typename Real>
using CRow = Eigen::Map<const Eigen::Matrix<Real, 1, Eigen::Dynamic>>;
template <typename Real>
using Row = Eigen::Map<Eigen::Matrix<Real, 1, Eigen::Dynamic>>;

constexpr double kLayerNormEps = 1e-5;
// Pieces when a loop is split over threads (lm_threads.hpp): rows of a row-wise loop, columns of a
// column sum, and elements of an elementwise loop.
constexpr std::size_t kRowGrain = 16;
constexpr std::size_t kColumnGrain = 16;
constexpr std::size_t kElementGrain = 256;

// y = LN(x; g, b) row by row, with the biased variance; keeps xhat and 1/sigma for backward.
template <typename Real>
void layerNormForward(const Real* x, const Real* g, const Real* b, int rows, int width, Real* xhat,
                      Real* rstd, Real* y) {
    lmk::parallelRange(
        static_cast<std::size_t>(rows), kRowGrain, [&](std::size_t first, std::size_t last) {
            for (int n = static_cast<int>(first); n < static_cast<int>(last); ++n) {
                const Real* xr = x + static_cast<std::ptrdiff_t>(n) * width;
                Real mean = 0;
                for (int i = 0; i < width; ++i) mean += xr[i];
                mean /= static_cast<Real>(width);
                Real var = 0;
                for (int i = 0; i < width; ++i) var += (xr[i] - mean) * (xr[i] - mean);
                var /= static_cast<Real>(width);
                const Real r = Real(1) / std::sqrt(var + static_cast<Real>(kLayerNormEps));
                rstd[n] = r;
                Real* hr = xhat + static_cast<std::ptrdiff_t>(n) * width;
                Real* yr = y + static_cast<std::ptrdiff_t>(n) * width;
                for (int i = 0; i < width; ++i) {
                    hr[i] = (xr[i] - mean) * r;
                    yr[i] = hr[i] * g[i] + b[i];
                }
            }
        });
}

// sums[j] = sum over rows n, in order, of m[n, j]; split by columns.
template <typename Real>
void columnSums(const Real* m, int rows, int cols, Real* sums) {
    lmk::parallelRange(static_cast<std::size_t>(cols), kColumnGrain,
                       [&](std::size_t b, std::size_t e) {
                           std::fill(sums + b, sums + e, Real(0));
                           for (int n = 0; n < rows; ++n) {
                               const Real* r = m + static_cast<std::ptrdiff_t>(n) * cols;
                               for (std::size_t j = b; j < e; ++j) sums[j] += r[j];
                           }
                       });
}

// dx += LN's input gradient; dg, db are written. Rows split for dx; dg and db are column sums
// over the rows in order (dg of dy * xhat, db of dy), split by columns.
template <typename Real>
void layerNormBackward(const Real* dy, const Real* xhat, const Real* rstd, const Real* g, int rows,
                       int width, Real* dx, Real* dg, Real* db) {
    lmk::parallelRange(static_cast<std::size_t>(rows), kRowGrain,
                       [&](std::size_t b, std::size_t e) {
                           for (int n = static_cast<int>(b); n < static_cast<int>(e); ++n) {
                               const Real* dyr = dy + static_cast<std::ptrdiff_t>(n) * width;
                               const Real* hr = xhat + static_cast<std::ptrdiff_t>(n) * width;
                               Real* dxr = dx + static_cast<std::ptrdiff_t>(n) * width;
                               Real m1 = 0;
                               Real m2 = 0;
                               for (int i = 0; i < width; ++i) {
                                   const Real dh = dyr[i] * g[i];
                                   m1 += dh;
                                   m2 += dh * hr[i];
                               }
                               m1 /= static_cast<Real>(width);
                               m2 /= static_cast<Real>(width);
                               for (int i = 0; i < width; ++i) {
                                   dxr[i] += rstd[n] * (dyr[i] * g[i] - m1 - hr[i] * m2);
                               }
                           }
                       });
    lmk::parallelRange(static_cast<std::size_t>(width), kColumnGrain,
                       [&](std::size_t b, std::size_t e) {
                           const auto i0 = static_cast<int>(b);
                           const auto i1 = static_cast<int>(e);
                           std::fill(dg + i0, dg + i1, Real(0));
                           for (int n = 0; n < rows; ++n) {
                               const Real* dyr = dy + static_cast<std::ptrdiff_t>(n) * width;
                               const Real* hr = xhat + static_cast<std::ptrdiff_t>(n) * width;
                               for (int i = i0; i < i1; ++i) dg[i] += dyr[i] * hr[i];
                           }
                       });
    columnSums(dy, rows, width, db);
}

// out = a + b elementwise over n values; split.
template <typename Real>
void addInto(const Real* a, const Real* b, std::size_t n, Real* out) {
    lmk::parallelRange(n, kElementGrain, [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) out[i] = a[i] + b[i];
    });
}

// out [N, O] = in [N, I] W^T + bias, W stored [O, I]; bias may be null.
template <typename Real>
void linearForward(const Real* in, const Real* W, const Real* bias, int rows, int inDim, int outDim,
                   Real* out) {
    Mat<Real> o(out, rows, outDim);
    if (lmk::fastKernels()) {
        lmk::gemm<Real>(rows, outDim, inDim, in, inDim, 1, W, 1, inDim, out, outDim, false);
    } else {
        o.noalias() = CMat<Real>(in, rows, inDim) * CMat<Real>(W, outDim, inDim).transpose();
    }
    if (bias != nullptr) {
        lmk::parallelRange(
            static_cast<std::size_t>(rows), kRowGrain, [&](std::size_t b, std::size_t e) {
                o.middleRows(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(e - b))
                    .rowwise() += CRow<Real>(bias, outDim);
            });
    }
}

// dW = dOut^T in, dBias = column sums of dOut (if given), dIn = dOut W (if given; `addToIn`
// adds instead of writing).
template <typename Real>
void linearBackward(const Real* in, const Real* W, const Real* dOut, int rows, int inDim,
                    int outDim, Real* dW, Real* dBias, Real* dIn, bool addToIn) {
    CMat<Real> g(dOut, rows, outDim);
    if (lmk::fastKernels()) {
        // dW [O, I] = dOut^T [O, N] in [N, I]; dIn [N, I] (+)= dOut [N, O] W [O, I].
        lmk::gemm<Real>(outDim, inDim, rows, dOut, 1, outDim, in, inDim, 1, dW, inDim, false);
        if (dBias != nullptr) columnSums(dOut, rows, outDim, dBias);
        if (dIn != nullptr) {
            lmk::gemm<Real>(rows, inDim, outDim, dOut, outDim, 1, W, inDim, 1, dIn, inDim, addToIn);
        }
        return;
    }
    Mat<Real>(dW, outDim, inDim).noalias() = g.transpose() * CMat<Real>(in, rows, inDim);
    if (dBias != nullptr) columnSums(dOut, rows, outDim, dBias);
    if (dIn != nullptr) {
        Mat<Real> di(dIn, rows, inDim);
        if (addToIn) {
            di.noalias() += g * CMat<Real>(W, outDim, inDim);
        } else {
            di.noalias() = g * CMat<Real>(W, outDim, inDim);
        }
    }
}

template <typename Real>
Real geluExact(Real u) {
    return Real(0.5) * u * (Real(1) + std::erf(u * static_cast<Real>(std::numbers::sqrt2 / 2)));
}

template <typename Real>
Real geluExactDerivative(Real u) {
    const Real cdf =
        Real(0.5) * (Real(1) + std::erf(u * static_cast<Real>(std::numbers::sqrt2 / 2)));
    const Real pdf = std::exp(Real(-0.5) * u * u) *
                     static_cast<Real>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return cdf + u * pdf;
}

}  // namespace

// ------------------------------------------------------------------------------ embedding

template <typename Real>
void EmbeddingStage<Real>::forward(const Real* w, const int* tokens, Real* out) {
    tokens_ = tokens;
    const int C = dims_.width;
    const Real* pos = w + static_cast<std::ptrdiff_t>(dims_.vocab) * C;
    for (int r = 0; r < dims_.tokens(); ++r) {
        const Real* te = w + static_cast<std::ptrdiff_t>(tokens[r]) * C;
        const Real* pe = pos + static_cast<std::ptrdiff_t>(r % dims_.context) * C;
        Real* o = out + static_cast<std::ptrdiff_t>(r) * C;
        for (int i = 0; i < C; ++i) o[i] = te[i] + pe[i];
    }
}

template <typename Real>
void EmbeddingStage<Real>::backward(const Real* gradOut, Real* gradW) const {
    const int C = dims_.width;
    std::fill(gradW, gradW + LmLayout::embeddingSize(dims_), Real(0));
    Real* dpos = gradW + static_cast<std::ptrdiff_t>(dims_.vocab) * C;
    for (int r = 0; r < dims_.tokens(); ++r) {
        const Real* g = gradOut + static_cast<std::ptrdiff_t>(r) * C;
        Real* dt = gradW + static_cast<std::ptrdiff_t>(tokens_[r]) * C;
        Real* dp = dpos + static_cast<std::ptrdiff_t>(r % dims_.context) * C;
        for (int i = 0; i < C; ++i) {
            dt[i] += g[i];
            dp[i] += g[i];
        }
    }
}

// ------------------------------------------------------------------------------ block

template <typename Real>
BlockStage<Real>::BlockStage(const LmDims& dims) : dims_(dims), at_(dims.width) {
    const auto nc = static_cast<std::size_t>(dims.tokens()) * static_cast<std::size_t>(dims.width);
    const auto n = static_cast<std::size_t>(dims.tokens());
    const auto tt = static_cast<std::size_t>(dims.context) * static_cast<std::size_t>(dims.context);
    for (auto* v : {&xhat1_, &ln1Out_, &merged_, &attnOut_, &hMid_, &xhat2_, &ln2Out_, &mlpOut_,
                    &dLn2_, &dHMid_, &dMerged_, &dLn1_}) {
        v->assign(nc, Real(0));
    }
    for (auto* v : {&rstd1_, &rstd2_}) v->assign(n, Real(0));
    qkv_.assign(3 * nc, Real(0));
    dQkv_.assign(3 * nc, Real(0));
    for (auto* v : {&pre_, &act_, &dAct_}) v->assign(4 * nc, Real(0));
    probs_.assign(static_cast<std::size_t>(dims.batch) * static_cast<std::size_t>(dims.heads) * tt,
                  Real(0));
    dScores_.assign(
        static_cast<std::size_t>(dims.batch) * static_cast<std::size_t>(dims.heads) * tt, Real(0));
}

template <typename Real>
void BlockStage<Real>::forward(const Real* w, const Real* x, Real* out) {
    const int N = dims_.tokens();
    const int C = dims_.width;
    layerNormForward(x, w + at_.ln1Weight, w + at_.ln1Bias, N, C, xhat1_.data(), rstd1_.data(),
                     ln1Out_.data());
    linearForward(ln1Out_.data(), w + at_.attnWeight, w + at_.attnBias, N, C, 3 * C, qkv_.data());
    attentionForward();
    linearForward(merged_.data(), w + at_.projWeight, w + at_.projBias, N, C, C, attnOut_.data());
    addInto(x, attnOut_.data(), hMid_.size(), hMid_.data());
    layerNormForward(hMid_.data(), w + at_.ln2Weight, w + at_.ln2Bias, N, C, xhat2_.data(),
                     rstd2_.data(), ln2Out_.data());
    linearForward(ln2Out_.data(), w + at_.fcWeight, w + at_.fcBias, N, C, 4 * C, pre_.data());
    if (lmk::fastKernels()) {
        lmk::geluForward(pre_.data(), pre_.size(), act_.data());
    } else {
        lmk::parallelRange(pre_.size(), kElementGrain, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) act_[i] = geluExact(pre_[i]);
        });
    }
    linearForward(act_.data(), w + at_.outWeight, w + at_.outBias, N, 4 * C, C, mlpOut_.data());
    addInto(hMid_.data(), mlpOut_.data(), hMid_.size(), out);
}

// Per sequence and head: P = causal softmax(Q K^T / sqrt(hd)), Y = P V into the head's columns.
template <typename Real>
void BlockStage<Real>::attentionForward() {
    const int T = dims_.context;
    const int C = dims_.width;
    const int hd = dims_.headDim();
    const Real scale = Real(1) / std::sqrt(static_cast<Real>(hd));
    // (sequence, head) pairs are independent: split over threads.
    const auto pairs =
        static_cast<std::size_t>(dims_.batch) * static_cast<std::size_t>(dims_.heads);
    lmk::parallelRange(pairs, 1, [&](std::size_t first, std::size_t last) {
        for (std::size_t pair = first; pair < last; ++pair) {
            const int n = static_cast<int>(pair) / dims_.heads;
            const int h = static_cast<int>(pair) % dims_.heads;
            const Real* base = qkv_.data() + static_cast<std::ptrdiff_t>(n) * T * 3 * C;
            CStrided<Real> q(base + h * hd, T, hd, Eigen::OuterStride<>(3 * C));
            CStrided<Real> k(base + C + h * hd, T, hd, Eigen::OuterStride<>(3 * C));
            CStrided<Real> v(base + 2 * C + h * hd, T, hd, Eigen::OuterStride<>(3 * C));
            Mat<Real> p(probs_.data() + (static_cast<std::ptrdiff_t>(n) * dims_.heads + h) * T * T,
                        T, T);
            const bool fast = lmk::fastKernels();
            if (fast) {
                lmk::gemm<Real>(T, T, hd, q.data(), 3 * C, 1, k.data(), 1, 3 * C, p.data(), T,
                                false);
            } else {
                p.noalias() = q * k.transpose();
            }
            for (int i = 0; i < T; ++i) {
                Real mx = -std::numeric_limits<Real>::infinity();
                for (int l = 0; l <= i; ++l) mx = std::max(mx, p(i, l) * scale);
                Real sum = 0;
                if (fast) {
                    Real* row = p.data() + static_cast<std::ptrdiff_t>(i) * T;
                    for (int l = 0; l <= i; ++l) row[l] = row[l] * scale - mx;
                    lmk::expInPlace(row, static_cast<std::size_t>(i) + 1);
                    for (int l = 0; l <= i; ++l) sum += row[l];
                } else {
                    for (int l = 0; l <= i; ++l) {
                        p(i, l) = std::exp(p(i, l) * scale - mx);
                        sum += p(i, l);
                    }
                }
                for (int l = 0; l <= i; ++l) p(i, l) /= sum;
                for (int l = i + 1; l < T; ++l) p(i, l) = 0;
            }
            Strided<Real> y(merged_.data() + static_cast<std::ptrdiff_t>(n) * T * C + h * hd, T, hd,
                            Eigen::OuterStride<>(C));
            if (fast) {  // p is zero above its diagonal
                lmk::gemm<Real>(T, hd, T, p.data(), T, 1, v.data(), 3 * C, 1, y.data(), C, false);
            } else {
                y.noalias() = p.template triangularView<Eigen::Lower>() * v;
            }
        }
    });
}

template <typename Real>
void BlockStage<Real>::backward(const Real* w, const Real* gradOut, Real* gradW, Real* gradIn) {
    const int N = dims_.tokens();
    const int C = dims_.width;
    // MLP: out = hMid + GELU(LN2(hMid) W0^T + b0) W2^T + b2.
    linearBackward(act_.data(), w + at_.outWeight, gradOut, N, 4 * C, C, gradW + at_.outWeight,
                   gradW + at_.outBias, dAct_.data(), false);
    if (lmk::fastKernels()) {
        lmk::geluBackwardInPlace(pre_.data(), dAct_.size(), dAct_.data());
    } else {
        lmk::parallelRange(dAct_.size(), kElementGrain, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) dAct_[i] *= geluExactDerivative(pre_[i]);
        });
    }
    linearBackward(ln2Out_.data(), w + at_.fcWeight, dAct_.data(), N, C, 4 * C,
                   gradW + at_.fcWeight, gradW + at_.fcBias, dLn2_.data(), false);
    std::copy(gradOut, gradOut + dHMid_.size(), dHMid_.begin());
    layerNormBackward(dLn2_.data(), xhat2_.data(), rstd2_.data(), w + at_.ln2Weight, N, C,
                      dHMid_.data(), gradW + at_.ln2Weight, gradW + at_.ln2Bias);
    // Attention: hMid = x + (attention(LN1(x)) W_proj^T + b_proj).
    linearBackward(merged_.data(), w + at_.projWeight, dHMid_.data(), N, C, C,
                   gradW + at_.projWeight, gradW + at_.projBias, dMerged_.data(), false);
    attentionBackward();
    linearBackward(ln1Out_.data(), w + at_.attnWeight, dQkv_.data(), N, C, 3 * C,
                   gradW + at_.attnWeight, gradW + at_.attnBias, dLn1_.data(), false);
    std::copy(dHMid_.begin(), dHMid_.end(), gradIn);
    layerNormBackward(dLn1_.data(), xhat1_.data(), rstd1_.data(), w + at_.ln1Weight, N, C, gradIn,
                      gradW + at_.ln1Weight, gradW + at_.ln1Bias);
}

// dV = P^T dY, dP = dY V^T, dS = P (dP - rowsum(P dP)), dQ = dS K s, dK = dS^T Q s.
template <typename Real>
void BlockStage<Real>::attentionBackward() {
    const int T = dims_.context;
    const int C = dims_.width;
    const int hd = dims_.headDim();
    const Real scale = Real(1) / std::sqrt(static_cast<Real>(hd));
    const auto pairs =
        static_cast<std::size_t>(dims_.batch) * static_cast<std::size_t>(dims_.heads);
    const std::size_t tt = static_cast<std::size_t>(T) * static_cast<std::size_t>(T);
    lmk::parallelRange(pairs, 1, [&](std::size_t first, std::size_t last) {
        for (std::size_t pair = first; pair < last; ++pair) {
            const int n = static_cast<int>(pair) / dims_.heads;
            const int h = static_cast<int>(pair) % dims_.heads;
            const Real* base = qkv_.data() + static_cast<std::ptrdiff_t>(n) * T * 3 * C;
            Real* dbase = dQkv_.data() + static_cast<std::ptrdiff_t>(n) * T * 3 * C;
            const Eigen::OuterStride<> s3(3 * static_cast<Eigen::Index>(C));
            CStrided<Real> q(base + h * hd, T, hd, s3);
            CStrided<Real> k(base + C + h * hd, T, hd, s3);
            CStrided<Real> v(base + 2 * C + h * hd, T, hd, s3);
            Strided<Real> dq(dbase + h * hd, T, hd, s3);
            Strided<Real> dk(dbase + C + h * hd, T, hd, s3);
            Strided<Real> dv(dbase + 2 * C + h * hd, T, hd, s3);
            CMat<Real> p(probs_.data() + (static_cast<std::ptrdiff_t>(n) * dims_.heads + h) * T * T,
                         T, T);
            CStrided<Real> dy(dMerged_.data() + static_cast<std::ptrdiff_t>(n) * T * C + h * hd, T,
                              hd, Eigen::OuterStride<>(C));
            const bool fast = lmk::fastKernels();
            Mat<Real> ds(dScores_.data() + pair * tt, T, T);  // each pair its own scratch
            if (fast) {
                lmk::gemm<Real>(T, hd, T, p.data(), 1, T, dy.data(), C, 1, dv.data(), 3 * C, false);
                lmk::gemm<Real>(T, T, hd, dy.data(), C, 1, v.data(), 1, 3 * C, ds.data(), T, false);
            } else {
                dv.noalias() = p.transpose() * dy;
                ds.noalias() = dy * v.transpose();
            }
            for (int i = 0; i < T; ++i) {
                Real dot = 0;
                for (int l = 0; l <= i; ++l) dot += p(i, l) * ds(i, l);
                for (int l = 0; l <= i; ++l) ds(i, l) = p(i, l) * (ds(i, l) - dot) * scale;
                for (int l = i + 1; l < T; ++l) ds(i, l) = 0;
            }
            if (fast) {
                lmk::gemm<Real>(T, hd, T, ds.data(), T, 1, k.data(), 3 * C, 1, dq.data(), 3 * C,
                                false);
                lmk::gemm<Real>(T, hd, T, ds.data(), 1, T, q.data(), 3 * C, 1, dk.data(), 3 * C,
                                false);
            } else {
                dq.noalias() = ds * k;
                dk.noalias() = ds.transpose() * q;
            }
        }
    });
}

// ------------------------------------------------------------------------------ head

template <typename Real>
HeadStage<Real>::HeadStage(const LmDims& dims) : dims_(dims) {
    const auto nc = static_cast<std::size_t>(dims.tokens()) * static_cast<std::size_t>(dims.width);
    xhat_.assign(nc, Real(0));
    lnOut_.assign(nc, Real(0));
    dLn_.assign(nc, Real(0));
    rstd_.assign(static_cast<std::size_t>(dims.tokens()), Real(0));
}

template <typename Real>
void HeadStage<Real>::forward(const Real* w, const Real* x, Real* logits) {
    const int N = dims_.tokens();
    const int C = dims_.width;
    layerNormForward(x, w, w + C, N, C, xhat_.data(), rstd_.data(), lnOut_.data());
    linearForward<Real>(lnOut_.data(), w + 2 * C, nullptr, N, C, dims_.vocab, logits);
}

template <typename Real>
void HeadStage<Real>::backward(const Real* w, const Real* gradLogits, Real* gradW, Real* gradIn) {
    const int N = dims_.tokens();
    const int C = dims_.width;
    linearBackward<Real>(lnOut_.data(), w + 2 * C, gradLogits, N, C, dims_.vocab, gradW + 2 * C,
                         nullptr, dLn_.data(), false);
    std::fill(gradIn, gradIn + static_cast<std::ptrdiff_t>(N) * C, Real(0));
    layerNormBackward(dLn_.data(), xhat_.data(), rstd_.data(), w, N, C, gradIn, gradW, gradW + C);
}

template <typename Real>
double crossEntropy(const Real* logits, const int* targets, int rows, int vocab, Real* gradLogits) {
    const Real invRows = Real(1) / static_cast<Real>(rows);
    // Rows split over threads; each row's loss is kept and the mean summed in row order.
    thread_local std::vector<double> callerRowLoss;
    std::vector<double>& rowLoss = callerRowLoss;  // the caller's, also on the helper threads
    rowLoss.resize(static_cast<std::size_t>(rows));
    const bool fast = lmk::fastKernels();
    lmk::parallelRange(
        static_cast<std::size_t>(rows), kRowGrain, [&](std::size_t b, std::size_t e) {
            if (fast) {
                // exp(z - max) once per row, vectorised, into the gradient's row (or a scratch
                // row): the gradient is then exp(z - max) / sum / N, equal to exp(z - lse) / N up
                // to rounding.
                thread_local std::vector<Real> scratch;
                if (gradLogits == nullptr && scratch.size() < static_cast<std::size_t>(vocab)) {
                    scratch.resize(static_cast<std::size_t>(vocab));
                }
                for (int n = static_cast<int>(b); n < static_cast<int>(e); ++n) {
                    const Real* z = logits + static_cast<std::ptrdiff_t>(n) * vocab;
                    Real* ex = gradLogits != nullptr
                                   ? gradLogits + static_cast<std::ptrdiff_t>(n) * vocab
                                   : scratch.data();
                    Real mx = z[0];
                    for (int v = 1; v < vocab; ++v) mx = std::max(mx, z[v]);
                    for (int v = 0; v < vocab; ++v) ex[v] = z[v] - mx;
                    lmk::expInPlace(ex, static_cast<std::size_t>(vocab));
                    Real sum = 0;
                    for (int v = 0; v < vocab; ++v) sum += ex[v];
                    rowLoss[static_cast<std::size_t>(n)] =
                        static_cast<double>(mx + std::log(sum) - z[targets[n]]);
                    if (gradLogits != nullptr) {
                        const Real f = invRows / sum;
                        for (int v = 0; v < vocab; ++v) ex[v] *= f;
                        ex[targets[n]] -= invRows;
                    }
                }
                return;
            }
            for (int n = static_cast<int>(b); n < static_cast<int>(e); ++n) {
                const Real* z = logits + static_cast<std::ptrdiff_t>(n) * vocab;
                Real mx = z[0];
                for (int v = 1; v < vocab; ++v) mx = std::max(mx, z[v]);
                Real sum = 0;
                for (int v = 0; v < vocab; ++v) sum += std::exp(z[v] - mx);
                const Real lse = mx + std::log(sum);
                rowLoss[static_cast<std::size_t>(n)] = static_cast<double>(lse - z[targets[n]]);
                if (gradLogits != nullptr) {
                    Real* g = gradLogits + static_cast<std::ptrdiff_t>(n) * vocab;
                    for (int v = 0; v < vocab; ++v) g[v] = std::exp(z[v] - lse) * invRows;
                    g[targets[n]] -= invRows;
                }
            }
        });
    double total = 0.0;
    for (int n = 0; n < rows; ++n) total += rowLoss[static_cast<std::size_t>(n)];
    return total / rows;
}

template class EmbeddingStage<double>;
template class EmbeddingStage<float>;
template class BlockStage<double>;
template class BlockStage<float>;
template class HeadStage<double>;
template class HeadStage<float>;
template double crossEntropy<double>(const double*, const int*, int, int, double*);
template double crossEntropy<float>(const float*, const int*, int, int, float*);

}  // namespace pipelens

#pragma once
// The language model's hot loops with an AVX2 + FMA path chosen at run time. The build's default
// flags are plain x86-64 (SSE2), where Eigen's products run on 128-bit vectors without FMA; on a
// CPU that has AVX2 and FMA the stages call these instead: a packed, register-blocked matrix
// product (6 x 16 floats or 6 x 8 doubles per micro-tile) and glibc's vector erf/exp (libmvec)
// for the exact GELU. Only functions with a target attribute use the wider instructions, so the
// binary still runs on any x86-64 CPU (the stages keep their Eigen path there).
//
// Results depend only on the inputs: every product sums k in increasing order within blocks of
// kKc and adds the blocks in order, whatever thread calls it; FMA rounds differently from a
// multiply and an add, so the two paths agree to rounding, not bit for bit.
#include <cstddef>

namespace pipelens::lmk {

// True when the CPU has AVX2 and FMA and the fast path is not switched off (by
// setFastKernels(false) or the environment variable PIPELENS_LM_KERNELS=portable).
bool fastKernels();
// Tests compare both paths; returns the previous setting. Not thread-safe: call between runs.
bool setFastKernels(bool on);
// Whether this CPU could take the fast path at all.
bool cpuHasAvx2Fma();

// C[m, n] (= or +=) sum_k A[m rsA + k csA] B[k rsB + n csB], C row-major with row stride ldc.
// Any strides (transposes are strides). Only call when fastKernels().
template <typename Real>
void gemm(int M, int N, int K, const Real* A, std::ptrdiff_t rsA, std::ptrdiff_t csA, const Real* B,
          std::ptrdiff_t rsB, std::ptrdiff_t csB, Real* C, std::ptrdiff_t ldc, bool accumulate);

// out[i] = GELU(u[i]) = u/2 (1 + erf(u/sqrt 2)) (exact erf). Only call when fastKernels().
template <typename Real>
void geluForward(const Real* u, std::size_t n, Real* out);
// x[i] = exp(x[i]). Only call when fastKernels().
template <typename Real>
void expInPlace(Real* x, std::size_t n);
// d[i] *= GELU'(u[i]). Only call when fastKernels().
template <typename Real>
void geluBackwardInPlace(const Real* u, std::size_t n, Real* d);

}  // namespace pipelens::lmk

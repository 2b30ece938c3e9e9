#include "objective/lm/lm_kernels.hpp"

#include "cmdline/environment.hpp"
#include "objective/lm/lm_threads.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <vector>

#define PIPELENS_AVX2 __attribute__((target("avx2,fma")))

#ifdef PIPELENS_HAVE_LIBMVEC
// glibc's vector math (libmvec, glibc >= 2.35 for erf): the AVX2 variants, by their vector-ABI
// names. Accurate to a few ulps, like the scalar libm.
// NOLINTBEGIN(bugprone-reserved-identifier): glibc's own symbols, declared as libmvec names them
extern "C" {
PIPELENS_AVX2 __m256 _ZGVdN8v_erff(__m256);
PIPELENS_AVX2 __m256 _ZGVdN8v_expf(__m256);
PIPELENS_AVX2 __m256d _ZGVdN4v_erf(__m256d);
PIPELENS_AVX2 __m256d _ZGVdN4v_exp(__m256d);
}
// NOLINTEND(bugprone-reserved-identifier)
#endif

namespace pipelens::lmk {

namespace {

bool detectAvx2Fma() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool initialSetting() {
    // auto or portable; anything else is refused (pipelens-cli checks it at start-up).
    if (checkedEnvironment("PIPELENS_LM_KERNELS").value_or("auto") == "portable") return false;
    return detectAvx2Fma();
}

std::atomic<bool>& enabled() {
    static std::atomic<bool> on{initialSetting()};
    return on;
}

// Blocking: k in blocks of kKc (a kKc x NR panel of B, 16 KB in float, stays in L1 while kMc
// rows of A stream past it), columns in blocks of kNc (a packed B block is at most 1 MB).
constexpr int kKc = 256;
constexpr int kMc = 96;
constexpr int kNc = 1024;
constexpr int kMr = 6;

template <typename Real>
struct Vec;

template <>
struct Vec<float> {
    using V = __m256;
    static constexpr int kW = 8;
    PIPELENS_AVX2 static V zero() { return _mm256_setzero_ps(); }
    PIPELENS_AVX2 static V load(const float* p) { return _mm256_loadu_ps(p); }
    PIPELENS_AVX2 static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    PIPELENS_AVX2 static V set1(float x) { return _mm256_set1_ps(x); }
    PIPELENS_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    PIPELENS_AVX2 static V add(V a, V b) { return _mm256_add_ps(a, b); }
    PIPELENS_AVX2 static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
#ifdef PIPELENS_HAVE_LIBMVEC
    PIPELENS_AVX2 static V erf(V a) {
        return _ZGVdN8v_erff(a);
    }
    PIPELENS_AVX2 static V exp(V a) {
        return _ZGVdN8v_expf(a);
    }
#endif
};

template <>
struct Vec<double> {
    using V = __m256d;
    static constexpr int kW = 4;
    PIPELENS_AVX2 static V zero() { return _mm256_setzero_pd(); }
    PIPELENS_AVX2 static V load(const double* p) { return _mm256_loadu_pd(p); }
    PIPELENS_AVX2 static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
    PIPELENS_AVX2 static V set1(double x) { return _mm256_set1_pd(x); }
    PIPELENS_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
    PIPELENS_AVX2 static V add(V a, V b) { return _mm256_add_pd(a, b); }
    PIPELENS_AVX2 static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
#ifdef PIPELENS_HAVE_LIBMVEC
    PIPELENS_AVX2 static V erf(V a) {
        return _ZGVdN4v_erf(a);
    }
    PIPELENS_AVX2 static V exp(V a) {
        return _ZGVdN4v_exp(a);
    }
#endif
};

// Micro-tile: kMr rows of A, read in place (row r, step k at a[r rsA + k csA]: either stride may
// be 1, so no packing is needed), times two vectors of a B panel (step k at b + k ldb: a row of
// a row-major B in place, or a packed panel), over kc steps, into C (mr x nr valid of the
// kMr x NR tile). Rows of A past mr repeat row mr - 1 (never read past A; their sums are
// dropped).
template <typename Real>
PIPELENS_AVX2 void microKernel(int kc, const Real* a, std::ptrdiff_t rsA, std::ptrdiff_t csA,
                               const Real* b, std::ptrdiff_t ldb, Real* c, std::ptrdiff_t ldc,
                               int mr, int nr, bool accumulate) {
    using T = Vec<Real>;
    using V = typename T::V;
    constexpr int W = T::kW;
    constexpr int NR = 2 * W;
    const Real* rowA[kMr];
    for (int r = 0; r < kMr; ++r) rowA[r] = a + std::min(r, mr - 1) * rsA;
    V rows[kMr][2];
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) rows[r][0] = rows[r][1] = T::zero();
    for (int k = 0; k < kc; ++k) {
        const std::ptrdiff_t o = k * csA;
        const V b0 = T::load(b);
        const V b1 = T::load(b + W);
#pragma GCC unroll 6
        for (int r = 0; r < kMr; ++r) {  // fully unrolled: the 12 sums stay in registers
            const V x = T::set1(rowA[r][o]);
            rows[r][0] = T::fma(x, b0, rows[r][0]);
            rows[r][1] = T::fma(x, b1, rows[r][1]);
        }
        b += ldb;
    }
    if (nr == NR) {
        for (int r = 0; r < mr; ++r) {
            Real* cr = c + r * ldc;
            V v0 = rows[r][0];
            V v1 = rows[r][1];
            if (accumulate) {
                v0 = T::add(v0, T::load(cr));
                v1 = T::add(v1, T::load(cr + W));
            }
            T::store(cr, v0);
            T::store(cr + W, v1);
        }
        return;
    }
    alignas(32) Real tile[kMr * NR];
    for (int r = 0; r < kMr; ++r) {
        T::store(tile + r * NR, rows[r][0]);
        T::store(tile + r * NR + W, rows[r][1]);
    }
    for (int r = 0; r < mr; ++r) {
        Real* cr = c + r * ldc;
        for (int j = 0; j < nr; ++j)
            cr[j] = accumulate ? cr[j] + tile[r * NR + j] : tile[r * NR + j];
    }
}

// Packs k [0, kc) of columns [j0, j0 + nr) of B into one panel of NR columns, zero-padded.
template <typename Real>
PIPELENS_AVX2 void packPanel(const Real* B, std::ptrdiff_t rsB, std::ptrdiff_t csB, int kc, int nr,
                             Real* dst) {
    using T = Vec<Real>;
    constexpr int NR = 2 * T::kW;
    if (csB == 1 && nr == NR) {
        for (int k = 0; k < kc; ++k) {
            T::store(dst, T::load(B + k * rsB));
            T::store(dst + T::kW, T::load(B + k * rsB + T::kW));
            dst += NR;
        }
        return;
    }
    for (int k = 0; k < kc; ++k) {
        const Real* src = B + k * rsB;
        int c = 0;
        for (; c < nr; ++c) dst[c] = src[c * csB];
        for (; c < NR; ++c) dst[c] = Real(0);
        dst += NR;
    }
}

// Packs rows [0, mc) and k [0, kc) of A into micro-panels of kMr rows (step k of a panel at
// k kMr), the last one padded by repeating its last row.
template <typename Real>
PIPELENS_AVX2 void packA(const Real* A, std::ptrdiff_t rsA, std::ptrdiff_t csA, int mc, int kc,
                         Real* dst) {
    for (int i = 0; i < mc; i += kMr) {
        const int mr = std::min(kMr, mc - i);
        if (mr == kMr && rsA == 1) {  // A^T of a row-major matrix: kMr values side by side
            for (int k = 0; k < kc; ++k) {
                std::memcpy(dst, A + i + k * csA, sizeof(Real) * kMr);
                dst += kMr;
            }
            continue;
        }
        for (int k = 0; k < kc; ++k) {
            const Real* src = A + i * rsA + k * csA;
            for (int r = 0; r < kMr; ++r) dst[r] = src[std::min(r, mr - 1) * rsA];
            dst += kMr;
        }
    }
}

template <typename Real>
struct PackBuffers {
    std::vector<Real> a, b;
};

template <typename Real>
PackBuffers<Real>& packBuffers() {
    // One per thread, sized once for the largest block: later calls allocate nothing.
    thread_local PackBuffers<Real> buffers;
    constexpr int NR = 2 * Vec<Real>::kW;
    if (buffers.b.empty()) {
        buffers.a.resize(static_cast<std::size_t>(kMc) * kKc);
        buffers.b.resize(static_cast<std::size_t>((kNc + NR - 1) / NR * NR) * kKc);
    }
    return buffers;
}

template <typename Real>
PIPELENS_AVX2 void gemmAvx2(int M, int N, int K, const Real* A, std::ptrdiff_t rsA,
                            std::ptrdiff_t csA, const Real* B, std::ptrdiff_t rsB,
                            std::ptrdiff_t csB, Real* C, std::ptrdiff_t ldc, bool accumulate) {
    constexpr int NR = 2 * Vec<Real>::kW;
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate) {
            for (int i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, Real(0));
        }
        return;
    }
    PackBuffers<Real>& buf = packBuffers<Real>();
    for (int jc = 0; jc < N; jc += kNc) {
        const int nc = std::min(kNc, N - jc);
        for (int pc = 0; pc < K; pc += kKc) {
            const int kc = std::min(kKc, K - pc);
            const bool acc = accumulate || pc > 0;
            const Real* Bk = B + pc * rsB + jc * csB;
            // B is packed once per k block into contiguous panels, even when its rows are
            // contiguous: a panel read in place strides by a row (often a power of two of
            // bytes), which thrashes L1's sets.
            for (int jr = 0; jr < nc; jr += NR) {
                packPanel(Bk + jr * csB, rsB, csB, kc, std::min(NR, nc - jr),
                          buf.b.data() + static_cast<std::ptrdiff_t>(jr) * kc);
            }
            for (int ic = 0; ic < M; ic += kMc) {
                const int mc = std::min(kMc, M - ic);
                // A with contiguous rows (csA = 1) is read in place, kMr rows as kMr streams;
                // otherwise (A^T: steps of k far apart) this block is packed once.
                const bool packedA = csA != 1;
                if (packedA) packA(A + ic * rsA + pc * csA, rsA, csA, mc, kc, buf.a.data());
                for (int jr = 0; jr < nc; jr += NR) {
                    const int nr = std::min(NR, nc - jr);
                    const Real* bp = buf.b.data() + static_cast<std::ptrdiff_t>(jr) * kc;
                    const std::ptrdiff_t ldb = NR;
                    for (int ir = 0; ir < mc; ir += kMr) {
                        const int mr = std::min(kMr, mc - ir);
                        Real* ct = C + (ic + ir) * ldc + jc + jr;
                        if (packedA) {
                            microKernel<Real>(kc,
                                              buf.a.data() + static_cast<std::ptrdiff_t>(ir) * kc,
                                              1, kMr, bp, ldb, ct, ldc, mr, nr, acc);
                        } else {
                            microKernel<Real>(kc, A + (ic + ir) * rsA + pc * csA, rsA, csA, bp, ldb,
                                              ct, ldc, mr, nr, acc);
                        }
                    }
                }
            }
        }
    }
}

constexpr double kInvSqrt2 = std::numbers::sqrt2 / 2;
constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;

template <typename Real>
PIPELENS_AVX2 void geluForwardAvx2(const Real* u, std::size_t n, Real* out) {
    const auto s = static_cast<Real>(kInvSqrt2);
    std::size_t i = 0;
#ifdef PIPELENS_HAVE_LIBMVEC
    using T = Vec<Real>;
    const auto vs = T::set1(s), half = T::set1(Real(0.5)), one = T::set1(Real(1));
    for (; i + T::kW <= n; i += T::kW) {
        const auto x = T::load(u + i);
        // 0.5 u (1 + erf): the same operations, in the same order, as the scalar tail.
        T::store(out + i, T::mul(T::mul(half, x), T::add(one, T::erf(T::mul(x, vs)))));
    }
#endif
    for (; i < n; ++i) out[i] = Real(0.5) * u[i] * (Real(1) + std::erf(u[i] * s));
}

// GELU'(u) = Phi(u) + u phi(u), Phi(u) = (1 + erf(u/sqrt 2))/2, phi(u) = exp(-u^2/2)/sqrt(2 pi).
template <typename Real>
PIPELENS_AVX2 void geluBackwardAvx2(const Real* u, std::size_t n, Real* d) {
    const auto s = static_cast<Real>(kInvSqrt2);
    const auto c = static_cast<Real>(kInvSqrt2Pi);
    std::size_t i = 0;
#ifdef PIPELENS_HAVE_LIBMVEC
    using T = Vec<Real>;
    const auto vs = T::set1(s), vc = T::set1(c), half = T::set1(Real(0.5));
    const auto mhalf = T::set1(Real(-0.5)), one = T::set1(Real(1));
    for (; i + T::kW <= n; i += T::kW) {
        const auto x = T::load(u + i);
        const auto cdf = T::mul(half, T::add(one, T::erf(T::mul(x, vs))));
        const auto pdf = T::mul(T::exp(T::mul(T::mul(mhalf, x), x)), vc);
        T::store(d + i, T::mul(T::load(d + i), T::add(cdf, T::mul(x, pdf))));
    }
#endif
    for (; i < n; ++i) {
        const Real cdf = Real(0.5) * (Real(1) + std::erf(u[i] * s));
        const Real pdf = std::exp(Real(-0.5) * u[i] * u[i]) * c;
        d[i] *= cdf + u[i] * pdf;
    }
}

template <typename Real>
PIPELENS_AVX2 void expAvx2(Real* x, std::size_t n) {
    std::size_t i = 0;
#ifdef PIPELENS_HAVE_LIBMVEC
    using T = Vec<Real>;
    for (; i + T::kW <= n; i += T::kW) T::store(x + i, T::exp(T::load(x + i)));
#endif
    for (; i < n; ++i) x[i] = std::exp(x[i]);
}

}  // namespace

bool cpuHasAvx2Fma() {
    static const bool has = detectAvx2Fma();
    return has;
}

bool fastKernels() {
    return enabled().load(std::memory_order_relaxed);
}

bool setFastKernels(bool on) {
    return enabled().exchange(on && cpuHasAvx2Fma());
}

// A product is split over the current team's threads (lm_threads.hpp) when it has at least this
// many multiply-adds (about 10 microseconds on one core): by whole panels of columns when it is
// wide (each thread packs only its part of B), else by rows of C in whole micro-tiles (each thread
// packs all of B), else by panels if there are at least two per thread. Either way each element
// of C is computed by the same micro-kernel steps as without a split.
constexpr double kSplitWork = 2.5e5;

template <typename Real>
void gemm(int M, int N, int K, const Real* A, std::ptrdiff_t rsA, std::ptrdiff_t csA, const Real* B,
          std::ptrdiff_t rsB, std::ptrdiff_t csB, Real* C, std::ptrdiff_t ldc, bool accumulate) {
    constexpr int NR = 2 * Vec<Real>::kW;
    const int threads = currentThreads();
    const int rowTiles = (M + kMr - 1) / kMr;
    const int panels = (N + NR - 1) / NR;
    const bool split = threads > 1 && static_cast<double>(M) * N * K >= kSplitWork;
    if (split && (panels >= 4 * threads || (rowTiles < 4 * threads && panels >= 2 * threads))) {
        parallelRange(static_cast<std::size_t>(panels), 1, [&](std::size_t b, std::size_t e) {
            const int j0 = static_cast<int>(b) * NR;
            const int j1 = std::min(N, static_cast<int>(e) * NR);
            gemmAvx2<Real>(M, j1 - j0, K, A, rsA, csA, B + j0 * csB, rsB, csB, C + j0, ldc,
                           accumulate);
        });
    } else if (split && rowTiles >= 4 * threads) {
        parallelRange(static_cast<std::size_t>(rowTiles), 1, [&](std::size_t b, std::size_t e) {
            const int i0 = static_cast<int>(b) * kMr;
            const int i1 = std::min(M, static_cast<int>(e) * kMr);
            gemmAvx2<Real>(i1 - i0, N, K, A + i0 * rsA, rsA, csA, B, rsB, csB, C + i0 * ldc, ldc,
                           accumulate);
        });
    } else {
        gemmAvx2<Real>(M, N, K, A, rsA, csA, B, rsB, csB, C, ldc, accumulate);
    }
}

// Elementwise loops split in runs of whole vectors, so each element takes the vector or the
// scalar path exactly as without a split.
constexpr std::size_t kElementGrain = 256;

template <typename Real>
void geluForward(const Real* u, std::size_t n, Real* out) {
    parallelRange(n, kElementGrain,
                  [&](std::size_t b, std::size_t e) { geluForwardAvx2(u + b, e - b, out + b); });
}

template <typename Real>
void geluBackwardInPlace(const Real* u, std::size_t n, Real* d) {
    parallelRange(n, kElementGrain,
                  [&](std::size_t b, std::size_t e) { geluBackwardAvx2(u + b, e - b, d + b); });
}

template void gemm<float>(int, int, int, const float*, std::ptrdiff_t, std::ptrdiff_t, const float*,
                          std::ptrdiff_t, std::ptrdiff_t, float*, std::ptrdiff_t, bool);
template void gemm<double>(int, int, int, const double*, std::ptrdiff_t, std::ptrdiff_t,
                           const double*, std::ptrdiff_t, std::ptrdiff_t, double*, std::ptrdiff_t,
                           bool);
template <typename Real>
void expInPlace(Real* x, std::size_t n) {
    expAvx2(x, n);
}

template void expInPlace<float>(float*, std::size_t);
template void expInPlace<double>(double*, std::size_t);
template void geluForward<float>(const float*, std::size_t, float*);
template void geluForward<double>(const double*, std::size_t, double*);
template void geluBackwardInPlace<float>(const float*, std::size_t, float*);
template void geluBackwardInPlace<double>(const double*, std::size_t, double*);

}  // namespace pipelens::lmk

// The character transformer's element-wise, row and attention kernels (gpu/lm_opencl_stages.cpp
// drives them; the matrix products go through CLBlast). Equations: ../shared/golden-lm/README.md,
// "Model"; the CPU reference is core/objective/lm/lm_stages.cpp, whose summation orders these
// kernels keep (row sums in index order), so double runs agree to rounding.
// Every buffer argument comes with an element offset (`...off`): weights are blocks of the flat
// parameter vector, activations slots of pooled buffers. One work-item per output element, row or
// column; every kernel guards its range, so the host rounds the global size up to the group size.

#define LM_LN_EPS ((real)1e-5)

// The row r and first column j of this work-item's eight columns in a [rows, cols] buffer taken
// eight columns of a row per work-item, (cols + 7) / 8 work-items a row; false past the end.
inline bool lm_row_eight(int rows, int cols, int* r, int* j) {
    const int id = (int)get_global_id(0);
    const int groups = (cols + 7) / 8;
    if (id >= rows * groups) return false;
    *r = id / groups;
    *j = (id - *r * groups) * 8;
    return true;
}

// out[r, i] = E_tok[tokens[r], i] + E_pos[r mod T, i]; w is stage 0's block ([V, C] then [T, C]).
// Eight columns of one row per work-item (lm_row_eight), the row's last group maybe fewer.
__kernel void lm_embed_forward(__global const real* w, long woff, __global const int* tokens,
                               long toff, __global real* out, long ooff, int rows, int C, int V,
                               int T) {
    int r, j;
    if (!lm_row_eight(rows, C, &r, &j)) return;
    w += woff;
    __global const real* tok = w + (long)tokens[toff + r] * C + j;
    __global const real* pos = w + (long)V * C + (long)(r % T) * C + j;
    __global real* o = out + ooff + (long)r * C + j;
    if (j + 8 <= C) {
        vstore8(vload8(0, tok) + vload8(0, pos), 0, o);
        return;
    }
    for (int c = 0; c < C - j; ++c) o[c] = tok[c] + pos[c];
}

// Stage 0's weight gradient, written: token rows sum the rows that read them, position rows the
// rows at that position, both in row order (as the CPU adds them). Work-items 0 .. C-1 own one
// column of the token table each: they clear it, then add row r's gradient to its token's entry
// for r in order, one pass over the rows instead of one per vocabulary entry. The next T C
// work-items own one position entry each.
__kernel void lm_embed_backward(__global const real* g, long goff, __global const int* tokens,
                                long toff, __global real* gw, long gwoff, int rows, int C, int V,
                                int T) {
    const int id = (int)get_global_id(0);
    g += goff;
    tokens += toff;
    gw += gwoff;
    if (id < C) {
        for (int v = 0; v < V; ++v) gw[(long)v * C + id] = 0;
        for (int r = 0; r < rows; ++r) gw[(long)tokens[r] * C + id] += g[(long)r * C + id];
    } else if (id < C + T * C) {
        const int p = id - C;
        const int t = p / C;
        const int i = p - t * C;
        real s = 0;
        for (int r = t; r < rows; r += T) s += g[(long)r * C + i];
        gw[(long)V * C + p] = s;
    }
}

// 8 x 8 tiles held in registers as eight row vectors (a[j] = row j): lm_tile_load reads one
// from a row-major buffer with row stride `stride`, lm_tile_flip turns rows into columns (b[k] is
// column k, lane j of it row j), lm_tile_store writes the rows back. Every access is a vector of
// contiguous elements: PoCL runs a work-item's code scalar, and one element per work-item wrote a
// new cache line each time.
inline void lm_tile_load(__global const real* s, long stride, real8* a) {
    for (int j = 0; j < 8; ++j) a[j] = vload8(0, s + j * stride);
}
inline void lm_tile_store(const real8* a, __global real* d, long stride) {
    for (int j = 0; j < 8; ++j) vstore8(a[j], 0, d + j * stride);
}
#define LM_TILE_COLUMN(k) \
    (real8)(a[0].s##k, a[1].s##k, a[2].s##k, a[3].s##k, a[4].s##k, a[5].s##k, a[6].s##k, a[7].s##k)
inline void lm_tile_flip(const real8* a, real8* b) {
    b[0] = LM_TILE_COLUMN(0);
    b[1] = LM_TILE_COLUMN(1);
    b[2] = LM_TILE_COLUMN(2);
    b[3] = LM_TILE_COLUMN(3);
    b[4] = LM_TILE_COLUMN(4);
    b[5] = LM_TILE_COLUMN(5);
    b[6] = LM_TILE_COLUMN(6);
    b[7] = LM_TILE_COLUMN(7);
}
// Element k (0 .. 7) of v.
inline real lm_lane(real8 v, int k) {
    const real l[8] = {v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7};
    return l[k];
}

// One row per work-item: y = LN(x; g, b) with the biased variance; keeps xhat and 1/sigma.
// Tried and dropped, each slower under PoCL than this kernel and a transpose launch after it:
// eight rows per work-item on 8 x 8 tiles writing y transposed as well (5.6 % of a small-model
// run against 3.7 %), and one row per work-item writing the transposed y a column apart
// (88 µs a launch against 33 µs, more than the transpose it saved).
__kernel void lm_ln_forward(__global const real* x, long xoff, __global const real* w, long goff,
                            long boff, __global real* xhat, __global real* rstd,
                            __global real* y, long yoff, int rows, int C) {
    const int n = (int)get_global_id(0);
    if (n >= rows) return;
    __global const real* xr = x + xoff + (long)n * C;
    __global const real* g = w + goff;
    __global const real* b = w + boff;
    real mean = 0;
    for (int i = 0; i < C; ++i) mean += xr[i];
    mean /= (real)C;
    real var = 0;
    for (int i = 0; i < C; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= (real)C;
    const real r = (real)1 / sqrt(var + LM_LN_EPS);
    rstd[n] = r;
    __global real* hr = xhat + (long)n * C;
    __global real* yr = y + yoff + (long)n * C;
    for (int i = 0; i < C; ++i) {
        hr[i] = (xr[i] - mean) * r;
        yr[i] = hr[i] * g[i] + b[i];
    }
}

// LayerNorm's backward in one launch (each launch costs PoCL a wake-up of its threads): work-items
// 0 .. rows-1 take one row each, LN's input gradient dx = base + v (accumulate = 1; base may be
// dx itself) or dx = v; the next C take one column each, the gain and bias gradients (written),
// summed in row order. The two halves read the same inputs and write different outputs.
inline void lm_ln_backward_row(__global const real* dy, __global const real* xhat,
                               __global const real* rstd, __global const real* g,
                               __global const real* base, __global real* dx, int n, int C,
                               int accumulate) {
    __global const real* dyr = dy + (long)n * C;
    __global const real* hr = xhat + (long)n * C;
    __global const real* br = base + (long)n * C;
    __global real* dxr = dx + (long)n * C;
    real m1 = 0;
    real m2 = 0;
    for (int i = 0; i < C; ++i) {
        const real dh = dyr[i] * g[i];
        m1 += dh;
        m2 += dh * hr[i];
    }
    m1 /= (real)C;
    m2 /= (real)C;
    for (int i = 0; i < C; ++i) {
        const real v = rstd[n] * (dyr[i] * g[i] - m1 - hr[i] * m2);
        dxr[i] = accumulate ? br[i] + v : v;
    }
}

inline void lm_ln_backward_column(__global const real* dy, __global const real* xhat,
                                  __global real* gw, long dgoff, long dboff, int rows, int C,
                                  int i) {
    real dg = 0;
    real db = 0;
    for (int n = 0; n < rows; ++n) {
        dg += dy[(long)n * C + i] * xhat[(long)n * C + i];
        db += dy[(long)n * C + i];
    }
    gw[dgoff + i] = dg;
    gw[dboff + i] = db;
}

__kernel void lm_ln_backward(__global const real* dy, __global const real* xhat,
                             __global const real* rstd, __global const real* w, long goff,
                             __global const real* base, long baseoff, __global real* dx,
                             long dxoff, int accumulate, __global real* gw, long dgoff,
                             long dboff, int rows, int C) {
    const int id = (int)get_global_id(0);
    if (id < rows) {
        lm_ln_backward_row(dy, xhat, rstd, w + goff, base + baseoff, dx + dxoff, id, C,
                           accumulate);
    } else if (id < rows + C) {
        lm_ln_backward_column(dy, xhat, gw, dgoff, dboff, rows, C, id - rows);
    }
}

// out[r, j] += bias[j] over a [rows, cols] buffer, eight columns of one row per work-item (the
// row's last group may be shorter): (cols + 7) / 8 work-items a row.
__kernel void lm_bias_add(__global real* out, long ooff, __global const real* w, long boff,
                          int rows, int cols) {
    int r, j;
    if (!lm_row_eight(rows, cols, &r, &j)) return;
    __global real* o = out + ooff + (long)r * cols + j;
    __global const real* b = w + boff + j;
    if (j + 8 <= cols) {
        vstore8(vload8(0, o) + vload8(0, b), 0, o);
        return;
    }
    for (int c = 0; c < cols - j; ++c) o[c] += b[c];
}

// y[r, j] += bias[j], then out[r, j] = x[r, j] + y[r, j]: a linear layer's bias and the residual
// connection after it in one pass, with the CPU stage's two roundings in its order (y + bias,
// then x + y; y keeps the biased value the CPU stage has). Work-items as lm_bias_add.
__kernel void lm_bias_residual(__global const real* x, long xoff, __global real* y, long yoff,
                               __global const real* w, long boff, __global real* out, long ooff,
                               int rows, int cols) {
    int r, j;
    if (!lm_row_eight(rows, cols, &r, &j)) return;
    const long at = (long)r * cols + j;
    __global const real* xr = x + xoff + at;
    __global real* yr = y + yoff + at;
    __global real* o = out + ooff + at;
    __global const real* b = w + boff + j;
    if (j + 8 <= cols) {
        const real8 v = vload8(0, yr) + vload8(0, b);
        vstore8(v, 0, yr);
        vstore8(vload8(0, xr) + v, 0, o);
        return;
    }
    for (int c = 0; c < cols - j; ++c) {
        const real v = yr[c] + b[c];
        yr[c] = v;
        o[c] = xr[c] + v;
    }
}

// dst [cols, rows] = src [rows, cols] transposed: the operand layout CLBlast's kernel reads
// without a copy of its own (gpu/lm_opencl_stages.cpp, gemm). One 8 x 8 tile per work-item, read
// as eight row vectors and written as eight column vectors; tiles on the edges element by element.
inline int lm_tiles(int rows, int cols) { return ((rows + 7) / 8) * ((cols + 7) / 8); }
// Tile `id` (< lm_tiles(rows, cols)) of a [rows, cols] buffer: its first row and column,
// consecutive ids walking down the rows (so a transposed write continues where the last ended).
inline void lm_tile_at(int rows, int id, int* r0, int* c0) {
    const int tileRows = (rows + 7) / 8;
    *r0 = (id % tileRows) * 8;
    *c0 = (id / tileRows) * 8;
}
// Tile `id` of the transpose of src into dst.
inline void lm_transpose_tile(__global const real* src, int rows, int cols, __global real* dst,
                              int id) {
    int r0, c0;
    lm_tile_at(rows, id, &r0, &c0);
    if (r0 + 8 <= rows && c0 + 8 <= cols) {
        real8 a[8], col[8];
        lm_tile_load(src + (long)r0 * cols + c0, cols, a);
        lm_tile_flip(a, col);
        lm_tile_store(col, dst + (long)c0 * rows + r0, rows);
        return;
    }
    for (int r = r0; r < min(r0 + 8, rows); ++r) {
        for (int c = c0; c < min(c0 + 8, cols); ++c) {
            dst[(long)c * rows + r] = src[(long)r * cols + c];
        }
    }
}

__kernel void lm_transpose(__global const real* src, long soff, int rows, int cols,
                           __global real* dst) {
    const int id = (int)get_global_id(0);
    if (id >= lm_tiles(rows, cols)) return;
    lm_transpose_tile(src + soff, rows, cols, dst, id);
}

// A transformer block's four weight matrices transposed in one launch: matrix q of w (at
// offset oq, [rq, cq]) into dq, the work-items taking the first matrix's tiles, then the
// second's, and so on.
__kernel void lm_transpose_four(__global const real* w, long o0, int r0, int c0,
                                __global real* d0, long o1, int r1, int c1, __global real* d1,
                                long o2, int r2, int c2, __global real* d2, long o3, int r3,
                                int c3, __global real* d3) {
    int id = (int)get_global_id(0);
    const int t0 = lm_tiles(r0, c0), t1 = lm_tiles(r1, c1), t2 = lm_tiles(r2, c2);
    if (id < t0) {
        lm_transpose_tile(w + o0, r0, c0, d0, id);
        return;
    }
    id -= t0;
    if (id < t1) {
        lm_transpose_tile(w + o1, r1, c1, d1, id);
        return;
    }
    id -= t1;
    if (id < t2) {
        lm_transpose_tile(w + o2, r2, c2, d2, id);
        return;
    }
    id -= t2;
    if (id < lm_tiles(r3, c3)) lm_transpose_tile(w + o3, r3, c3, d3, id);
}

// GELU with the exact erf: 0.5 u (1 + erf(u / sqrt 2)). Eight elements per work-item through the
// vector erf and exp: PoCL calls its scalar erf once per element otherwise, which made GELU the
// largest cost after the products. The last, partial group goes element by element.
// In float on a CPU device the host adds -DLM_FLOAT_ERF_POLY: PoCL has a vector erf for double
// (SLEEF's) but calls its scalar erf once per element for float8 (12 % of a float training run),
// and going through the double vector erf cost more still (21 %). lm_erf8 is then this project's
// own fit, branch-free so that it vectorises: for |x| < 1, x P(x^2) with P a degree-6 least-squares
// fit to erf(x) / x; above, 1 - exp(-a^2) Q(t) with t = 1 / (1 + a / 2), a = min(|x|, 4) and Q a
// degree-7 fit to erfc(a) exp(a^2) (at a = 4, erf is 1 in float). Evaluated in float its error is
// at most 1.3e-7 (about one unit in the last place of erf near 1), GELU's the same as with a
// correctly rounded erf; tst_opencl_lm_kernels (geluEveryLength) checks GELU against the formula
// in long double element by element, on inputs spread over [-9, 9] among others.
#define LM_SQRT1_2 ((real)0.70710678118654752440)
#define LM_INV_SQRT_2PI ((real)0.39894228040143267794)
#ifdef LM_FLOAT_ERF_POLY
inline real8 lm_erf8(real8 x) {
    const real8 a = fabs(x);
    const real8 s = a * a;
    real8 p = (real8)7.8982102078877019e-05f;
    p = mad(p, s, (real8)-0.0008024354128867775f);
    p = mad(p, s, (real8)0.005190053577852286f);
    p = mad(p, s, (real8)-0.026854808537231149f);
    p = mad(p, s, (real8)0.11283612428245196f);
    p = mad(p, s, (real8)-0.37612628843325169f);
    p = mad(p, s, (real8)1.1283791665100531f);
    const real8 below = a * p;
    const real8 al = fmin(a, (real8)4.0f);
    const real8 t = (real8)1.0f / mad((real8)0.5f, al, (real8)1.0f);
    real8 q = (real8)0.11928062992160039f;
    q = mad(q, t, (real8)-0.47104992519134392f);
    q = mad(q, t, (real8)0.56316710974889284f);
    q = mad(q, t, (real8)-0.10361797150544622f);
    q = mad(q, t, (real8)0.34784374224112286f);
    q = mad(q, t, (real8)0.25966668139880972f);
    q = mad(q, t, (real8)0.28491701677153847f);
    q = mad(q, t, (real8)-0.00015454404742132804f);
    const real8 above = (real8)1.0f - exp(-al * al) * q;
    return copysign(select(above, below, a < (real8)1.0f), x);
}
inline real lm_erf(real x) { return lm_erf8((real8)x).s0; }
#else
inline real8 lm_erf8(real8 x) { return erf(x); }
inline real lm_erf(real x) { return erf(x); }
#endif

inline real8 lm_gelu8(real8 u) { return (real)0.5 * u * ((real)1 + lm_erf8(u * LM_SQRT1_2)); }
inline real lm_gelu(real u) { return (real)0.5 * u * ((real)1 + lm_erf(u * LM_SQRT1_2)); }
// GELU'(u) = Phi(u) + u phi(u).
inline real8 lm_gelu_slope8(real8 u) {
    const real8 cdf = (real)0.5 * ((real)1 + lm_erf8(u * LM_SQRT1_2));
    return cdf + u * (exp((real)-0.5 * u * u) * LM_INV_SQRT_2PI);
}
inline real lm_gelu_slope(real u) {
    const real cdf = (real)0.5 * ((real)1 + lm_erf(u * LM_SQRT1_2));
    return cdf + u * (exp((real)-0.5 * u * u) * LM_INV_SQRT_2PI);
}

// pre[r, j] += bias[j], then act = GELU(pre): the MLP's first bias and its activation in one
// pass over a [rows, cols] buffer (pre keeps the biased value, which the backward reads); with
// `transposed`, act also into actT [cols, rows], the next product's operand layout. One 8 x 8
// tile per work-item (lm_tile_at), edge tiles element by element.
__kernel void lm_bias_gelu_forward(__global real* pre, __global const real* w, long boff,
                                   __global real* act, int rows, int cols, __global real* actT,
                                   int transposed) {
    const int id = (int)get_global_id(0);
    if (id >= lm_tiles(rows, cols)) return;
    int r0, c0;
    lm_tile_at(rows, id, &r0, &c0);
    __global const real* b = w + boff;
    const long at = (long)r0 * cols + c0;
    if (r0 + 8 <= rows && c0 + 8 <= cols) {
        real8 a[8];
        const real8 bias = vload8(0, b + c0);
        for (int j = 0; j < 8; ++j) {
            const real8 u = vload8(0, pre + at + (long)j * cols) + bias;
            vstore8(u, 0, pre + at + (long)j * cols);
            a[j] = lm_gelu8(u);
        }
        lm_tile_store(a, act + at, cols);
        if (transposed) {
            real8 col[8];
            lm_tile_flip(a, col);
            lm_tile_store(col, actT + (long)c0 * rows + r0, rows);
        }
        return;
    }
    for (int r = r0; r < min(r0 + 8, rows); ++r) {
        for (int c = c0; c < min(c0 + 8, cols); ++c) {
            const long e = (long)r * cols + c;
            const real u = pre[e] + b[c];
            pre[e] = u;
            act[e] = lm_gelu(u);
            if (transposed) actT[(long)c * rows + r] = act[e];
        }
    }
}

// A linear layer's output gradient g [rows, cols], made ready for the layer's backward in one
// pass: with `gelu`, first g *= GELU'(pre) in place (the MLP's activation); then dst [cols, rows]
// = g transposed (the input-gradient product's operand layout) and sums[j] = sum_r g[r, j] (the
// bias gradient), in row order as the CPU adds them. Eight columns per work-item, walking down
// the rows in 8 x 8 tiles, a lane per column; the columns past the last group of eight one by one.
__kernel void lm_transpose_sum(__global real* g, long goff, int rows, int cols,
                               __global real* dst, __global real* sums, long soff,
                               __global const real* pre, int gelu) {
    const int c0 = (int)get_global_id(0) * 8;
    if (c0 >= cols) return;
    g += goff;
    sums += soff;
    if (c0 + 8 > cols) {
        for (int c = c0; c < cols; ++c) {
            real s = 0;
            for (int r = 0; r < rows; ++r) {
                const long e = (long)r * cols + c;
                if (gelu) g[e] *= lm_gelu_slope(pre[e]);
                s += g[e];
                dst[(long)c * rows + r] = g[e];
            }
            sums[c] = s;
        }
        return;
    }
    real8 s = (real8)(0);
    int r0 = 0;
    for (; r0 + 8 <= rows; r0 += 8) {
        const long at = (long)r0 * cols + c0;
        real8 a[8], col[8];
        lm_tile_load(g + at, cols, a);
        if (gelu) {
            for (int j = 0; j < 8; ++j) a[j] *= lm_gelu_slope8(vload8(0, pre + at + (long)j * cols));
            lm_tile_store(a, g + at, cols);
        }
        for (int j = 0; j < 8; ++j) s += a[j];
        lm_tile_flip(a, col);
        lm_tile_store(col, dst + (long)c0 * rows + r0, rows);
    }
    for (; r0 < rows; ++r0) {
        const long at = (long)r0 * cols + c0;
        real8 v = vload8(0, g + at);
        if (gelu) {
            v *= lm_gelu_slope8(vload8(0, pre + at));
            vstore8(v, 0, g + at);
        }
        s += v;
        for (int k = 0; k < 8; ++k) dst[(long)(c0 + k) * rows + r0] = lm_lane(v, k);
    }
    vstore8(s, 0, sums + c0);
}

// The attention kernels below work on one head's hd columns at a time: eight of them per vector
// (vload8 / vstore8, which need only the element's alignment), the rest one by one. PoCL does not
// vectorise across work-items whose loops run to different lengths (the causal rows), so without
// this every multiply-add and exp was scalar. Sums over rows l (or i) keep their order per
// column; only the dot products over the hd columns are summed in another order (common.cl's
// dot_contiguous, four running sums), within rounding of the CPU's.

// out[d] = sum_{l < count} w[l] x[l stride + d] for d < hd, in l order for each column: up to
// four vectors of eight columns per pass over l (independent sums, so their multiply-adds overlap
// instead of each waiting for the last: one running vector made the loop latency-bound), the
// rest one by one (y_i = P[i, :] V and dq_i = dS[i, :] K).
inline void lm_weighted_rows(__global const real* w, __global const real* x, long stride,
                             int count, int hd, __global real* out) {
    int d = 0;
    for (; d + 32 <= hd; d += 32) {
        real8 a0 = (real8)(0), a1 = (real8)(0), a2 = (real8)(0), a3 = (real8)(0);
        for (int l = 0; l < count; ++l) {
            __global const real* xl = x + l * stride + d;
            a0 += w[l] * vload8(0, xl);
            a1 += w[l] * vload8(1, xl);
            a2 += w[l] * vload8(2, xl);
            a3 += w[l] * vload8(3, xl);
        }
        vstore8(a0, 0, out + d);
        vstore8(a1, 1, out + d);
        vstore8(a2, 2, out + d);
        vstore8(a3, 3, out + d);
    }
    for (; d + 16 <= hd; d += 16) {
        real8 a0 = (real8)(0), a1 = (real8)(0);
        for (int l = 0; l < count; ++l) {
            a0 += w[l] * vload8(0, x + l * stride + d);
            a1 += w[l] * vload8(1, x + l * stride + d);
        }
        vstore8(a0, 0, out + d);
        vstore8(a1, 1, out + d);
    }
    for (; d + 8 <= hd; d += 8) {
        real8 acc = (real8)(0);
        for (int l = 0; l < count; ++l) acc += w[l] * vload8(0, x + l * stride + d);
        vstore8(acc, 0, out + d);
    }
    for (; d < hd; ++d) {
        real s = 0;
        for (int l = 0; l < count; ++l) s += w[l] * x[l * stride + d];
        out[d] = s;
    }
}

// One (sequence n, head h, query row i) per work-item: P[i, :] = causal softmax(q_i K^T scale)
// (zeros above the diagonal) and y_i = P[i, :] V into the head's columns of merged [N, C].
// qkv is [N, 3C] (q, k, v blocks of C columns); probs is [b, H, T, T].
__kernel void lm_attention_forward(__global const real* qkv, __global real* probs,
                                   __global real* merged, int batch, int H, int T, int C,
                                   real scale) {
    const int id = (int)get_global_id(0);
    if (id >= batch * H * T) return;
    const int i = id % T;
    const int h = (id / T) % H;
    const int n = id / (T * H);
    const int hd = C / H;
    const long row3 = 3L * C;
    __global const real* base = qkv + (long)n * T * row3;
    __global const real* q = base + i * row3 + h * hd;
    __global real* p = probs + ((long)(n * H + h) * T + i) * T;
    real mx = -INFINITY;
    for (int l = 0; l <= i; ++l) {
        const real s = dot_contiguous(q, base + l * row3 + C + h * hd, hd);
        p[l] = s;
        mx = fmax(mx, s * scale);
    }
    // exp in blocks of eight keys up to the one holding key i, the keys past i masked to -inf
    // (exp gives exactly 0, as the causal mask wants, and adding 0 leaves the sum as it was), so
    // every exp is a vector one: a scalar exp is a library call per element in PoCL. Only a
    // block that would run past T goes element by element.
    const real8 lanes = (real8)(0, 1, 2, 3, 4, 5, 6, 7);
    real sum = 0;
    int l = 0;
    for (; l <= i && l + 8 <= T; l += 8) {
        const real8 v = select((real8)(-INFINITY), vload8(0, p + l) * scale - mx,
                               isless(lanes, (real8)(i + 1 - l)));
        const real8 e = exp(v);
        vstore8(e, 0, p + l);
        sum = ((((((((sum + e.s0) + e.s1) + e.s2) + e.s3) + e.s4) + e.s5) + e.s6) + e.s7);
    }
    const int blocked = l;
    for (; l <= i; ++l) {
        p[l] = exp(p[l] * scale - mx);
        sum += p[l];
    }
    for (l = 0; l < blocked; l += 8) vstore8(vload8(0, p + l) / sum, 0, p + l);
    for (; l <= i; ++l) p[l] /= sum;
    for (; l < T; ++l) p[l] = 0;
    lm_weighted_rows(p, base + 2 * C + h * hd, row3, i + 1, hd,
                     merged + ((long)n * T + i) * C + h * hd);
}

// Backward, first half, one (n, h, i) per work-item: dS[i, l] = P (dY V^T - rowsum(P dY V^T))
// scale for l <= i (zeros above), and dq_i = dS[i, :] K.
__kernel void lm_attention_backward_rows(__global const real* qkv, __global const real* probs,
                                         __global const real* dmerged, __global real* dscores,
                                         __global real* dqkv, int batch, int H, int T, int C,
                                         real scale) {
    const int id = (int)get_global_id(0);
    if (id >= batch * H * T) return;
    const int i = id % T;
    const int h = (id / T) % H;
    const int n = id / (T * H);
    const int hd = C / H;
    const long row3 = 3L * C;
    __global const real* base = qkv + (long)n * T * row3;
    __global const real* p = probs + ((long)(n * H + h) * T + i) * T;
    __global const real* dy = dmerged + ((long)n * T + i) * C + h * hd;
    __global real* ds = dscores + ((long)(n * H + h) * T + i) * T;
    for (int l = 0; l <= i; ++l) ds[l] = dot_contiguous(dy, base + l * row3 + 2 * C + h * hd, hd);
    real dot = 0;
    for (int l = 0; l <= i; ++l) dot += p[l] * ds[l];
    for (int l = 0; l <= i; ++l) ds[l] = p[l] * (ds[l] - dot) * scale;
    for (int l = i + 1; l < T; ++l) ds[l] = 0;
    lm_weighted_rows(ds, base + C + h * hd, row3, i + 1, hd,
                     dqkv + (long)n * T * row3 + i * row3 + h * hd);
}

// Backward, second half, one (n, h, key row l) per work-item: dk_l = dS[:, l]^T Q and
// dv_l = P[:, l]^T dY over the rows i >= l that see key l.
__kernel void lm_attention_backward_columns(__global const real* qkv, __global const real* probs,
                                            __global const real* dmerged,
                                            __global const real* dscores, __global real* dqkv,
                                            int batch, int H, int T, int C) {
    const int id = (int)get_global_id(0);
    if (id >= batch * H * T) return;
    const int l = id % T;
    const int h = (id / T) % H;
    const int n = id / (T * H);
    const int hd = C / H;
    const long row3 = 3L * C;
    __global const real* q = qkv + (long)n * T * row3 + h * hd;
    __global const real* p = probs + (long)(n * H + h) * T * T;
    __global const real* ds = dscores + (long)(n * H + h) * T * T;
    __global const real* dy = dmerged + (long)n * T * C + h * hd;
    __global real* dk = dqkv + (long)n * T * row3 + l * row3 + C + h * hd;
    __global real* dv = dk + C;
    int d = 0;
    for (; d + 8 <= hd; d += 8) {
        real8 sk = (real8)(0), sv = (real8)(0);
        for (int i = l; i < T; ++i) {
            sk += ds[i * T + l] * vload8(0, q + i * row3 + d);
            sv += p[i * T + l] * vload8(0, dy + (long)i * C + d);
        }
        vstore8(sk, 0, dk + d);
        vstore8(sv, 0, dv + d);
    }
    for (; d < hd; ++d) {
        real sk = 0;
        real sv = 0;
        for (int i = l; i < T; ++i) {
            sk += ds[i * T + l] * q[i * row3 + d];
            sv += p[i * T + l] * dy[(long)i * C + d];
        }
        dk[d] = sk;
        dv[d] = sv;
    }
}

// One row per work-item: loss[n] = logsumexp(z_n) - z_n[target]; with `gradient`, also
// grad[n, :] = (softmax(z_n) - onehot(target)) / rows. As the CPU's vector path: exp(z - max)
// once per element (eight at a time; the row's sum in index order), kept in the gradient's row
// and scaled by 1 / (sum rows) there.
__kernel void lm_cross_entropy(__global const real* logits, long loff, __global const int* targets,
                               long toff, __global real* loss, long lossoff, __global real* grad,
                               long goff, int rows, int V, int gradient) {
    const int n = (int)get_global_id(0);
    if (n >= rows) return;
    __global const real* z = logits + loff + (long)n * V;
    __global real* g = grad + goff + (long)n * V;
    real8 m8 = (real8)(-INFINITY);
    int v = 0;
    for (; v + 8 <= V; v += 8) m8 = fmax(m8, vload8(0, z + v));
    real mx = fmax(fmax(fmax(m8.s0, m8.s1), fmax(m8.s2, m8.s3)),
                   fmax(fmax(m8.s4, m8.s5), fmax(m8.s6, m8.s7)));
    for (; v < V; ++v) mx = fmax(mx, z[v]);
    real sum = 0;
    for (v = 0; v + 8 <= V; v += 8) {
        const real8 e = exp(vload8(0, z + v) - mx);
        if (gradient) vstore8(e, 0, g + v);
        sum = ((((((((sum + e.s0) + e.s1) + e.s2) + e.s3) + e.s4) + e.s5) + e.s6) + e.s7);
    }
    for (; v < V; ++v) {
        const real e = exp(z[v] - mx);
        if (gradient) g[v] = e;
        sum += e;
    }
    const int t = targets[toff + n];
    loss[lossoff + n] = mx + log(sum) - z[t];
    if (gradient) {
        const real inv = (real)1 / (real)rows;
        const real f = inv / sum;
        for (v = 0; v + 8 <= V; v += 8) vstore8(vload8(0, g + v) * f, 0, g + v);
        for (; v < V; ++v) g[v] *= f;
        g[t] -= inv;
    }
}

// SGD on one block: w[i] -= step g[i].
__kernel void lm_sgd(__global real* w, long woff, __global const real* g, long goff, int count,
                     real step) {
    const int id = (int)get_global_id(0);
    if (id >= count) return;
    w[woff + id] -= step * g[goff + id];
}

// avg[i] = (sum over r in order of replicas[r P + i]) / R: LocalSGD's replica average.
__kernel void lm_average(__global const real* replicas, int R, long P, __global real* avg) {
    const long id = (long)get_global_id(0);
    if (id >= P) return;
    real s = 0;
    for (int r = 0; r < R; ++r) s += replicas[(long)r * P + id];
    avg[id] = s / (real)R;
}

// An optimizer with state on `count` weights of one block (LmOpenClOptimizer): w[woff + i] moves
// by optimizer_delta (common.cl) for the gradient g[goff + i], with the state first, second and
// the synchronous step's pending sum at soff + i. mode 0: g applies; 1: g only joins the pending
// sum (the step has not ended); 2: the step's last backward: gradScale (pending + g) applies and
// the sum restarts. c1, c2: Adam's bias corrections 1 - beta^t, from the host.
__kernel void lm_optimizer(__global real* w, long woff, __global const real* g, long goff,
                           __global real* first, __global real* second, __global real* pending,
                           long soff, int count, int mode, int kind, real step, real beta,
                           real beta1, real beta2, real eps, real wd, real c1, real c2,
                           real gradScale) {
    const int id = (int)get_global_id(0);
    if (id >= count) return;
    const long at = soff + id;
    real grad = g[goff + id];
    if (mode != 0) {
        const real total = pending[at] + grad;
        if (mode == 1) {
            pending[at] = total;
            return;
        }
        pending[at] = 0;
        grad = gradScale * total;
    }
    const long wi = woff + id;
    w[wi] += optimizer_delta(kind, grad, w[wi], step, beta, beta1, beta2, eps, wd, c1, c2,
                             first + at, second + at);
}

// Prediction or lookahead's read (LmOpenClExecutor with correctors): stash[i] = w[i] + shift d[i],
// d the block's last applied change.
__kernel void lm_read_shift(__global const real* w, long woff, __global const real* d, long doff,
                            __global real* stash, long soff, int count, real shift) {
    const int id = (int)get_global_id(0);
    if (id >= count) return;
    stash[soff + id] = w[woff + id] + shift * d[doff + id];
}

// One block's update with staleness correctors (docs/correctors.md, "Correctors"): dc
// (g + lambda g g (w_now - w_read), w_read the stash), accumulate (the sum at aoff + i takes g; only
// where `applies` does the mean of k move the weights), then plain sgd (kind 0) or the
// optimizer's change with step size `step` (stepSize * stepFactor), lookahead's beta d added;
// d (last, at aoff + i) records the change applied where keepLast. first, second: the
// optimizer's state at aoff + i; last, gsum, first, second: one-element stand-ins where unused.
__kernel void lm_corrected_update(
    __global real* w, long woff, __global const real* g, long goff, __global const real* stash,
    long soff, __global real* last, __global real* gsum, __global real* first,
    __global real* second, long aoff, int count, int dc, real lambda, int accumulate,
    int applies, int keepLast, int lookahead, real lookBeta, int kind, real step, real beta,
    real beta1, real beta2, real eps, real wd, real c1, real c2) {
    const int id = (int)get_global_id(0);
    if (id >= count) return;
    const long wi = woff + id;
    const long at = aoff + id;
    real grad = g[goff + id];
    if (dc) grad = grad + lambda * (grad * grad) * (w[wi] - stash[soff + id]);
    if (accumulate > 1) {
        const real total = gsum[at] + grad;
        if (!applies) {
            gsum[at] = total;
            return;
        }
        gsum[at] = 0;
        grad = total / (real)accumulate;
    }
    real delta;
    if (kind == 0) {
        delta = -(step * grad);
    } else {
        delta = optimizer_delta(kind, grad, w[wi], step, beta, beta1, beta2, eps, wd, c1, c2,
                                first + at, second + at);
    }
    if (keepLast) {
        // Lookahead (asynchronous Nesterov): delta = beta d - gamma_k g.
        if (lookahead) delta = lookBeta * last[at] + delta;
        last[at] = delta;
    }
    w[wi] += delta;
}

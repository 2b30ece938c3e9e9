// Shared definitions for every kernel file. The host builds the program with
//   -DREAL=double|float -DREAL8=double8|float8 -DWG=<work-group size, a power of two>
//   [-DUSE_FP64]
// and concatenates this file first.
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

typedef REAL real;
typedef REAL8 real8;

// Sum of v over the work-group, the same value returned to every work-item. The tree has a fixed
// shape, so the result does not depend on scheduling: runs are reproducible.
inline real wg_sum(__local real* scratch, real v) {
    const int lid = (int)get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int width = WG / 2; width > 0; width >>= 1) {
        if (lid < width) scratch[lid] += scratch[lid + width];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const real total = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

// a . b over `count` contiguous elements. Four running sums: a single one is bound by the add's
// latency, not by memory (PoCL does not reorder floating-point sums by itself).
inline real dot_contiguous(__global const real* a, __global const real* b, int count) {
    real s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int c = 0;
    for (; c + 4 <= count; c += 4) {
        s0 += a[c] * b[c];
        s1 += a[c + 1] * b[c + 1];
        s2 += a[c + 2] * b[c + 2];
        s3 += a[c + 3] * b[c + 3];
    }
    for (; c < count; ++c) s0 += a[c] * b[c];
    return (s0 + s1) + (s2 + s3);
}

// sum_r a[r * stride] b[r]: a column of row-major X against a vector, four running sums.
inline real dot_strided(__global const real* a, long stride, __global const real* b, int count) {
    real s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int r = 0;
    for (; r + 4 <= count; r += 4) {
        s0 += a[r * stride] * b[r];
        s1 += a[(r + 1) * stride] * b[r + 1];
        s2 += a[(r + 2) * stride] * b[r + 2];
        s3 += a[(r + 3) * stride] * b[r + 3];
    }
    for (; r < count; ++r) s0 += a[r * stride] * b[r];
    return (s0 + s1) + (s2 + s3);
}

// 1/(1+e^-z) without overflow for either sign of z.
inline real sigmoid_stable(real z) {
    const real e = exp(-fabs(z));
    return z >= (real)0 ? (real)1 / ((real)1 + e) : e / ((real)1 + e);
}

// One row's share of the objective: (z - y)^2 for least squares (the host scales the sum by
// 1/(2n)); softplus(z) - y z for logistic regression (the host divides by n).
inline real row_loss(real z, real y, int logistic) {
    if (logistic) return fmax(z, (real)0) + log1p(exp(-fabs(z))) - y * z;
    const real r = z - y;
    return r * r;
}

// row_loss on 8 rows at once: the vector exp and log1p are several times faster than 8 scalar
// calls on a CPU device.
inline real8 row_loss8(real8 z, real8 y, int logistic) {
    if (logistic) return fmax(z, (real8)0) + log1p(exp(-fabs(z))) - y * z;
    const real8 r = z - y;
    return r * r;
}

// The gradient the last stage passes back for one row: (a - y)/b or (sigmoid(a) - y)/b.
inline real output_gradient(real a, real y, int b, int logistic) {
    return logistic ? (sigmoid_stable(a) - y) / (real)b : (a - y) / (real)b;
}

// Op tables (pipeline.cl, rpd.cl, objective.cl) hold OP_FIELDS ints per op.
#define OP_FIELDS 8
#define OP_STAGE 0
#define OP_BATCH 1
#define OP_REPLICA 2
#define OP_STASH 3   // element offset of the op's stash slot in the stash buffer
#define OP_ACT 4     // activation slot
#define OP_OFFSET 5  // first coordinate of the stage's block
#define OP_SIZE 6    // coordinates in the block
#define OP_KIND 7    // 0 forward, 1 backward

// Optimizers with state (core/compute/optimizer.cpp, docs/correctors.md "Optimizers"), one
// coordinate at a time. OPT_SGD is sgd with a weight decay (plain sgd takes the engines'
// original kernels).
#define OPT_SGD 1
#define OPT_MOMENTUM 2
#define OPT_NESTEROV 3
#define OPT_ADAM 4
#define OPT_ADAMW 5

// The change of one coordinate with current weight w for gradient g (objective l2 and a
// synchronous step's scaled sum included), moving its state: first = v (momentum) or m (Adam),
// second = s (Adam; not touched otherwise). c1 = 1 - beta1^t, c2 = 1 - beta2^t for the block's
// step count t (this step included). The same expressions as OptimizerState::step.
inline real optimizer_delta(int kind, real g, real w, real step, real beta, real beta1,
                            real beta2, real eps, real wd, real c1, real c2,
                            __global real* first, __global real* second) {
    // Coupled decay (all but adamw) joins the gradient at the current weights.
    if (wd != (real)0 && kind != OPT_ADAMW) g += wd * w;
    if (kind == OPT_SGD) return -step * g;
    if (kind == OPT_MOMENTUM || kind == OPT_NESTEROV) {
        const real v = beta * *first + g;
        *first = v;
        return kind == OPT_MOMENTUM ? -step * v : -step * (g + beta * v);
    }
    const real m = beta1 * *first + ((real)1 - beta1) * g;
    const real s = beta2 * *second + ((real)1 - beta2) * (g * g);
    *first = m;
    *second = s;
    real delta = -step * ((m / c1) / (sqrt(s / c2) + eps));
    // Decoupled decay (Loshchilov & Hutter) at the current weights.
    if (kind == OPT_ADAMW && wd != (real)0) delta -= (step * wd) * w;
    return delta;
}

// Randomized PipeDream on a ring of the last `depth` iterates (ring column k mod depth holds w_k).

// z_k's forward over the batch: act = sum_j X_b[:, block j] . (block j of ring column cols[j]),
// then the output gradient. blocks: pairs (offset, size); step: the step's op entry, then cols.
// get_global_id(0) = row of the batch.
__kernel void rpd_forward(__global const real* X, __global const real* y, int d, int b, int batch,
                          int stages, __global const int* blocks, __global const int* step,
                          __global const real* ring, int logistic, __global real* grad) {
    const int r = (int)get_global_id(0);
    if (r >= b) return;
    const long row = (long)batch * b + r;
    __global const real* x = X + row * d;
    __global const int* cols = step + OP_FIELDS;
    real a = 0;
    for (int j = 0; j < stages; ++j) {
        const int off = blocks[2 * j];
        const int size = blocks[2 * j + 1];
        a += dot_contiguous(x + off, ring + (long)cols[j] * d + off, size);
    }
    grad[r] = output_gradient(a, y[row], b, logistic);
}

// The block gradient of the drawn stage at z_k: g = X_b[:, block]^T grad + l2 * z_k's block;
// deltaAvg = -step g (the move of w), gradSq = g^2. get_global_id(0) = coordinate in the block.
__kernel void rpd_backward(__global const real* X, int d, int b, int batch, int off, int size,
                           int col, __global const real* ring, __global const real* grad, real l2,
                           real step, __global real* deltaAvg, __global real* gradSq) {
    const int c = (int)get_global_id(0);
    if (c >= size) return;
    const int j = off + c;
    __global const real* x = X + (long)batch * b * d + j;
    real sum = dot_strided(x, d, grad, b);
    if (l2 != (real)0) sum += l2 * ring[(long)col * d + j];
    deltaAvg[j] = -step * sum;
    gradSq[j] = sum * sum;
}

// w_{k+1} = w_k with the block moved: ring column `next` from column `cur`, and the tracked
// iterate `current` moved the same way.
__kernel void rpd_advance(__global real* ring, int d, int cur, int next, int off, int size,
                          __global const real* deltaAvg, __global real* current) {
    const int j = (int)get_global_id(0);
    if (j >= d) return;
    real v = ring[(long)cur * d + j];
    if (j >= off && j < off + size) {
        v += deltaAvg[j];
        current[j] += deltaAvg[j];
    }
    ring[(long)next * d + j] = v;
}

// rpd_backward with an optimizer with state: g at z_k as there, then the optimizer's change of
// the newest version of the block (ring column `cur`, w_k) with the block's state (first,
// second: d each). t: the block's step count after this step.
__kernel void rpd_backward_optimizer(__global const real* X, int d, int b, int batch, int off,
                                     int size, int col, int cur, __global const real* ring,
                                     __global const real* grad, real l2, real step,
                                     __global real* deltaAvg, __global real* gradSq, int kind,
                                     real beta, real beta1, real beta2, real eps, real wd, int t,
                                     __global real* first, __global real* second) {
    const int c = (int)get_global_id(0);
    if (c >= size) return;
    const int j = off + c;
    __global const real* x = X + (long)batch * b * d + j;
    real sum = dot_strided(x, d, grad, b);
    if (l2 != (real)0) sum += l2 * ring[(long)col * d + j];
    const real c1 = (real)1 - pown(beta1, t);
    const real c2 = (real)1 - pown(beta2, t);
    deltaAvg[j] = optimizer_delta(kind, sum, ring[(long)cur * d + j], step, beta, beta1, beta2,
                                  eps, wd, c1, c2, first + j, second + j);
    gradSq[j] = sum * sum;
}

// rpd_backward(_optimizer) with dc (OpenClBackend::setCorrectors): g at z_k, then
// g + lambda g (.) g (.) (w_now - w_read) with w_now the newest version of the block (ring
// column `cur`) and w_read the version z_k holds (column `col`). kind 0: plain sgd.
__kernel void rpd_backward_corrector(__global const real* X, int d, int b, int batch, int off,
                                     int size, int col, int cur, __global const real* ring,
                                     __global const real* grad, real l2, real step,
                                     __global real* deltaAvg, __global real* gradSq, int kind,
                                     real beta, real beta1, real beta2, real eps, real wd, int t,
                                     __global real* first, __global real* second, int dc,
                                     real lambda) {
    const int c = (int)get_global_id(0);
    if (c >= size) return;
    const int j = off + c;
    __global const real* x = X + (long)batch * b * d + j;
    const real read = ring[(long)col * d + j];
    const real now = ring[(long)cur * d + j];
    real sum = dot_strided(x, d, grad, b);
    if (l2 != (real)0) sum += l2 * read;
    if (dc) sum += lambda * (sum * sum) * (now - read);
    if (kind == 0) {
        deltaAvg[j] = -step * sum;
    } else {
        const real c1 = (real)1 - pown(beta1, t);
        const real c2 = (real)1 - pown(beta2, t);
        deltaAvg[j] = optimizer_delta(kind, sum, now, step, beta, beta1, beta2, eps, wd, c1, c2,
                                      first + j, second + j);
    }
    gradSq[j] = sum * sum;
}

// The full objective and its gradient norm, kept cheap by an activation z = X * w_avg that the
// updates move incrementally (O(n * block) per update instead of O(n * d)).

// The objective after each of the slot's block updates, in order. Update u moved the average's
// block u by deltaAvg (pipeline_slot); row i's activation after update u is
// z_i + sum_{v <= u} X[i, block v] . deltaAvg[block v], so one pass over the rows gives every
// update's loss. Each work-item owns rowsPerItem (a multiple of 8) consecutive rows and writes,
// per update, their loss sum to partial[u * items + item] (no barriers: PoCL runs this well on a
// CPU, and the sums are reproducible). z keeps the last activation.
__kernel void sample_updates(__global const real* X, __global const real* y, int n, int d,
                             int logistic, __global const int* ops, int updates,
                             __global const real* deltaAvg, __global real* z, int rowsPerItem,
                             __global real* partial) {
    const int item = (int)get_global_id(0);
    const int items = (int)get_global_size(0);
    const int first = min(n, item * rowsPerItem);
    const int last = min(n, first + rowsPerItem);
    for (int u = 0; u < updates; ++u) {
        __global const int* op = ops + OP_FIELDS * u;
        const int off = op[OP_OFFSET];
        const int size = op[OP_SIZE];
        __global const real* delta = deltaAvg + off;
        real loss = 0;
        // Eight rows at a time, so the losses use the vector exp and log1p.
        for (int i = first; i < last; i += 8) {
            const int m = min(8, last - i);
            real zs[8];
            real ys[8];
            for (int k = 0; k < 8; ++k) {
                zs[k] = 0;
                ys[k] = 0;
                if (k < m) {
                    const real zi = z[i + k] + dot_contiguous(X + (long)(i + k) * d + off, delta,
                                                              size);
                    z[i + k] = zi;
                    zs[k] = zi;
                    ys[k] = y[i + k];
                }
            }
            real ls[8];
            vstore8(row_loss8(vload8(0, zs), vload8(0, ys), logistic), 0, ls);
            for (int k = 0; k < m; ++k) loss += ls[k];
        }
        partial[u * items + item] = loss;
    }
}

// One work-group per update u: out[3u] = the loss sum over rows (`groups` partials of
// sample_updates), out[3u+1] = ||g||^2 of the update's block gradient, out[3u+2] =
// ||w_avg block||^2 after the slot (for the l2 term).
__kernel void finish_updates(__global const real* partial, int groups, __global const int* ops,
                             __global const real* gradSq, __global const real* average,
                             __global real* out, __local real* scratch) {
    const int u = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    __global const int* op = ops + OP_FIELDS * u;
    const int off = op[OP_OFFSET];
    const int size = op[OP_SIZE];
    real loss = 0;
    for (int g = lid; g < groups; g += WG) loss += partial[u * groups + g];
    real gsq = 0;
    real wsq = 0;
    for (int c = lid; c < size; c += WG) {
        gsq += gradSq[off + c];
        wsq += average[off + c] * average[off + c];
    }
    loss = wg_sum(scratch, loss);
    gsq = wg_sum(scratch, gsq);
    wsq = wg_sum(scratch, wsq);
    if (lid == 0) {
        out[3 * u] = loss;
        out[3 * u + 1] = gsq;
        out[3 * u + 2] = wsq;
    }
}

// out[i] = X[i, :] . v over all rows (z = X w after averaging, or for a fresh gradient).
__kernel void matvec_rows(__global const real* X, __global const real* v, int n, int d,
                          __global real* out) {
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    out[i] = dot_contiguous(X + (long)i * d, v, d);
}

// Per-group sums of the row losses of z.
__kernel void loss_partials(__global const real* z, __global const real* y, int n, int logistic,
                            __global real* partial, __local real* scratch) {
    const int i = (int)get_global_id(0);
    const real v = i < n ? row_loss(z[i], y[i], logistic) : (real)0;
    const real total = wg_sum(scratch, v);
    if (get_local_id(0) == 0) partial[get_group_id(0)] = total;
}

// One work-group: out[slot] = sum of in[0 .. count), in a fixed order.
__kernel void reduce_sum(__global const real* in, int count, __global real* out, int slot,
                         __local real* scratch) {
    real s = 0;
    for (int k = (int)get_local_id(0); k < count; k += WG) s += in[k];
    s = wg_sum(scratch, s);
    if (get_local_id(0) == 0) out[slot] = s;
}

// One work-group per block (blocks: pairs offset, size): out[k] = ||v block k||^2.
__kernel void block_squares(__global const real* v, __global const int* blocks, __global real* out,
                            __local real* scratch) {
    const int k = (int)get_group_id(0);
    const int off = blocks[2 * k];
    const int size = blocks[2 * k + 1];
    real s = 0;
    for (int c = (int)get_local_id(0); c < size; c += WG) s += v[off + c] * v[off + c];
    s = wg_sum(scratch, s);
    if (get_local_id(0) == 0) out[k] = s;
}

// r_i = z_i - y_i (least squares) or sigmoid(z_i) - y_i (logistic), in place.
__kernel void residuals(__global real* z, __global const real* y, int n, int logistic) {
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    z[i] = logistic ? sigmoid_stable(z[i]) - y[i] : z[i] - y[i];
}

// partial[chunk * d + j] = sum over the chunk's rows of X[i, j] r_i.
__kernel void gradient_partials(__global const real* X, __global const real* r, int n, int d,
                                int rowsPerChunk, __global real* partial) {
    const int j = (int)get_global_id(0);
    const int chunk = (int)get_global_id(1);
    if (j >= d) return;
    const int first = chunk * rowsPerChunk;
    const int last = min(n, first + rowsPerChunk);
    partial[(long)chunk * d + j] =
        last > first ? dot_strided(X + (long)first * d + j, d, r + first, last - first) : 0;
}

// g_j = (sum of the chunks) / n + l2 w_j; gsq_j = g_j^2 (summed by reduce_sum).
__kernel void gradient_squares(__global const real* partial, int chunks, int n, int d, real l2,
                               __global const real* w, __global real* gsq) {
    const int j = (int)get_global_id(0);
    if (j >= d) return;
    real s = 0;
    for (int k = 0; k < chunks; ++k) s += partial[(long)k * d + j];
    const real g = s / (real)n + l2 * w[j];
    gsq[j] = g * g;
}

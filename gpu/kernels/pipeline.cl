// The forward and backward ops of one pipeline slot in one kernel launch (get_global_id(1) = op),
// so the number of enqueues per slot does not grow with S. X is row-major n x d, so one
// work-item's row of a block is contiguous.

// F(m, s): stash the replica's block, act (+)= X_b[:, block] * w, and on the last stage the
// output gradient. x = row of the batch (and, in turn, stash coordinates).
inline void forward_op(__global const int* op, int x, int width, __global const real* X,
                       __global const real* y, int d, int b, int lastStage, int logistic,
                       __global const real* weights, __global real* stash, __global real* act,
                       __global real* grad) {
    const int size = op[OP_SIZE];
    __global const real* w = weights + (long)op[OP_REPLICA] * d + op[OP_OFFSET];
    for (int c = x; c < size; c += width) stash[op[OP_STASH] + c] = w[c];
    if (x >= b) return;
    const long row = (long)op[OP_BATCH] * b + x;
    __global const real* xrow = X + row * d + op[OP_OFFSET];
    const real s = dot_contiguous(xrow, w, size);
    const int a = op[OP_ACT] * b + x;
    const real value = op[OP_STAGE] == 0 ? s : act[a] + s;
    act[a] = value;
    if (op[OP_STAGE] == lastStage) grad[a] = output_gradient(value, y[row], b, logistic);
}

// B(m, s): g = X_b[:, block]^T grad + l2 * stash; w_r(s) -= step g. The replica average moves by
// avgWeight * (-step g); that move and g^2 are kept per coordinate for the objective kernels.
// x = coordinate in the block.
inline void backward_op(__global const int* op, int x, __global const real* X, int d, int b,
                        real l2, real step, real avgWeight, __global real* weights,
                        __global const real* stash, __global const real* grad,
                        __global real* average, __global real* deltaAvg, __global real* gradSq) {
    if (x >= op[OP_SIZE]) return;
    const int j = op[OP_OFFSET] + x;
    __global const real* xcol = X + (long)op[OP_BATCH] * b * d + j;
    __global const real* g = grad + op[OP_ACT] * b;
    real sum = dot_strided(xcol, d, g, b);
    if (l2 != (real)0) sum += l2 * stash[op[OP_STASH] + x];
    const real delta = -step * sum;
    weights[(long)op[OP_REPLICA] * d + j] += delta;
    const real moved = avgWeight * delta;
    average[j] += moved;
    deltaAvg[j] = moved;
    gradSq[j] = sum * sum;
}

// Every op of one slot in one launch: get_global_id(1) = op (the slot's ops touch distinct
// stages, so they are independent), get_global_id(0) = row (forward) or coordinate (backward).
__kernel void pipeline_slot(__global const real* X, __global const real* y, int d, int b,
                            int lastStage, int logistic, real l2, real step, real avgWeight,
                            __global const int* ops, __global real* weights,
                            __global real* stash, __global real* act, __global real* grad,
                            __global real* average, __global real* deltaAvg,
                            __global real* gradSq) {
    __global const int* op = ops + OP_FIELDS * (int)get_global_id(1);
    const int x = (int)get_global_id(0);
    if (op[OP_KIND] == 0) {
        forward_op(op, x, (int)get_global_size(0), X, y, d, b, lastStage, logistic, weights,
                   stash, act, grad);
    } else {
        backward_op(op, x, X, d, b, l2, step, avgWeight, weights, stash, grad, average, deltaAvg,
                    gradSq);
    }
}

// LocalSGD: every replica (and the average) becomes the replica mean, coordinate by coordinate.
__kernel void average_replicas(__global real* weights, int replicas, int d,
                               __global real* average) {
    const int j = (int)get_global_id(0);
    if (j >= d) return;
    real s = 0;
    for (int r = 0; r < replicas; ++r) s += weights[(long)r * d + j];
    const real mean = s / (real)replicas;
    for (int r = 0; r < replicas; ++r) weights[(long)r * d + j] = mean;
    average[j] = mean;
}

// Writes v into each of `copies` consecutive length-d vectors (replicas, RPD's ring).
__kernel void broadcast_vector(__global const real* v, int d, int copies, __global real* out) {
    const int j = (int)get_global_id(0);
    if (j >= d) return;
    const real value = v[j];
    for (int k = 0; k < copies; ++k) out[(long)k * d + j] = value;
}

// pipeline_slot with an optimizer with state (OpenClBackend::setOptimizer). After the `count`
// ops of the table come two ints per op: ends (0: a synchronous step's backward that only adds g
// to the pending sum) and t (the block's step count after this op's step, for Adam's bias
// correction, computed here). `synchronous`: the steps sum into `pending` (replicas x d) and the
// step's last backward applies the optimizer to gradScale (pending + g). first, second: the
// state, replicas x d like the weights.
inline void backward_optimizer_op(__global const int* op, __global const int* info, int x,
                                  __global const real* X, int d, int b, real l2, real step,
                                  real avgWeight, __global real* weights,
                                  __global const real* stash, __global const real* grad,
                                  __global real* average, __global real* deltaAvg,
                                  __global real* gradSq, int kind, real beta, real beta1,
                                  real beta2, real eps, real wd, real gradScale, int synchronous,
                                  __global real* first, __global real* second,
                                  __global real* pending) {
    if (x >= op[OP_SIZE]) return;
    const int j = op[OP_OFFSET] + x;
    const long at = (long)op[OP_REPLICA] * d + j;
    __global const real* xcol = X + (long)op[OP_BATCH] * b * d + j;
    __global const real* g = grad + op[OP_ACT] * b;
    real sum = dot_strided(xcol, d, g, b);
    if (l2 != (real)0) sum += l2 * stash[op[OP_STASH] + x];
    gradSq[j] = sum * sum;
    real applied = sum;
    if (synchronous) {
        const real total = pending[at] + sum;
        if (info[0] == 0) {
            // The weights wait for the step's end: nothing moves (the objective stays).
            pending[at] = total;
            deltaAvg[j] = 0;
            return;
        }
        pending[at] = 0;
        applied = gradScale * total;
    }
    const int t = info[1];
    const real c1 = (real)1 - pown(beta1, t);
    const real c2 = (real)1 - pown(beta2, t);
    const real delta = optimizer_delta(kind, applied, weights[at], step, beta, beta1, beta2, eps,
                                       wd, c1, c2, first + at, second + at);
    weights[at] += delta;
    const real moved = avgWeight * delta;
    average[j] += moved;
    deltaAvg[j] = moved;
}

__kernel void pipeline_slot_optimizer(
    __global const real* X, __global const real* y, int d, int b, int lastStage, int logistic,
    real l2, real step, real avgWeight, __global const int* ops, int count,
    __global real* weights, __global real* stash, __global real* act, __global real* grad,
    __global real* average, __global real* deltaAvg, __global real* gradSq, int kind, real beta,
    real beta1, real beta2, real eps, real wd, real gradScale, int synchronous,
    __global real* first, __global real* second, __global real* pending) {
    const int u = (int)get_global_id(1);
    __global const int* op = ops + OP_FIELDS * u;
    const int x = (int)get_global_id(0);
    if (op[OP_KIND] == 0) {
        forward_op(op, x, (int)get_global_size(0), X, y, d, b, lastStage, logistic, weights,
                   stash, act, grad);
    } else {
        backward_optimizer_op(op, ops + OP_FIELDS * count + 2 * u, x, X, d, b, l2, step,
                              avgWeight, weights, stash, grad, average, deltaAvg, gradSq, kind,
                              beta, beta1, beta2, eps, wd, gradScale, synchronous, first, second,
                              pending);
    }
}

// LocalSGD's averaging of the optimizer's state: each of the replicas' vectors (replicas x d)
// becomes their mean, coordinate by coordinate.
__kernel void average_in_place(__global real* v, int replicas, int d) {
    const int j = (int)get_global_id(0);
    if (j >= d) return;
    real s = 0;
    for (int r = 0; r < replicas; ++r) s += v[(long)r * d + j];
    const real mean = s / (real)replicas;
    for (int r = 0; r < replicas; ++r) v[(long)r * d + j] = mean;
}

// pipeline_slot with staleness correctors (OpenClBackend::setCorrectors, docs/correctors.md
// "Correctors"); plain runs keep the kernels above. Per op, `reals` holds (readShift, step size
// times stepFactor) and after the `count` ops of the table come two ints per op: applies (0: an
// accumulated backward that leaves the weights) and t (the optimizer's step count, Adam's bias
// correction). kind 0: plain sgd. last: each block's last applied change d (replicas x d),
// gsum: accumulate's sums (replicas x d); one-element stand-ins where unused.
__kernel void pipeline_slot_corrector(
    __global const real* X, __global const real* y, int d, int b, int lastStage, int logistic,
    real l2, real avgWeight, __global const int* ops, __global const real* reals, int count,
    __global real* weights, __global real* stash, __global real* act, __global real* grad,
    __global real* average, __global real* deltaAvg, __global real* gradSq, int kind, real beta,
    real beta1, real beta2, real eps, real wd, __global real* first, __global real* second,
    __global real* last, __global real* gsum, int dc, real lambda, int lookahead,
    real lookBeta, int keepLast, int accumulate) {
    const int u = (int)get_global_id(1);
    __global const int* op = ops + OP_FIELDS * u;
    const int x = (int)get_global_id(0);
    const long base = (long)op[OP_REPLICA] * d + op[OP_OFFSET];
    __global real* w = weights + base;
    const int size = op[OP_SIZE];
    if (op[OP_KIND] == 0) {
        const real shift = reals[2 * u];
        if (shift == (real)0) {
            forward_op(op, x, (int)get_global_size(0), X, y, d, b, lastStage, logistic, weights,
                       stash, act, grad);
            return;
        }
        // Prediction or lookahead: read (and stash) w + shift * d.
        __global const real* dl = last + base;
        const int width = (int)get_global_size(0);
        for (int c = x; c < size; c += width) stash[op[OP_STASH] + c] = w[c] + shift * dl[c];
        if (x >= b) return;
        const long row = (long)op[OP_BATCH] * b + x;
        __global const real* xrow = X + row * d + op[OP_OFFSET];
        real s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int c = 0;
        for (; c + 4 <= size; c += 4) {
            s0 += xrow[c] * (w[c] + shift * dl[c]);
            s1 += xrow[c + 1] * (w[c + 1] + shift * dl[c + 1]);
            s2 += xrow[c + 2] * (w[c + 2] + shift * dl[c + 2]);
            s3 += xrow[c + 3] * (w[c + 3] + shift * dl[c + 3]);
        }
        for (; c < size; ++c) s0 += xrow[c] * (w[c] + shift * dl[c]);
        const real s = (s0 + s1) + (s2 + s3);
        const int a = op[OP_ACT] * b + x;
        const real value = op[OP_STAGE] == 0 ? s : act[a] + s;
        act[a] = value;
        if (op[OP_STAGE] == lastStage) grad[a] = output_gradient(value, y[row], b, logistic);
        return;
    }
    if (x >= size) return;
    const int j = op[OP_OFFSET] + x;
    const long at = base + x;
    __global const real* xcol = X + (long)op[OP_BATCH] * b * d + j;
    __global const real* g = grad + op[OP_ACT] * b;
    const real read = stash[op[OP_STASH] + x];
    real sum = dot_strided(xcol, d, g, b);
    if (l2 != (real)0) sum += l2 * read;
    // DC-ASGD: g + lambda g (.) g (.) (w_now - w_read).
    if (dc) sum += lambda * (sum * sum) * (weights[at] - read);
    gradSq[j] = sum * sum;
    __global const int* info = ops + OP_FIELDS * count + 2 * u;
    if (accumulate > 1) {
        const real total = gsum[at] + sum;
        if (info[0] == 0) {
            gsum[at] = total;
            deltaAvg[j] = 0;
            return;
        }
        gsum[at] = 0;
        sum = total / (real)accumulate;
    }
    const real step = reals[2 * u + 1];
    real delta;
    if (kind == 0) {
        delta = -step * sum;
    } else {
        const int t = info[1];
        const real c1 = (real)1 - pown(beta1, t);
        const real c2 = (real)1 - pown(beta2, t);
        delta = optimizer_delta(kind, sum, weights[at], step, beta, beta1, beta2, eps, wd, c1, c2,
                                first + at, second + at);
    }
    if (keepLast) {
        // Lookahead (asynchronous Nesterov): delta = beta d - gamma_k g.
        if (lookahead) delta += lookBeta * last[at];
        last[at] = delta;
    }
    weights[at] += delta;
    const real moved = avgWeight * delta;
    average[j] += moved;
    deltaAvg[j] = moved;
}

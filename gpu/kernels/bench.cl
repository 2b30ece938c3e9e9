// The device's reachable memory bandwidth: a plain copy, used by the benchmarks as the peak that
// every other kernel's achieved bandwidth is compared with.
// One element per work-item: contiguous across a group, which suits PoCL and GPUs alike.
__kernel void copy_vector(__global const real* in, __global real* out, long count) {
    const long k = get_global_id(0);
    if (k < count) out[k] = in[k];
}

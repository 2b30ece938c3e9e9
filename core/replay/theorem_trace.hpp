#pragma once
// The theorem's bound along a run (SPEC section 4): at each update count k where ||grad f||^2 was
// sampled, the running mean of ||grad f(w_i)||^2 over i < k beside the bound at K = k, whose G is
// the largest block-gradient norm seen up to k.
#include <vector>

#include "replay/run_result.hpp"

namespace pipelens {

struct TheoremTracePoint {
    long long updates = 0;  // K
    double meanGradNormSq = 0.0;
    TheoremBound bound;
};

// One point per sample with 1 <= k <= the updates of `r` that have a block-gradient norm; empty
// when `r` has fewer than two samples (the mean needs them).
std::vector<TheoremTracePoint> theoremTrace(const RunResult& r);

}  // namespace pipelens

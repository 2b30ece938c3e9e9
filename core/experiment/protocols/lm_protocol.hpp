#pragma once
// E5 (SPEC section 7): PD against LocalSGD (R = S, H = 1, 4, 8) on the character language model
// at equal simulated time, each step size picked by the stable rule over 2^-5 ... 2^-1 (or the
// paper's 0.125 for every method), plotted as the last-stage forward loss against slots.
#include <string>

#include "experiment/protocols/paper_protocols.hpp"

namespace pipelens {

// The full protocol: S = 16, C = 256, 4 heads, T = 32, b = 16, R = 16, 2080 slots (truncate, the
// authors' rule), float. Quick: S = 4, C = 32, 4 heads, T = 16, b = 8, R = 4, 600 slots, a 40,000
// character corpus when built in; the same methods, grid and rule.
Reproduction reproduceE5(bool quick, const ReproduceInputs& inputs, const RunOptions& options);

}  // namespace pipelens

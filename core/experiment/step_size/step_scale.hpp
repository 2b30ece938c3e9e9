#pragma once
// One multiplier for every method's step size (the workbench's "all γ ×" control: raise them
// together and watch which method blows up first). A fixed γ is multiplied by 2^k; a step-size
// grid 2^[a, b] becomes 2^[a + k, b + k], every grid point multiplied by the same 2^k. Powers of
// two keep a grid a grid of whole exponents.
#include "experiment/config/config.hpp"

namespace pipelens {

void scaleStepSizes(ExperimentConfig& config, int powerOfTwo);

}  // namespace pipelens

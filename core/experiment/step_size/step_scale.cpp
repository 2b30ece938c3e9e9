#include "experiment/step_size/step_scale.hpp"

#include <cmath>

namespace pipelens {

void scaleStepSizes(ExperimentConfig& config, int powerOfTwo) {
    for (MethodSpec& m : config.methods) {
        if (m.step.grid) {
            m.step.gridMin += powerOfTwo;
            m.step.gridMax += powerOfTwo;
        } else {
            m.step.value = std::ldexp(m.step.value, powerOfTwo);  // exact: a power of two
        }
    }
}

}  // namespace pipelens

#include "compute/compute.hpp"

#include "errors.hpp"

namespace pipelens {

void ComputeBackend::setGradientNoise(double sigma, const NumpyRandom& /*stream*/) {
    if (sigma == 0.0) return;
    throw ConfigError("objective.gradient_noise > 0 is not supported by the " + name() +
                      " backend: use the CPU engine (backend = \"cpu\")");
}

void ComputeBackend::setOptimizer(const OptimizerSpec& spec, double /*gradientScale*/) {
    if (spec.plain()) return;
    throw ConfigError("optimizer.kind = \"" + std::string(enumName(kOptimizerKinds, spec.kind)) +
                      "\" (or a weight_decay) is not supported by the " + name() +
                      " backend: plain sgd only; use the CPU engine (backend = \"cpu\")");
}

void ComputeBackend::setCorrectors(const CorrectorSpec& spec) {
    if (!spec.any()) return;
    throw ConfigError("correctors (" + correctorSummary(spec) + ") are not supported by the " +
                      name() + " backend: none; use the CPU engine (backend = \"cpu\")");
}

}  // namespace pipelens

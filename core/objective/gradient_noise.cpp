#include "objective/gradient_noise.hpp"

#include <span>

namespace pipelens {

GradientNoise::GradientNoise(double sigma, std::uint64_t seed) : sigma_(sigma), rng_(seed) {}

GradientNoise::GradientNoise(double sigma, const NumpyRandom& stream)
    : sigma_(sigma), rng_(stream) {}

void GradientNoise::addTo(Eigen::Ref<Eigen::VectorXd> gradient) {
    draw_.resize(static_cast<size_t>(gradient.size()));
    rng_.normal(sigma_, std::span<double>(draw_));
    for (Eigen::Index i = 0; i < gradient.size(); ++i) gradient[i] += draw_[static_cast<size_t>(i)];
}

void GradientNoise::skip(Eigen::Index size) {
    draw_.resize(static_cast<size_t>(size));
    rng_.normal(sigma_, std::span<double>(draw_));
}

}  // namespace pipelens

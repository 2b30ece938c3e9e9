#pragma once
// The authors' stochastic oracle (SPEC section 6 "Gradient noise"): every block gradient gets
// sigma * xi, xi ~ N(0, I) of the block's size, drawn with NumPy's normal(scale = sigma) from
// the objective's own default_rng(seed), in the order the backwards are processed. A backend
// holds one per run, created fresh, so a run is reproducible on its own.
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "random/numpy_random.hpp"

namespace pipelens {

class GradientNoise {
  public:
    GradientNoise(double sigma, std::uint64_t seed);
    // Drawing from `stream` where it stands (a shared stream advanced past earlier runs).
    GradientNoise(double sigma, const NumpyRandom& stream);
    double sigma() const { return sigma_; }
    // g += normal(scale = sigma, size = g.size()).
    void addTo(Eigen::Ref<Eigen::VectorXd> gradient);
    // Draws a block's noise and throws it away: RPD backpropagates from the last stage down to
    // the drawn one and draws for every block on the way (S-1 ... s), using only block s's.
    void skip(Eigen::Index size);

  private:
    double sigma_;
    NumpyRandom rng_;
    std::vector<double> draw_;
};

}  // namespace pipelens

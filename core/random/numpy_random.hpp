#pragma once
// The draws of NumPy's Generator that the authors' code uses, bit for bit (SPEC section 6
// "Random numbers"): NumpyRandom(seed) behaves as np.random.default_rng(seed).
#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "random/pcg64.hpp"

namespace pipelens {

class NumpyRandom {
  public:
    explicit NumpyRandom(std::uint64_t seed) : bits_(seed) {}

    std::uint64_t nextU64() { return bits_.nextU64(); }
    std::uint32_t nextU32() { return bits_.nextU32(); }
    // random(): uniform on [0, 1) with 53 bits.
    double random() { return bits_.nextDouble(); }

    // integers(0, high) for 1 <= high <= 2^32 (std::invalid_argument otherwise): 32-bit Lemire
    // rejection on nextU32; high = 1 draws nothing.
    std::int64_t integers(std::int64_t high);
    // integers(0, high, size = out.size()): the same draws, element after element.
    void integers(std::int64_t high, std::span<std::int64_t> out);
    std::vector<std::int64_t> integers(std::int64_t high, std::size_t count);

    // NumPy's random_interval: uniform on {0, ..., max} by masking to bit length and rejecting.
    std::uint64_t interval(std::uint64_t max);
    // shuffle() of a one-dimensional array: Fisher-Yates from the top.
    template <typename T>
    void shuffle(std::span<T> values) {
        for (std::size_t i = values.size(); i > 1; --i) {
            const auto j = static_cast<std::size_t>(interval(i - 1));
            std::swap(values[i - 1], values[j]);
        }
    }

    // standard_normal(): NumPy's 256-layer ziggurat for doubles.
    double standardNormal();
    // normal(scale = scale, size = out.size()): scale * z for each element in order.
    void normal(double scale, std::span<double> out);
    // normal(size = (rows, cols)) filled in C (row-major) order, as NumPy does.
    Eigen::MatrixXd normalMatrix(Eigen::Index rows, Eigen::Index cols, double scale = 1.0);
    Eigen::VectorXd normalVector(Eigen::Index size, double scale = 1.0);

    // binomial(1, p) for one element, p in [0, 1] (std::invalid_argument otherwise): NumPy's
    // inversion algorithm; p = 0 draws nothing.
    int bernoulli(double p);

  private:
    Pcg64 bits_;
};

}  // namespace pipelens

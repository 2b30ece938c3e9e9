#pragma once
// A small seeded generator for the language model's own draws (built-in corpus, seeded
// initialisation; RPD uses NumPy's stream). splitmix64: tiny, fast and identical on every platform.
// It does not replicate PyTorch's or NumPy's streams; golden runs load w0 from a file instead.
#include <cmath>
#include <cstdint>
#include <numbers>

namespace pipelens {

class LmRandom {
  public:
    explicit LmRandom(std::uint64_t seed) : state_(seed ^ 0x6A09E667F3BCC909ULL) {}

    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    // Uniform on [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform integer in [0, n), without modulo bias.
    std::uint64_t below(std::uint64_t n) {
        const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        std::uint64_t r = next();
        while (r >= limit) r = next();
        return r % n;
    }
    // Standard normal by Box-Muller (one value per call; the pair's second half is dropped so
    // the stream position depends only on the number of calls).
    double normal() {
        const double u1 = 1.0 - uniform();  // in (0, 1]
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }

  private:
    std::uint64_t state_;
};

}  // namespace pipelens

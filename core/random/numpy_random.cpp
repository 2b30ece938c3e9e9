#include "random/numpy_random.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "random/ziggurat_tables.hpp"
#include "util/format_number.hpp"

namespace pipelens {
namespace {

constexpr std::int64_t kMaxIntegersHigh = std::int64_t{1} << 32;

void checkIntegersHigh(std::int64_t high) {
    if (high < 1 || high > kMaxIntegersHigh) {
        throw std::invalid_argument("integers(0, high): high = " + std::to_string(high) +
                                    " is not allowed: an integer in [1, 2^32]");
    }
}

// NumPy's random_binomial_inversion for n = 1 and p <= 0.5, step for step (the redraw when
// X passes its bound can only happen through rounding, but it is NumPy's behaviour).
int binomialInversionOfOne(Pcg64& bits, double p) {
    const double q = 1.0 - p;
    const double qn = std::exp(std::log(q));  // exp(n log q) with n = 1
    constexpr int kBound = 1;                 // min(n, np + 10 sqrt(np q + 1)) with n = 1
    int x = 0;
    double px = qn;
    double u = bits.nextDouble();
    while (u > px) {
        ++x;
        if (x > kBound) {
            x = 0;
            px = qn;
            u = bits.nextDouble();
        } else {
            u -= px;
            px = (p * px) / q;  // ((n - x + 1) p px) / (x q) with n = x = 1
        }
    }
    return x;
}

}  // namespace

std::int64_t NumpyRandom::integers(std::int64_t high) {
    checkIntegersHigh(high);
    if (high == 1) {
        return 0;
    }
    if (high == kMaxIntegersHigh) {
        return bits_.nextU32();
    }
    // Lemire's multiply-and-shift; reject the low products that would bias the result.
    const auto range = static_cast<std::uint64_t>(high);
    std::uint64_t m = std::uint64_t{bits_.nextU32()} * range;
    auto leftover = static_cast<std::uint32_t>(m);
    if (leftover < range) {
        const auto threshold = static_cast<std::uint32_t>((kMaxIntegersHigh - high) % high);
        while (leftover < threshold) {
            m = std::uint64_t{bits_.nextU32()} * range;
            leftover = static_cast<std::uint32_t>(m);
        }
    }
    return static_cast<std::int64_t>(m >> 32);
}

void NumpyRandom::integers(std::int64_t high, std::span<std::int64_t> out) {
    checkIntegersHigh(high);
    for (std::int64_t& value : out) {
        value = integers(high);
    }
}

std::vector<std::int64_t> NumpyRandom::integers(std::int64_t high, std::size_t count) {
    std::vector<std::int64_t> out(count);
    integers(high, out);
    return out;
}

std::uint64_t NumpyRandom::interval(std::uint64_t max) {
    if (max == 0) {
        return 0;
    }
    std::uint64_t mask = max;
    for (int shift = 1; shift < 64; shift *= 2) {
        mask |= mask >> shift;
    }
    std::uint64_t value = 0;
    if (max <= 0xffffffffULL) {
        do {
            value = bits_.nextU32() & mask;
        } while (value > max);
    } else {
        do {
            value = bits_.nextU64() & mask;
        } while (value > max);
    }
    return value;
}

double NumpyRandom::standardNormal() {
    using namespace ziggurat;
    for (;;) {
        // One 64-bit draw: 8 bits of layer, 1 bit of sign, 52 bits of magnitude.
        std::uint64_t r = bits_.nextU64();
        const auto layer = static_cast<std::size_t>(r & 0xff);
        r >>= 8;
        const bool negative = (r & 1U) != 0;
        const std::uint64_t magnitude = (r >> 1) & 0x000fffffffffffffULL;
        double x = static_cast<double>(magnitude) * kW[layer];
        if (negative) {
            x = -x;
        }
        if (magnitude < kK[layer]) {
            return x;  // inside the layer's rectangle: the common case
        }
        if (layer == 0) {
            // The tail beyond r (Marsaglia's method); 1 - U keeps the logarithm finite.
            for (;;) {
                const double xx = -kInvR * std::log1p(-bits_.nextDouble());
                const double yy = -std::log1p(-bits_.nextDouble());
                if (yy + yy > xx * xx) {
                    return ((magnitude >> 8) & 1U) != 0 ? -(kR + xx) : kR + xx;
                }
            }
        }
        // The wedge between the rectangle and the density.
        if ((kF[layer - 1] - kF[layer]) * bits_.nextDouble() + kF[layer] < std::exp(-0.5 * x * x)) {
            return x;
        }
    }
}

void NumpyRandom::normal(double scale, std::span<double> out) {
    for (double& value : out) {
        value = 0.0 + scale * standardNormal();  // loc + scale z with loc = 0, as NumPy
    }
}

Eigen::MatrixXd NumpyRandom::normalMatrix(Eigen::Index rows, Eigen::Index cols, double scale) {
    // Drawn in NumPy's (row) order, a few rows at a time into a small buffer, then written into
    // the column-major result a cache line per column: row by row, every draw would land on a
    // line (and page) of its own. No full row-major temporary, no transposing copy.
    constexpr Eigen::Index kRows = 8;
    Eigen::MatrixXd m(rows, cols);
    std::vector<double> buffer(static_cast<std::size_t>(kRows * cols));
    for (Eigen::Index i0 = 0; i0 < rows; i0 += kRows) {
        const Eigen::Index n = std::min(kRows, rows - i0);
        for (Eigen::Index k = 0; k < n * cols; ++k) {
            buffer[static_cast<std::size_t>(k)] =
                0.0 + scale * standardNormal();  // loc 0, as NumPy
        }
        for (Eigen::Index j = 0; j < cols; ++j) {
            for (Eigen::Index i = 0; i < n; ++i)
                m(i0 + i, j) = buffer[static_cast<std::size_t>(i * cols + j)];
        }
    }
    return m;
}

Eigen::VectorXd NumpyRandom::normalVector(Eigen::Index size, double scale) {
    Eigen::VectorXd v(size);
    normal(scale, std::span<double>(v.data(), static_cast<std::size_t>(size)));
    return v;
}

int NumpyRandom::bernoulli(double p) {
    if (!(p >= 0.0 && p <= 1.0)) {
        throw std::invalid_argument("binomial(1, p): p = " + formatNumber(p, 17) +
                                    " is not allowed: a number in [0, 1]");
    }
    if (p == 0.0) {
        return 0;
    }
    if (p <= 0.5) {
        return binomialInversionOfOne(bits_, p);
    }
    return 1 - binomialInversionOfOne(bits_, 1.0 - p);
}

}  // namespace pipelens

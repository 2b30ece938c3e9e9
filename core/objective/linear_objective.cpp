#include "objective/linear_objective.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "errors.hpp"

namespace pipelens {
namespace {

// softplus(z) - y z, computed without overflow for large |z|.
Eigen::ArrayXd logisticLoss(const Eigen::ArrayXd& z, const Eigen::ArrayXd& y) {
    return z.max(0.0) + (-z.abs()).exp().log1p() - y * z;
}

// out_i = exp(-|z_i|) for every row: the per-update logging path evaluates this for all n rows
// after each block update, and the library exp (Eigen's packet exp or std::exp) costs ~10 ns per
// row here. This is a branch-free loop the compiler vectorises: x = n ln2 + r with |r| <= ln2/2
// (Cody-Waite split of ln2), e^r by its Taylor series to degree 13 (truncation < 1e-17 relative),
// 2^n written straight into the exponent bits. Arguments below -708 are clamped (e^-708 ~ 3e-308
// is below anything that can change a sum of O(1) terms). Accuracy: a few ulp.
// Element by element, so a wider-vector clone (AVX2, without FMA: core is built with
// -ffp-contract=off semantics of ISO C++) gives the same bits where the CPU has one.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void expOfNegativeAbs(const Eigen::VectorXd& z, Eigen::ArrayXd& out) {
    const Eigen::Index n = z.size();
    out.resize(n);
    const double* in = z.data();
    double* res = out.data();
    constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
    constexpr double kLog2e = 1.4426950408889634;
    constexpr double kLn2Hi = 0.6931471803691238;
    constexpr double kLn2Lo = 1.9082149292705877e-10;
    for (Eigen::Index i = 0; i < n; ++i) {
        const double a = std::fabs(in[i]);
        const double x = -(a < 708.0 ? a : 708.0);
        double k = x * kLog2e + kShift;
        std::uint64_t kBits = 0;
        std::memcpy(&kBits, &k, sizeof k);
        k -= kShift;
        const double r = (x - k * kLn2Hi) - k * kLn2Lo;
        double p = 1.0 / 6227020800.0;  // 1/13!
        p = p * r + 1.0 / 479001600.0;
        p = p * r + 1.0 / 39916800.0;
        p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
        // The low bits of kBits hold the integer k (two's complement); shifting k + 1023 into
        // the exponent field makes 2^k (k >= -1022 here, so always a normal number).
        const std::uint64_t scaleBits = (kBits + 1023) << 52;
        double scale = 0.0;
        std::memcpy(&scale, &scaleBits, sizeof scale);
        res[i] = p * scale;
    }
}

// sum_i log1p(e_i) for e_i in [0, 1]. The hot path of per-update logging, so instead of one log
// per row: multiply 64 factors (1 + e_i) <= 2 (no overflow: <= 2^64) and take one log per
// product. The relative rounding of a 64-term product is ~64 ulp, i.e. ~1e-14 absolute in the
// log; terms below 1e-8 use log1p(e) = e - e^2/2 (+ O(e^3)) so tiny e are not lost in 1 + e.
double sumLog1p(const Eigen::ArrayXd& e) {
    double sum = 0.0;
    const Eigen::Index n = e.size();
    // Chunks of 64 rows, two interleaved products of 32 factors each (independent multiplies
    // pipeline better than one chain); branch-free so the chunk loop can be if-converted.
    for (Eigen::Index start = 0; start < n; start += 64) {
        const Eigen::Index end = std::min<Eigen::Index>(start + 64, n);
        double p0 = 1.0;
        double p1 = 1.0;
        double tiny = 0.0;
        Eigen::Index i = start;
        for (; i + 1 < end; i += 2) {
            const double a = e[i];
            const double b = e[i + 1];
            const bool smallA = a < 1e-8;
            const bool smallB = b < 1e-8;
            tiny += (smallA ? a * (1.0 - 0.5 * a) : 0.0) + (smallB ? b * (1.0 - 0.5 * b) : 0.0);
            p0 *= smallA ? 1.0 : 1.0 + a;
            p1 *= smallB ? 1.0 : 1.0 + b;
        }
        if (i < end) {
            const double a = e[i];
            const bool smallA = a < 1e-8;
            tiny += smallA ? a * (1.0 - 0.5 * a) : 0.0;
            p0 *= smallA ? 1.0 : 1.0 + a;
        }
        sum += std::log(p0 * p1) + tiny;
    }
    return sum;
}

}  // namespace

Eigen::ArrayXd logisticSigmoid(const Eigen::ArrayXd& z) {
    // 1/(1+e^-z) for z >= 0, e^z/(1+e^z) for z < 0: no overflow either way.
    Eigen::ArrayXd e = (-z.abs()).exp();
    return (z >= 0.0).select(1.0 / (1.0 + e), e / (1.0 + e));
}

LossKind parseLossKind(const std::string& text) {
    if (text == "quadratic" || text == "least-squares") return LossKind::Quadratic;
    if (text == "logistic") return LossKind::Logistic;
    throw ConfigError("objective.kind = \"" + text +
                      "\" is not allowed: one of quadratic, logistic");
}

std::string lossKindName(LossKind kind) {
    return kind == LossKind::Quadratic ? "quadratic" : "logistic";
}

std::vector<BlockRange> splitBlocks(int dim, int stages) {
    if (stages < 1) {
        throw ConfigError("stages = " + std::to_string(stages) +
                          " is not allowed: an integer >= 1");
    }
    if (dim < stages) {
        throw ConfigError("stages = " + std::to_string(stages) +
                          " is not allowed: the model has d = " + std::to_string(dim) +
                          " coordinates and each stage needs at least one (S <= d)");
    }
    std::vector<BlockRange> blocks(stages);
    int base = dim / stages;
    int extra = dim % stages;
    int offset = 0;
    for (int s = 0; s < stages; ++s) {
        blocks[s] = {offset, base + (s < extra ? 1 : 0)};
        offset += blocks[s].size;
    }
    return blocks;
}

LinearObjective::LinearObjective(Dataset data, LossKind loss, double l2, int batchSize)
    : data_(std::move(data)), loss_(loss), l2_(l2), batchSize_(batchSize) {
    const auto n = data_.X.rows();
    if (n == 0 || data_.X.cols() == 0) {
        throw DataError("data set is empty: X has " + std::to_string(n) + " rows and " +
                        std::to_string(data_.X.cols()) + " columns");
    }
    if (data_.y.size() != n) {
        throw DataError("X and y lengths differ: X has " + std::to_string(n) + " rows, y has " +
                        std::to_string(data_.y.size()) + " entries");
    }
    if (!data_.X.allFinite() || !data_.y.allFinite()) {
        throw DataError("data set contains NaN or Inf values");
    }
    if (batchSize < 1) {
        throw ConfigError("batch_size = " + std::to_string(batchSize) +
                          " is not allowed: an integer >= 1");
    }
    if (n % batchSize != 0) {
        throw ConfigError("batch_size = " + std::to_string(batchSize) +
                          " is not allowed: the data set has n = " + std::to_string(n) +
                          " rows and n must be a multiple of the batch size");
    }
    if (!std::isfinite(l2) || l2 < 0.0) {
        throw ConfigError("l2 = " + std::to_string(l2) + " is not allowed: a finite number >= 0");
    }
    if (loss_ == LossKind::Logistic) {
        for (Eigen::Index i = 0; i < n; ++i) {
            if (data_.y[i] != 0.0 && data_.y[i] != 1.0) {
                throw DataError("logistic regression needs labels y in {0, 1}; row " +
                                std::to_string(i) + " has y = " + std::to_string(data_.y[i]));
            }
        }
    }
}

double LinearObjective::valueFromActivation(const Eigen::VectorXd& z, double weightNormSq) const {
    Eigen::ArrayXd scratch;
    return valueFromActivation(z, weightNormSq, scratch);
}

double LinearObjective::valueFromActivation(const Eigen::VectorXd& z, double weightNormSq,
                                            Eigen::ArrayXd& scratch) const {
    if (loss_ == LossKind::Quadratic) {
        return 0.5 * (z - data_.y).squaredNorm() / static_cast<double>(rows());
    }
    // mean(softplus(z) - y z) with softplus(z) = max(z, 0) + log1p(exp(-|z|)).
    auto za = z.array();
    const double linear = (za.max(0.0) - data_.y.array() * za).sum();
    expOfNegativeAbs(z, scratch);
    return (linear + sumLog1p(scratch)) / static_cast<double>(rows()) + 0.5 * l2_ * weightNormSq;
}

double LinearObjective::value(const Eigen::VectorXd& w) const {
    return valueFromActivation(data_.X * w, w.squaredNorm());
}

Eigen::VectorXd LinearObjective::gradient(const Eigen::VectorXd& w) const {
    Eigen::VectorXd z = data_.X * w;
    Eigen::VectorXd r;
    if (loss_ == LossKind::Quadratic) {
        r = z - data_.y;
    } else {
        r = (logisticSigmoid(z.array()) - data_.y.array()).matrix();
    }
    Eigen::VectorXd g = data_.X.transpose() * r / static_cast<double>(rows());
    if (loss_ == LossKind::Logistic) g += l2_ * w;
    return g;
}

double LinearObjective::batchValue(int batch, const Eigen::VectorXd& w) const {
    auto Xb = data_.X.middleRows(static_cast<Eigen::Index>(batch) * batchSize_, batchSize_);
    auto yb = data_.y.segment(static_cast<Eigen::Index>(batch) * batchSize_, batchSize_);
    Eigen::VectorXd z = Xb * w;
    if (loss_ == LossKind::Quadratic) return 0.5 * (z - yb).squaredNorm() / batchSize_;
    return logisticLoss(z.array(), yb.array()).mean() + 0.5 * l2_ * w.squaredNorm();
}

Eigen::VectorXd LinearObjective::batchGradient(int batch, const Eigen::VectorXd& w) const {
    auto Xb = data_.X.middleRows(static_cast<Eigen::Index>(batch) * batchSize_, batchSize_);
    Eigen::VectorXd g;
    outputGradient(batch, Xb * w, g);
    Eigen::VectorXd grad = Xb.transpose() * g;
    if (loss_ == LossKind::Logistic) grad += l2_ * w;
    return grad;
}

void LinearObjective::outputGradient(int batch, const Eigen::VectorXd& activation,
                                     Eigen::VectorXd& g) const {
    auto yb = data_.y.segment(static_cast<Eigen::Index>(batch) * batchSize_, batchSize_);
    if (loss_ == LossKind::Quadratic) {
        g = (activation - yb) / static_cast<double>(batchSize_);
    } else {
        g = ((logisticSigmoid(activation.array()) - yb.array()) / static_cast<double>(batchSize_))
                .matrix();
    }
}

double LinearObjective::smoothness() const {
    return smoothness_.get([&] {
        const double lambdaMax = largestEigenvalueOfGram(data_.X);
        return loss_ == LossKind::Quadratic ? lambdaMax : 0.25 * lambdaMax + l2_;
    });
}

const Eigen::VectorXd& LinearObjective::minimizer() const {
    return minimizer_.get([&] { return solveMinimizer(*this); });
}

double LinearObjective::optimum() const {
    return optimum_.get([&] { return value(minimizer()); });
}

double LinearObjective::optimumUpperBound() const {
    return optimumUpperBound_.get([&] {
        const Eigen::VectorXd w0 = Eigen::VectorXd::Zero(dim());
        const double f0 = value(w0);
        const Eigen::VectorXd g = gradient(w0);
        const double slope = g.squaredNorm();
        // Armijo backtracking from a unit step: any accepted point's f bounds f* from above.
        double t = 1.0;
        for (int k = 0; k < 40 && slope > 0.0; ++k, t *= 0.25) {
            const double f = value(w0 - t * g);
            if (f <= f0 - 0.5 * t * slope) return f;
        }
        return f0;
    });
}

std::future<void> LinearObjective::computeConstantsAside(std::shared_future<void> startWhen) const {
    constantsAside_.on.store(true);
    return std::async(std::launch::async, [this, startWhen = std::move(startWhen)] {
        if (startWhen.valid()) startWhen.wait();
        try {
            optimum();  // first: a replay that cannot tell divergence from bounds waits for f*
            smoothness();
        } catch (...) {
            // Nothing is stored; the next caller computes again and meets the error itself.
        }
    });
}

}  // namespace pipelens

#include "data/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "errors.hpp"
#include "random/numpy_random.hpp"
#include "util/format_number.hpp"

namespace pipelens {
namespace {

// Named as the config spells the keys (data.rows, data.condition_number): the user's words.
[[noreturn]] void rejectSpec(const std::string& field, const std::string& value,
                             const std::string& allowed) {
    throw ConfigError("data." + field + " = " + value + " is not allowed: " + allowed);
}

// mu is derived from condition_number when that is set: a failure is the user's
// condition_number (and dim), never a "mu" the user did not write.
[[noreturn]] void rejectConditionNumber(const SyntheticSpec& spec, double mu) {
    rejectSpec("condition_number", formatNumber(spec.conditionNumber),
               "with dim = " + std::to_string(spec.dim) +
                   " it needs the shift mu = " + formatNumber(mu) +
                   ", for which T + mu I is not positive definite in double precision; "
                   "choose a smaller condition_number");
}

// n x k matrix with orthonormal columns: the reduced Q of the QR of normal(size=(n, k)), as
// numpy.linalg.qr returns it. No column signs are fixed afterwards: Eigen's HouseholderQR takes
// LAPACK's Householder convention (beta = -sign(alpha) ||x||, so R's diagonal may be negative),
// and its Q equals LAPACK's dgeqrf/dorgqr Q to rounding (checked against NumPy by
// tests/core/tst_authors_data.cpp).
Eigen::MatrixXd randomOrthonormal(NumpyRandom& rng, Eigen::Index n, Eigen::Index k) {
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(rng.normalMatrix(n, k));
    return qr.householderQ() * Eigen::MatrixXd::Identity(n, k);
}

// y += sigma * normal(n), as the authors add label noise; sigma = 0 draws nothing.
void addLabelNoise(NumpyRandom& rng, Eigen::VectorXd& y, double sigma) {
    if (sigma == 0.0) {
        return;
    }
    y += rng.normalVector(y.size(), sigma);
}

// The two-branch logistic function: no overflow for large |z|.
double sigmoid(double z) {
    const double e = std::exp(-std::abs(z));
    return z >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

void validate(const SyntheticSpec& spec) {
    const std::string& kind = spec.kind;
    if (kind != "random" && kind != "simple" && kind != "tridiagonal" && kind != "logistic") {
        rejectSpec("kind", "\"" + kind + "\"", "one of random, simple, tridiagonal, logistic");
    }
    if (spec.rows < 1) {
        rejectSpec("rows", std::to_string(spec.rows), "an integer >= 1");
    }
    if (spec.dim < 1) {
        rejectSpec("dim", std::to_string(spec.dim), "an integer >= 1");
    }
    if (!std::isfinite(spec.labelNoise) || spec.labelNoise < 0.0) {
        rejectSpec("label_noise", formatNumber(spec.labelNoise), "a finite number >= 0");
    }
    if (!std::isfinite(spec.conditionNumber) ||
        (spec.conditionNumber != 0.0 && spec.conditionNumber <= 1.0)) {
        rejectSpec("condition_number", formatNumber(spec.conditionNumber),
                   "0 (use mu) or a finite number > 1");
    }
    if (kind != "tridiagonal") {
        return;
    }
    if (spec.rows < spec.dim) {
        rejectSpec("rows", std::to_string(spec.rows),
                   "the tridiagonal data set needs rows >= dim = " + std::to_string(spec.dim));
    }
    if (spec.conditionNumber > 0.0) {
        if (spec.dim < 2) {
            rejectSpec("condition_number", formatNumber(spec.conditionNumber),
                       "0 when dim = 1 (A = 2 + mu is 1 x 1 and always has condition number 1)");
        }
        const double mu = tridiagonalShiftForCondition(spec.dim, spec.conditionNumber);
        if (!std::isfinite(mu) || !(mu + tridiagonalEigenvalue(spec.dim, 1) > 0.0)) {
            rejectConditionNumber(spec, mu);
        }
    } else {
        // A = T + mu I must be positive definite for its Cholesky factor to exist.
        double lowest = tridiagonalEigenvalue(spec.dim, 1);
        if (!std::isfinite(spec.mu) || spec.mu <= -lowest) {
            rejectSpec("mu", formatNumber(spec.mu),
                       "a finite number > -lambda_min(T) = " + formatNumber(-lowest) +
                           " so that T + mu I is positive definite");
        }
    }
}

}  // namespace

double tridiagonalEigenvalue(int dim, int k) {
    // The sine form avoids the cancellation of 2 - 2 cos(x) for small x (large d).
    double s = std::sin(static_cast<double>(k) * std::numbers::pi / (2.0 * (dim + 1)));
    return 4.0 * s * s;
}

double tridiagonalShiftForCondition(int dim, double kappa) {
    // (hi + mu) / (lo + mu) = kappa  =>  mu = (hi - kappa lo) / (kappa - 1).
    double lo = tridiagonalEigenvalue(dim, 1);
    double hi = tridiagonalEigenvalue(dim, dim);
    return (hi - kappa * lo) / (kappa - 1.0);
}

Dataset makeSynthetic(const SyntheticSpec& spec) {
    validate(spec);
    const Eigen::Index n = spec.rows;
    const Eigen::Index d = spec.dim;
    NumpyRandom rng(spec.seed);
    Dataset data;
    std::ostringstream description;
    description << "synthetic " << spec.kind << ": n = " << n << ", d = " << d
                << ", seed = " << spec.seed;

    if (spec.kind == "random" || spec.kind == "logistic") {
        // The authors' order: X (row by row), then w_true, then the labels' draws.
        data.X = rng.normalMatrix(n, d);
        Eigen::VectorXd wTrue = rng.normalVector(d);
        Eigen::VectorXd z = data.X * wTrue;
        if (spec.kind == "random") {
            data.y = z;
            addLabelNoise(rng, data.y, spec.labelNoise);
            description << ", X ~ N(0,1), y = X w_true";
        } else {
            data.y.resize(n);
            for (Eigen::Index i = 0; i < n; ++i) {
                data.y[i] = rng.bernoulli(sigmoid(z[i]));
            }
            description << ", X ~ N(0,1), y ~ Bernoulli(sigmoid(X w_true))";
        }
    } else if (spec.kind == "simple") {
        // The authors' order: U's Gaussian matrix, then V's, then w_true, then the label noise.
        const Eigen::Index r = std::min(n, d);
        Eigen::MatrixXd U = randomOrthonormal(rng, n, r);
        Eigen::MatrixXd V = randomOrthonormal(rng, d, r);
        // Gram eigenvalues evenly spaced on [1, r], i.e. 1, 2, ..., r.
        Eigen::VectorXd lambda = Eigen::VectorXd::LinSpaced(r, 1.0, static_cast<double>(r));
        data.X =
            std::sqrt(static_cast<double>(n)) * U * lambda.cwiseSqrt().asDiagonal() * V.transpose();
        Eigen::VectorXd wTrue = rng.normalVector(d);
        data.y = data.X * wTrue;
        addLabelNoise(rng, data.y, spec.labelNoise);
        description << ", X^T X / n has eigenvalues 1, 2, ..., " << r << ", y = X w_true";
    } else {  // tridiagonal
        double mu = spec.conditionNumber > 0.0
                        ? tridiagonalShiftForCondition(spec.dim, spec.conditionNumber)
                        : spec.mu;
        Eigen::MatrixXd A = Eigen::MatrixXd::Zero(d, d);
        for (Eigen::Index i = 0; i < d; ++i) {
            A(i, i) = 2.0 + mu;
            if (i + 1 < d) {
                A(i, i + 1) = A(i + 1, i) = -1.0;
            }
        }
        Eigen::LLT<Eigen::MatrixXd> llt(A);
        if (llt.info() != Eigen::Success) {
            if (spec.conditionNumber > 0.0) rejectConditionNumber(spec, mu);
            rejectSpec("mu", formatNumber(mu), "a value for which T + mu I is positive definite");
        }
        // The authors' order: Q's Gaussian matrix, then w_true, then the label noise.
        Eigen::MatrixXd Q = randomOrthonormal(rng, n, d);
        Eigen::MatrixXd L = llt.matrixL();
        // X^T X / n = L Q^T Q L^T = A.
        data.X = std::sqrt(static_cast<double>(n)) * Q * L.transpose();
        Eigen::VectorXd wTrue = rng.normalVector(d);
        data.y = data.X * wTrue;
        addLabelNoise(rng, data.y, spec.labelNoise);
        double lo = tridiagonalEigenvalue(spec.dim, 1) + mu;
        double hi = tridiagonalEigenvalue(spec.dim, spec.dim) + mu;
        description << ", X^T X / n = T + mu I with mu = " << formatNumber(mu)
                    << " (condition number " << formatNumber(hi / lo) << "), y = X w_true";
    }
    if (spec.kind != "logistic" && spec.labelNoise > 0.0) {
        description << " + N(0, " << formatNumber(spec.labelNoise) << "^2) noise";
    }
    data.description = description.str();
    return data;
}

}  // namespace pipelens

#pragma once
// Synthetic data sets of SPEC section 1, drawn from NumPy's default_rng(seed) streams (SPEC 6).
#include <Eigen/Dense>
#include <cstdint>
#include <string>

#include "data/dataset.hpp"

namespace pipelens {

struct SyntheticSpec {
    std::string kind = "random";  // "random" | "simple" | "tridiagonal" | "logistic"
    int rows = 600;
    int dim = 64;
    std::uint64_t seed = 0;
    double labelNoise = 0.0;       // std-dev of Gaussian label noise (random/simple/tridiagonal;
                                   // logistic labels are Bernoulli and ignore it)
    double mu = 0.01;              // tridiagonal: A = T + mu I
    double conditionNumber = 0.0;  // tridiagonal: if > 0, choose mu so that cond(A) equals it
};

// Validates the spec (ConfigError naming the field, its value and what is allowed) and draws the
// data set from NumpyRandom(seed). random and logistic draw exactly as the authors' code does
// (SPEC section 6, "Which generator draws what"), so a seed gives their data: X = normal((n, d))
// row by row, then w_true = normal(d), then the labels. simple and tridiagonal follow the
// authors' generator too, to rounding: first the Gaussian matrices behind their orthonormal
// factors (simple: U's, then V's), each factor the Q of a Householder QR with LAPACK's column
// signs, then w_true, then the label noise.
Dataset makeSynthetic(const SyntheticSpec& spec);

// Eigenvalues of the d x d tridiagonal T (2 on the diagonal, -1 beside it), ascending:
// 2 - 2 cos(k pi / (d + 1)) = 4 sin^2(k pi / (2 (d + 1))), k = 1..d.
double tridiagonalEigenvalue(int dim, int k);
// mu for which T + mu I has condition number kappa > 1 (needs d >= 2).
double tridiagonalShiftForCondition(int dim, double kappa);

}  // namespace pipelens

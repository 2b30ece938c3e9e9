#pragma once
// Synthetic data sets of SPEC section 1 and the deterministic random numbers behind them.
#include <Eigen/Dense>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "objective/linear_objective.hpp"

namespace pipelens {

// Seeded std::mt19937_64 (its output sequence is fixed by the standard) with our own uniform,
// normal and shuffle, so a seed gives the same numbers with every standard library.
class Rng {
  public:
    explicit Rng(std::uint64_t seed) : engine_(seed) {}

    std::uint64_t nextU64() { return engine_(); }
    double uniform();                             // [0, 1), 53 random bits
    double normal();                              // N(0, 1), Box-Muller (pairs; caches one)
    std::uint64_t uniformIndex(std::uint64_t n);  // uniform on {0, ..., n-1}, unbiased; n >= 1
    void shuffle(std::vector<int>& values);       // Fisher-Yates with uniformIndex
    // Matrices are filled row by row, so the first rows do not depend on the row count.
    Eigen::MatrixXd normalMatrix(Eigen::Index rows, Eigen::Index cols);
    Eigen::VectorXd normalVector(Eigen::Index size);

  private:
    std::mt19937_64 engine_;
    bool hasSpare_ = false;
    double spare_ = 0.0;
};

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
// data set. The same spec always gives the same data.
Dataset makeSynthetic(const SyntheticSpec& spec);

// Eigenvalues of the d x d tridiagonal T (2 on the diagonal, -1 beside it), ascending:
// 2 - 2 cos(k pi / (d + 1)) = 4 sin^2(k pi / (2 (d + 1))), k = 1..d.
double tridiagonalEigenvalue(int dim, int k);
// mu for which T + mu I has condition number kappa > 1 (needs d >= 2).
double tridiagonalShiftForCondition(int dim, double kappa);

}  // namespace pipelens

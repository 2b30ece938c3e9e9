#pragma once
// The Gram matrix X^T X of a data set and its largest eigenvalue: L of both linear models is
// built from lambda_max(X^T X / n) (SPEC section 1). largestEigenvalueOfGram (declared in
// linear_objective.hpp) picks a path; the paths are exposed so tests can compare them.
#include <Eigen/Dense>

namespace pipelens {

// scale * X^T X (symmetric, both triangles filled). Only the lower triangle is multiplied out,
// in column panels, which costs about 55 % of a full product.
Eigen::MatrixXd gramMatrix(const Eigen::MatrixXd& X, double scale);

// lambda_max(X^T X / n) from a dense symmetric eigensolver on the smaller of the two Grams.
double largestEigenvalueOfGramExact(const Eigen::MatrixXd& X);

// What Lanczos learned about lambda_max(X^T X / n).
struct GramEigenBound {
    double ritz = 0.0;      // the largest Ritz value: a Rayleigh quotient, never above lambda_max
    double residual = 0.0;  // ||G x - ritz x|| for its unit Ritz vector x
    int products = 0;       // products with the Gram used
    // Some eigenvalue lies within `residual` of `ritz`; the largest Ritz value of a Krylov space
    // from a random start converges to lambda_max, so this bounds lambda_max from above.
    double upper() const { return ritz + residual; }
    bool tight(double relTol) const { return residual <= relTol * ritz; }
};

// Lanczos with full reorthogonalisation on v -> G v (G = X^T X / n, or X X^T / n when n < d:
// the same nonzero eigenvalues on the shorter vectors) from a fixed pseudo-random start,
// restarted from the top Ritz vector when `basis` vectors are in use. Stops as soon as
// tight(relTol) holds, the Krylov space is invariant (residual 0), after maxProducts, or, with
// stopWhenSlow, once the residual's recent rate of decrease shows it would not get tight within
// maxProducts (a clustered top of the spectrum; the caller then has a cheaper way).
GramEigenBound largestEigenvalueOfGramBound(const Eigen::MatrixXd& X, double relTol,
                                            int maxProducts, bool stopWhenSlow = false,
                                            int basis = 128);

}  // namespace pipelens

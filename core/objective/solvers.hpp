#pragma once
// The two paths behind largestEigenvalueOfGram (declared in linear_objective.hpp), exposed so
// tests can check the iterative one against the exact one on the same matrix.
#include <Eigen/Dense>

namespace pipelens {

// lambda_max(X^T X / n) from a dense symmetric eigensolver on the smaller of the two Grams.
double largestEigenvalueOfGramExact(const Eigen::MatrixXd& X);

// lambda_max(X^T X / n) by restarted Lanczos (full reorthogonalisation) on v -> X^T (X v) / n
// from a fixed start vector; stops when the Ritz residual is <= relTol * lambda, when the Ritz
// value has stalled at rounding level, or after maxProducts operator products.
double largestEigenvalueOfGramIterative(const Eigen::MatrixXd& X, double relTol = 1e-12,
                                        int maxProducts = 2000);

}  // namespace pipelens

// Reference solvers for the linear models: L = lambda_max(X^T X / n) and the minimiser behind f*.
#include "objective/solvers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>

#include "errors.hpp"
#include "util/format_number.hpp"
#include "objective/linear_objective.hpp"

namespace pipelens {
namespace {

// Above this size of the smaller Gram the dense eigensolver gets too slow (O(m^3)).
constexpr Eigen::Index kExactGramLimit = 1500;
// Krylov dimension per Lanczos restart.
constexpr Eigen::Index kLanczosBasis = 40;
// Relative change of the Ritz value between restarts that counts as stalled.
constexpr double kLanczosStall = 1e-14;
// Below this reciprocal condition number of X^T X, least squares uses the pivoted QR.
constexpr double kNormalRcond = 1e-8;
// Newton for logistic regression.
constexpr double kGradientTolerance = 1e-10;
constexpr int kNewtonIterations = 100;

Eigen::ArrayXd sigmoid(const Eigen::ArrayXd& z) {
    // Split by sign so that exp never overflows.
    Eigen::ArrayXd e = (-z.abs()).exp();
    return (z >= 0.0).select(1.0 / (1.0 + e), e / (1.0 + e));
}

// X^T X * scale, computed on the lower triangle only (half the work) and then mirrored.
Eigen::MatrixXd gramOf(const Eigen::MatrixXd& X, double scale) {
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(X.cols(), X.cols());
    G.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose(), scale);
    G.triangularView<Eigen::StrictlyUpper>() = G.transpose();
    return G;
}

Eigen::VectorXd solveLeastSquares(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
    // Well-conditioned tall problems: normal equations (a fraction of the cost of a pivoted QR
    // for large n) refined with residuals taken from X itself, which recovers the accuracy the
    // squared condition number costs.
    if (X.cols() <= X.rows()) {
        Eigen::LDLT<Eigen::MatrixXd> ldlt(gramOf(X, 1.0));
        if (ldlt.info() == Eigen::Success && ldlt.isPositive() && ldlt.rcond() > kNormalRcond) {
            Eigen::VectorXd w = ldlt.solve(X.transpose() * y);
            for (int step = 0; step < 3 && w.allFinite(); ++step) {
                Eigen::VectorXd residual = y - X * w;
                Eigen::VectorXd correction = ldlt.solve(X.transpose() * residual);
                w += correction;
                if (correction.norm() <= 1e-15 * w.norm()) {
                    break;
                }
            }
            if (w.allFinite()) {
                return w;
            }
        }
    }
    // Rank-revealing: gives the minimum-norm minimiser when X is rank-deficient (e.g. d > n).
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(X);
    Eigen::VectorXd w = cod.solve(y);
    if (!w.allFinite()) {
        throw DataError(
            "least-squares solve for f* produced non-finite weights; "
            "check X and y for extreme values");
    }
    return w;
}

// True when w classifies every row with a strictly positive margin: then the unregularised
// logistic loss keeps falling along w and has no minimiser.
bool separates(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const Eigen::VectorXd& w) {
    Eigen::ArrayXd margin = (2.0 * y.array() - 1.0) * (X * w).array();
    return margin.minCoeff() > 0.0;
}

[[noreturn]] void throwSeparable() {
    throw DataError(
        "logistic regression with l2 = 0 has no minimiser on this data set: the data "
        "are linearly separable, so the loss keeps decreasing as ||w|| grows; "
        "set l2 > 0 to get a finite f*");
}

Eigen::VectorXd solveLogistic(const LinearObjective& objective) {
    const Eigen::MatrixXd& X = objective.X();
    const Eigen::VectorXd& y = objective.y();
    const double n = static_cast<double>(X.rows());
    const double l2 = objective.l2();
    const double eps = std::numeric_limits<double>::epsilon();

    Eigen::VectorXd w = Eigen::VectorXd::Zero(X.cols());
    double f = objective.value(w);
    Eigen::VectorXd g = objective.gradient(w);
    double gradNorm = g.norm();
    for (int iteration = 0; iteration < kNewtonIterations; ++iteration) {
        if (gradNorm <= kGradientTolerance) {
            break;
        }

        Eigen::ArrayXd s = sigmoid((X * w).array());
        Eigen::ArrayXd curvature = s * (1.0 - s);
        Eigen::MatrixXd scaled = X.array().colwise() * curvature.sqrt();
        Eigen::MatrixXd H = gramOf(scaled, 1.0 / n);
        H.diagonal().array() += l2;

        // Newton direction; H can be singular when l2 = 0, so fall back to the minimum-norm
        // solve, and finally to steepest descent if neither gives a descent direction.
        Eigen::VectorXd p;
        Eigen::LDLT<Eigen::MatrixXd> ldlt(H);
        if (ldlt.info() == Eigen::Success && ldlt.isPositive()) {
            p = ldlt.solve(-g);
        }
        if (p.size() == 0 || !p.allFinite() || g.dot(p) >= 0.0) {
            p = Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(H).solve(-g);
        }
        if (!p.allFinite() || g.dot(p) >= 0.0) {
            p = -g;
        }

        // Backtracking (Armijo). Close to the optimum the decrease drops below the rounding
        // of f, so a step that keeps f within rounding and shrinks the gradient is taken too.
        const double slope = g.dot(p);
        double step = 1.0;
        bool accepted = false;
        for (int halving = 0; halving < 60 && !accepted; ++halving, step *= 0.5) {
            Eigen::VectorXd candidate = w + step * p;
            double fCandidate = objective.value(candidate);
            if (!std::isfinite(fCandidate)) {
                continue;
            }
            bool armijo = fCandidate <= f + 1e-4 * step * slope;
            bool withinRounding = fCandidate <= f + 64.0 * eps * std::abs(f);
            if (!armijo && !withinRounding) {
                continue;
            }
            Eigen::VectorXd gCandidate = objective.gradient(candidate);
            if (armijo || gCandidate.norm() < gradNorm) {
                w = std::move(candidate);
                f = fCandidate;
                g = std::move(gCandidate);
                gradNorm = g.norm();
                accepted = true;
            }
        }
        if (!accepted) {
            break;
        }
    }

    if (gradNorm > kGradientTolerance || !w.allFinite()) {
        if (l2 == 0.0 && w.allFinite() && separates(X, y, w)) {
            throwSeparable();
        }
        throw DataError("logistic regression f*: Newton's method did not reach gradient norm <= " +
                        formatNumber(kGradientTolerance) + " within " +
                        std::to_string(kNewtonIterations) + " iterations (gradient norm " +
                        formatNumber(gradNorm) + ", l2 = " + formatNumber(l2) +
                        "); the data may be (nearly) separable: try a larger l2");
    }
    // A stationary point of the unregularised loss cannot separate the data strictly, so a
    // separating w means the gradient only vanished numerically on the way to infinity.
    if (l2 == 0.0 && separates(X, y, w)) {
        throwSeparable();
    }
    return w;
}

}  // namespace

double largestEigenvalueOfGramExact(const Eigen::MatrixXd& X) {
    const Eigen::Index n = X.rows();
    const Eigen::Index d = X.cols();
    if (n == 0 || d == 0) {
        return 0.0;
    }
    // X^T X and X X^T share their nonzero eigenvalues: decompose the smaller one.
    const double scale = 1.0 / static_cast<double>(n);
    Eigen::MatrixXd gram = d <= n ? gramOf(X, scale) : gramOf(X.transpose(), scale);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(gram, Eigen::EigenvaluesOnly);
    if (solver.info() != Eigen::Success) {
        throw DataError(
            "eigenvalue computation of X^T X / n did not converge; "
            "check X for NaN or Inf values");
    }
    return std::max(0.0, solver.eigenvalues().maxCoeff());
}

double largestEigenvalueOfGramIterative(const Eigen::MatrixXd& X, double relTol, int maxProducts) {
    const Eigen::Index n = X.rows();
    const Eigen::Index d = X.cols();
    if (n == 0 || d == 0) {
        return 0.0;
    }
    const double invN = 1.0 / static_cast<double>(n);
    auto apply = [&](const Eigen::VectorXd& v) -> Eigen::VectorXd {
        Eigen::VectorXd t = X * v;
        return (X.transpose() * t) * invN;
    };

    // A fixed pseudo-random start: deterministic, and almost surely not orthogonal to the top
    // eigenvector (a constant vector can be, e.g. for centred data).
    std::mt19937_64 engine(0x9e3779b97f4a7c15ULL);
    Eigen::VectorXd v(d);
    for (Eigen::Index i = 0; i < d; ++i) {
        v[i] = static_cast<double>(engine() >> 11) * 0x1.0p-53 - 0.5;
    }
    v.normalize();

    const Eigen::Index basis = std::min(kLanczosBasis, d);
    Eigen::MatrixXd V(d, basis + 1);
    Eigen::VectorXd alpha(basis);
    Eigen::VectorXd beta(basis);
    double theta = 0.0;
    double normEstimate = 0.0;
    int products = 0;
    while (products < std::max(1, maxProducts)) {
        V.col(0) = v;
        Eigen::Index steps = 0;
        bool invariant = false;
        for (Eigen::Index j = 0; j < basis && products < std::max(1, maxProducts); ++j) {
            Eigen::VectorXd w = apply(V.col(j));
            ++products;
            normEstimate = std::max(normEstimate, w.norm());
            alpha[j] = V.col(j).dot(w);
            // Full reorthogonalisation, twice: keeps the basis orthonormal to rounding.
            for (int pass = 0; pass < 2; ++pass) {
                w -= V.leftCols(j + 1) * (V.leftCols(j + 1).transpose() * w);
            }
            beta[j] = w.norm();
            steps = j + 1;
            if (beta[j] <= 1e-14 * normEstimate) {
                invariant = true;  // the Krylov space is exhausted: its Ritz values are exact
                break;
            }
            V.col(j + 1) = w / beta[j];
        }
        if (normEstimate == 0.0) {
            return 0.0;
        }

        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tri;
        tri.computeFromTridiagonal(alpha.head(steps), beta.head(steps - 1),
                                   Eigen::ComputeEigenvectors);
        const double previous = theta;
        theta = tri.eigenvalues()[steps - 1];
        Eigen::VectorXd s = tri.eigenvectors().col(steps - 1);
        // ||A x - theta x|| for the Ritz vector x = V s is beta_last * |s_last|.
        double residual = invariant ? 0.0 : beta[steps - 1] * std::abs(s[steps - 1]);
        if (residual <= relTol * std::abs(theta)) {
            break;
        }
        // The Ritz value only grows between restarts (in exact arithmetic); once it moves by
        // no more than rounding noise, the residual, which converges like its square root,
        // cannot buy any more accuracy.
        if (std::abs(theta - previous) <= kLanczosStall * theta) {
            break;
        }
        v = V.leftCols(steps) * s;
        v.normalize();
    }
    return std::max(0.0, theta);
}

double largestEigenvalueOfGram(const Eigen::MatrixXd& X) {
    if (std::min(X.rows(), X.cols()) <= kExactGramLimit) {
        return largestEigenvalueOfGramExact(X);
    }
    return largestEigenvalueOfGramIterative(X);
}

Eigen::VectorXd solveMinimizer(const LinearObjective& objective) {
    if (objective.loss() == LossKind::Quadratic) {
        return solveLeastSquares(objective.X(), objective.y());
    }
    return solveLogistic(objective);
}

}  // namespace pipelens

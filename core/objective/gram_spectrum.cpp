// lambda_max(X^T X / n): a dense eigensolver when the Gram is small, otherwise Lanczos, which
// bounds it from above after a few dozen products with X on typical data.
#include "objective/gram_spectrum.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "errors.hpp"
#include "objective/linear_objective.hpp"

namespace pipelens {
namespace {

// Column panel width of gramMatrix: wide enough for Eigen's GEMM kernels to run at full speed,
// narrow enough that the skipped upper triangle is most of the upper half.
constexpr Eigen::Index kGramPanel = 128;
// At or below this size of the smaller Gram the dense eigensolver costs well under a
// millisecond: L is then exact.
constexpr Eigen::Index kExactGramSmall = 128;
// Above this size of the smaller Gram the dense eigensolver gets too slow (O(m^3)).
constexpr Eigen::Index kExactGramLimit = 1500;
// L may exceed lambda_max by at most this relative amount (never falls below it).
constexpr double kBoundTolerance = 1e-10;
// Products Lanczos may spend when no dense fallback is affordable.
constexpr int kLargeGramProducts = 4000;
// The Ritz pair is checked every few Lanczos steps (each check is O(steps^3)).
constexpr int kCheckEvery = 4;
// The residual's rate of decrease is measured over this many steps, and Lanczos does not give up
// before this many (its convergence speeds up as the Krylov space grows).
constexpr int kRateWindow = 16;
constexpr int kMinStepsBeforeGivingUp = 32;

struct RitzPair {
    double value = 0.0;
    double residual = 0.0;
    Eigen::VectorXd coefficients;  // in the Lanczos basis
};

// The top eigenpair of the Lanczos tridiagonal; ||G x - theta x|| for the Ritz vector x = V s
// is beta_last * |s_last|.
RitzPair topRitzPair(const Eigen::VectorXd& alpha, const Eigen::VectorXd& beta,
                     Eigen::Index steps) {
    RitzPair pair;
    if (steps == 1) {
        pair.value = alpha[0];
        pair.residual = beta[0];
        pair.coefficients = Eigen::VectorXd::Ones(1);
        return pair;
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tri;
    tri.computeFromTridiagonal(alpha.head(steps), beta.head(steps - 1), Eigen::ComputeEigenvectors);
    pair.value = tri.eigenvalues()[steps - 1];
    pair.coefficients = tri.eigenvectors().col(steps - 1);
    pair.residual = beta[steps - 1] * std::abs(pair.coefficients[steps - 1]);
    return pair;
}

// True when the residual's decrease over the last kRateWindow steps, continued, would not reach
// `target` within `productsLeft`: on a clustered top of the spectrum Lanczos converges slowly,
// and giving up early leaves the budget to the caller's fallback.
bool hopeless(const std::vector<double>& residuals, double target, int productsLeft) {
    constexpr int window = kRateWindow / kCheckEvery;
    const int checks = static_cast<int>(residuals.size());
    if (checks <= window || checks * kCheckEvery < kMinStepsBeforeGivingUp) {
        return false;
    }
    const double now = residuals.back();
    const double before = residuals[static_cast<size_t>(checks - 1 - window)];
    if (!(now < before)) {
        return true;
    }
    const double ratePerStep = std::log(now / before) / static_cast<double>(kRateWindow);
    return std::log(target / now) / ratePerStep > static_cast<double>(productsLeft);
}

// Lanczos products it is worth trying before the dense eigensolver: about half the dense
// solve's cost (Gram ~0.3 m products, tridiagonalisation ~0.6 m^2 / max(n, d) products on
// this kind of machine, one product being X^T (X v)).
int productsBeforeExact(const Eigen::MatrixXd& X) {
    const double m = static_cast<double>(std::min(X.rows(), X.cols()));
    const double big = static_cast<double>(std::max(X.rows(), X.cols()));
    return std::max(32, static_cast<int>(m / 8.0 + m * m / (4.0 * big)));
}

}  // namespace

Eigen::MatrixXd gramMatrix(const Eigen::MatrixXd& X, double scale) {
    const Eigen::Index d = X.cols();
    Eigen::MatrixXd G(d, d);
    for (Eigen::Index j = 0; j < d; j += kGramPanel) {
        const Eigen::Index width = std::min(kGramPanel, d - j);
        G.block(j, j, d - j, width).noalias() =
            scale * (X.rightCols(d - j).transpose() * X.middleCols(j, width));
    }
    G.triangularView<Eigen::StrictlyUpper>() = G.transpose();
    return G;
}

double largestEigenvalueOfGramExact(const Eigen::MatrixXd& X) {
    const Eigen::Index n = X.rows();
    const Eigen::Index d = X.cols();
    if (n == 0 || d == 0) {
        return 0.0;
    }
    // X^T X and X X^T share their nonzero eigenvalues: decompose the smaller one.
    const double scale = 1.0 / static_cast<double>(n);
    Eigen::MatrixXd gram =
        d <= n ? gramMatrix(X, scale) : gramMatrix(Eigen::MatrixXd(X.transpose()), scale);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(gram, Eigen::EigenvaluesOnly);
    if (solver.info() != Eigen::Success) {
        throw DataError(
            "eigenvalue computation of X^T X / n did not converge; "
            "check X for NaN or Inf values");
    }
    return std::max(0.0, solver.eigenvalues().maxCoeff());
}

GramEigenBound largestEigenvalueOfGramBound(const Eigen::MatrixXd& X, double relTol,
                                            int maxProducts, bool stopWhenSlow, int basis) {
    GramEigenBound bound;
    const Eigen::Index n = X.rows();
    const Eigen::Index d = X.cols();
    if (n == 0 || d == 0) {
        return bound;
    }
    // Work on the shorter side: X^T X for d <= n, X X^T otherwise.
    const bool wide = d > n;
    const Eigen::Index m = wide ? n : d;
    const double invN = 1.0 / static_cast<double>(n);
    Eigen::VectorXd between(wide ? d : n);
    Eigen::VectorXd w(m);
    auto apply = [&](const auto& v) {
        if (wide) {
            between.noalias() = X.transpose() * v;
            w.noalias() = X * between;
        } else {
            between.noalias() = X * v;
            w.noalias() = X.transpose() * between;
        }
        w *= invN;
    };

    // A fixed pseudo-random start: deterministic, and almost surely not orthogonal to the top
    // eigenvector (a constant vector can be, e.g. for centred data).
    std::mt19937_64 engine(0x9e3779b97f4a7c15ULL);
    Eigen::VectorXd start(m);
    for (Eigen::Index i = 0; i < m; ++i) {
        start[i] = static_cast<double>(engine() >> 11) * 0x1.0p-53 - 0.5;
    }
    start.normalize();

    const Eigen::Index size = std::clamp<Eigen::Index>(basis, 1, m);
    const int limit = std::max(1, maxProducts);
    Eigen::MatrixXd V(m, size + 1);
    Eigen::VectorXd alpha(size);
    Eigen::VectorXd beta(size);
    double normEstimate = 0.0;
    for (;;) {
        V.col(0) = start;
        std::vector<double> residuals;  // at every check of this cycle
        Eigen::Index steps = 0;
        bool invariant = false;
        RitzPair top;
        for (Eigen::Index j = 0; j < size && bound.products < limit; ++j) {
            apply(V.col(j));
            ++bound.products;
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
            if (steps % kCheckEvery == 0) {
                top = topRitzPair(alpha, beta, steps);
                residuals.push_back(top.residual);
                if (top.residual <= relTol * top.value) {
                    break;
                }
                if (stopWhenSlow &&
                    hopeless(residuals, relTol * top.value, limit - bound.products)) {
                    bound.ritz = std::max(0.0, top.value);
                    bound.residual = top.residual;
                    return bound;
                }
            }
        }
        if (normEstimate == 0.0) {
            return bound;  // X = 0
        }
        if (top.coefficients.size() != steps) {
            top = topRitzPair(alpha, beta, steps);
        }
        bound.ritz = std::max(0.0, top.value);
        bound.residual = top.residual;
        if (invariant || bound.tight(relTol) || bound.products >= limit) {
            return bound;
        }
        start = V.leftCols(steps) * top.coefficients;
        start.normalize();
    }
}

double largestEigenvalueOfGram(const Eigen::MatrixXd& X) {
    const Eigen::Index m = std::min(X.rows(), X.cols());
    if (m <= kExactGramSmall) {
        return largestEigenvalueOfGramExact(X);
    }
    const bool exactAffordable = m <= kExactGramLimit;
    // With the dense solve to fall back on, Lanczos stops as soon as it looks slow.
    const GramEigenBound bound = largestEigenvalueOfGramBound(
        X, kBoundTolerance, exactAffordable ? productsBeforeExact(X) : kLargeGramProducts,
        exactAffordable);
    if (bound.tight(kBoundTolerance) || !exactAffordable) {
        return bound.upper();
    }
    // A clustered top of the spectrum: Lanczos converges slowly, the dense solve is cheaper.
    return largestEigenvalueOfGramExact(X);
}

}  // namespace pipelens

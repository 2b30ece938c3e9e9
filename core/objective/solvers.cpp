// The minimiser behind f*: least squares from the normal equations (or a rank-revealing QR),
// logistic regression by inexact Newton with conjugate gradients on Hessian-vector products.
#include "objective/solvers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "errors.hpp"
#include "objective/gram_spectrum.hpp"
#include "objective/linear_objective.hpp"
#include "util/format_number.hpp"

namespace pipelens {
namespace {

// Below this reciprocal condition number of X^T X, least squares uses the pivoted QR.
constexpr double kNormalRcond = 1e-8;
// Newton for logistic regression: SPEC's convergence criterion.
constexpr double kGradientTolerance = 1e-10;
constexpr int kNewtonIterations = 100;

Eigen::VectorXd solveLeastSquares(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
    // Well-conditioned tall problems: normal equations (a fraction of the cost of a pivoted QR
    // for large n) refined with residuals taken from X itself, which recovers the accuracy the
    // squared condition number costs.
    if (X.cols() <= X.rows()) {
        Eigen::LLT<Eigen::MatrixXd> llt(gramMatrix(X, 1.0));
        if (llt.info() == Eigen::Success && llt.rcond() > kNormalRcond) {
            Eigen::VectorXd w = llt.solve(X.transpose() * y);
            for (int step = 0; step < 3 && w.allFinite(); ++step) {
                Eigen::VectorXd residual = y - X * w;
                Eigen::VectorXd correction = llt.solve(X.transpose() * residual);
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

// The logistic loss at one point, with what a Newton step needs there.
struct LogisticPoint {
    Eigen::VectorXd w;
    Eigen::VectorXd activation;  // X w
    Eigen::VectorXd gradient;
    Eigen::ArrayXd curvature;  // sigma(z)(1 - sigma(z)) / n: the Hessian is X^T diag X + l2 I
    double value = 0.0;
    double gradientNorm = 0.0;
};

class LogisticNewton {
  public:
    explicit LogisticNewton(const LinearObjective& objective)
        : objective_(objective),
          X_(objective.X()),
          l2_(objective.l2()),
          invN_(1.0 / static_cast<double>(objective.rows())) {}

    LogisticPoint evaluate(Eigen::VectorXd w) {
        LogisticPoint p;
        p.activation = X_ * w;
        const Eigen::ArrayXd s = logisticSigmoid(p.activation.array());
        p.gradient = X_.transpose() * (s - objective_.y().array()).matrix() * invN_;
        p.gradient += l2_ * w;
        p.gradientNorm = p.gradient.norm();
        p.curvature = s * (1.0 - s) * invN_;
        p.value = objective_.valueFromActivation(p.activation, w.squaredNorm(), scratch_);
        p.w = std::move(w);
        return p;
    }

    // Conjugate gradients on H p = -g, preconditioned with diag(H), stopped once the residual is
    // below max(eta ||g||, tol / 10) with eta = min(1/2, sqrt(||g||)): loose far from the
    // minimiser, tight near it, so Newton still converges superlinearly. False when it needs more
    // than maxProducts products or meets curvature <= 0 (possible only with l2 = 0).
    bool conjugateGradientDirection(const LogisticPoint& at, int maxProducts, Eigen::VectorXd& p,
                                    int& products) {
        const Eigen::Index d = X_.cols();
        Eigen::ArrayXd invDiagonal(d);
        for (Eigen::Index j = 0; j < d; ++j) {
            const double h = (X_.col(j).array().square() * at.curvature).sum() + l2_;
            invDiagonal[j] = h > 0.0 ? 1.0 / h : 1.0;
        }
        const double target = std::max(std::min(0.5, std::sqrt(at.gradientNorm)) * at.gradientNorm,
                                       0.1 * kGradientTolerance);
        p = Eigen::VectorXd::Zero(d);
        Eigen::VectorXd r = -at.gradient;
        Eigen::VectorXd z = (r.array() * invDiagonal).matrix();
        Eigen::VectorXd q = z;
        Eigen::VectorXd hq(d);
        Eigen::VectorXd xq(X_.rows());
        double rz = r.dot(z);
        for (products = 0; products < maxProducts;) {
            xq.noalias() = X_ * q;
            xq.array() *= at.curvature;
            hq.noalias() = X_.transpose() * xq;
            hq += l2_ * q;
            ++products;
            const double qhq = q.dot(hq);
            if (!(qhq > 0.0)) {
                return false;
            }
            const double a = rz / qhq;
            p += a * q;
            r -= a * hq;
            if (r.norm() <= target) {
                return true;
            }
            z = (r.array() * invDiagonal).matrix();
            const double rzNext = r.dot(z);
            q = z + (rzNext / rz) * q;
            rz = rzNext;
        }
        return false;
    }

    // The Newton direction from a factorised Hessian. H can be singular when l2 = 0, so fall
    // back to the minimum-norm solve, and finally to steepest descent if neither gives a
    // descent direction.
    Eigen::VectorXd denseDirection(const LogisticPoint& at) const {
        Eigen::MatrixXd scaled = X_.array().colwise() * at.curvature.sqrt();
        Eigen::MatrixXd H = gramMatrix(scaled, 1.0);
        H.diagonal().array() += l2_;
        const Eigen::VectorXd& g = at.gradient;
        Eigen::VectorXd p;
        Eigen::LLT<Eigen::MatrixXd> llt(H);
        if (llt.info() == Eigen::Success) {
            p = llt.solve(-g);
        }
        if (p.size() == 0 || !p.allFinite() || g.dot(p) >= 0.0) {
            Eigen::LDLT<Eigen::MatrixXd> ldlt(H);
            if (ldlt.info() == Eigen::Success && ldlt.isPositive()) {
                p = ldlt.solve(-g);
            }
        }
        if (p.size() == 0 || !p.allFinite() || g.dot(p) >= 0.0) {
            p = Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(H).solve(-g);
        }
        if (!p.allFinite() || g.dot(p) >= 0.0) {
            p = -g;
        }
        return p;
    }

    // Backtracking (Armijo) along p; the trial values come from X w + t X p, one product in all.
    // Close to the optimum the decrease drops below the rounding of f, so a step that keeps f
    // within rounding and shrinks the gradient is taken too. False when no step is accepted.
    bool lineSearch(LogisticPoint& at, const Eigen::VectorXd& p) {
        const Eigen::VectorXd xp = X_ * p;
        const double slope = at.gradient.dot(p);
        const double ww = at.w.squaredNorm();
        const double wp = at.w.dot(p);
        const double pp = p.squaredNorm();
        const double eps = std::numeric_limits<double>::epsilon();
        double step = 1.0;
        for (int halving = 0; halving < 60; ++halving, step *= 0.5) {
            const double trial = objective_.valueFromActivation(
                at.activation + step * xp, ww + 2.0 * step * wp + step * step * pp, scratch_);
            if (!std::isfinite(trial)) {
                continue;
            }
            const bool armijo = trial <= at.value + 1e-4 * step * slope;
            const bool withinRounding = trial <= at.value + 64.0 * eps * std::abs(at.value);
            if (!armijo && !withinRounding) {
                continue;
            }
            LogisticPoint candidate = evaluate(at.w + step * p);
            if (armijo || candidate.gradientNorm < at.gradientNorm) {
                at = std::move(candidate);
                return true;
            }
        }
        return false;
    }

  private:
    const LinearObjective& objective_;
    const Eigen::MatrixXd& X_;
    double l2_;
    double invN_;
    Eigen::ArrayXd scratch_;
};

}  // namespace

Eigen::VectorXd solveLogisticMinimizer(const LinearObjective& objective, NewtonSteps steps,
                                       NewtonReport* report) {
    const Eigen::MatrixXd& X = objective.X();
    const double n = static_cast<double>(X.rows());
    const double d = static_cast<double>(X.cols());
    const double l2 = objective.l2();
    // A dense step costs about n d^2 / 2 (Hessian) + d^3 / 6 (Cholesky) multiply-adds, a
    // Hessian-vector product 2 n d: conjugate gradients may spend that many products per step.
    const int cgBudget = std::max(20, static_cast<int>(d / 4.0 + d * d / (12.0 * n)));

    LogisticNewton newton(objective);
    LogisticPoint x = newton.evaluate(Eigen::VectorXd::Zero(X.cols()));
    NewtonReport local;
    bool dense = steps == NewtonSteps::Dense;
    for (; local.iterations < kNewtonIterations && x.gradientNorm > kGradientTolerance;
         ++local.iterations) {
        Eigen::VectorXd p;
        if (!dense) {
            int products = 0;
            // An ill-conditioned Hessian: dense steps converge in fewer, costlier iterations.
            dense = !newton.conjugateGradientDirection(x, cgBudget, p, products);
            local.hessianProducts += products;
        }
        if (dense) {
            p = newton.denseDirection(x);
            ++local.denseSteps;
        }
        if (!newton.lineSearch(x, p)) {
            break;
        }
    }
    local.gradientNorm = x.gradientNorm;
    if (report) {
        *report = local;
    }

    if (x.gradientNorm > kGradientTolerance || !x.w.allFinite()) {
        if (l2 == 0.0 && x.w.allFinite() && separates(X, objective.y(), x.w)) {
            throwSeparable();
        }
        throw DataError("logistic regression f*: Newton's method did not reach gradient norm <= " +
                        formatNumber(kGradientTolerance) + " within " +
                        std::to_string(kNewtonIterations) + " iterations (gradient norm " +
                        formatNumber(x.gradientNorm) + ", l2 = " + formatNumber(l2) +
                        "); the data may be (nearly) separable: try a larger l2");
    }
    // A stationary point of the unregularised loss cannot separate the data strictly, so a
    // separating w means the gradient only vanished numerically on the way to infinity.
    if (l2 == 0.0 && separates(X, objective.y(), x.w)) {
        throwSeparable();
    }
    return std::move(x.w);
}

Eigen::VectorXd solveMinimizer(const LinearObjective& objective) {
    if (objective.loss() == LossKind::Quadratic) {
        return solveLeastSquares(objective.X(), objective.y());
    }
    return solveLogisticMinimizer(objective, NewtonSteps::Auto);
}

}  // namespace pipelens

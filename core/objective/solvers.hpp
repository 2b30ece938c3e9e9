#pragma once
// The minimiser behind f*: least squares directly, logistic regression by Newton's method to
// gradient norm <= 1e-10 (SPEC section 1). solveMinimizer (linear_objective.hpp) is the entry
// point; the logistic solver is exposed with its step choice so tests can compare the paths.
#include <Eigen/Dense>

namespace pipelens {

class LinearObjective;

enum class NewtonSteps {
    Auto,   // Newton-CG on Hessian-vector products; dense steps once CG costs more than they do
    Dense,  // every step from a factorised Hessian X^T D X / n + l2 I
};

struct NewtonReport {
    int iterations = 0;         // Newton steps taken
    int hessianProducts = 0;    // Hessian-vector products spent by conjugate gradients
    int denseSteps = 0;         // steps from a factorised Hessian
    double gradientNorm = 0.0;  // ||grad f|| at the returned point
};

// Throws DataError (with the reason) when no minimiser exists or Newton does not converge.
Eigen::VectorXd solveLogisticMinimizer(const LinearObjective& objective, NewtonSteps steps,
                                       NewtonReport* report = nullptr);

}  // namespace pipelens

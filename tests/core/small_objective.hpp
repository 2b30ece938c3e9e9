#pragma once
// The small linear objective the replay tests run on: least squares on random data (label noise
// 0.1, no l2) or logistic regression (l2 = 0.01), data seed 5, batches of 5 rows, with f* and L
// computed once here so that the runs under test do not time them.
#include <Eigen/Dense>
#include <cmath>
#include <memory>

#include "data/synthetic.hpp"
#include "objective/linear_objective.hpp"

namespace pipelens::test {

inline std::shared_ptr<LinearObjective> smallObjective(LossKind loss, int rows, int dim) {
    SyntheticSpec spec;
    spec.kind = loss == LossKind::Logistic ? "logistic" : "random";
    spec.rows = rows;
    spec.dim = dim;
    spec.seed = 5;
    spec.labelNoise = loss == LossKind::Logistic ? 0.0 : 0.1;
    const double l2 = loss == LossKind::Logistic ? 0.01 : 0.0;
    auto obj = std::make_shared<LinearObjective>(makeSynthetic(spec), loss, l2, 5);
    obj->optimum();
    obj->smoothness();
    return obj;
}

// Block `blk` of the gradient of batch `batch`'s loss at z, from the model's definition:
// (1/b) X_b^T (X_b z - y_b) for least squares, (1/b) X_b^T (sigmoid(X_b z) - y_b) + l2 z for
// logistic regression. Written out here, not through the objective's code, for the reference
// walks of the optimizer and corrector tests.
inline Eigen::VectorXd refBlockGradient(const LinearObjective& obj, int batch,
                                        const Eigen::VectorXd& z, const BlockRange& blk) {
    const int b = obj.batchSize();
    Eigen::VectorXd g = Eigen::VectorXd::Zero(blk.size);
    for (int i = 0; i < b; ++i) {
        const int row = batch * b + i;
        double a = 0.0;
        for (int c = 0; c < z.size(); ++c) a += obj.X()(row, c) * z[c];
        const double out = obj.loss() == LossKind::Logistic ? 1.0 / (1.0 + std::exp(-a)) : a;
        const double r = (out - obj.y()[row]) / b;
        for (int c = 0; c < blk.size; ++c) g[c] += obj.X()(row, blk.offset + c) * r;
    }
    if (obj.loss() == LossKind::Logistic) {
        for (int c = 0; c < blk.size; ++c) g[c] += obj.l2() * z[blk.offset + c];
    }
    return g;
}

}  // namespace pipelens::test

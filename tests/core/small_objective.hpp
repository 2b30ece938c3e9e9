#pragma once
// The small linear objective the replay tests run on: least squares on random data (label noise
// 0.1, no l2) or logistic regression (l2 = 0.01), data seed 5, batches of 5 rows, with f* and L
// computed once here so that the runs under test do not time them.
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

}  // namespace pipelens::test

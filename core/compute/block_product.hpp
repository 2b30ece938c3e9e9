#pragma once
// z += X(:, offset .. offset + size) * v: the incremental X*w update after every block update,
// the hottest product of a replay that logs f after each update.
#include <Eigen/Dense>

namespace pipelens {

// Bit-identical to `z.noalias() += X.middleCols(offset, size) * v` with Eigen 3.4: each row's
// sum runs over the block's columns in order, starting from 0, in Eigen's column groups (all
// columns when fewer than 128, else 16, or 4 for n >= 4000 rows), and each group's sum is added to
// z. Written out so it gets an AVX2 clone (no FMA, so the same roundings) on CPUs that have it,
// while core stays built for the baseline ISA.
void addBlockProduct(const Eigen::MatrixXd& X, Eigen::Index offset, Eigen::Index size,
                     const Eigen::VectorXd& v, Eigen::VectorXd& z);

}  // namespace pipelens

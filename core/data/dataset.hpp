#pragma once
// A data set as the readers and generators of data/ make it and the linear objectives take it.
#include <Eigen/Dense>
#include <string>

namespace pipelens {

struct Dataset {
    Eigen::MatrixXd X;  // n x d
    Eigen::VectorXd y;  // n
    std::string description;
};

}  // namespace pipelens

#pragma once
// Loading a user's data: NumPy .npy (float64/float32, C order), numeric CSV and LIBSVM files.
// Every failure is a DataError (IoError when writing) whose message names the file and says what
// is wrong with it.
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "objective/linear_objective.hpp"

namespace pipelens {

// 2-D array of dtype float64 or float32 (either byte order), C order. NPY format versions 1-3.
Eigen::MatrixXd loadNpyMatrix(const std::string& path);
// 1-D array (or an n x 1 one) of dtype float64 or float32.
Eigen::VectorXd loadNpyVector(const std::string& path);
// An array of any rank (float64 or float32), C order, as its shape and its values in order.
struct NpyArray {
    std::vector<std::int64_t> shape;
    std::vector<double> values;
};
NpyArray loadNpyArray(const std::string& path);
// float64 little-endian, C order, format version 1.0; written to path + ".tmp", then renamed.
void saveNpy(const std::string& path, const Eigen::MatrixXd& m);
void saveNpy(const std::string& path, const Eigen::VectorXd& v);  // 1-D

// X (n x d) and y (n) from two .npy files; their lengths must match.
Dataset loadNpyPair(const std::string& xPath, const std::string& yPath);

// Comma-separated numbers, one row per line; blank lines are skipped. A first line that is not
// all numbers is a header. labelColumn: 0-based index of the label, -1 for the last column; the
// other columns, in order, are X.
Dataset loadCsv(const std::string& path, int labelColumn = -1);
// X from one CSV (all columns) and y from a one-column CSV; either may have a header.
Dataset loadCsvPair(const std::string& xPath, const std::string& yPath);

// "label index:value ..." per line, 1-based indices, '#' starts a comment. dim = 0 takes the
// largest index seen. Labels become {0, 1}: {-1, +1} -> {0, 1}, {0, 1} kept, any other two
// values -> smaller 0 and larger 1; more than two distinct labels is a DataError.
Dataset loadLibsvm(const std::string& path, int dim = 0);

}  // namespace pipelens

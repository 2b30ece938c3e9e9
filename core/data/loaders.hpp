#pragma once
// Loading a user's data: NumPy .npy (float64/float32, C order), numeric CSV and LIBSVM files.
// Every failure is a DataError (IoError when writing, ResourceError when the data would not fit
// in memory) whose message names the file and says what is wrong with it; bytes of a bad file
// are quoted escaped, never raw.
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.hpp"

namespace pipelens {

// Called with the shape of the dense matrix X a loader is about to allocate; it throws to refuse
// (ResourceError). An empty check compares the matrix alone with memoryLimitBytes(); a run passes
// one that estimates the whole run.
using ShapeCheck = std::function<void(std::int64_t rows, std::int64_t cols)>;

// 2-D array of dtype float64 or float32 (either byte order), C order. NPY format versions 1-3.
Eigen::MatrixXd loadNpyMatrix(const std::string& path, const ShapeCheck& check = {});
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
Dataset loadNpyPair(const std::string& xPath, const std::string& yPath,
                    const ShapeCheck& check = {});

// Comma-separated numbers, one row per line (LF, CRLF or CR endings); blank lines are skipped. A
// first line that is not all numbers is a header. labelColumn: 0-based index of the label, -1
// for the last column; the other columns, in order, are X.
Dataset loadCsv(const std::string& path, int labelColumn = -1, const ShapeCheck& check = {});
// X from one CSV (all columns) and y from a one-column CSV; either may have a header.
Dataset loadCsvPair(const std::string& xPath, const std::string& yPath,
                    const ShapeCheck& check = {});

// "label index:value ..." per line, 1-based indices, '#' starts a comment. dim = 0 takes the
// largest index seen. Labels become {0, 1}: {-1, +1} -> {0, 1}, {0, 1} kept, any other two
// values -> smaller 0 and larger 1; more than two distinct labels is a DataError.
Dataset loadLibsvm(const std::string& path, int dim = 0, const ShapeCheck& check = {});

// The same readers on bytes in memory; `name` stands for the file in messages (fuzz targets).
Eigen::MatrixXd parseNpyMatrix(std::string_view bytes, const std::string& name,
                               const ShapeCheck& check = {});
Dataset parseCsv(std::string_view text, const std::string& name, int labelColumn = -1,
                 const ShapeCheck& check = {});
Dataset parseLibsvm(std::string_view text, const std::string& name, int dim = 0,
                    const ShapeCheck& check = {});

}  // namespace pipelens

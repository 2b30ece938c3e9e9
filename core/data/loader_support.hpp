#pragma once
// What the .npy, CSV and LIBSVM readers share: number parsing, line splitting (LF, CRLF or CR),
// opening files with a reason on failure, and short escaped excerpts of bad input.
#include <Eigen/Dense>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

#include "data/loaders.hpp"
#include "util/input_file.hpp"

namespace pipelens::data_detail {

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The path in quotes, control bytes escaped (showPath).
std::string quoted(const std::string& path);

// At most `maxChars` characters of `text`, quoted, with control bytes, quotes, backslashes and
// bytes >= 0x80 written as \xNN (never echo raw bytes of a bad file to a terminal).
std::string excerpt(std::string_view text, std::size_t maxChars = 40);

std::string_view trim(std::string_view s);

// The whole token must be a finite decimal number; a leading '+' is allowed.
bool parseDouble(std::string_view text, double& value);
bool parseIndex(std::string_view text, long long& value);

// Opens a data file for reading through InputFile (regular files only, reads capped by the
// memory limit); DataError naming the file and the reason otherwise.
std::unique_ptr<InputFileStream> openForReading(const std::string& path, const std::string& kind);

// Reads one line ending in "\n", "\r\n" or a lone "\r" (old Mac files) into `line`, without the
// ending. False at the end of the input.
bool readLine(std::istream& in, std::string& line);

// The default check before a dense n x d matrix of doubles is allocated.
void requireDenseMatrix(std::int64_t rows, std::int64_t cols, const std::string& what);

void checkLengths(const std::string& xPath, Eigen::Index n, const std::string& yPath,
                  Eigen::Index m);

}  // namespace pipelens::data_detail

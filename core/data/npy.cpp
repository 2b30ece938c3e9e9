// NumPy .npy files: reading (format versions 1-3, float64/float32, either byte order, C order)
// and writing (version 1.0, float64 little-endian).
#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "data/loader_support.hpp"
#include "data/loaders.hpp"
#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "util/file_target.hpp"

namespace pipelens {
namespace {

using namespace data_detail;

// ---------------------------------------------------------------------------------------------
// .npy

[[noreturn]] void npyFail(const std::string& path, const std::string& what) {
    throw DataError("npy file " + quoted(path) + ": " + what);
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) {
            text += ", ";
        }
        text += std::to_string(shape[i]);
    }
    if (shape.size() == 1) {
        text += ",";
    }
    return text + ")";
}

// The header is a Python dict literal such as
// {'descr': '<f8', 'fortran_order': False, 'shape': (80, 20), }
class NpyHeaderParser {
  public:
    NpyHeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

    void parse(std::string& descr, bool& fortranOrder, std::vector<std::int64_t>& shape) {
        bool haveDescr = false;
        bool haveOrder = false;
        bool haveShape = false;
        expect('{');
        while (true) {
            skipSpace();
            if (consume('}')) {
                break;
            }
            std::string key = parseString();
            expect(':');
            skipSpace();
            if (key == "descr") {
                if (peek() != '\'' && peek() != '"') {
                    fail(
                        "the dtype is structured or nested; only plain float64 ('<f8') or "
                        "float32 ('<f4') arrays are supported");
                }
                descr = parseString();
                haveDescr = true;
            } else if (key == "fortran_order") {
                fortranOrder = parseBool();
                haveOrder = true;
            } else if (key == "shape") {
                shape = parseShape();
                haveShape = true;
            } else {
                skipValue();
            }
            skipSpace();
            if (consume('}')) {
                break;
            }
            expect(',');
        }
        if (!haveDescr || !haveOrder || !haveShape) {
            fail("the header lacks one of 'descr', 'fortran_order', 'shape'");
        }
    }

  private:
    [[noreturn]] void fail(const std::string& what) const { npyFail(path_, "bad header: " + what); }
    void skipSpace() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
            ++pos_;
        }
    }
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    bool consume(char c) {
        skipSpace();
        if (peek() != c) {
            return false;
        }
        ++pos_;
        return true;
    }
    void expect(char c) {
        if (!consume(c)) {
            fail(std::string("expected '") + c + "' at character " + std::to_string(pos_));
        }
    }
    std::string parseString() {
        skipSpace();
        char quote = peek();
        if (quote != '\'' && quote != '"') {
            fail("expected a quoted string at character " + std::to_string(pos_));
        }
        std::size_t end = text_.find(quote, pos_ + 1);
        if (end == std::string_view::npos) {
            fail("unterminated string");
        }
        std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
        pos_ = end + 1;
        return value;
    }
    bool parseBool() {
        skipSpace();
        if (text_.substr(pos_, 4) == "True") {
            pos_ += 4;
            return true;
        }
        if (text_.substr(pos_, 5) == "False") {
            pos_ += 5;
            return false;
        }
        fail("'fortran_order' must be True or False");
    }
    std::vector<std::int64_t> parseShape() {
        expect('(');
        std::vector<std::int64_t> shape;
        while (true) {
            skipSpace();
            if (consume(')')) {
                break;
            }
            std::size_t start = pos_;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
                ++pos_;
            }
            std::int64_t value = 0;
            auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
            if (start == pos_ || ec != std::errc() || end != text_.data() + pos_) {
                fail("'shape' must be a tuple of non-negative integers");
            }
            // Python 2 era files may write long integers as 80L.
            if (peek() == 'L') {
                ++pos_;
            }
            shape.push_back(value);
            skipSpace();
            if (consume(')')) {
                break;
            }
            expect(',');
        }
        return shape;
    }
    void skipValue() {
        int depth = 0;
        while (pos_ < text_.size()) {
            char c = text_[pos_];
            if (c == '\'' || c == '"') {
                parseString();
                continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                ++depth;
            }
            if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) {
                    return;
                }
                --depth;
            }
            if (c == ',' && depth == 0) {
                return;
            }
            ++pos_;
        }
    }

    std::string_view text_;
    const std::string& path_;
    std::size_t pos_ = 0;
};

template <typename T>
void byteSwap(T& value) {
    auto* bytes = reinterpret_cast<unsigned char*>(&value);
    std::reverse(bytes, bytes + sizeof(T));
}

template <typename T>
std::vector<double> readValues(std::istream& in, std::uint64_t count, bool swap) {
    std::vector<T> raw(static_cast<std::size_t>(count));
    in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(count * sizeof(T)));
    if (swap) {
        for (T& value : raw) {
            byteSwap(value);
        }
    }
    if constexpr (std::is_same_v<T, double>) {
        return raw;
    } else {
        return std::vector<double>(raw.begin(), raw.end());
    }
}

// `fileSize` is the size of the whole input; `check` sees a 2-D shape before the data is read.
NpyArray readNpy(std::istream& in, std::uint64_t fileSize, const std::string& path,
                 const ShapeCheck& check) {
    unsigned char prefix[10] = {};
    in.read(reinterpret_cast<char*>(prefix), 8);
    if (in.gcount() < 8 || std::memcmp(prefix, "\x93NUMPY", 6) != 0) {
        npyFail(path, "bad magic: not a NumPy .npy file (it must start with \\x93NUMPY)");
    }
    const int major = prefix[6];
    std::uint64_t headerLength = 0;
    std::uint64_t prefixLength = 0;
    if (major == 1) {
        in.read(reinterpret_cast<char*>(prefix + 8), 2);
        if (in.gcount() < 2) {
            npyFail(path, "truncated header");
        }
        headerLength = prefix[8] | (static_cast<std::uint64_t>(prefix[9]) << 8);
        prefixLength = 10;
    } else if (major == 2 || major == 3) {
        unsigned char length[4] = {};
        in.read(reinterpret_cast<char*>(length), 4);
        if (in.gcount() < 4) {
            npyFail(path, "truncated header");
        }
        for (int i = 3; i >= 0; --i) {
            headerLength = (headerLength << 8) | length[i];
        }
        prefixLength = 12;
    } else {
        npyFail(path, "format version " + std::to_string(major) + "." + std::to_string(prefix[7]) +
                          " is not supported: 1.0, 2.0 or 3.0");
    }
    if (prefixLength + headerLength > fileSize) {
        npyFail(path, "truncated header: it claims " + std::to_string(headerLength) +
                          " bytes, the file has " + std::to_string(fileSize) + " in all");
    }
    std::string header(static_cast<std::size_t>(headerLength), '\0');
    in.read(header.data(), static_cast<std::streamsize>(headerLength));

    std::string descr;  // NOLINT: filled by the parser
    bool fortranOrder = false;
    std::vector<std::int64_t> shape;
    NpyHeaderParser(header, path).parse(descr, fortranOrder, shape);

    if (descr.size() != 3 || descr[1] != 'f' || (descr[2] != '8' && descr[2] != '4') ||
        std::string_view("<>=|").find(descr[0]) == std::string_view::npos) {
        npyFail(path, "dtype " + excerpt(descr) +
                          " is not supported: float64 ('<f8') or float32 ('<f4'); convert "
                          "with numpy: a.astype('<f8')");
    }
    if (fortranOrder) {
        npyFail(path,
                "the array is stored in Fortran (column-major) order, which is not "
                "supported: save np.ascontiguousarray(a) instead");
    }
    const bool fileLittle = descr[0] == '<' || ((descr[0] == '=' || descr[0] == '|') &&
                                                std::endian::native == std::endian::little);
    const bool swap = fileLittle != (std::endian::native == std::endian::little);
    const std::uint64_t itemSize = descr[2] == '8' ? 8 : 4;

    // Every extent must fit the engine's int dimensions, and an empty array holds nothing: a shape
    // such as (0, 10^11) has no bytes to check against the file but 10^11 columns to loop over.
    std::uint64_t count = 1;
    for (std::int64_t extent : shape) {
        if (extent > INT_MAX) {
            npyFail(path, "shape " + shapeText(shape) +
                              " has an extent above 2147483647, the largest PipeLens handles");
        }
        count = bytesFor(count, static_cast<std::uint64_t>(extent));
    }
    if (count == 0) {
        npyFail(path, "shape " + shapeText(shape) + " is empty: the array holds no numbers");
    }
    const std::uint64_t dataBytes = bytesFor(count, itemSize);
    const std::uint64_t available = fileSize - prefixLength - headerLength;
    const std::string dtypeName = itemSize == 8 ? "float64" : "float32";
    if (available < dataBytes) {
        npyFail(path, "truncated data: shape " + shapeText(shape) + " of " + dtypeName + " needs " +
                          std::to_string(dataBytes) + " bytes, the file has " +
                          std::to_string(available));
    }
    if (available > dataBytes) {
        npyFail(path, "has " + std::to_string(available - dataBytes) +
                          " unexpected bytes after the data of shape " + shapeText(shape));
    }

    if (shape.size() == 2 && check) {
        check(shape[0], shape[1]);
    } else {
        requireDenseMatrix(static_cast<std::int64_t>(count), 1, "npy file " + quoted(path));
    }
    NpyArray array;
    array.shape = shape;
    array.values =
        itemSize == 8 ? readValues<double>(in, count, swap) : readValues<float>(in, count, swap);
    if (!in) {
        npyFail(path, "reading the data failed");
    }
    return array;
}

void writeNpy(const std::string& path, const std::vector<std::int64_t>& shape, const double* data,
              std::size_t count) {
    std::string dict =
        "{'descr': '<f8', 'fortran_order': False, 'shape': " + shapeText(shape) + ", }";
    // Pad so that the data starts on a 64-byte boundary, as numpy does; the header ends in '\n'.
    std::size_t total = 10 + dict.size() + 1;
    dict.append((64 - total % 64) % 64, ' ');
    dict += '\n';

    const unsigned char prefix[10] = {0x93,
                                      'N',
                                      'U',
                                      'M',
                                      'P',
                                      'Y',
                                      1,
                                      0,
                                      static_cast<unsigned char>(dict.size() & 0xff),
                                      static_cast<unsigned char>(dict.size() >> 8)};
    std::vector<double> swapped;
    const double* values = data;
    if constexpr (std::endian::native != std::endian::little) {
        swapped.assign(data, data + count);
        for (double& value : swapped) byteSwap(value);
        values = swapped.data();
    }
    // The shared writer: a target that is not a regular file is refused, a link is written
    // through, errors carry the system's reason, the temporary never stays behind.
    replaceFileAtomically(path, {{reinterpret_cast<const char*>(prefix), sizeof prefix},
                                 {dict.data(), dict.size()},
                                 {reinterpret_cast<const char*>(values), count * sizeof(double)}});
}

NpyArray readNpyFile(const std::string& path, const ShapeCheck& check) {
    std::unique_ptr<InputFileStream> in = openForReading(path, "npy");
    // The size of the file opened (fstat), not of whatever the path names a moment later.
    return readNpy(*in, in->file().statSize(), path, check);
}

std::string nonFiniteName(double v) {
    if (std::isnan(v)) return "NaN";
    return v > 0 ? "inf" : "-inf";
}

// NaN or infinity anywhere is refused here, naming the file, the row and the column, rather
// than by the objective with no place to look.
void requireFinite(const NpyArray& array, const std::string& path) {
    const auto bad = std::find_if(array.values.begin(), array.values.end(),
                                  [](double v) { return !std::isfinite(v); });
    if (bad == array.values.end()) return;
    const auto at = static_cast<std::int64_t>(bad - array.values.begin());
    const std::int64_t cols = array.shape.size() == 2 ? array.shape[1] : 1;
    std::string where = "row " + std::to_string(at / cols);
    if (array.shape.size() == 2) where += ", column " + std::to_string(at % cols);
    npyFail(path, where + " (counting from 0) is " + nonFiniteName(*bad) +
                      ": the data must be finite numbers");
}

Eigen::MatrixXd toMatrix(const NpyArray& array, const std::string& path) {
    if (array.shape.size() != 2) {
        npyFail(path, "expected a 2-D array (a matrix), this one has shape " +
                          shapeText(array.shape) + " (" + std::to_string(array.shape.size()) +
                          "-D)");
    }
    requireFinite(array, path);
    return Eigen::Map<const RowMajorMatrix>(array.values.data(), array.shape[0], array.shape[1]);
}

ShapeCheck denseCheck(const ShapeCheck& check, const std::string& path) {
    if (check) return check;
    return [path](std::int64_t rows, std::int64_t cols) {
        requireDenseMatrix(rows, cols, "npy file " + quoted(path));
    };
}

}  // namespace

Eigen::MatrixXd loadNpyMatrix(const std::string& path, const ShapeCheck& check) {
    return toMatrix(readNpyFile(path, denseCheck(check, path)), path);
}

Eigen::MatrixXd parseNpyMatrix(std::string_view bytes, const std::string& name,
                               const ShapeCheck& check) {
    std::istringstream in{std::string(bytes)};
    return toMatrix(readNpy(in, bytes.size(), name, denseCheck(check, name)), name);
}

NpyArray loadNpyArray(const std::string& path) {
    return readNpyFile(path, {});
}

Eigen::VectorXd loadNpyVector(const std::string& path) {
    NpyArray array = readNpyFile(path, {});
    const bool column = array.shape.size() == 2 && array.shape[1] == 1;
    if (array.shape.size() != 1 && !column) {
        npyFail(path,
                "expected a 1-D array (or n x 1), this one has shape " + shapeText(array.shape));
    }
    requireFinite(array, path);
    return Eigen::Map<const Eigen::VectorXd>(array.values.data(), array.shape[0]);
}

void saveNpy(const std::string& path, const Eigen::MatrixXd& m) {
    RowMajorMatrix rowMajor = m;
    writeNpy(path, {static_cast<std::int64_t>(m.rows()), static_cast<std::int64_t>(m.cols())},
             rowMajor.data(), static_cast<std::size_t>(rowMajor.size()));
}

void saveNpy(const std::string& path, const Eigen::VectorXd& v) {
    writeNpy(path, {static_cast<std::int64_t>(v.size())}, v.data(),
             static_cast<std::size_t>(v.size()));
}

Dataset loadNpyPair(const std::string& xPath, const std::string& yPath, const ShapeCheck& check) {
    Dataset data;
    data.X = loadNpyMatrix(xPath, check);
    data.y = loadNpyVector(yPath);
    checkLengths(xPath, data.X.rows(), yPath, data.y.size());
    data.description = "X from " + quoted(xPath) + ", y from " + quoted(yPath) +
                       ": n = " + std::to_string(data.X.rows()) +
                       ", d = " + std::to_string(data.X.cols());
    return data;
}

}  // namespace pipelens

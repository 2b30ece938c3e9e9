#include "data/loaders.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "util/format_number.hpp"

namespace pipelens {
namespace {

namespace fs = std::filesystem;

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Dense matrices above this many entries (16 GiB of doubles) are refused with a clear message
// instead of an allocation failure.
constexpr std::uint64_t kMaxEntries = std::uint64_t{1} << 31;

std::string quoted(const std::string& path) {
    return "'" + path + "'";
}

std::string_view trim(std::string_view s) {
    const char* space = " \t\r\n\v\f";
    std::size_t first = s.find_first_not_of(space);
    if (first == std::string_view::npos) {
        return {};
    }
    std::size_t last = s.find_last_not_of(space);
    return s.substr(first, last - first + 1);
}

// The whole token must be a finite decimal number; a leading '+' is allowed (from_chars rejects
// it).
bool parseDouble(std::string_view text, double& value) {
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
        if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
            return false;
        }
    }
    if (text.empty()) {
        return false;
    }
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

bool parseIndex(std::string_view text, long long& value) {
    if (text.empty()) {
        return false;
    }
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

// Opens a data file for reading, telling "missing" apart from "unreadable".
std::ifstream openForReading(const std::string& path, const std::string& kind, bool binary) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        throw DataError(kind + " file " + quoted(path) + " does not exist");
    }
    if (fs::is_directory(path, ec)) {
        throw DataError(kind + " file " + quoted(path) + " is a directory, not a file");
    }
    std::ifstream in(path, binary ? std::ios::binary : std::ios::in);
    if (!in) {
        throw DataError(kind + " file " + quoted(path) +
                        " cannot be opened: " + std::strerror(errno));
    }
    return in;
}

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
std::vector<double> readValues(std::ifstream& in, std::uint64_t count, bool swap) {
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

NpyArray readNpy(const std::string& path) {
    std::ifstream in = openForReading(path, "npy", true);
    std::error_code ec;
    const std::uint64_t fileSize = fs::file_size(path, ec);
    if (ec) {
        npyFail(path, "cannot read its size: " + ec.message());
    }

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

    std::string descr;
    bool fortranOrder = false;
    std::vector<std::int64_t> shape;
    NpyHeaderParser(header, path).parse(descr, fortranOrder, shape);

    if (descr.size() != 3 || descr[1] != 'f' || (descr[2] != '8' && descr[2] != '4') ||
        std::string_view("<>=|").find(descr[0]) == std::string_view::npos) {
        npyFail(path, "dtype '" + descr +
                          "' is not supported: float64 ('<f8') or float32 ('<f4'); convert "
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

    std::uint64_t count = 1;
    for (std::int64_t extent : shape) {
        if (extent != 0 && count > kMaxEntries / static_cast<std::uint64_t>(extent)) {
            npyFail(path, "shape " + shapeText(shape) + " is too large to load");
        }
        count *= static_cast<std::uint64_t>(extent);
    }
    if (count > kMaxEntries) {
        npyFail(path, "shape " + shapeText(shape) + " is too large to load");
    }
    const std::uint64_t dataBytes = count * itemSize;
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

    const std::string tmp = path + ".tmp";
    auto failWrite = [&](const std::string& what) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw IoError("cannot write npy file " + quoted(path) + ": " + what);
    };
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) {
            failWrite("cannot create " + quoted(tmp) + ": " + std::strerror(errno));
        }
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
        out.write(reinterpret_cast<const char*>(prefix), 10);
        out.write(dict.data(), static_cast<std::streamsize>(dict.size()));
        if constexpr (std::endian::native == std::endian::little) {
            out.write(reinterpret_cast<const char*>(data),
                      static_cast<std::streamsize>(count * sizeof(double)));
        } else {
            for (std::size_t i = 0; i < count; ++i) {
                double value = data[i];
                byteSwap(value);
                out.write(reinterpret_cast<const char*>(&value), sizeof(double));
            }
        }
        out.close();
        if (!out) {
            failWrite("writing " + quoted(tmp) + " failed (disk full?)");
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        failWrite("renaming " + quoted(tmp) + " failed: " + ec.message());
    }
}

// ---------------------------------------------------------------------------------------------
// CSV

struct CsvTable {
    std::vector<double> values;  // row by row
    Eigen::Index rows = 0;
    Eigen::Index cols = 0;
};

[[noreturn]] void csvFail(const std::string& path, long line, const std::string& what) {
    throw DataError("CSV file " + quoted(path) + ", line " + std::to_string(line) + ": " + what);
}

std::vector<std::string_view> splitCells(std::string_view line) {
    std::vector<std::string_view> cells;
    std::size_t start = 0;
    while (true) {
        std::size_t comma = line.find(',', start);
        if (comma == std::string_view::npos) {
            cells.push_back(line.substr(start));
            return cells;
        }
        cells.push_back(line.substr(start, comma - start));
        start = comma + 1;
    }
}

std::string_view unquote(std::string_view cell) {
    cell = trim(cell);
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
        cell = trim(cell.substr(1, cell.size() - 2));
    }
    return cell;
}

CsvTable readCsv(const std::string& path) {
    std::ifstream in = openForReading(path, "CSV", false);
    CsvTable table;
    std::string line;
    long lineNumber = 0;
    bool first = true;
    std::vector<double> row;
    while (std::getline(in, line)) {
        ++lineNumber;
        std::string_view view(line);
        if (lineNumber == 1 && view.substr(0, 3) == "\xEF\xBB\xBF") {
            view.remove_prefix(3);
        }
        if (trim(view).empty()) {
            continue;
        }
        std::vector<std::string_view> cells = splitCells(view);

        row.clear();
        std::size_t badColumn = 0;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            double value = 0.0;
            if (!parseDouble(unquote(cells[c]), value)) {
                badColumn = c + 1;
                break;
            }
            row.push_back(value);
        }
        if (first) {
            table.cols = static_cast<Eigen::Index>(cells.size());
            first = false;
            if (badColumn != 0) {
                continue;  // a header line
            }
        }
        if (static_cast<Eigen::Index>(cells.size()) != table.cols) {
            csvFail(path, lineNumber,
                    "has " + std::to_string(cells.size()) + " columns, the first line has " +
                        std::to_string(table.cols) + " (every row must have the same width)");
        }
        if (badColumn != 0) {
            std::string cell(trim(cells[badColumn - 1]));
            throw DataError("CSV file " + quoted(path) + ", line " + std::to_string(lineNumber) +
                            ", column " + std::to_string(badColumn) + ": " +
                            (cell.empty() ? std::string("empty cell")
                                          : "'" + cell + "' is not a finite number"));
        }
        if (static_cast<std::uint64_t>(table.values.size() + row.size()) > kMaxEntries) {
            csvFail(path, lineNumber, "the file is too large to load");
        }
        table.values.insert(table.values.end(), row.begin(), row.end());
        ++table.rows;
    }
    if (in.bad()) {
        throw DataError("CSV file " + quoted(path) + ": reading failed");
    }
    if (table.rows == 0) {
        throw DataError("CSV file " + quoted(path) + " has no data rows");
    }
    return table;
}

RowMajorMatrix toMatrix(const CsvTable& table) {
    return Eigen::Map<const RowMajorMatrix>(table.values.data(), table.rows, table.cols);
}

void checkLengths(const std::string& xPath, Eigen::Index n, const std::string& yPath,
                  Eigen::Index m) {
    if (n != m) {
        throw DataError("X has " + std::to_string(n) + " rows, y has " + std::to_string(m) +
                        " entries (X from " + quoted(xPath) + ", y from " + quoted(yPath) +
                        "): they must match");
    }
}

// ---------------------------------------------------------------------------------------------
// LIBSVM

[[noreturn]] void libsvmFail(const std::string& path, long line, const std::string& what) {
    throw DataError("LIBSVM file " + quoted(path) + ", line " + std::to_string(line) + ": " + what);
}

struct SparseEntry {
    Eigen::Index row;
    Eigen::Index col;  // 0-based
    double value;
};

}  // namespace

Eigen::MatrixXd loadNpyMatrix(const std::string& path) {
    NpyArray array = readNpy(path);
    if (array.shape.size() != 2) {
        npyFail(path, "expected a 2-D array (a matrix), this one has shape " +
                          shapeText(array.shape) + " (" + std::to_string(array.shape.size()) +
                          "-D)");
    }
    return Eigen::Map<const RowMajorMatrix>(array.values.data(), array.shape[0], array.shape[1]);
}

NpyArray loadNpyArray(const std::string& path) { return readNpy(path); }

Eigen::VectorXd loadNpyVector(const std::string& path) {
    NpyArray array = readNpy(path);
    const bool column = array.shape.size() == 2 && array.shape[1] == 1;
    if (array.shape.size() != 1 && !column) {
        npyFail(path,
                "expected a 1-D array (or n x 1), this one has shape " + shapeText(array.shape));
    }
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

Dataset loadNpyPair(const std::string& xPath, const std::string& yPath) {
    Dataset data;
    data.X = loadNpyMatrix(xPath);
    data.y = loadNpyVector(yPath);
    checkLengths(xPath, data.X.rows(), yPath, data.y.size());
    data.description = "X from " + quoted(xPath) + ", y from " + quoted(yPath) +
                       ": n = " + std::to_string(data.X.rows()) +
                       ", d = " + std::to_string(data.X.cols());
    return data;
}

Dataset loadCsv(const std::string& path, int labelColumn) {
    CsvTable table = readCsv(path);
    if (table.cols < 2) {
        throw DataError("CSV file " + quoted(path) + " has " + std::to_string(table.cols) +
                        " column; it needs at least 2 (features and a label)");
    }
    if (labelColumn < -1 || labelColumn >= table.cols) {
        throw ConfigError("label_column = " + std::to_string(labelColumn) +
                          " is not allowed: -1 (the last column) or 0.." +
                          std::to_string(table.cols - 1) + " for CSV file " + quoted(path) +
                          " with " + std::to_string(table.cols) + " columns");
    }
    const Eigen::Index label = labelColumn == -1 ? table.cols - 1 : labelColumn;
    RowMajorMatrix all = toMatrix(table);
    Dataset data;
    data.y = all.col(label);
    data.X.resize(table.rows, table.cols - 1);
    data.X.leftCols(label) = all.leftCols(label);
    data.X.rightCols(table.cols - 1 - label) = all.rightCols(table.cols - 1 - label);
    data.description = "CSV " + quoted(path) + ": n = " + std::to_string(data.X.rows()) +
                       ", d = " + std::to_string(data.X.cols()) + ", label column " +
                       std::to_string(label);
    return data;
}

Dataset loadCsvPair(const std::string& xPath, const std::string& yPath) {
    CsvTable xTable = readCsv(xPath);
    CsvTable yTable = readCsv(yPath);
    if (yTable.cols != 1) {
        throw DataError("CSV file " + quoted(yPath) + " holds y and must have one column; it has " +
                        std::to_string(yTable.cols));
    }
    checkLengths(xPath, xTable.rows, yPath, yTable.rows);
    Dataset data;
    data.X = toMatrix(xTable);
    data.y = Eigen::Map<const Eigen::VectorXd>(yTable.values.data(), yTable.rows);
    data.description = "X from CSV " + quoted(xPath) + ", y from CSV " + quoted(yPath) +
                       ": n = " + std::to_string(data.X.rows()) +
                       ", d = " + std::to_string(data.X.cols());
    return data;
}

Dataset loadLibsvm(const std::string& path, int dim) {
    if (dim < 0) {
        throw ConfigError("dim = " + std::to_string(dim) +
                          " is not allowed: 0 (the largest feature index in the file) or an "
                          "integer >= 1");
    }
    std::ifstream in = openForReading(path, "LIBSVM", false);
    std::vector<double> labels;
    std::vector<SparseEntry> entries;
    std::vector<long long> rowIndices;
    long long maxIndex = 0;
    std::string line;
    long lineNumber = 0;
    while (std::getline(in, line)) {
        ++lineNumber;
        std::string_view view(line);
        if (std::size_t hash = view.find('#'); hash != std::string_view::npos) {
            view = view.substr(0, hash);
        }
        view = trim(view);
        if (view.empty()) {
            continue;
        }

        std::istringstream tokens{std::string(view)};
        std::string token;
        tokens >> token;
        double label = 0.0;
        if (!parseDouble(token, label)) {
            libsvmFail(path, lineNumber, "label '" + token + "' is not a finite number");
        }
        const auto row = static_cast<Eigen::Index>(labels.size());
        labels.push_back(label);
        rowIndices.clear();
        while (tokens >> token) {
            std::size_t colon = token.find(':');
            long long index = 0;
            double value = 0.0;
            if (colon == std::string::npos ||
                !parseIndex(std::string_view(token).substr(0, colon), index) || index < 1 ||
                !parseDouble(std::string_view(token).substr(colon + 1), value)) {
                libsvmFail(path, lineNumber,
                           "bad token '" + token +
                               "': expected index:value with a 1-based integer index and a "
                               "finite number");
            }
            if (dim > 0 && index > dim) {
                libsvmFail(path, lineNumber,
                           "feature index " + std::to_string(index) +
                               " exceeds dim = " + std::to_string(dim));
            }
            if (index > std::numeric_limits<int>::max()) {
                libsvmFail(path, lineNumber,
                           "feature index " + std::to_string(index) + " is too large");
            }
            rowIndices.push_back(index);
            maxIndex = std::max(maxIndex, index);
            entries.push_back({row, static_cast<Eigen::Index>(index - 1), value});
        }
        std::sort(rowIndices.begin(), rowIndices.end());
        auto duplicate = std::adjacent_find(rowIndices.begin(), rowIndices.end());
        if (duplicate != rowIndices.end()) {
            libsvmFail(path, lineNumber,
                       "feature index " + std::to_string(*duplicate) + " appears twice");
        }
    }
    if (in.bad()) {
        throw DataError("LIBSVM file " + quoted(path) + ": reading failed");
    }
    if (labels.empty()) {
        throw DataError("LIBSVM file " + quoted(path) + " has no data rows");
    }
    const Eigen::Index n = static_cast<Eigen::Index>(labels.size());
    const Eigen::Index d = dim > 0 ? dim : static_cast<Eigen::Index>(maxIndex);
    if (d == 0) {
        throw DataError("LIBSVM file " + quoted(path) +
                        " has no features (every row is a label only); set dim");
    }
    if (static_cast<std::uint64_t>(n) > kMaxEntries / static_cast<std::uint64_t>(d)) {
        throw DataError("LIBSVM file " + quoted(path) + ": n = " + std::to_string(n) +
                        " rows x d = " + std::to_string(d) +
                        " features is too large to hold as a dense matrix");
    }

    // Map the labels onto {0, 1}.
    std::set<double> distinct(labels.begin(), labels.end());
    std::map<double, double> mapping;
    std::string mappingText;
    const bool zeroOne = std::all_of(distinct.begin(), distinct.end(),
                                     [](double v) { return v == 0.0 || v == 1.0; });
    const bool plusMinus = std::all_of(distinct.begin(), distinct.end(),
                                       [](double v) { return v == -1.0 || v == 1.0; });
    if (zeroOne) {
        for (double v : distinct) {
            mapping[v] = v;
        }
        mappingText = "labels {0, 1}";
    } else if (plusMinus) {
        mapping = {{-1.0, 0.0}, {1.0, 1.0}};
        mappingText = "labels {-1, +1} mapped to {0, 1}";
    } else if (distinct.size() == 2) {
        mapping[*distinct.begin()] = 0.0;
        mapping[*distinct.rbegin()] = 1.0;
        mappingText = "labels {" + formatNumber(*distinct.begin()) + ", " +
                      formatNumber(*distinct.rbegin()) + "} mapped to {0, 1}";
    } else {
        std::string values;
        int shown = 0;
        for (double v : distinct) {
            if (shown++ == 5) {
                values += ", ...";
                break;
            }
            values += (values.empty() ? "" : ", ") + formatNumber(v);
        }
        throw DataError("LIBSVM file " + quoted(path) + " has " + std::to_string(distinct.size()) +
                        " distinct labels {" + values +
                        "}: binary classification needs two ({-1, +1}, {0, 1} or any two values)");
    }

    Dataset data;
    data.X = Eigen::MatrixXd::Zero(n, d);
    for (const SparseEntry& e : entries) {
        data.X(e.row, e.col) = e.value;
    }
    data.y.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        data.y[i] = mapping.at(labels[static_cast<std::size_t>(i)]);
    }
    data.description = "LIBSVM " + quoted(path) + ": n = " + std::to_string(n) +
                       ", d = " + std::to_string(d) + ", " + mappingText;
    return data;
}

}  // namespace pipelens

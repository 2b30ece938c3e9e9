// LIBSVM files: sparse "label index:value ..." rows made dense, labels mapped onto {0, 1}.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "data/loader_support.hpp"
#include "data/loaders.hpp"
#include "errors.hpp"
#include "util/format_number.hpp"

namespace pipelens {
namespace {

using namespace data_detail;

[[noreturn]] void libsvmFail(const std::string& path, long line, const std::string& what) {
    throw DataError("LIBSVM file " + quoted(path) + ", line " + std::to_string(line) + ": " + what);
}

struct SparseEntry {
    Eigen::Index row;
    Eigen::Index col;  // 0-based
    double value;
};

// The file's rows as read: labels and the nonzero entries, checked token by token.
struct SparseRows {
    std::vector<double> labels;
    std::vector<SparseEntry> entries;
    long long maxIndex = 0;
};

// One data line (comments and blanks already removed) appended to `rows`.
void parseLibsvmLine(std::string_view view, const std::string& path, long lineNumber, int dim,
                     SparseRows& rows) {
    std::istringstream tokens{std::string(view)};
    std::string token;
    tokens >> token;
    double label = 0.0;
    if (!parseDouble(token, label)) {
        libsvmFail(path, lineNumber, "label " + excerpt(token) + " is not a finite number");
    }
    const auto row = static_cast<Eigen::Index>(rows.labels.size());
    rows.labels.push_back(label);
    std::vector<long long> indices;
    while (tokens >> token) {
        std::size_t colon = token.find(':');
        long long index = 0;
        double value = 0.0;
        if (colon == std::string::npos ||
            !parseIndex(std::string_view(token).substr(0, colon), index) || index < 1 ||
            !parseDouble(std::string_view(token).substr(colon + 1), value)) {
            libsvmFail(path, lineNumber,
                       "bad token " + excerpt(token) +
                           ": expected index:value with a 1-based integer index and a "
                           "finite number");
        }
        if (dim > 0 && index > dim) {
            libsvmFail(
                path, lineNumber,
                "feature index " + std::to_string(index) + " exceeds dim = " + std::to_string(dim));
        }
        if (index > std::numeric_limits<int>::max()) {
            libsvmFail(path, lineNumber,
                       "feature index " + std::to_string(index) + " is too large");
        }
        indices.push_back(index);
        rows.maxIndex = std::max(rows.maxIndex, index);
        rows.entries.push_back({row, static_cast<Eigen::Index>(index - 1), value});
    }
    std::sort(indices.begin(), indices.end());
    auto duplicate = std::adjacent_find(indices.begin(), indices.end());
    if (duplicate != indices.end()) {
        libsvmFail(path, lineNumber,
                   "feature index " + std::to_string(*duplicate) + " appears twice");
    }
}

SparseRows readSparseRows(std::istream& in, const std::string& path, int dim) {
    SparseRows rows;
    std::string line;
    long lineNumber = 0;
    while (readLine(in, line)) {
        ++lineNumber;
        std::string_view view(line);
        if (std::size_t hash = view.find('#'); hash != std::string_view::npos) {
            view = view.substr(0, hash);
        }
        view = trim(view);
        if (!view.empty()) parseLibsvmLine(view, path, lineNumber, dim, rows);
    }
    if (in.bad()) {
        throw DataError("LIBSVM file " + quoted(path) + ": reading failed");
    }
    if (rows.labels.empty()) {
        throw DataError("LIBSVM file " + quoted(path) + " has no data rows");
    }
    return rows;
}

// The labels onto {0, 1}: {0, 1} as they are, {-1, +1} and any other two values in order; more
// than two values are refused (binary classification). `text` says which mapping was used.
std::map<double, double> binaryLabels(const std::vector<double>& labels, const std::string& path,
                                      std::string& text) {
    std::set<double> distinct(labels.begin(), labels.end());
    std::map<double, double> mapping;
    const bool zeroOne = std::all_of(distinct.begin(), distinct.end(),
                                     [](double v) { return v == 0.0 || v == 1.0; });
    const bool plusMinus = std::all_of(distinct.begin(), distinct.end(),
                                       [](double v) { return v == -1.0 || v == 1.0; });
    if (zeroOne) {
        for (double v : distinct) {
            mapping[v] = v;
        }
        text = "labels {0, 1}";
    } else if (plusMinus) {
        mapping = {{-1.0, 0.0}, {1.0, 1.0}};
        text = "labels {-1, +1} mapped to {0, 1}";
    } else if (distinct.size() == 2) {
        mapping[*distinct.begin()] = 0.0;
        mapping[*distinct.rbegin()] = 1.0;
        text = "labels {" + formatNumber(*distinct.begin()) + ", " +
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
    return mapping;
}

Dataset readLibsvm(std::istream& in, const std::string& path, int dim, const ShapeCheck& check) {
    const SparseRows rows = readSparseRows(in, path, dim);
    const Eigen::Index n = static_cast<Eigen::Index>(rows.labels.size());
    const Eigen::Index d = dim > 0 ? dim : static_cast<Eigen::Index>(rows.maxIndex);
    if (d == 0) {
        throw DataError("LIBSVM file " + quoted(path) +
                        " has no features (every row is a label only); set dim");
    }
    if (check) {
        check(n, d);
    } else {
        requireDenseMatrix(n, d, "LIBSVM file " + quoted(path));
    }
    std::string mappingText;
    const std::map<double, double> mapping = binaryLabels(rows.labels, path, mappingText);

    Dataset data;
    data.X = Eigen::MatrixXd::Zero(n, d);
    for (const SparseEntry& e : rows.entries) {
        data.X(e.row, e.col) = e.value;
    }
    data.y.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        data.y[i] = mapping.at(rows.labels[static_cast<std::size_t>(i)]);
    }
    data.description = "LIBSVM " + quoted(path) + ": n = " + std::to_string(n) +
                       ", d = " + std::to_string(d) + ", " + mappingText;
    return data;
}

}  // namespace

Dataset loadLibsvm(const std::string& path, int dim, const ShapeCheck& check) {
    if (dim < 0) {
        throw ConfigError("dim = " + std::to_string(dim) +
                          " is not allowed: 0 (the largest feature index in the file) or an "
                          "integer >= 1");
    }
    std::unique_ptr<std::istream> in = openForReading(path, "LIBSVM");
    return readLibsvm(*in, path, dim, check);
}

Dataset parseLibsvm(std::string_view text, const std::string& name, int dim,
                    const ShapeCheck& check) {
    std::istringstream in{std::string(text)};
    return readLibsvm(in, name, std::max(dim, 0), check);
}

}  // namespace pipelens

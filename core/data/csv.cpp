// Numeric CSV files: one row per line, an optional header line, X and y from one table or two.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <vector>

#include "data/loader_support.hpp"
#include "data/loaders.hpp"
#include "errors.hpp"

namespace pipelens {
namespace {

using namespace data_detail;

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

bool anyNumber(const std::vector<std::string_view>& cells) {
    double value = 0.0;
    return std::any_of(cells.begin(), cells.end(),
                       [&](std::string_view cell) { return parseDouble(unquote(cell), value); });
}

CsvTable readCsv(std::istream& in, const std::string& path) {
    CsvTable table;
    std::string line;
    long lineNumber = 0;
    bool first = true;
    std::vector<double> row;
    while (readLine(in, line)) {
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
        const bool firstRow = first;
        if (first) {
            table.cols = static_cast<Eigen::Index>(cells.size());
            first = false;
            // A header only when none of its cells is a number: a first row of numbers with
            // one bad cell ("nan", a typo) is a broken data row, not a header to skip silently.
            if (badColumn != 0 && !anyNumber(cells)) {
                continue;  // a header line
            }
        }
        if (static_cast<Eigen::Index>(cells.size()) != table.cols) {
            csvFail(path, lineNumber,
                    "has " + std::to_string(cells.size()) + " columns, the first line has " +
                        std::to_string(table.cols) + " (every row must have the same width)");
        }
        if (badColumn != 0) {
            std::string_view cell = trim(cells[badColumn - 1]);
            throw DataError("CSV file " + quoted(path) + ", line " + std::to_string(lineNumber) +
                            ", column " + std::to_string(badColumn) + ": " +
                            (cell.empty() ? std::string("empty cell")
                                          : excerpt(cell) + " is not a finite number") +
                            (firstRow ? " (the first row also holds numbers, so it is not a "
                                        "header: a header has no number in it)"
                                      : ""));
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

CsvTable readCsvFile(const std::string& path) {
    std::unique_ptr<std::istream> in = openForReading(path, "CSV");
    return readCsv(*in, path);
}

RowMajorMatrix toMatrix(const CsvTable& table) {
    return Eigen::Map<const RowMajorMatrix>(table.values.data(), table.rows, table.cols);
}

void checkShape(const ShapeCheck& check, const std::string& path, Eigen::Index rows,
                Eigen::Index cols) {
    if (check) {
        check(rows, cols);
    } else {
        requireDenseMatrix(rows, cols, "CSV file " + quoted(path));
    }
}

Dataset splitLabel(const CsvTable& table, const std::string& path, int labelColumn,
                   const ShapeCheck& check) {
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
    checkShape(check, path, table.rows, table.cols - 1);
    const Eigen::Index label = labelColumn == -1 ? table.cols - 1 : labelColumn;
    Dataset data;
    auto all = Eigen::Map<const RowMajorMatrix>(table.values.data(), table.rows, table.cols);
    data.y = all.col(label);
    data.X.resize(table.rows, table.cols - 1);
    data.X.leftCols(label) = all.leftCols(label);
    data.X.rightCols(table.cols - 1 - label) = all.rightCols(table.cols - 1 - label);
    data.description = "CSV " + quoted(path) + ": n = " + std::to_string(data.X.rows()) +
                       ", d = " + std::to_string(data.X.cols()) + ", label column " +
                       std::to_string(label);
    return data;
}

}  // namespace

Dataset loadCsv(const std::string& path, int labelColumn, const ShapeCheck& check) {
    return splitLabel(readCsvFile(path), path, labelColumn, check);
}

Dataset parseCsv(std::string_view text, const std::string& name, int labelColumn,
                 const ShapeCheck& check) {
    std::istringstream in{std::string(text)};
    return splitLabel(readCsv(in, name), name, labelColumn, check);
}

Dataset loadCsvPair(const std::string& xPath, const std::string& yPath, const ShapeCheck& check) {
    CsvTable xTable = readCsvFile(xPath);
    CsvTable yTable = readCsvFile(yPath);
    if (yTable.cols != 1) {
        throw DataError("CSV file " + quoted(yPath) + " holds y and must have one column; it has " +
                        std::to_string(yTable.cols));
    }
    checkLengths(xPath, xTable.rows, yPath, yTable.rows);
    checkShape(check, xPath, xTable.rows, xTable.cols);
    Dataset data;
    data.X = toMatrix(xTable);
    data.y = Eigen::Map<const Eigen::VectorXd>(yTable.values.data(), yTable.rows);
    data.description = "X from CSV " + quoted(xPath) + ", y from CSV " + quoted(yPath) +
                       ": n = " + std::to_string(data.X.rows()) +
                       ", d = " + std::to_string(data.X.cols());
    return data;
}

}  // namespace pipelens

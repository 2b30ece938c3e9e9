#pragma once
// A strict RFC 4180 reader for the tests (records end with LF, as PipeLens writes them): a
// quoted field ends at a lone '"' that a ',' or LF follows; an unquoted field holds no '"' and no
// CR; every record, the last included, ends with LF. Anything else is malformed: nullopt.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace csvtest {

using Rows = std::vector<std::vector<std::string>>;

inline std::optional<Rows> readStrict(std::string_view text) {
    Rows rows;
    std::vector<std::string> row;
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n) {
        std::string cell;
        if (text[i] == '"') {
            ++i;
            for (;;) {
                if (i >= n) return std::nullopt;  // unterminated quote
                if (text[i] == '"') {
                    if (i + 1 < n && text[i + 1] == '"') {
                        cell.push_back('"');
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                cell.push_back(text[i++]);
            }
            if (i >= n || (text[i] != ',' && text[i] != '\n')) return std::nullopt;
        } else {
            while (i < n && text[i] != ',' && text[i] != '\n') {
                if (text[i] == '"' || text[i] == '\r') return std::nullopt;
                cell.push_back(text[i++]);
            }
            if (i >= n) return std::nullopt;  // the last record has no LF
        }
        row.push_back(std::move(cell));
        if (text[i] == '\n') {
            rows.push_back(std::move(row));
            row.clear();
        }
        ++i;
    }
    if (!row.empty() || (n > 0 && text[n - 1] == ',')) return std::nullopt;  // "a," at the end
    return rows;
}

}  // namespace csvtest

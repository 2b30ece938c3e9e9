#include "data/loader_support.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "util/input_file.hpp"

namespace pipelens::data_detail {

std::string quoted(const std::string& path) {
    return showPath(path);
}

std::string excerpt(std::string_view text, std::size_t maxChars) {
    // Appended, not "'" + escapeBytes(...): GCC 12 reports a false -Wrestrict on
    // operator+(const char*, std::string&&) at -O3, which CI's -Werror build turns into an error.
    std::string out = "'";
    out += escapeBytes(text, maxChars);
    out += '\'';
    if (text.size() > maxChars) {
        out += " (" + std::to_string(text.size()) + " bytes, first " + std::to_string(maxChars) +
               " shown)";
    }
    return out;
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

bool parseDouble(std::string_view text, double& value) {
    // from_chars rejects a leading '+'; accept one, but not "+-1" or "++1".
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

std::unique_ptr<InputFileStream> openForReading(const std::string& path, const std::string& kind) {
    // Never blocks (a FIFO is refused) and never reads without end (a device is refused, and a
    // file growing while read stops at the memory limit).
    const std::uint64_t limit = memoryLimitBytes();
    return std::make_unique<InputFileStream>(
        path, kind + " file", &throwAs<DataError>, limit,
        "more than the " + formatBytes(limit) + " of memory PipeLens may use");
}

bool readLine(std::istream& in, std::string& line) {
    line.clear();
    std::streambuf* buf = in.rdbuf();
    bool any = false;
    for (;;) {
        const int c = buf->sbumpc();
        if (c == std::char_traits<char>::eof()) {
            if (!any) in.setstate(std::ios::eofbit);
            return any;
        }
        any = true;
        if (c == '\n') return true;
        if (c == '\r') {
            if (buf->sgetc() == '\n') buf->sbumpc();
            return true;
        }
        line.push_back(static_cast<char>(c));
    }
}

void requireDenseMatrix(std::int64_t rows, std::int64_t cols, const std::string& what) {
    requireMemory(
        bytesFor(static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols),
                 sizeof(double)),
        what + " (n = " + std::to_string(rows) + " x d = " + std::to_string(cols) + " doubles)");
}

void checkLengths(const std::string& xPath, Eigen::Index n, const std::string& yPath,
                  Eigen::Index m) {
    if (n != m) {
        throw DataError("X has " + std::to_string(n) + " rows, y has " + std::to_string(m) +
                        " entries (X from " + quoted(xPath) + ", y from " + quoted(yPath) +
                        "): they must match");
    }
}

}  // namespace pipelens::data_detail

#pragma once
// The one way PipeLens writes a CSV file (results tables, timelines, delays, sweep summaries,
// figure data, `pipelens-cli schedule`). Cells are added left to right; the writer puts the
// commas and ends rows with '\n'.
//
// The rule (docs/results.md): RFC 4180 quoting, a cell holding '"', ',', CR or LF is written in
// double quotes with inner quotes doubled; label() cells are always quoted (method labels, as
// PipeLens has always written them). A TEXT cell that starts with '=', '+', '-', '@', tab or CR
// gets a leading apostrophe ('=SUM(A1) is written '=SUM(A1)) so that a spreadsheet shows it
// instead of running it as a formula. Numbers are never changed: -1.5 stays -1.5.
#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <utility>

#include "util/format_number.hpp"

namespace pipelens {

namespace csv {

// True when a text cell is written with a leading apostrophe (the formula guard).
inline bool needsFormulaGuard(std::string_view s) {
    if (s.empty()) return false;
    const char c = s.front();
    return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

// True when RFC 4180 requires the cell in double quotes.
inline bool needsQuotes(std::string_view s) {
    return s.find_first_of("\",\r\n") != std::string_view::npos;
}

// The text a strict CSV reader gets back for a text cell `s`: `s` itself, or `'` + `s` when
// the formula guard applies.
inline std::string guarded(std::string_view s) {
    std::string out;
    if (needsFormulaGuard(s)) out.push_back('\'');
    out.append(s);
    return out;
}

// Appends one text cell (no separator); `alwaysQuote` quotes it even when RFC 4180 does not ask.
inline void appendText(std::string& out, std::string_view s, bool alwaysQuote) {
    const bool guard = needsFormulaGuard(s);
    const bool quote = alwaysQuote || needsQuotes(s);
    if (quote) out.push_back('"');
    if (guard) out.push_back('\'');
    for (char c : s) {
        if (c == '"' && quote) out.push_back('"');
        out.push_back(c);
    }
    if (quote) out.push_back('"');
}

// One text cell on its own (for code that builds a line by other means).
inline std::string textCell(std::string_view s) {
    std::string out;
    appendText(out, s, false);
    return out;
}

// One label cell on its own: always in double quotes, formula-guarded.
inline std::string labelCell(std::string_view s) {
    std::string out;
    appendText(out, s, true);
    return out;
}

}  // namespace csv

class CsvWriter {
  public:
    // A text cell: quoted only when RFC 4180 needs it; formula-guarded.
    CsvWriter& text(std::string_view s) {
        separate();
        csv::appendText(out_, s, false);
        return *this;
    }
    // A label cell (a method or series name): always in double quotes; formula-guarded.
    CsvWriter& label(std::string_view s) {
        separate();
        csv::appendText(out_, s, true);
        return *this;
    }
    // A fixed token that is neither quoted nor guarded: a column name, "true", "F", or a number
    // already formatted. Only for text PipeLens itself spells (no '"', ',', CR or LF).
    CsvWriter& plain(std::string_view s) {
        separate();
        out_.append(s);
        return *this;
    }
    // A number, 17 significant digits (reads back exactly); nan, inf, -inf spelled out.
    CsvWriter& number(double v) {
        separate();
        appendNumber(out_, v, 17);
        return *this;
    }
    template <std::integral T>
    requires(!std::same_as<T, char> && !std::same_as<T, bool>) CsvWriter& integer(T v) {
        separate();
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        // (pointer, count): GCC 12's -Wrestrict misfires on append(first, last) here.
        out_.append(buf, static_cast<std::size_t>(r.ptr - buf));
        return *this;
    }
    CsvWriter& empty() {
        separate();
        return *this;
    }
    // A header of fixed column names, "a,b,c" (written as given), as a whole row.
    CsvWriter& header(std::string_view line) {
        plain(line);
        return endRow();
    }
    CsvWriter& endRow() {
        out_.push_back('\n');
        rowStart_ = true;
        return *this;
    }
    std::string take() {
        rowStart_ = true;
        std::string text = std::move(out_);
        out_.clear();
        return text;
    }

  private:
    void separate() {
        if (!rowStart_) out_.push_back(',');
        rowStart_ = false;
    }
    std::string out_;
    bool rowStart_ = true;
};

}  // namespace pipelens

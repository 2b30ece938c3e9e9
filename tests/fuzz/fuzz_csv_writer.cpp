// libFuzzer target: the CSV writer round trip. The input is split into rows at 0x1E and cells at
// 0x1F; a cell whose first byte is 0x01 is written as a label (always quoted), 0x02 followed by
// 8 bytes as a number (the double they hold), anything else as a text cell. The text is read back
// by the strict RFC 4180 reader below (written here, independent of the writer and of the tests'
// reader); every cell must come back exactly: a text or label cell as the documented formula guard
// leaves it (a leading '\'' before '=', '+', '-', '@', tab or CR), a number as 17 significant
// digits, never guarded. Anything else aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "util/csv_writer.hpp"

namespace {

using Table = std::vector<std::vector<std::string>>;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_csv_writer: %s\n", what);
    std::abort();
}

// A state machine over the bytes. Records end with LF; CR is only legal inside quotes; a quote
// inside an unquoted field, text after a closing quote, an unterminated quote or a last record
// without LF is malformed (returns false).
bool readRfc4180(std::string_view in, Table& out) {
    enum class State { FieldStart, Unquoted, Quoted, QuoteInQuoted };
    State state = State::FieldStart;
    std::vector<std::string> record;
    std::string field;
    auto endField = [&] {
        record.push_back(field);
        field.clear();
    };
    auto endRecord = [&] {
        endField();
        out.push_back(record);
        record.clear();
    };
    for (const char c : in) {
        switch (state) {
            case State::FieldStart:
            case State::Unquoted:
                if (c == '"') {
                    if (state == State::Unquoted) return false;
                    state = State::Quoted;
                } else if (c == ',') {
                    endField();
                    state = State::FieldStart;
                } else if (c == '\n') {
                    endRecord();
                    state = State::FieldStart;
                } else if (c == '\r') {
                    return false;
                } else {
                    field.push_back(c);
                    state = State::Unquoted;
                }
                break;
            case State::Quoted:
                if (c == '"')
                    state = State::QuoteInQuoted;
                else
                    field.push_back(c);
                break;
            case State::QuoteInQuoted:
                if (c == '"') {
                    field.push_back('"');
                    state = State::Quoted;
                } else if (c == ',') {
                    endField();
                    state = State::FieldStart;
                } else if (c == '\n') {
                    endRecord();
                    state = State::FieldStart;
                } else {
                    return false;
                }
                break;
        }
    }
    // Complete only when the last byte ended a record (or there were none).
    return state == State::FieldStart && record.empty() && field.empty() &&
           (in.empty() || in.back() == '\n');
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    std::size_t from = 0;
    for (;;) {
        const std::size_t at = s.find(sep, from);
        parts.push_back(
            s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
        if (at == std::string_view::npos) return parts;
        from = at + 1;
    }
}

// The documented rule, spelled out here rather than taken from the writer.
std::string guardedText(std::string_view s) {
    const bool guard =
        !s.empty() && std::strchr("=+-@\t\r", s.front()) != nullptr && s.front() != '\0';
    return (guard ? "'" : "") + std::string(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    pipelens::CsvWriter writer;
    Table expected;
    for (std::string_view row : split(input, '\x1e')) {
        std::vector<std::string> cells;
        for (std::string_view cell : split(row, '\x1f')) {
            if (!cell.empty() && cell.front() == '\x01') {
                writer.label(cell.substr(1));
                cells.push_back(guardedText(cell.substr(1)));
            } else if (cell.size() >= 9 && cell.front() == '\x02') {
                double v = 0.0;
                std::memcpy(&v, cell.data() + 1, sizeof v);
                writer.number(v);
                cells.push_back(pipelens::formatNumber(v, 17));  // bytes after the 8th unused
            } else {
                writer.text(cell);
                cells.push_back(guardedText(cell));
            }
        }
        writer.endRow();
        expected.push_back(std::move(cells));
    }
    const std::string text = writer.take();
    Table got;
    if (!readRfc4180(text, got)) fail("the writer's text is not strict RFC 4180");
    if (got.size() != expected.size()) fail("row count differs");
    for (std::size_t r = 0; r < got.size(); ++r) {
        if (got[r].size() != expected[r].size()) fail("cell count differs");
        for (std::size_t c = 0; c < got[r].size(); ++c) {
            if (got[r][c] != expected[r][c]) fail("a cell did not come back");
        }
    }
    return 0;
}

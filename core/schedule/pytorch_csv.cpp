// PyTorch's pipeline schedule CSV, both ways (pytorch_csv.hpp, ../shared/INTEROP.md): one pass
// over the text, no regular expressions.
#include "schedule/pytorch_csv.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "schedule/program_check.hpp"
#include "util/input_file.hpp"

namespace pipelens {

namespace {

// The largest text read: keeps every step index within an int.
constexpr std::size_t kMaxTextBytes = std::size_t{1} << 30;
constexpr std::string_view kOverlapSuffix = ")OVERLAP_F_B";
constexpr std::string_view kAllowed =
    "allowed are F, B, I, W with a microbatch (e.g. 2F0, 2B0, 2I0, 2W0), SEND_F, RECV_F, SEND_B, "
    "RECV_B with a microbatch, UNSHARD, RESHARD, REDUCE_GRAD without one (e.g. 0UNSHARD), an "
    "overlapped pair (0F7;7B3)OVERLAP_F_B, or an empty cell (idle)";

bool isBlank(char c) {
    return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && isBlank(text.front())) text.remove_prefix(1);
    while (!text.empty() && isBlank(text.back())) text.remove_suffix(1);
    return text;
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
bool isTypeChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

// What one cell (or one half of an overlapped pair) holds.
enum class CellKind : std::uint8_t { Compute, Dropped };

struct ParsedAction {
    CellKind kind = CellKind::Compute;
    Action action;
};

class Parser {
  public:
    Parser(std::string_view text, const std::string& fileName) : text_(text), file_(fileName) {}
    PipelineProgram run();

  private:
    [[noreturn]] void fail(const std::string& message) const;
    int number(std::string_view digits, const char* what) const;
    ParsedAction action(std::string_view text) const;
    void cell(std::string_view text, std::vector<ProgramStep>& row);
    void line(std::string_view text);
    int columnOf(int rank, int step) const;

    std::string_view text_;
    const std::string& file_;
    PipelineProgram program_;
    // Where the current cell is, for messages.
    int rank_ = 0;
    int column_ = 0;
    int step_ = 0;
    std::string_view cell_;
    // Per rank: the grid step at each dropped cell, in order (the file's column of step t is t
    // plus the number of cells dropped at grid steps <= t).
    std::vector<std::vector<int>> dropped_;
};

void Parser::fail(const std::string& message) const {
    throw ConfigError("schedule CSV " + showPath(file_) + ", " +
                      detail::placeText(rank_, step_, column_) + ", cell '" +
                      escapeBytes(cell_, 80) + (cell_.size() > 80 ? "…" : "") + "': " + message);
}

int Parser::number(std::string_view digits, const char* what) const {
    long long value = 0;
    for (const char c : digits) {
        value = value * 10 + (c - '0');
        if (value > detail::kMaxScheduleIndex) {
            fail(std::string("the ") + what + " " + escapeBytes(digits, 40) + " is more than " +
                 std::to_string(detail::kMaxScheduleIndex) + ", the largest PipeLens reads");
        }
    }
    return static_cast<int>(value);
}

ParsedAction Parser::action(std::string_view text) const {
    std::size_t i = 0;
    while (i < text.size() && isDigit(text[i])) ++i;
    const std::string_view stageDigits = text.substr(0, i);
    std::size_t j = i;
    while (j < text.size() && isTypeChar(text[j])) ++j;
    const std::string_view type = text.substr(i, j - i);
    std::size_t k = j;
    while (k < text.size() && isDigit(text[k])) ++k;
    const std::string_view mbDigits = text.substr(j, k - j);
    if (stageDigits.empty()) {
        fail(std::string("an action starts with its stage number (e.g. 0F0); ") +
             std::string(kAllowed));
    }
    if (type.empty()) {
        fail(std::string("expected an action type after the stage number; ") +
             std::string(kAllowed));
    }
    if (k != text.size()) {
        fail(std::string("unexpected text after the action (") + escapeBytes(text.substr(k), 40) +
             "); " + std::string(kAllowed));
    }
    ParsedAction out;
    out.action.stage = number(stageDigits, "stage");
    auto needsMicrobatch = [&](const char* example) {
        if (mbDigits.empty()) {
            fail(std::string(type) + " needs a microbatch number after it (e.g. " + example + ")");
        }
        out.action.microbatch = number(mbDigits, "microbatch");
    };
    if (type.size() == 1) {
        switch (type[0]) {
            case 'F':
                out.action.kind = ActionKind::Forward;
                needsMicrobatch("2F0");
                return out;
            case 'B':
                out.action.kind = ActionKind::Backward;
                needsMicrobatch("2B0");
                return out;
            case 'I':
                out.action.kind = ActionKind::InputGrad;
                needsMicrobatch("2I0");
                return out;
            case 'W':
                out.action.kind = ActionKind::WeightGrad;
                needsMicrobatch("2W0");
                return out;
            default:
                break;
        }
    }
    if (type == "BW") {
        fail("the full backward is now spelled B (e.g. 2B0); BW is the older spelling");
    }
    if (type == "UNSHARD" || type == "RESHARD" || type == "REDUCE_GRAD") {
        if (!mbDigits.empty()) {
            fail(std::string(type) + " takes no microbatch (e.g. 0" + std::string(type) + ")");
        }
        out.kind = CellKind::Dropped;
        return out;
    }
    if (type == "SEND_F" || type == "RECV_F" || type == "SEND_B" || type == "RECV_B") {
        needsMicrobatch("0SEND_F0");
        out.kind = CellKind::Dropped;
        return out;
    }
    if (type == "OVERLAP_F_B") {
        fail("an overlapped pair is written (a;b)OVERLAP_F_B, e.g. (0F7;7B3)OVERLAP_F_B");
    }
    std::string upper(type);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; });
    const bool lower = upper != type && (upper == "F" || upper == "B" || upper == "I" ||
                                         upper == "W" || upper == "BW" || upper == "UNSHARD" ||
                                         upper == "RESHARD" || upper == "REDUCE_GRAD" ||
                                         upper.starts_with("SEND_") || upper.starts_with("RECV_"));
    fail("unknown action type '" + escapeBytes(type, 40) + "'" +
         (lower ? " (types are upper case)" : "") + "; " + std::string(kAllowed));
}

void Parser::cell(std::string_view text, std::vector<ProgramStep>& row) {
    cell_ = text;
    step_ = static_cast<int>(row.size());
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
        text = trim(text.substr(1, text.size() - 2));
    }
    if (text.empty()) {
        row.emplace_back();
        return;
    }
    if (text.front() != '(') {
        const ParsedAction a = action(text);
        if (a.kind == CellKind::Dropped) {
            ++program_.ignoredActions;
            program_.orderOnly = true;
            dropped_[static_cast<std::size_t>(rank_)].push_back(step_);
            return;
        }
        ProgramStep step;
        step.count = 1;
        step.actions[0] = a.action;
        row.push_back(step);
        return;
    }
    if (!text.ends_with(kOverlapSuffix)) {
        fail(
            "a cell starting with '(' is an overlapped pair, written (a;b)OVERLAP_F_B, e.g. "
            "(0F7;7B3)OVERLAP_F_B");
    }
    const std::string_view inner = text.substr(1, text.size() - 1 - kOverlapSuffix.size());
    const std::size_t semi = inner.find(';');
    if (semi == std::string_view::npos || inner.find(';', semi + 1) != std::string_view::npos) {
        fail(
            "an overlapped pair holds exactly two actions separated by ';', e.g. "
            "(0F7;7B3)OVERLAP_F_B");
    }
    const std::string_view first = trim(inner.substr(0, semi));
    const std::string_view second = trim(inner.substr(semi + 1));
    if (first.starts_with('(') || second.starts_with('(')) {
        fail("an overlapped pair cannot hold another pair");
    }
    const ParsedAction a = action(first);
    const ParsedAction b = action(second);
    auto isBackward = [](const ParsedAction& p) {
        return p.kind == CellKind::Compute &&
               (p.action.kind == ActionKind::Backward || p.action.kind == ActionKind::InputGrad);
    };
    auto isForward = [](const ParsedAction& p) {
        return p.kind == CellKind::Compute && p.action.kind == ActionKind::Forward;
    };
    if (!((isForward(a) && isBackward(b)) || (isBackward(a) && isForward(b)))) {
        fail(
            "an overlapped pair holds one forward F and one backward B or I, e.g. "
            "(0F7;7B3)OVERLAP_F_B");
    }
    ProgramStep step;
    step.count = 2;
    step.actions[0] = a.action;
    step.actions[1] = b.action;
    row.push_back(step);
}

void Parser::line(std::string_view text) {
    rank_ = static_cast<int>(program_.ranks.size());
    dropped_.emplace_back();
    auto& row = program_.ranks.emplace_back();
    if (text.empty()) {
        return;  // a rank with no steps: validateProgram names it
    }
    row.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1);
    column_ = 0;
    std::size_t begin = 0;
    for (;;) {
        const std::size_t comma = text.find(',', begin);
        const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
        cell(trim(text.substr(begin, end - begin)), row);
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
        ++column_;
    }
}

int Parser::columnOf(int rank, int step) const {
    const auto& drops = dropped_[static_cast<std::size_t>(rank)];
    return step +
           static_cast<int>(std::upper_bound(drops.begin(), drops.end(), step) - drops.begin());
}

PipelineProgram Parser::run() {
    std::string_view text = text_;
    if (text.size() > kMaxTextBytes) {
        throw ConfigError("schedule CSV " + showPath(file_) + " has " +
                          std::to_string(text.size()) +
                          " bytes; a schedule CSV may hold at most 1 GiB");
    }
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        throw ConfigError("schedule CSV " + showPath(file_) +
                          " is empty: it needs one row per rank, one cell per step (e.g. "
                          "0F0,0F1,,0B0,,0B1)");
    }
    program_.ranks.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) +
                           1);
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        const std::size_t next = end == std::string_view::npos ? text.size() : end + 1;
        if (end == std::string_view::npos) end = text.size();
        std::string_view row = text.substr(begin, end - begin);
        if (row.ends_with('\r')) row.remove_suffix(1);
        const std::size_t cr = row.find('\r');
        if (cr != std::string_view::npos) {
            throw ConfigError(
                "schedule CSV " + showPath(file_) + ", row " +
                std::to_string(program_.ranks.size()) +
                ": a carriage return (\\r) inside a line; lines end with \\n or \\r\\n");
        }
        line(row);
        begin = next;
    }
    detail::validateProgramAt(program_,
                              [this](int rank, int step) { return columnOf(rank, step); });
    return std::move(program_);
}

}  // namespace

PipelineProgram parsePytorchScheduleCsv(std::string_view text, const std::string& fileName) {
    Parser parser(text, fileName);
    try {
        return parser.run();
    } catch (const ConfigError& e) {
        const std::string message = e.what();
        const std::string prefix = "schedule CSV " + showPath(fileName);
        if (message.starts_with(prefix)) throw;
        throw ConfigError(prefix + ": " + message);
    }
}

namespace {

std::string readScheduleText(const std::string& path) {
    // Each byte of the text may become a 28-byte step, a row (an empty line) or an entry of the
    // checks' tables: a 64th of the memory PipeLens may use bounds the file, and 1 GiB keeps
    // every step index within an int (about 10^8 actions, far beyond any real schedule).
    constexpr std::uint64_t kMaxBytes = kMaxTextBytes;
    const std::uint64_t cap = std::min(kMaxBytes, memoryLimitBytes() / 64);
    return readInputFile(path, "schedule CSV", &throwAs<ConfigError>, cap,
                         cap == kMaxBytes
                             ? std::string("a schedule CSV may hold at most 1 GiB")
                             : "a schedule CSV may use at most a 64th of the " +
                                   formatBytes(memoryLimitBytes()) + " of memory PipeLens may use");
}

}  // namespace

PipelineProgram readPytorchScheduleCsv(const std::string& path) {
    return parsePytorchScheduleCsv(readScheduleText(path), path);
}

std::shared_ptr<const PipelineProgram> readPytorchScheduleCsvShared(const std::string& path) {
    struct Entry {
        std::string path;
        std::string text;
        std::shared_ptr<const PipelineProgram> program;
    };
    static std::mutex mutex;
    static std::deque<Entry> entries;  // most recent first
    std::string text = readScheduleText(path);
    {
        const std::lock_guard lock(mutex);
        for (const Entry& e : entries) {
            if (e.path == path && e.text == text) return e.program;
        }
    }
    auto program = std::make_shared<const PipelineProgram>(parsePytorchScheduleCsv(text, path));
    constexpr std::size_t kMaxEntries = 4;
    constexpr std::size_t kMaxText = std::size_t{64} << 20;
    const std::lock_guard lock(mutex);
    if (text.size() <= kMaxText) {
        entries.push_front({path, std::move(text), program});
        std::size_t kept = 0;
        std::size_t total = 0;
        while (kept < entries.size() && kept < kMaxEntries &&
               total + entries[kept].text.size() <= kMaxText) {
            total += entries[kept].text.size();
            ++kept;
        }
        entries.resize(kept);
    }
    return program;
}

namespace {

std::string writeGrid(const std::vector<std::vector<ProgramStep>>& ranks) {
    std::size_t cells = 0;
    for (const auto& row : ranks) cells += row.size();
    std::string out;
    out.reserve(cells * 8 + ranks.size());
    for (const auto& row : ranks) {
        for (std::size_t t = 0; t < row.size(); ++t) {
            if (t > 0) out += ',';
            appendStepName(out, row[t]);
        }
        out += '\n';
    }
    return out;
}

}  // namespace

std::string pytorchScheduleCsv(const PipelineProgram& program) {
    if (!program.orderOnly) {
        return writeGrid(program.ranks);
    }
    // A per-rank order: write its unit-cost timing, where a column is a time again.
    const ProgramTiming timing = timeProgram(program);
    std::vector<std::vector<ProgramStep>> grid(program.ranks.size());
    for (const TimedAction& t : timing.actions) {
        auto& row = grid[static_cast<std::size_t>(t.rank)];
        const auto at = static_cast<std::size_t>(t.start);
        if (row.size() <= at) row.resize(at + 1);
        ProgramStep& step = row[at];
        if (step.count < 2) {
            step.actions[static_cast<std::size_t>(step.count)] = t.action;
            ++step.count;
        }
    }
    return writeGrid(grid);
}

}  // namespace pipelens

// Speed of the flushing schedule family, the PyTorch schedule CSV importer and exporter, and the
// Chrome trace writer (issue 31, "Speed"). Targets: a schedule of S = 128, M = 1024 builds and
// validates in under 50 ms (every flushing kind; interleaved with v = 2); import and export of a
// CSV with 10^6 actions in under 1 s each; a Chrome trace of S = 128 x 20 000 slots written in
// under 1 s. Workloads:
//   flush_KIND        buildFlushProgram + validateProgram, S = 128, M = 1024 (v = 2 interleaved);
//                     phases (no target): _build, _order (the per-rank order), _timing
//                     (timeProgram of that order) and _validate alone
//   csv_export_KIND   pytorchScheduleCsv of a compute-only program with >= 10^6 actions
//   csv_import_KIND   parsePytorchScheduleCsv (parse + validate) of that text
//   csv_read_file     readPytorchScheduleCsv of the 1f1b text saved to a file
//   csv_import_comms  the 1f1b order with SEND_F/RECV_F/SEND_B/RECV_B cells beside every compute
//                     action (a "compute + comms" file: orderOnly, validated through its timing)
//   csv_export_comms  pytorchScheduleCsv of that imported program (written as its timing)
//   trace_json        chromeTraceJson of PD, S = 128, N = 9873 (2N + 2(S - 1) = 20 000 slots),
//                     with its delay table and a loss of 20 001 values
//   trace_file        the same, written to a file as `run --trace` does (replaceFileAtomically);
//                     phase (no target): trace_file_write, the write alone
// Every repetition proves it did the work, checked outside the timed region: the program's rows,
// length, action count and bubble against the closed forms (flushLengthFormula and the bench's
// own 2(M + S - 1), 2(vM + S - 1), 3M + S - 1, flushBubbleFormula, counted from the grid);
// parse(export(p)).ranks == p.ranks and the action count of the text; the trace's "X" events
// counted in the text equal the timeline's cells = 2 S N, its counter and metadata events, and
// the file's size. A failed check exits with status 1.
//
// Usage: bench_schedules [--reps N] [--only NAME[,NAME...]]   (median of N, default 5)
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "bench_timing.hpp"
#include "experiment/output/chrome_trace.hpp"
#include "schedule/delays.hpp"
#include "schedule/flush_family.hpp"
#include "schedule/program.hpp"
#include "schedule/pytorch_csv.hpp"
#include "schedule/timeline.hpp"
#include "util/file_target.hpp"

namespace {

using namespace pipelens;
using namespace pipelens::bench;

constexpr double kFlushTarget = 0.050;
constexpr double kCsvTarget = 1.0;
constexpr double kTraceTarget = 1.0;
constexpr int kTraceStages = 128;
constexpr int kTraceMicrobatches = 9873;  // 2 N + 2 (S - 1) = 20 000 slots
constexpr long long kTraceSlots = 20000;

volatile std::size_t g_sink = 0;

void require(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error("benchmark did not do the intended work: " + what);
}

struct Row {
    std::string name;
    std::string what;
    Timing timing;
    double target = 0.0;  // seconds; 0: none
};

// ---- the flushing family ------------------------------------------------------------------

FlushScheduleParams flushParams(FlushKind kind, int devices, int microbatches, int v = 1) {
    FlushScheduleParams p;
    p.kind = kind;
    p.devices = devices;
    p.microbatches = microbatches;
    p.virtualStages = v;
    return p;
}

// The closed forms written out here, independently of flushLengthFormula.
long long expectedLength(const FlushScheduleParams& p) {
    const long long s = p.devices;
    const long long m = p.microbatches;
    const long long v = p.virtualStages;
    switch (p.kind) {
        case FlushKind::GPipe:
        case FlushKind::OneFOneB:
            return 2 * (m + s - 1);
        case FlushKind::Interleaved:
            return 2 * (v * m + s - 1);
        case FlushKind::ZeroBubbleH1:
            return std::max(3 * m + s - 1, 2 * m + 2 * s - 1);
    }
    return -1;
}

long long expectedActions(const FlushScheduleParams& p) {
    const long long sm = static_cast<long long>(p.devices) * p.microbatches;
    return p.kind == FlushKind::ZeroBubbleH1 ? 3 * sm : 2 * sm * p.virtualStages;
}

long long countActions(const PipelineProgram& program) {
    long long n = 0;
    for (const auto& row : program.ranks) {
        for (const ProgramStep& step : row) n += step.count;
    }
    return n;
}

std::string orderName(FlushKind kind) {
    switch (kind) {
        case FlushKind::GPipe:
            return "gpipeOrder";
        case FlushKind::OneFOneB:
            return "oneFOneBOrder";
        case FlushKind::Interleaved:
            return "interleavedOrder";
        case FlushKind::ZeroBubbleH1:
            return "zeroBubbleH1Order";
    }
    return "?";
}

// Rows, length, actions and bubble of a built program against the closed forms.
void checkFlushProgram(const PipelineProgram& program, const FlushScheduleParams& p) {
    const std::string name = flushKindName(p.kind);
    const long long length = expectedLength(p);
    require(flushLengthFormula(p) == length, name + ": flushLengthFormula equals the closed form");
    require(program.ranks.size() == static_cast<std::size_t>(p.devices), name + ": S rows");
    require(!program.orderOnly && program.ignoredActions == 0, name + ": a compute-only grid");
    long long idle = 0;
    for (const auto& row : program.ranks) {
        require(static_cast<long long>(row.size()) == length,
                name + ": every row is " + std::to_string(length) + " steps long");
        for (const ProgramStep& step : row) idle += step.idle() ? 1 : 0;
    }
    const long long actions = countActions(program);
    require(actions == expectedActions(p), name + ": " + std::to_string(expectedActions(p)) +
                                               " actions, got " + std::to_string(actions));
    const double cells = static_cast<double>(p.devices) * static_cast<double>(length);
    const double bubble = static_cast<double>(idle) / cells;
    require(std::abs(bubble - flushBubbleFormula(p)) <= 1e-12,
            name + ": bubble (idle cells) equals flushBubbleFormula");
    const ProgramSummary summary = summarizeProgram(program);
    require(summary.lengthSteps == length && summary.actions == actions &&
                std::abs(summary.bubbleFraction - bubble) <= 1e-12,
            name + ": summarizeProgram agrees with the grid");
}

// Times `make` and checks every repetition's result outside the timed region.
template <typename T>
Timing timeChecked(const std::function<T()>& make, const std::function<void(const T&)>& check,
                   int reps) {
    std::unique_ptr<T> result;  // (std::optional here trips GCC 12's maybe-uninitialized)
    const auto checkPrevious = [&] {
        if (result) check(*result);
        result.reset();
    };
    const Timing t = timeIt([&] { result = std::make_unique<T>(make()); }, reps, checkPrevious);
    checkPrevious();
    return t;
}

// ---- the CSV --------------------------------------------------------------------------------

// Non-empty cells of a CSV text without overlapped pairs: what an independent reader counts.
long long countCells(std::string_view text) {
    long long n = 0;
    bool inCell = false;
    for (const char c : text) {
        if (c == ',' || c == '\n') {
            inCell = false;
        } else if (!inCell) {
            inCell = true;
            ++n;
        }
    }
    return n;
}

// A row without its trailing idle steps.
std::vector<ProgramStep> trimmed(const std::vector<ProgramStep>& row) {
    std::size_t end = row.size();
    while (end > 0 && row[end - 1].idle()) --end;
    return {row.begin(), row.begin() + static_cast<std::ptrdiff_t>(end)};
}

std::string cellName(const Action& a, const char* type) {
    return std::to_string(a.stage) + type + std::to_string(a.microbatch);
}

// The program's per-rank order as a "compute + comms" file: RECV_F before and SEND_F after a
// forward (but at the ends of the pipeline), RECV_B before and SEND_B after a backward.
std::string commsCsv(const PipelineProgram& program, int stages, long long* commsCells) {
    std::string out;
    *commsCells = 0;
    for (const auto& row : program.ranks) {
        bool first = true;
        const auto put = [&](const std::string& cell) {
            if (!first) out += ',';
            out += cell;
            first = false;
        };
        for (const ProgramStep& step : row) {
            if (step.idle()) continue;
            const Action& a = step.actions[0];
            const bool forward = a.kind == ActionKind::Forward;
            const bool recv = forward ? a.stage > 0 : a.stage < stages - 1;
            const bool send = forward ? a.stage < stages - 1 : a.stage > 0;
            if (recv) put(cellName(a, forward ? "RECV_F" : "RECV_B"));
            put(actionName(a));
            if (send) put(cellName(a, forward ? "SEND_F" : "SEND_B"));
            *commsCells += (recv ? 1 : 0) + (send ? 1 : 0);
        }
        out += '\n';
    }
    return out;
}

// A folder for the files the benchmark writes, removed when it ends (a failed check too).
class TempDir {
  public:
    TempDir()
        : path_((std::filesystem::temp_directory_path() /
                 ("pipelens-bench-schedules-" + std::to_string(getpid())))
                    .string()) {
        std::filesystem::create_directories(path_);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&&) = delete;
    TempDir& operator=(TempDir&&) = delete;
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

std::size_t countOccurrences(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string_view::npos;
         at = text.find(what, at + what.size()))
        ++n;
    return n;
}

// A workload (or a group such as "trace") is run when --only names it, a group it belongs to
// (a prefix such as "csv" or "flush"), or a workload of that group.
bool selected(const std::vector<std::string>& only, const std::string& name) {
    if (only.empty()) return true;
    return std::any_of(only.begin(), only.end(), [&](const std::string& o) {
        return name.starts_with(o) || o.starts_with(name);
    });
}

int runMain(int argc, char** argv) {
    int reps = 5;
    std::vector<std::string> only;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--reps" && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else if (arg == "--only" && i + 1 < argc) {
            std::stringstream list(argv[++i]);
            for (std::string item; std::getline(list, item, ',');) only.push_back(item);
        } else {
            std::cerr << "usage: bench_schedules [--reps N (>= 1, default 5)] "
                         "[--only PREFIX[,PREFIX...]: flush, csv, trace, or a workload]\n";
            return 2;
        }
    }
    if (reps < 1) {
        std::cerr << "--reps must be >= 1\n";
        return 2;
    }
    const std::string startLoad = loadAverage();
    std::vector<Row> rows;

    // The family at S = 128, M = 1024: build (validateFlushScheduleParams + order + timing) and
    // validateProgram, as the CLI and the app do before showing a schedule.
    const std::vector<FlushScheduleParams> family{
        flushParams(FlushKind::GPipe, 128, 1024), flushParams(FlushKind::OneFOneB, 128, 1024),
        flushParams(FlushKind::ZeroBubbleH1, 128, 1024),
        flushParams(FlushKind::Interleaved, 128, 1024, 2)};
    for (const FlushScheduleParams& p : family) {
        const std::string name = "flush_" + flushKindName(p.kind);
        if (!selected(only, name)) continue;
        const std::string what = "build + validate, S = 128, M = 1024" +
                                 std::string(p.virtualStages > 1 ? ", v = 2" : "") + " (" +
                                 std::to_string(expectedActions(p)) + " actions, " +
                                 std::to_string(expectedLength(p)) + " steps)";
        rows.push_back(
            {name, what,
             timeChecked<PipelineProgram>(
                 [&] {
                     PipelineProgram program = buildFlushProgram(p);
                     validateProgram(program);
                     return program;
                 },
                 [&](const PipelineProgram& program) { checkFlushProgram(program, p); }, reps),
             kFlushTarget});
        // Where the time goes: the two halves alone (phases, no target).
        rows.push_back(
            {name + "_build", "phase: buildFlushProgram alone",
             timeChecked<PipelineProgram>(
                 [&] { return buildFlushProgram(p); },
                 [&](const PipelineProgram& program) { checkFlushProgram(program, p); }, reps)});
        const auto order = [&p] {
            switch (p.kind) {
                case FlushKind::GPipe:
                    return gpipeOrder(p.devices, p.microbatches);
                case FlushKind::OneFOneB:
                    return oneFOneBOrder(p.devices, p.microbatches);
                case FlushKind::Interleaved:
                    return interleavedOrder(p.devices, p.microbatches, p.virtualStages);
                case FlushKind::ZeroBubbleH1:
                    return zeroBubbleH1Order(p.devices, p.microbatches);
            }
            return RankOrders{};
        };
        const auto countOrder = [&](const RankOrders& o) {
            long long n = 0;
            for (const auto& rank : o) n += static_cast<long long>(rank.size());
            require(n == expectedActions(p), name + ": the order holds every action");
        };
        rows.push_back({name + "_order",
                        "phase: the per-rank order alone (" + orderName(p.kind) + ")",
                        timeChecked<RankOrders>(order, countOrder, reps)});
        const PipelineProgram ordered = orderProgram(order());
        rows.push_back(
            {name + "_timing", "phase: timeProgram(orderProgram(order)) alone",
             timeChecked<ProgramTiming>([&] { return timeProgram(ordered); },
                                        [&](const ProgramTiming& t) {
                                            require(t.length == expectedLength(p) &&
                                                        static_cast<long long>(t.actions.size()) ==
                                                            expectedActions(p),
                                                    name + ": the timing's length and actions");
                                        },
                                        reps)});
        const PipelineProgram built = buildFlushProgram(p);
        checkFlushProgram(built, p);
        rows.push_back({name + "_validate", "phase: validateProgram alone",
                        timeIt([&] { validateProgram(built); }, reps)});
    }

    // CSVs of at least 10^6 actions: 2 S M (gpipe, 1f1b), 2 S v M (interleaved), 3 S M (zb-h1).
    const std::vector<FlushScheduleParams> csvFamily{
        flushParams(FlushKind::GPipe, 125, 4000), flushParams(FlushKind::OneFOneB, 125, 4000),
        flushParams(FlushKind::ZeroBubbleH1, 125, 2667),
        flushParams(FlushKind::Interleaved, 100, 2500, 2)};
    std::string oneFOneBText;
    std::optional<PipelineProgram> oneFOneB;
    const TempDir temp;
    const std::string& dir = temp.path();
    for (const FlushScheduleParams& p : csvFamily) {
        const std::string kind = flushKindName(p.kind);
        const bool wanted = selected(only, "csv_export_" + kind) ||
                            selected(only, "csv_import_" + kind) ||
                            (p.kind == FlushKind::OneFOneB && (selected(only, "csv_read_file") ||
                                                               selected(only, "csv_import_comms") ||
                                                               selected(only, "csv_export_comms")));
        if (!wanted) continue;
        const PipelineProgram program = buildFlushProgram(p);  // untimed; checked here
        checkFlushProgram(program, p);
        const long long actions = expectedActions(p);
        const std::string size =
            "S = " + std::to_string(p.devices) + ", M = " + std::to_string(p.microbatches) +
            (p.virtualStages > 1 ? ", v = 2" : "") + ", " + std::to_string(actions) + " actions";
        const auto checkText = [&](const std::string& text) {
            require(countCells(text) == actions,
                    kind + ": the CSV holds " + std::to_string(actions) + " action cells");
            require(static_cast<long long>(std::count(text.begin(), text.end(), '\n')) == p.devices,
                    kind + ": the CSV holds S lines");
        };
        if (selected(only, "csv_export_" + kind)) {
            rows.push_back({"csv_export_" + kind, "pytorchScheduleCsv, " + size,
                            timeChecked<std::string>([&] { return pytorchScheduleCsv(program); },
                                                     checkText, reps),
                            kCsvTarget});
        }
        const std::string text = pytorchScheduleCsv(program);
        checkText(text);
        const auto checkParsed = [&](const PipelineProgram& parsed) {
            require(parsed.ranks == program.ranks, kind + ": parse(export(p)).ranks == p.ranks");
            require(
                countActions(parsed) == actions && !parsed.orderOnly && parsed.ignoredActions == 0,
                kind + ": the import holds every action");
        };
        if (selected(only, "csv_import_" + kind)) {
            rows.push_back(
                {"csv_import_" + kind,
                 "parsePytorchScheduleCsv (parse + validate), " + size + ", " +
                     std::to_string(text.size() / 1000) + " kB",
                 timeChecked<PipelineProgram>(
                     [&] { return parsePytorchScheduleCsv(text, "bench.csv"); }, checkParsed, reps),
                 kCsvTarget});
        }
        if (p.kind == FlushKind::OneFOneB) {
            oneFOneBText = text;
            oneFOneB = program;
            if (selected(only, "csv_read_file")) {
                const std::string path = dir + "/1f1b.csv";
                std::ofstream(path, std::ios::binary) << text;
                rows.push_back(
                    {"csv_read_file",
                     "readPytorchScheduleCsv (read a file + parse + validate), 1f1b, " + size,
                     timeChecked<PipelineProgram>([&] { return readPytorchScheduleCsv(path); },
                                                  checkParsed, reps),
                     kCsvTarget});
            }
        }
    }

    if (oneFOneB && (selected(only, "csv_import_comms") || selected(only, "csv_export_comms"))) {
        const FlushScheduleParams& p = csvFamily[1];
        const long long actions = expectedActions(p);
        long long commsCells = 0;
        const std::string comms = commsCsv(*oneFOneB, p.devices, &commsCells);
        const std::string size = "1f1b S = 125, M = 4000, " + std::to_string(actions) +
                                 " actions + " + std::to_string(commsCells) + " comms cells";
        // The compute cells of each row in order, as the file lists them.
        const auto checkImported = [&](const PipelineProgram& parsed) {
            require(parsed.orderOnly && parsed.ignoredActions == commsCells,
                    "comms: an orderOnly program with every comms cell counted as ignored");
            require(countActions(parsed) == actions, "comms: every compute action imported");
            require(parsed.ranks.size() == oneFOneB->ranks.size(), "comms: S rows");
            for (std::size_t r = 0; r < parsed.ranks.size(); ++r) {
                std::vector<ProgramStep> order;
                for (const ProgramStep& s : oneFOneB->ranks[r]) {
                    if (!s.idle()) order.push_back(s);
                }
                require(parsed.ranks[r] == order,
                        "comms: rank " + std::to_string(r) + " holds the 1f1b order");
            }
        };
        if (selected(only, "csv_import_comms")) {
            rows.push_back(
                {"csv_import_comms",
                 "parsePytorchScheduleCsv of a compute + comms file (timed order), " + size,
                 timeChecked<PipelineProgram>(
                     [&] { return parsePytorchScheduleCsv(comms, "comms.csv"); }, checkImported,
                     reps),
                 kCsvTarget});
        }
        if (selected(only, "csv_export_comms")) {
            const PipelineProgram imported = parsePytorchScheduleCsv(comms, "comms.csv");
            checkImported(imported);
            // Written as its unit-cost timing: the 1f1b grid again, trailing idle steps dropped.
            const auto checkExported = [&](const std::string& text) {
                require(countCells(text) == actions, "comms export: every compute action");
                const PipelineProgram back = parsePytorchScheduleCsv(text, "back.csv");
                require(back.ranks.size() == oneFOneB->ranks.size(), "comms export: S rows");
                for (std::size_t r = 0; r < back.ranks.size(); ++r) {
                    require(back.ranks[r] == trimmed(oneFOneB->ranks[r]),
                            "comms export: rank " + std::to_string(r) + " is the 1f1b grid");
                }
            };
            rows.push_back({"csv_export_comms",
                            "pytorchScheduleCsv of that orderOnly program (timeProgram), " + size,
                            timeChecked<std::string>([&] { return pytorchScheduleCsv(imported); },
                                                     checkExported, reps),
                            kCsvTarget});
        }
    }
    oneFOneB.reset();

    // The trace: PD at S = 128 over 20 000 slots, with delays and a loss per slot.
    std::string traceSize;
    if (selected(only, "trace")) {
        ScheduleParams pd;
        pd.kind = ScheduleKind::PipeDream;
        pd.stages = kTraceStages;
        pd.microbatches = kTraceMicrobatches;
        const Timeline timeline = buildTimeline(pd);
        require(timeline.totalSlots == kTraceSlots, "PD S = 128, N = 9873 lasts 20 000 slots");
        const auto cells = static_cast<std::size_t>(2LL * kTraceStages * kTraceMicrobatches);
        require(timeline.cells.size() == cells, "the timeline holds 2 S N cells");
        const DelayTable delays(timeline);
        std::vector<double> loss(static_cast<std::size_t>(timeline.totalSlots) + 1);
        for (std::size_t i = 0; i < loss.size(); ++i)
            loss[i] = 1.0 / (1.0 + 1e-3 * static_cast<double>(i));
        const std::vector<TraceMethod> methods{{"PD", &timeline, &delays, &loss}};
        const std::size_t samples = std::min(loss.size(), kTraceMaxLossSamples);
        const std::size_t metadata = 2 + 2 * static_cast<std::size_t>(kTraceStages);
        const auto checkTrace = [&](std::string_view text) {
            require(text.starts_with("{\"traceEvents\":[") && text.ends_with("}\n"),
                    "the trace is one JSON object");
            require(countOccurrences(text, "\"ph\":\"X\"") == cells,
                    "one \"X\" event per timeline cell (" + std::to_string(cells) + ")");
            require(countOccurrences(text, "\"ph\":\"C\"") == samples,
                    "the loss counter keeps " + std::to_string(samples) + " samples");
            require(countOccurrences(text, "\"ph\":\"M\"") == metadata,
                    "metadata: process and 128 threads, names and sort indices");
            require(countOccurrences(text, "\"staleness\":") == cells / 2,
                    "a staleness on every backward");
            g_sink = text.size();
        };
        const std::string sample = chromeTraceJson(methods);
        checkTrace(sample);
        std::ostringstream s;
        s << std::fixed;
        s.precision(1);
        s << static_cast<double>(sample.size()) / 1e6 << " MB, " << cells << " X events";
        traceSize = s.str();
        const std::string size = "PD S = 128, N = 9873, 20 000 slots: " + traceSize;
        if (selected(only, "trace_json")) {
            rows.push_back({"trace_json", "chromeTraceJson (delays, loss), " + size,
                            timeChecked<std::string>([&] { return chromeTraceJson(methods); },
                                                     checkTrace, reps),
                            kTraceTarget});
        }
        if (selected(only, "trace_file")) {
            const std::string path = dir + "/trace.json";
            const std::size_t bytes = sample.size();
            rows.push_back(
                {"trace_file", "chromeTraceJson + replaceFileAtomically (as run --trace), " + size,
                 timeChecked<std::size_t>(
                     [&] {
                         const std::string text = chromeTraceJson(methods);
                         replaceFileAtomically(path, text.data(), text.size());
                         return text.size();
                     },
                     [&](const std::size_t& written) {
                         require(written == bytes && std::filesystem::file_size(path) == bytes,
                                 "the file holds the whole trace");
                     },
                     reps),
                 kTraceTarget});
            // Where the time goes: the write alone, the text made beforehand (a phase).
            rows.push_back({"trace_file_write", "phase: replaceFileAtomically of that text alone",
                            timeChecked<std::size_t>(
                                [&] {
                                    replaceFileAtomically(path, sample.data(), sample.size());
                                    return sample.size();
                                },
                                [&](const std::size_t& written) {
                                    require(std::filesystem::file_size(path) == written,
                                            "the file holds the whole trace");
                                },
                                reps)});
            std::filesystem::remove(path);
        }
    }

    std::cout << "# PipeLens schedule benchmarks (issue 31: family, PyTorch CSV, trace)\n\n"
              << "repetitions: " << reps << "; load average at start: " << startLoad << "\n\n"
              << "| workload | what | median | min | max | CPU time | target | meets |\n"
              << "|---|---|---|---|---|---|---|---|\n";
    int missed = 0;
    for (const Row& r : rows) {
        std::string target = "-", meets = "-";
        if (r.target > 0) {
            target = "< " + seconds(r.target);
            const bool met = r.timing.median < r.target;
            missed += met ? 0 : 1;
            meets = met ? "yes" : "NO";
        }
        std::cout << "| " << r.name << " | " << r.what << " | " << seconds(r.timing.median) << " | "
                  << seconds(r.timing.min) << " | " << seconds(r.timing.max) << " | "
                  << seconds(r.timing.cpuMedian) << " | " << target << " | " << meets << " |\n";
    }
    std::cout << "\nload average at end: " << loadAverage() << "\n"
              << (missed == 0 ? "every workload met its target (median wall time)\n"
                              : std::to_string(missed) +
                                    " workload(s) did NOT meet the target (median wall time)\n");
    return 0;  // targets are reported, not enforced: timings depend on the machine's load
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return runMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "bench_schedules: " << e.what() << "\n";
        return 1;
    }
}

#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend_select.hpp"
#include "cmdline/args.hpp"
#include "cmdline/environment.hpp"
#include "cmdline/experiment_arg.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/config/field_limits.hpp"
#include "experiment/output/chrome_trace.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/sweep/sweep.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"
#include "schedule/timeline_program.hpp"
#include "schedule_program_command.hpp"
#include "sweep_command.hpp"
#include "util/file_target.hpp"
#ifdef PIPELENS_HAVE_MPI
#include "mpi_world.hpp"
#include "sweep_over_mpi.hpp"
#endif
#ifdef PIPELENS_HAVE_OPENCL
#include "devices.hpp"
#endif

namespace pipelens {
namespace {

const char* kMainHelp = R"(pipelens-cli: pipeline-parallel training experiments, headless.

Usage: pipelens-cli COMMAND [OPTIONS]

Commands:
  schedule   print a slot timeline (PD 1F1B, fill-drain or LocalSGD) as CSV or text art
  delays     PipeDream delay statistics for one S or a range A:B
  run        run an experiment from a JSON config and write its results to a folder
  sweep      run an experiment over a list of values of one parameter (docs/sweeps.md)
  example    print an example config (default, compare, lm, or a method key: pd, rpd, localsgd,
             sgd, fill-drain, 1f1b, zb-h1, 2bw, imported, interleaved)
  devices    list the OpenCL platforms and devices runs can use
  reproduce  run the paper's experiments E1-E5 and draw their figures (UI builds only)
  animate    an experiment's Gantt playback as a GIF, MP4 or PNG frames (UI builds only)
  study      `study staleness`: PD, its correctors, RPD, LocalSGD and 1F1B over S, as a table
             and figures (docs/correctors.md, "Study"; UI builds only)
  help       this text; `pipelens-cli COMMAND --help` (or `help COMMAND`) describes one command

Options: --name VALUE or --name=VALUE; a flag is --name alone (--quiet, never --quiet=0).
Each option at most once; unknown options, options of another --kind or experiment, and
arguments a command does not take are refused. A value that begins with - is written
--name=-value (only numeric options take a negative number as the next argument); "--" ends
the options. PIPELENS_* environment variables are checked at start-up the same way.

Exit codes: 0 success, 1 bad input (one-line reason on stderr), 2 a run that failed or output
that could not be written (e.g. a full disk), 130 a sweep interrupted by Ctrl-C (finished points
kept; --resume continues it).
)";

// Exit code when standard output could not be written (documented in kMainHelp).
constexpr int kOutputFailed = 2;

const char* kScheduleHelp =
    R"(Usage: pipelens-cli schedule --kind KIND --stages S --microbatches N [options]
       pipelens-cli schedule --import FILE.csv [--json | --summary | --art] [--export-csv OUT]

Kinds pd, fill-drain and localsgd print the slot timeline as CSV `slot,stage,op,microbatch`
(stages and microbatches from 0), one row per operation in slot order then stage order. Kinds
gpipe, 1f1b, interleaved and zb-h1 (one flush: one optimizer step of N microbatches on S
devices; docs/schedules.md) and an imported file print PyTorch's schedule CSV (rows = ranks,
columns = steps, cells such as 0F0, 1B3, 2I0, 2W0; docs/schedules.md).

Options:
  --kind K             pd (PipeDream 1F1B), fill-drain (GPipe-style), localsgd, gpipe, 1f1b (with
                       flush), interleaved (virtual stages) or zb-h1 (zero bubble)
  --stages S           pipeline stages, devices for the flushing kinds (>= 1)
  --microbatches N     microbatches (>= 1; per flush for the flushing kinds)
  --noam A             pd only: microbatches allowed in flight (default S)
  --replicas R         localsgd only: replicas (default S)
  --local-steps H      localsgd only: local steps per averaging round (default 1)
  --flush-group G      fill-drain only: microbatches per flush (default N)
  --virtual-stages V   interleaved only: model chunks per device (>= 2, default 2; N must be a
                       multiple of S)
  --import FILE.csv    read a torch.distributed.pipelining schedule CSV (strict: every refusal
                       names rank, step and cell)
  --export-csv OUT     write the schedule as a PyTorch schedule CSV (any kind; unit op costs)
  --forward-slots F    slots a forward takes (default 1)
  --backward-slots B   slots a backward takes (default 1; zb-h1: the input-gradient op I)
  --weight-slots W     zb-h1 (and an imported file with W): slots a W op takes
                       (default 1); costs above 1 on the flushing kinds change --summary and
                       --json only
  --latency-slots L    pd, fill-drain, localsgd: extra slots before a neighbouring stage may
                       use a result (default 0)
  --end-slot           add an end_slot column (useful with costs above 1)
  --art                draw the schedule as text instead of CSV
  --summary            print run length, utilization, bubble fraction and peak stash or
                       activations per stage
  --json               one JSON object: ranks, stages, microbatches, length_slots,
                       bubble_fraction, stage_rank, rank_stages, peak_activations, ...
)";

const char* kDelaysHelp =
    R"(Usage: pipelens-cli delays --stages S|A:B [--microbatches N] [--from F] [--json]

Exact PipeDream delays k - h(m, j) (SPEC section 3) with NOAM = S and unit costs. For each S:
the maximum, mean and 10th/50th/90th percentiles (nearest rank) over every block read of the
updates in the window, and the steady-state formula S^2 - S/2 (even S) or S^2 - S/2 - 1/2 (odd S).

Options:
  --stages S|A:B     one S, or every S from A to B
  --microbatches N   microbatches per run (default 10 S)
  --from F           the window starts at update F*K (default 0.5: the second half); a
                     window without updates (F too close to 1 for N) is refused
  --json             a JSON array of objects {stages, microbatches, max, mean, p10, p50, p90,
                     formula, formula_mean, samples}
)";

const char* kRunHelp = R"(Usage: pipelens-cli run CONFIG.json --out DIR [options]
       pipelens-cli run --default --out DIR [options]

Runs every method of the experiment (each on its own thread) and writes, into DIR,
summary.json, config.json, objective_per_slot.csv, objective_per_update.csv, gap_per_update.csv,
grad_norm.csv, theorem.csv, sweep.csv, timeline_<i>.csv and delays_<i>.csv (see docs/results.md).
DIR is replaced only when the run succeeds; a failed run leaves earlier results intact.

Options:
  --out DIR          results folder (required)
  --default          the default experiment instead of a config file
  --backend B        override the config: auto, cpu or opencl
  --device D         override the config: OpenCL device index or name
  --threads N        worker threads (default: one per core); a language model gives each
                     method threads/methods of them for its ops (results do not depend on it)
  --step-rule RULE   the rule of every method whose step size is a grid: best_final, stable,
                     stable:PRESET (lm_script or notebook) or a JSON object such as
                     '{"kind": "stable", "preset": "notebook", "tail_frac": 0.01}'
                     (docs/config.md)
  --budget-rule R    override the config's budget.rule: fit (the largest N whose run fits
                     in the slot budget), truncate (a longer run cut at the budget) or reach
                     (the smallest N whose run lasts at least the budget, run whole)
  --optimizer O      every method's optimizer: sgd, momentum, nesterov, adam or adamw (its
                     defaults) or a JSON object such as '{"kind": "adam", "beta1": 0.95}'
                     (docs/correctors.md)
  --correctors C     the staleness correctors of every method that can take them (pd,
                     localsgd, sgd, imported async; rpd: delay_adaptive and dc); the others
                     get none: none, one kind (delay_adaptive, prediction, dc, lookahead,
                     accumulate) with its defaults, or a JSON list such as
                     '[{"kind": "prediction", "s": "pipeoptim"}, {"kind": "dc"}]'
  --figures          also draw the run's figures into DIR with the desktop app's charts (no
                     display needed): gantt.png (the start-up, cells numbered), gantt-all.png,
                     heatmap.png, loss.png, figures.png, window.png, and index.html showing them
                     with the summary table (UI builds only; docs/results.md)
  --trace FILE.json  also write the schedule as a Chrome trace (open it in ui.perfetto.dev or
                     chrome://tracing): one process per pipeline method (per replica for
                     LocalSGD), one thread per stage, one event per F or B (1 slot = 1 ms) with
                     microbatch, version read and staleness, and the loss as a counter (both
                     objectives; RPD has no timeline and no track). A new file or a regular
                     file to replace, in an existing folder, outside DIR (docs/results.md)
  --quiet            print nothing but errors
)";

const char* kSweepHelp = R"(Usage: pipelens-cli sweep SWEEP.json --out DIR [--resume] [options]

Runs the sweep's experiment once per value of its axis (stages, delta, local_steps, replicas,
noam, gradient_noise, step_size, rows, dim, schedule, optimizer or corrector), each method's
step size chosen by its rule
(best_final or stable with its thresholds) over the seeds. Points run in parallel; each finished point is written
at once to DIR/points/point-NNNN.json, and DIR/summary.csv and DIR/summary.json list the chosen
step and the final values (mean and sd over seeds) per point and method (see docs/sweeps.md).
Ctrl-C stops between runs keeping every finished point; --resume continues the sweep in DIR,
skipping the points already there.

Under `mpirun -np P pipelens-cli sweep ...` the points are handed out to the P processes one at
a time, each process computing one point at a time; rank 0 writes the same folder one process
would (docs/mpi.md).

Options:
  --out DIR          results folder (required): new or empty, or the same sweep with --resume
  --resume           continue the sweep already in DIR
  --backend B        override the experiment: auto, cpu or opencl
  --device D         override the experiment: OpenCL device index or name
  --threads N        worker threads (default: one per core; not used under mpirun)
  --step-rule RULE   as the sweep's step_rule, over it: best_final, stable, stable:PRESET
                     (lm_script or notebook) or a JSON object (docs/config.md)
  --budget-rule R    override the experiment's budget.rule: fit, truncate or reach
                     (docs/config.md)
  --quiet            print nothing but errors
)";

const char* kExampleHelp =
    R"(Usage: pipelens-cli example [default|pd|rpd|localsgd|sgd|fill-drain|compare|lm]

Prints an example experiment config as JSON (docs/config.md explains every key).
)";

const char* kDevicesHelp = R"(Usage: pipelens-cli devices [--json]

Lists every OpenCL platform and device: name, vendor, driver, compute units, global memory, fp64
support and the largest work-group. The index in brackets is what `run --device` and the config's
"device" take (a part of the name works too). Runs use the first device by default (backend
"auto"), or the CPU engine, with a notice, when there is none.

Options:
  --json   a JSON array of objects {index, platform, name, vendor, driver, version, type,
           compute_units, global_mem_bytes, max_alloc_bytes, local_mem_bytes,
           max_work_group_size, fp64}
)";

// Parsed by the command's table in cmdline/args.cpp (the strict rules are listed there).
using Args = cmdline::ParsedArgs;

Args parseCommand(const std::string& command, int argc, char** argv) {
    return cmdline::parseArgs(cmdline::commandSpec(command), argc, argv, 2);
}

std::string shown(const std::string& text) {
    return cmdline::shownValue(text);
}

// Text that quotes the user's config (its name, method labels, paths) line by line with its
// control bytes escaped: a name holding ESC]0;...BEL must not retitle the terminal.
std::string terminalText(const std::string& text) {
    std::string out;
    std::size_t from = 0;
    while (from < text.size()) {
        const std::size_t end = std::min(text.find('\n', from), text.size());
        out += cmdline::withoutControlBytes(std::string_view(text).substr(from, end - from));
        if (end < text.size()) out += '\n';
        from = end + 1;
    }
    return out;
}

bool wantsHelp(int argc, char** argv) {
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") return true;
    }
    return false;
}

int cmdSchedule(const Args& a, std::ostream& out) {
    if (isProgramSchedule(a)) return runProgramSchedule(a, out);
    if (!a.has("kind")) {
        throw ConfigError(
            "--kind is missing: one of pd, fill-drain, localsgd, gpipe, 1f1b, interleaved, "
            "zb-h1 (or --import FILE.csv)");
    }
    if (!a.has("stages")) throw ConfigError("--stages is missing: an integer >= 1");
    if (!a.has("microbatches")) throw ConfigError("--microbatches is missing: an integer >= 1");
    ScheduleParams p;
    const std::string kind = a.get("kind");
    if (kind != "pd" && kind != "fill-drain" && kind != "localsgd") {
        throw ConfigError("--kind = \"" + shown(kind) +
                          "\" is not allowed: one of pd, fill-drain, localsgd, gpipe, 1f1b, "
                          "interleaved, zb-h1 (or --import FILE.csv)");
    }
    p.kind = parseScheduleKind(kind);
    // The same bounds as a config's; costs are bounded so slot numbers cannot overflow.
    p.stages = a.integer("stages", 0, limits::kStages.lo, limits::kStages.hi);
    p.microbatches = a.integer("microbatches", 0, 1, 100'000'000);
    p.noam = a.integer("noam", 0, 1, limits::kNoam.hi);
    p.replicas = a.integer("replicas", 0, 1, limits::kReplicas.hi);
    p.localSteps = a.integer("local-steps", 1, limits::kLocalSteps.lo, limits::kLocalSteps.hi);
    p.flushGroup = a.integer("flush-group", 0, 1, limits::kFlushGroup.hi);
    p.costs.forwardSlots = a.integer("forward-slots", 1, limits::kOpSlots.lo, limits::kOpSlots.hi);
    p.costs.backwardSlots =
        a.integer("backward-slots", 1, limits::kOpSlots.lo, limits::kOpSlots.hi);
    p.costs.latencySlots =
        a.integer("latency-slots", 0, limits::kLatencySlots.lo, limits::kLatencySlots.hi);
    Timeline tl = buildTimeline(p);
    if (a.has("export-csv") || a.has("json")) {
        const PipelineProgram program = programFromTimeline(tl);
        if (a.has("export-csv")) exportProgramCsv(program, a.get("export-csv"));
        if (a.has("json")) return out << programSummaryJson(summarizeProgram(program), program), 0;
    }
    if (a.has("art")) {
        out << timelineArt(tl, 100000);
    } else if (!a.has("summary") && !a.has("export-csv")) {
        out << timelineCsv(tl, a.has("end-slot"));
    }
    if (a.has("summary")) {
        Utilization u = utilization(tl);
        out << "slots: " << tl.totalSlots << "\nutilization: " << u.overall
            << "\nbubble_fraction: " << u.bubbleFraction << "\nper_stage_utilization:";
        for (double v : u.perStage) out << ' ' << v;
        out << "\npeak_stashed_copies:";
        for (int v : tl.peakStash) out << ' ' << v;
        out << "\naveraging_slots:";
        for (int v : tl.averagingSlots) out << ' ' << v;
        out << '\n';
    }
    return 0;
}

std::pair<int, int> stageRange(const std::string& text) {
    auto colon = text.find(':');
    auto parse = [&](const std::string& s) {
        char* end = nullptr;
        long v = std::strtol(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || v < 1 || v > kMaxStages) {
            throw ConfigError("--stages = \"" + shown(text) +
                              "\" is not allowed: an integer in [1, " + std::to_string(kMaxStages) +
                              "] or a range A:B");
        }
        return static_cast<int>(v);
    };
    if (colon == std::string::npos) {
        int s = parse(text);
        return {s, s};
    }
    int lo = parse(text.substr(0, colon));
    int hi = parse(text.substr(colon + 1));
    if (lo > hi) {
        throw ConfigError("--stages = \"" + shown(text) + "\" is not allowed: A:B needs A <= B");
    }
    return {lo, hi};
}

// Delay statistics for S = lo..hi in slices of about equal work (~S^3 each), with a progress
// line on `err` after each slice when the whole range is long (S up to 4096 takes minutes).
std::vector<DelayStats> delayStatsWithProgress(int lo, int hi, int n, double from,
                                               std::ostream& err) {
    auto work = [](int S) { return static_cast<double>(S) * S * S; };
    double total = 0.0;
    for (int S = lo; S <= hi; ++S) total += work(S);
    const bool report = total > 1e10;
    const double slice = report ? total / 20.0 : total;
    std::vector<DelayStats> all;
    double done = 0.0;
    for (int first = lo; first <= hi;) {
        int last = first;
        double w = work(first);
        while (last < hi && w + work(last + 1) <= slice) w += work(++last);
        std::vector<DelayStats> part = pipeDreamDelayStatsRange(first, last, n, from);
        all.insert(all.end(), part.begin(), part.end());
        done += w;
        if (report) {
            err << "delays: S = " << lo << ".." << last << " done ("
                << static_cast<int>(100.0 * done / total) << "% of the work)" << std::endl;
        }
        first = last + 1;
    }
    return all;
}

int cmdDelays(const Args& a, std::ostream& out, std::ostream& err) {
    if (!a.has("stages")) throw ConfigError("--stages is missing: an integer or a range A:B");
    auto [lo, hi] = stageRange(a.get("stages"));
    const int n = a.integer("microbatches", 0, 0, 100'000'000);
    const double from = a.number("from", 0.5);
    // Every argument is checked before anything is printed.
    if (!(from >= 0.0 && from < 1.0)) {
        throw ConfigError("--from = \"" + shown(a.get("from")) +
                          "\" is not allowed: a number in [0, 1)");
    }
    // The window holds the updates from ceil(F K) to K - 1 (K = N S, smallest at S = lo): a
    // window with none would print statistics of zero samples, so it is refused up front.
    const long long updates = static_cast<long long>(n > 0 ? n : 10 * lo) * lo;
    if (static_cast<long long>(std::ceil(from * static_cast<double>(updates))) >= updates) {
        const double largest =
            std::floor(static_cast<double>(updates - 1) / static_cast<double>(updates) * 1e6) / 1e6;
        std::ostringstream why;
        why << "--from = \"" << shown(a.get("from")) << "\" leaves no samples: with --stages " << lo
            << " and " << updates / lo << " microbatches (" << updates
            << " updates) the window is empty; --from must be at most " << largest
            << " (or give more --microbatches)";
        throw ConfigError(why.str());
    }
    // The whole range's memory, before the slices (each would name only itself).
    requireDelayStatsMemory(lo, hi, n, 0);
    nlohmann::json arr = nlohmann::json::array();
    const std::vector<DelayStats> all = delayStatsWithProgress(lo, hi, n, from, err);
    if (!a.has("json")) {
        out << "stages microbatches    max  formula       mean  S^2/2    p10    p50    p90\n";
    }
    for (int S = lo; S <= hi; ++S) {
        const DelayStats& d = all[static_cast<size_t>(S - lo)];
        if (a.has("json")) {
            arr.push_back({{"stages", S},
                           {"microbatches", d.microbatches},
                           {"max", d.max},
                           {"mean", d.mean},
                           {"p10", d.p10},
                           {"p50", d.p50},
                           {"p90", d.p90},
                           {"formula", d.formulaMax},
                           {"formula_mean", d.formulaMean},
                           {"samples", d.samples}});
        } else {
            // The formula is an integer: print it as one (as a double it would inherit the
            // precision 1 left by the previous row's S^2/2 column and read "1e+01").
            out << std::setw(6) << S << std::setw(13) << d.microbatches << std::setw(7) << d.max
                << std::setw(9) << static_cast<long long>(d.formulaMax) << std::setw(11)
                << std::fixed << std::setprecision(2) << d.mean << std::setw(7)
                << std::setprecision(1) << d.formulaMean << std::setw(7) << d.p10 << std::setw(7)
                << d.p50 << std::setw(7) << d.p90 << std::defaultfloat << '\n';
        }
    }
    if (a.has("json")) out << arr.dump(2) << '\n';
    return 0;
}

// The language model on the built-in corpus, PD vs RPD vs LocalSGD (examples/lm-builtin.json).
ExperimentConfig languageModelExample() {
    ExperimentConfig c;
    c.name = "example-lm";
    c.stages = 4;
    c.batchSize = 8;
    c.backend = BackendKind::Cpu;
    LanguageModelSpec lm;
    lm.width = 32;
    lm.heads = 4;
    lm.context = 16;
    lm.corpusCharacters = 40'000;
    lm.heldOutFraction = 0.1;
    lm.heldOutEvery = 200;
    c.objective.languageModel = lm;
    c.sampling.blowUpFactor = 100.0;
    c.budget.epochs = 0;
    c.budget.totalSlots = 600;
    MethodSpec pd;
    pd.step.value = 0.5;
    MethodSpec rpd = pd;
    rpd.method = Method::RandomizedPipeDream;
    rpd.delta = 6;
    MethodSpec local = pd;
    local.method = Method::LocalSgd;
    local.localSteps = 4;
    c.methods = {pd, rpd, local};
    return c;
}

nlohmann::json exampleJson(const std::string& which) {
    ExperimentConfig c = defaultExperiment();
    MethodSpec m;
    m.step.value = 0.25;
    if (which == "default" || which == "compare") {
        if (which == "compare") {
            for (Method extra : {Method::Sgd, Method::FillDrain}) {
                MethodSpec e;
                e.method = extra;
                e.step.value = 0.25;
                c.methods.push_back(e);
            }
        }
        return c.toJson();
    }
    if (which == "lm") return languageModelExample().toJson();
    const std::optional<Method> method = findMethod(which);
    if (!method) {
        throw ConfigError("example = \"" + shown(which) +
                          "\" is not allowed: one of default, compare, lm, " + methodKeyList());
    }
    m.method = *method;
    switch (*method) {
        case Method::PipeDream:
            m.step.grid = true;
            m.step.gridMin = -8;
            m.step.gridMax = 0;
            break;
        case Method::RandomizedPipeDream:
            m.delayMode = DelayMode::Uniform;
            m.delta = 60;
            m.seed = 7;
            break;
        case Method::LocalSgd:
            m.replicas = 0;
            m.localSteps = 5;
            break;
        case Method::Sgd:
            break;
        case Method::FillDrain:
            m.flushGroup = 8;
            break;
        case Method::OneFOneB:
        case Method::ZeroBubbleH1:
            m.flushGroup = 16;
            if (*method == Method::ZeroBubbleH1) c.costs.backwardSlots = 2;  // F = I = W = 1
            break;
        case Method::TwoBw:
            m.accumulation = 8;
            break;
        case Method::Interleaved:
            m.flushGroup = 16;
            m.virtualStages = 2;
            c.costs.forwardSlots = 2;  // a chunk op costs half a stage op
            c.costs.backwardSlots = 2;
            break;
        case Method::Imported:
            m.scheduleFile = "examples/schedules/1f1b_s4_m8.csv";
            c.stages = 4;
            break;
    }
    c.name = "example-" + which;
    c.methods = {m};
    return c.toJson();
}

int cmdExample(const Args& a, std::ostream& out) {
    std::string which = a.positional().empty() ? "default" : a.positional()[0];
    out << exampleJson(which).dump(2) << '\n';
    return 0;
}

// Prints a set-up step on `err` only once it has lasted a second (PIPELENS_PROGRESS_AFTER_MS
// changes the delay): slow inputs say what they are doing, while a quick failure still prints its
// one-line reason alone. All progress output goes through print(), from any thread.
class SlowStepReporter {
  public:
    explicit SlowStepReporter(std::ostream& err)
        : err_(err), delay_(delayFromEnvironment()), thread_([this] { watch(); }) {}
    ~SlowStepReporter() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    SlowStepReporter(const SlowStepReporter&) = delete;
    SlowStepReporter& operator=(const SlowStepReporter&) = delete;

    void step(const std::string& what) {
        std::lock_guard<std::mutex> lock(mutex_);
        step_ = what;
        since_ = std::chrono::steady_clock::now();
        shown_ = delay_.count() == 0;
        if (shown_) err_ << terminalText(step_) << std::endl;
    }
    void print(const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex_);
        err_ << terminalText(line) << std::endl;
    }

  private:
    static std::chrono::milliseconds delayFromEnvironment() {
        const char* env = std::getenv("PIPELENS_PROGRESS_AFTER_MS");
        char* end = nullptr;
        const long ms = env ? std::strtol(env, &end, 10) : -1;
        return std::chrono::milliseconds(env && *env && *end == '\0' && ms >= 0 ? ms : 1000);
    }
    void watch() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!stop_) {
            wake_.wait_for(lock, std::chrono::milliseconds(200));
            if (!step_.empty() && !shown_ && std::chrono::steady_clock::now() - since_ >= delay_) {
                err_ << terminalText(step_) << std::endl;
                shown_ = true;
            }
        }
    }

    std::ostream& err_;
    const std::chrono::milliseconds delay_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::string step_;
    std::chrono::steady_clock::time_point since_;
    bool shown_ = false;
    bool stop_ = false;
    std::thread thread_;  // last: started once the rest is set up
};

// Progress on stderr (unless quiet): a line before each slow set-up step, one per finished method.
void reportProgress(RunOptions& opt, std::optional<SlowStepReporter>& reporter, bool quiet,
                    std::ostream& err) {
    if (quiet) return;
    reporter.emplace(err);
    opt.progress = [&reporter](const std::string& line) { reporter->print("done: " + line); };
    opt.onStage = [&reporter](const std::string& line) { reporter->step(line); };
}

// After a run: its warnings (even with --quiet: the run finished, but a method did not do what
// its name says), the results written with Ctrl-C as a clean stop, then the summary.
int finishRun(const std::vector<std::string>& warnings,
              const std::function<std::vector<std::string>(const std::atomic<bool>*)>& write,
              const std::string& summary, const std::string& folder, bool quiet, std::ostream& out,
              std::ostream& err) {
    for (const auto& w : warnings) err << "pipelens-cli: warning: " << terminalText(w) << '\n';
    if (!quiet) err << "writing results to " << terminalText(folder) << std::endl;
    for (const std::string& w : writeStoppable(write)) {
        err << "pipelens-cli: warning: " << terminalText(w) << '\n';
    }
    if (!quiet) {
        out << terminalText(summary);
        out << "results written to " << terminalText(folder) << '\n';
    }
    return 0;
}

// --backend and --device over the config's; a device name with control characters is refused
// (it would be echoed in notices and errors).
void applyBackendOptions(const Args& a, ExperimentConfig& config) {
    if (a.has("backend")) {
        const std::string b = a.get("backend");
        const std::optional<BackendKind> kind = parseEnum(kBackends, b);
        if (!kind) {
            throw ConfigError("--backend = \"" + shown(b) + "\" is not allowed: one of " +
                              enumNameList(kBackends));
        }
        config.backend = *kind;
    }
    if (a.has("device")) {
        const std::string d = a.get("device");
        for (char c : d) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                throw ConfigError("--device = \"" + shown(d) +
                                  "\" is not allowed: an OpenCL device index or a part of its "
                                  "name, without control characters");
            }
        }
        config.device = d;
    }
}

// --trace FILE.json, checked before the run (as --out is), so that a bad path never costs a run:
// a new name or a regular file to replace, in an existing folder this process may write into,
// with room for the temporary name beside it, and outside the results folder (which the run
// replaces as a whole).
std::string checkTraceTarget(const std::string& path, const std::string& resultsFolder) {
    namespace fs = std::filesystem;
    const std::string refused = "--trace = \"" + shown(path) + "\" is not allowed: ";
    if (path.empty() || path.back() == '/') {
        throw ConfigError(refused + "a file name such as trace.json");
    }
    const std::string kind = nonRegularFileKind(path);
    if (!kind.empty()) {
        throw ConfigError(refused + "it is " + kind +
                          "; a new file name or a regular file to replace");
    }
    fs::path parent = fs::path(path).parent_path();
    if (parent.empty()) parent = ".";
    std::error_code ec;
    const fs::path dir = fs::weakly_canonical(fs::absolute(parent, ec), ec);
    std::error_code ec2;
    const fs::path results = fs::weakly_canonical(fs::absolute(resultsFolder, ec2), ec2);
    if (!ec && !ec2) {
        const auto [r, d] = std::mismatch(results.begin(), results.end(), dir.begin(), dir.end());
        if (r == results.end()) {
            throw ConfigError(refused + "it is inside the results folder " + shown(resultsFolder) +
                              ", which the run replaces as a whole: choose a file outside it");
        }
    }
    ec.clear();
    if (!fs::is_directory(parent, ec)) {
        throw ConfigError(refused + "a file in an existing folder (" + shown(parent.string()) +
                          " is not one)");
    }
    if (::access(parent.c_str(), W_OK | X_OK) != 0) {
        throw ConfigError(refused + "cannot write in " + shown(parent.string()) + " (" +
                          std::strerror(errno) + ")");
    }
    // The atomic writer's temporary adds ".tmp-PID" (at most 7 digits) to the name.
    constexpr std::size_t kTemporarySuffix = 12;
    const std::size_t length = fs::path(path).filename().string().size();
    if (length + kTemporarySuffix > static_cast<std::size_t>(NAME_MAX)) {
        throw ConfigError(refused + "its name is " + std::to_string(length) +
                          " bytes long; at most " + std::to_string(NAME_MAX - kTemporarySuffix) +
                          " bytes leave room for the temporary file beside it");
    }
    return path;
}

// --optimizer / --correctors: a bare word is a name; text starting with { or [ is JSON.
nlohmann::json shorthandOption(const Args& a, const std::string& name) {
    const std::string text = a.get(name);
    const auto first = text.find_first_not_of(" \t\n");
    if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
        return parseConfigText(text, "--" + name);
    }
    return nlohmann::json(text);
}

// The run's --optimizer and --correctors over the config, validated again.
void applyOptimizerOptions(const Args& a, ExperimentConfig& config) {
    if (a.has("optimizer")) {
        const OptimizerSpec o = readOptimizerOrKind(shorthandOption(a, "optimizer"), "--optimizer");
        for (MethodSpec& m : config.methods) m.optimizer = o;
    }
    if (a.has("correctors")) {
        const CorrectorSpec k =
            readCorrectorsOrKind(shorthandOption(a, "correctors"), "--correctors");
        if (setCorrectorsWhereAllowed(config, k) == 0 && k.any()) {
            throw ConfigError("--correctors = \"" + shown(a.get("correctors")) +
                              "\" is not allowed here: no method of this experiment can take it "
                              "(correctors apply to pd, localsgd, sgd, imported async and, "
                              "delay_adaptive and dc only, rpd)");
        }
    }
    if (a.has("optimizer") || a.has("correctors")) config.validate();
}

int cmdRun(const Args& a, std::ostream& out, std::ostream& err, const RunFigureWriter& figures) {
    if (!a.has("out")) throw ConfigError("--out is missing: the results folder");
    if (a.has("figures") && !figures) {
        throw ConfigError(
            "--figures draws with the desktop app's charts, and this build has "
            "none: configure with -DPIPELENS_BUILD_UI=ON (Qt 6 Charts)");
    }
    // Checked before the run, so a bad --out never costs a whole run.
    const std::string folder = prepareResultsFolder(a.get("out"));
    const std::string trace = a.has("trace") ? checkTraceTarget(a.get("trace"), folder) : "";
    ExperimentConfig config = cmdline::experimentOf(a, "run");
    if (!trace.empty() && std::none_of(config.methods.begin(), config.methods.end(),
                                       [](const MethodSpec& m) { return isPipeline(m.method); })) {
        throw ConfigError(
            "--trace needs a pipeline method (any method but rpd): the trace draws "
            "their timelines, and rpd has none");
    }
    applyBackendOptions(a, config);
    applyOptimizerOptions(a, config);
    if (a.has("step-rule")) {
        // Every method whose step size is a grid takes the rule (as a sweep's step_rule).
        const StepRuleSpec rule = parseStepRuleOption(a.get("step-rule"));
        for (MethodSpec& m : config.methods) {
            if (m.step.grid) m.step.rule = rule;
        }
        config.validate();
    }
    const int threads = a.integer("threads", 0, 0, 256);
    const bool quiet = a.has("quiet");
    // Notices (e.g. "no OpenCL device: CPU engine") are reported with the results, in the
    // summary and summary.json, so a run that fails prints its one-line reason and nothing else.
    RunOptions opt;
    opt.threads = threads;
    std::optional<SlowStepReporter> reporter;
    reportProgress(opt, reporter, quiet, err);
    const auto start = std::chrono::steady_clock::now();
    ExperimentResult result = runOnChosenEngine(config, opt);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reporter.reset();
    ExtraResultFiles extra;
    if (a.has("figures")) {
        extra = [&](const std::filesystem::path& tmp) {
            if (!quiet) err << "drawing the figures" << std::endl;
            figures(result, seconds, tmp);
        };
    }
    const auto write = [&](const std::atomic<bool>* stop) {
        std::vector<std::string> warnings = writeResults(result, folder, stop, extra);
        if (!trace.empty()) {
            if (!quiet) err << "writing the trace to " << terminalText(trace) << std::endl;
            const std::string text = chromeTraceJson(result);
            replaceFileAtomically(trace, text.data(), text.size());
        }
        return warnings;
    };
    const int code =
        finishRun(result.warnings, write, summaryText(result), folder, quiet, out, err);
    if (!trace.empty() && !quiet) out << "trace written to " << terminalText(trace) << '\n';
    return code;
}

std::atomic<bool> gSweepCancel{false};

extern "C" void onSweepInterrupt(int) {
    gSweepCancel.store(true);
}

SweepCommand parseSweepCommand(const Args& a) {
    if (!a.has("out")) throw ConfigError("--out is missing: the results folder");
    if (a.positional().size() != 1) throw ConfigError("sweep needs one sweep file; see --help");
    SweepCommand c;
    c.specPath = a.positional()[0];
    c.spec = SweepSpec::fromFile(c.specPath);
    applyBackendOptions(a, c.spec.experiment);
    if (a.has("budget-rule")) {
        c.budgetRule = a.get("budget-rule");
        cmdline::applyBudgetRuleOption(a, c.spec.experiment);
        c.spec.validate();
    }
    if (a.has("step-rule")) {
        c.stepRule = a.get("step-rule");
        c.spec.stepRule = parseStepRuleOption(c.stepRule);
        c.spec.validate();
    }
    c.threads = a.integer("threads", 0, 0, 256);
    c.quiet = a.has("quiet");
    c.resume = a.has("resume");
    c.outDir = a.get("out");
    return c;
}

int runSweepInto(const SweepCommand& c, SweepFolder& folder, std::ostream& out, std::ostream& err) {
    std::vector<std::string> notices;
    BackendChoice backend = selectSweepBackend(c.spec, notices);
    if (!c.quiet) {
        for (const auto& n : notices) err << "notice: " << n << '\n';
    }
    SweepRunOptions opt;
    opt.backend = backend.provider;
    opt.threads = c.threads;
    gSweepCancel.store(false);
    opt.cancel = &gSweepCancel;
    SweepPoints shown = folder.finished();
    opt.onPoint = [&](const PointResult& p) {
        folder.writePoint(p);
        shown[p.index] = p;
        folder.writeSummary(c.spec, shown);
    };
    if (!c.quiet) opt.onProgress = [&](const SweepProgress& p) { printSweepProgress(err, p); };
    auto previous = std::signal(SIGINT, onSweepInterrupt);
    SweepOutcome result;
    try {
        result = runSweep(c.spec, folder.finished(), opt);
    } catch (...) {
        std::signal(SIGINT, previous);
        // A failed point: the reason, then how to continue (the finished points are on disk), or,
        // when no point finished in a folder this run created, no folder to block the rerun.
        const int code = reportCliError(std::current_exception(), err);
        if (!folder.discardIfUnused()) printSweepResumeHint(c, err);
        return code;
    }
    std::signal(SIGINT, previous);
    folder.writeSummary(c.spec, result.points);
    return reportSweepEnd(c, folder.path(), result.points, out, err);
}

int cmdSweep(const Args& a, std::ostream& out, std::ostream& err) {
#ifdef PIPELENS_HAVE_MPI
    // Started by mpirun with several processes: the points are spread over them (docs/mpi.md).
    if (launcherWorldSize() > 1) {
        return runSweepCommandOverMpi([&] { return parseSweepCommand(a); }, out, err);
    }
#endif
    const SweepCommand c = parseSweepCommand(a);
    SweepFolder folder = SweepFolder::open(c.outDir, c.spec, c.resume);
    try {
        return runSweepInto(c, folder, out, err);
    } catch (...) {
        // An error before the sweep started (its backend) leaves no folder behind either.
        folder.discardIfUnused();
        throw;
    }
}

int cmdDevices(const Args& a, std::ostream& out) {
#ifdef PIPELENS_HAVE_OPENCL
    const auto devices = gpu::listDevices();
    out << (a.has("json") ? gpu::devicesJson(devices) : gpu::devicesText(devices));
#else
    out << (a.has("json") ? "[]\n"
                          : "This build has no OpenCL backend: runs use the CPU engine.\n");
#endif
    return 0;
}

}  // namespace

namespace {

int dispatch(int argc, char** argv, std::ostream& out, std::ostream& err,
             const std::vector<CliCommand>& extra, const RunFigureWriter& figures) {
    const std::string cmd = argv[1];
    try {
        if (cmd == "help" || cmd == "--help" || cmd == "-h") {
            // `help COMMAND` is `COMMAND --help`; anything else after help is refused.
            const std::map<std::string, const char*> texts{
                {"schedule", kScheduleHelp}, {"delays", kDelaysHelp},   {"run", kRunHelp},
                {"sweep", kSweepHelp},       {"example", kExampleHelp}, {"devices", kDevicesHelp}};
            if (argc == 3 && texts.count(argv[2]) > 0) return out << texts.at(argv[2]), 0;
            if (argc > 2) {
                const int stray = texts.count(argv[2]) > 0 ? 3 : 2;
                throw ConfigError("unexpected argument \"" + shown(argv[stray]) +
                                  "\": help takes a command name at most; `pipelens-cli COMMAND "
                                  "--help` describes one command");
            }
            out << kMainHelp;
            return 0;
        }
        if (cmd == "--version") {
            out << "pipelens-cli 0.1.0\n";
            return 0;
        }
        const bool help = wantsHelp(argc, argv);
        // A typo'd PIPELENS_* value fails here, before any work, not mid-run.
        if (!help) checkEnvironment();
        if (cmd == "schedule") {
            if (help) return out << kScheduleHelp, 0;
            return cmdSchedule(parseCommand(cmd, argc, argv), out);
        }
        if (cmd == "delays") {
            if (help) return out << kDelaysHelp, 0;
            return cmdDelays(parseCommand(cmd, argc, argv), out, err);
        }
        if (cmd == "run") {
            if (help) return out << kRunHelp, 0;
            return cmdRun(parseCommand(cmd, argc, argv), out, err, figures);
        }
        if (cmd == "sweep") {
            if (help) return out << kSweepHelp, 0;
            return cmdSweep(parseCommand(cmd, argc, argv), out, err);
        }
        if (cmd == "example") {
            if (help) return out << kExampleHelp, 0;
            return cmdExample(parseCommand(cmd, argc, argv), out);
        }
        if (cmd == "devices") {
            if (help) return out << kDevicesHelp, 0;
            return cmdDevices(parseCommand(cmd, argc, argv), out);
        }
        for (const CliCommand& c : extra) {
            if (c.name == cmd) return c.run(argc, argv, out, err);
        }
        if (cmd == "reproduce") {
            err << "pipelens-cli: reproduce draws the figures with the desktop app's charts, and "
                   "this build has none: configure with -DPIPELENS_BUILD_UI=ON (Qt 6 Charts)\n";
            return 1;
        }
        if (cmd == "study") {
            err << "pipelens-cli: study draws its figures with the desktop app's charts, and "
                   "this build has none: configure with -DPIPELENS_BUILD_UI=ON (Qt 6 Charts)\n";
            return 1;
        }
        if (cmd == "animate") {
            err << "pipelens-cli: animate draws the frames with the desktop app's charts, and "
                   "this build has none: configure with -DPIPELENS_BUILD_UI=ON (Qt 6 Charts)\n";
            return 1;
        }
        err << "pipelens-cli: unknown command \"" << shown(cmd)
            << "\" (allowed: schedule, delays, run, sweep, example, devices, reproduce, "
               "animate, study, help)\n";
        return 1;
    } catch (...) {
        return reportCliError(std::current_exception(), err);
    }
}

}  // namespace

int runCli(int argc, char** argv, std::ostream& out, std::ostream& err,
           const std::vector<CliCommand>& extra, const RunFigureWriter& figures) {
    if (argc < 2) {
        err << kMainHelp;
        return 1;
    }
    const int code = dispatch(argc, argv, out, err, extra, figures);
    // Output that did not reach its file (a full disk, /dev/full, a closed pipe) is a failure,
    // not a success: flushed and checked here, for every command.
    errno = 0;
    out.flush();
    int error = errno;
    bool failed = out.bad();
    if (&out == &std::cout) {
        errno = 0;
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
            failed = true;
            if (errno != 0) error = errno;
        }
    }
    if (!failed) return code;
    err << "pipelens-cli: cannot write to standard output: "
        << (error != 0 ? std::strerror(error) : "write error") << '\n';
    return code == 0 ? kOutputFailed : code;
}

int reportCliError(const std::exception_ptr& error, std::ostream& err) {
    try {
        std::rethrow_exception(error);
    } catch (const ConfigError& e) {
        err << "pipelens-cli: " << cmdline::withoutControlBytes(e.what()) << '\n';
        return 1;
    } catch (const DataError& e) {
        err << "pipelens-cli: " << cmdline::withoutControlBytes(e.what()) << '\n';
        return 1;
    } catch (const ResourceError& e) {
        err << "pipelens-cli: " << cmdline::withoutControlBytes(e.what()) << '\n';
        return 1;
    } catch (const IoError& e) {
        err << "pipelens-cli: " << cmdline::withoutControlBytes(e.what()) << '\n';
        return 2;
    } catch (const Interrupted& e) {
        err << "pipelens-cli: interrupted while " << cmdline::withoutControlBytes(e.what())
            << "; earlier results are unchanged\n";
        return 130;
    } catch (const std::bad_alloc&) {
        err << "pipelens-cli: ran out of memory: the input needs more memory than this machine "
               "gives (see docs/reliability.md; PIPELENS_MEMORY_LIMIT lowers the limit checked "
               "before a run)\n";
        return 1;
    } catch (const std::exception& e) {
        err << "pipelens-cli: run failed: " << cmdline::withoutControlBytes(e.what()) << '\n';
        return 2;
    }
}

}  // namespace pipelens

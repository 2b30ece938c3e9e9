#include "reproduce_command.hpp"

#include <QString>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "cmdline/args.hpp"
#include "errors.hpp"
#include "experiment/output/results.hpp"
#include "experiment/protocols/paper_protocols.hpp"
#include "figure_chart.hpp"
#include "offscreen_application.hpp"

namespace pipelens::ui {
namespace {

const char* kHelp =
    R"(Usage: pipelens-cli reproduce E1|E2|E3|E4|E5|all --out DIR [--quick] [--protocol P] [--seeds K]
                                 [--corpus FILE] [--paper-step] [--threads N] [--quiet]

Runs the paper's experiments with the protocols of SPEC section 7 and writes, for each, into
DIR/<id>/: the figure as PNG and SVG (drawn with the desktop app's Qt Charts on Qt's offscreen
platform), its data as CSV (series,x,y; E4 adds y_sd, the sd over seeds) and summary.json with the key numbers (chosen step size
per method, final values, E1's fits). DIR/summary.json lists the experiments with their wall
and CPU seconds. DIR is replaced only when everything succeeded. docs/reproduction.md compares
the figures with the paper's.

`all` runs E1-E4; E5 (the language model: hours at full size on two cores) runs when named.

Options:
  --out DIR      results folder (required)
  --quick        a smaller version of each protocol (for CI: about a minute for all)
  --protocol P   E2-E4: notebook (default: what the authors' notebooks ran, SPEC section 7.1:
                 their stable rule and thresholds, grids and seeds, E4's "reach" budget) or
                 captions (the repository captions' reading: best-final for E2 and E3, E2 on
                 data seed 1, E4 truncated at 3180 slots); summary.json names it
  --seeds K      E2 and E4: run the protocol for data (and noise, RPD) seeds 0 ... K-1, each
                 tuned on its own; figures show mean +- sd (E2 bands, E4 bars), summaries each
                 seed's step and value, and E4 per S whether every seed has the same winner
                 (1 ... 32, default 1)
  --corpus FILE  E5: the UTF-8 text to train on (Tiny Shakespeare for the paper's figure);
                 without it, the built-in corpus (summary.json says so)
  --paper-step   E5: the paper's step size 0.125 for every method instead of the stable rule
                 over 2^-5 ... 2^-1 (five times fewer runs)
  --threads N    worker threads (default: one per core)
  --quiet        print nothing but errors
)";

struct Options {
    std::vector<std::string> ids;
    std::string out;
    ReproduceInputs inputs;
    bool quick = false;
    bool quiet = false;
    int threads = 0;
};

// By the `reproduce` table of cmdline/args.cpp, with run's rules and messages: --corpus and
// --paper-step are refused for anything but E5, an unknown experiment before anything runs, and
// a bad --out before the first experiment (as run's).
Options parse(int argc, char** argv) {
    const cmdline::ParsedArgs a =
        cmdline::parseArgs(cmdline::commandSpec("reproduce"), argc, argv, 2);
    if (a.positional().empty()) {
        throw ConfigError("reproduce needs one experiment: E1, E2, E3, E4, E5 or all (see --help)");
    }
    const std::string& id = a.positional()[0];
    const auto known = knownReproductionIds();
    if (id != "all" && std::find(known.begin(), known.end(), id) == known.end()) {
        throw ConfigError("experiment = \"" + cmdline::shownValue(id) +
                          "\" is not allowed: one of E1, E2, E3, E4, E5, all");
    }
    if (!a.has("out")) throw ConfigError("--out is missing: the results folder");
    Options o;
    o.ids = id == "all" ? reproductionIds() : std::vector<std::string>{id};
    o.out = prepareResultsFolder(a.get("out"));
    o.quick = a.has("quick");
    o.quiet = a.has("quiet");
    o.inputs.paperStep = a.has("paper-step");
    o.inputs.corpus = a.get("corpus");
    if (a.has("protocol")) o.inputs.protocol = parseReproduceProtocol(a.get("protocol"));
    o.inputs.seeds = a.integer("seeds", 1, 1, kMaxReproduceSeeds);
    o.threads = a.integer("threads", 0, 0, 256);
    return o;
}

void writeExperiment(const Reproduction& r, const std::filesystem::path& folder) {
    std::filesystem::create_directories(folder);
    nlohmann::json summary = r.summary;
    nlohmann::json files = nlohmann::json::array();
    for (const FigurePanel& f : r.figures) {
        QString error;
        if (!exportFigure(f, QString::fromStdString(folder.string()), &error)) {
            throw IoError("cannot draw " + r.id + "'s " + f.file + ": " + error.toStdString());
        }
        writeFileAtomically((folder / (f.file + ".csv")).string(), figureCsv(f));
        files.push_back({{"png", f.file + ".png"},
                         {"svg", f.file + ".svg"},
                         {"csv", f.file + ".csv"},
                         {"x_title", f.xTitle},
                         {"y_title", f.yTitle},
                         {"log_x", f.logX},
                         {"log_y", f.logY}});
    }
    summary["figures"] = files;
    writeFileAtomically((folder / "summary.json").string(), summary.dump(2) + "\n");
}

}  // namespace

int runReproduceCommand(int argc, char** argv, std::ostream& out, std::ostream& err) {
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") return out << kHelp, 0;
    }
    const Options o = parse(argc, argv);
    // The results-folder policy of run and sweep, checked in parse before anything runs (stale
    // temporaries of an interrupted reproduce removed); written atomically with Ctrl-C and
    // SIGTERM as a clean stop that leaves no DIR.tmp-PID behind.
    const std::string& folder = o.out;
    const auto app = ensureOffscreenApplication();
    RunOptions run;
    run.threads = o.threads;
    const auto write = [&](const std::atomic<bool>* stop) {
        run.cancel = stop;
        return writeFolderAtomically(
            folder,
            [&](const std::filesystem::path& tmp) {
                nlohmann::json index = nlohmann::json::array();
                for (const std::string& id : o.ids) {
                    if (stop->load()) throw Interrupted("reproduce: stopped");
                    const auto wall0 = std::chrono::steady_clock::now();
                    const std::clock_t cpu0 = std::clock();
                    const Reproduction r = reproduce(id, o.quick, run, o.inputs);
                    const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
                    const double wall =
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0)
                            .count();
                    writeExperiment(r, tmp / id);
                    index.push_back(
                        {{"experiment", id}, {"wall_seconds", wall}, {"cpu_seconds", cpu}});
                    if (!o.quiet) {
                        err << "reproduce: " << id << " done in " << wall << " s (" << cpu
                            << " s CPU)\n";
                    }
                }
                writeFileAtomically(
                    (tmp / "summary.json").string(),
                    nlohmann::json{{"quick", o.quick}, {"experiments", index}}.dump(2) + "\n");
            },
            stop);
    };
    for (const std::string& w : writeStoppable(write))
        err << "pipelens-cli: warning: " << w << '\n';
    if (!o.quiet) out << "figures written to " << o.out << '\n';
    return 0;
}

}  // namespace pipelens::ui

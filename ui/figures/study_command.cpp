#include "study_command.hpp"

#include <QAreaSeries>
#include <QChart>
#include <QGraphicsScene>
#include <QLineSeries>
#include <QPainter>
#include <QPen>
#include <QString>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <string>

#include "charts/chart_support.hpp"
#include "cmdline/args.hpp"
#include "errors.hpp"
#include "experiment/output/results.hpp"
#include "experiment/protocols/staleness_study.hpp"
#include "figure_chart.hpp"
#include "offscreen_application.hpp"

namespace pipelens::ui {
namespace {

const char* kHelp =
    R"(Usage: pipelens-cli study staleness --out DIR [--quick] [--seeds N] [--problem P]
                                 [--threads N] [--quiet]

Can a corrector undo PipeDream's staleness? For S = 4, 8, 16, 32 and two problems (the paper's
logistic E4 setting and the character language model), runs on equal time PD, PD with each
corrector alone (delay_adaptive, prediction with exact and PipeOptim s, dc, lookahead,
accumulate k = 2), RPD, LocalSGD and 1F1B, each step size tuned per (method, S) by the stable
rule over a grid, and writes into DIR:
  staleness.csv, staleness.md   one row per problem, S and method: the step size, the final loss
                                (mean and sd over seeds), the time to a target loss in slots and
                                block updates, and divergence
  final_loss_<problem>.png      final loss vs S, one line per method (and .svg, .csv)
  curves_<problem>_s8.png       the loss curves of PD, PD + each corrector and 1F1B at S = 8
  summary.json                  the settings, the target's definition and every row
The target is the loss 1F1B reaches at half its budget. DIR is replaced only when everything
succeeded. docs/correctors.md ("Study") says how to read the table.

Options:
  --out DIR      results folder (required)
  --quick        S = 4, 8, smaller problems, short grids, 1 or 2 seeds (CI: a few minutes)
  --seeds N      seeds per problem (1 ... 16; default: logistic 3, language model 1; quick 2, 1)
  --problem P    only these problems: logistic, language_model, or both comma-separated
                 (default: both)
  --threads N    worker threads (default: one per core)
  --quiet        print nothing but errors
)";

struct Options {
    std::string out;
    StudyInputs inputs;
    bool quiet = false;
    int threads = 0;
};

Options parse(int argc, char** argv) {
    const cmdline::ParsedArgs a = cmdline::parseArgs(cmdline::commandSpec("study"), argc, argv, 2);
    if (a.positional().empty()) throw ConfigError("study needs one study: staleness (see --help)");
    if (a.positional()[0] != "staleness") {
        throw ConfigError("study = \"" + cmdline::shownValue(a.positional()[0]) +
                          "\" is not allowed: staleness");
    }
    if (!a.has("out")) throw ConfigError("--out is missing: the results folder");
    Options o;
    o.out = prepareResultsFolder(a.get("out"));
    o.inputs.quick = a.has("quick");
    o.inputs.seeds = a.integer("seeds", 0, 1, kMaxStudySeeds);
    if (a.has("problem")) {
        std::string list = a.get("problem");
        for (std::size_t start = 0;;) {
            const std::size_t comma = list.find(',', start);
            o.inputs.problems.push_back(list.substr(start, comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    o.quiet = a.has("quiet");
    o.threads = a.integer("threads", 0, 0, 256);
    return o;
}

// The figures' palette has eight colours and the final-loss figure ten methods: the ninth and
// tenth get colours of their own (Paul Tol's wine and olive), their error bars too, so that no
// two methods share a legend colour. The figures of `reproduce` keep theirs.
constexpr std::size_t kPaletteSize = 8;
void recolourBeyondPalette(QChart* chart, const FigurePanel& panel) {
    static const QColor extra[] = {QColor(0x88, 0x22, 0x55), QColor(0x99, 0x99, 0x33)};
    std::size_t current = 0;  // the method of the last named line; its bars follow it
    for (QAbstractSeries* series : chart->series()) {
        auto* line = qobject_cast<QLineSeries*>(series);
        if (line == nullptr) continue;
        if (!line->name().isEmpty()) {
            for (std::size_t i = 0; i < panel.series.size(); ++i) {
                if (line->name() == QString::fromStdString(panel.series[i].name)) current = i;
            }
        }
        if (current < kPaletteSize) continue;
        QPen pen = line->pen();
        pen.setColor(extra[(current - kPaletteSize) % std::size(extra)]);
        line->setPen(pen);
    }
}

// exportFigure's drawing (the same size, scale and writers) with the colours above.
void exportStudyFigure(const FigurePanel& panel, const std::filesystem::path& folder) {
    const QSize size(960, 620);
    QGraphicsScene scene;
    QChart* chart = buildFigureChart(panel);  // owned by the scene
    recolourBeyondPalette(chart, panel);
    scene.addItem(chart);
    chart->setGeometry(QRectF(QPointF(0, 0), QSizeF(size)));
    scene.setSceneRect(chart->geometry());
    const chart::PaintFunction paint = [&](QPainter& p) {
        p.setRenderHint(QPainter::Antialiasing);
        p.fillRect(QRectF(QPointF(0, 0), QSizeF(size)), Qt::white);
        scene.render(&p, QRectF(QPointF(0, 0), QSizeF(size)), scene.sceneRect());
    };
    const QString base = QString::fromStdString((folder / panel.file).string());
    QString error;
    if (!chart::exportPngImage(base + ".png", size, 1.5, paint, &error) ||
        !chart::exportSvgImage(base + ".svg", size, QString::fromStdString(panel.title), paint,
                               &error)) {
        throw IoError("cannot draw the study's " + panel.file + ": " + error.toStdString());
    }
}

void writeStudy(const StalenessStudy& study, const std::filesystem::path& folder, double wall,
                double cpu) {
    nlohmann::json summary = study.summary;
    nlohmann::json files = nlohmann::json::array();
    for (const FigurePanel& f : study.figures) {
        exportStudyFigure(f, folder);
        writeFileAtomically((folder / (f.file + ".csv")).string(), figureCsv(f));
        files.push_back({{"png", f.file + ".png"},
                         {"svg", f.file + ".svg"},
                         {"csv", f.file + ".csv"},
                         {"title", f.title}});
    }
    summary["figures"] = files;
    summary["wall_seconds"] = wall;
    summary["cpu_seconds"] = cpu;
    writeFileAtomically((folder / "staleness.csv").string(), studyCsv(study));
    writeFileAtomically((folder / "staleness.md").string(), studyMarkdown(study));
    writeFileAtomically((folder / "summary.json").string(), summary.dump(2) + "\n");
}

}  // namespace

int runStudyCommand(int argc, char** argv, std::ostream& out, std::ostream& err) {
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") return out << kHelp, 0;
    }
    const Options o = parse(argc, argv);
    const auto app = ensureOffscreenApplication();
    RunOptions run;
    run.threads = o.threads;
    const auto write = [&](const std::atomic<bool>* stop) {
        run.cancel = stop;
        return writeFolderAtomically(
            o.out,
            [&](const std::filesystem::path& tmp) {
                const auto wall0 = std::chrono::steady_clock::now();
                const std::clock_t cpu0 = std::clock();
                const StalenessStudy study =
                    runStalenessStudy(o.inputs, run, [&](const std::string& line) {
                        if (!o.quiet) err << "study: " << line << '\n';
                    });
                const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
                const double wall =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
                writeStudy(study, tmp, wall, cpu);
                if (!o.quiet) err << "study: done in " << wall << " s (" << cpu << " s CPU)\n";
            },
            stop);
    };
    for (const std::string& w : writeStoppable(write))
        err << "pipelens-cli: warning: " << w << '\n';
    if (!o.quiet) out << "study written to " << o.out << '\n';
    return 0;
}

}  // namespace pipelens::ui

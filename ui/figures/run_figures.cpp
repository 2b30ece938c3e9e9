#include "run_figures.hpp"

#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QString>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app_info.hpp"
#include "charts/comparison_gantt.hpp"
#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "errors.hpp"
#include "experiment/output/results.hpp"
#include "main_window.hpp"
#include "offscreen_application.hpp"

namespace pipelens::ui {
namespace {

namespace fs = std::filesystem;

// The window the figures are drawn in: the app's default size on a desktop.
constexpr int kWindowWidth = 1500;
constexpr int kWindowHeight = 950;

std::string escaped(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string cellText(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_null()) return "–";
    if (v.is_number_float()) {
        std::ostringstream s;
        s.precision(4);
        s << v.get<double>();
        return s.str();
    }
    return v.dump();
}

// The methods of summary.json as a table: one row per method, a column per scalar field that
// some method has (the summary's own names, documented in docs/results.md).
std::string methodsTable(const nlohmann::json& summary) {
    const auto methods = summary.find("methods");
    if (methods == summary.end() || !methods->is_array() || methods->empty()) return {};
    // The method's name first, then what a reader compares; the rest in the summary's order.
    std::vector<std::string> columns = {"label",      "method",  "step_size", "block_updates",
                                        "final_gap",  "slots",   "max_delay", "bubble_fraction",
                                        "final_loss", "diverged"};
    std::erase_if(columns, [&](const std::string& c) {
        return std::none_of(methods->begin(), methods->end(),
                            [&](const nlohmann::json& m) { return m.contains(c); });
    });
    for (const auto& m : *methods) {
        for (auto it = m.begin(); it != m.end(); ++it) {
            if (it.value().is_structured()) continue;
            if (std::find(columns.begin(), columns.end(), it.key()) == columns.end()) {
                columns.push_back(it.key());
            }
        }
    }
    std::string html = "<table>\n<tr>";
    for (const auto& c : columns) html += "<th>" + escaped(c) + "</th>";
    html += "</tr>\n";
    for (const auto& m : *methods) {
        html += "<tr>";
        for (const auto& c : columns) {
            const auto v = m.find(c);
            html += "<td>" + escaped(v == m.end() ? std::string() : cellText(*v)) + "</td>";
        }
        html += "</tr>\n";
    }
    return html + "</table>\n";
}

void check(bool ok, const QString& error, const fs::path& file) {
    if (!ok) throw IoError("cannot draw " + file.string() + ": " + error.toStdString());
}

}  // namespace

std::string runIndexHtml(const ExperimentResult& result, const std::vector<RunFigure>& figures,
                         const std::vector<std::string>& dataFiles) {
    const std::string name = result.config.name.empty() ? "experiment" : result.config.name;
    std::string html =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<title>" +
        escaped(name) +
        " — PipeLens results</title>\n<style>\n"
        "body{font-family:sans-serif;max-width:1600px;margin:1em auto;padding:0 1em;color:#222}\n"
        "table{border-collapse:collapse;font-size:90%}th,td{border:1px solid #ccc;padding:2px "
        "6px;text-align:right}th{background:#f2f2f2}td:first-child{text-align:left}\n"
        "figure{margin:1.5em 0}img{max-width:100%;border:1px solid #ddd}"
        "figcaption{color:#444;margin-top:.3em}\npre{background:#f7f7f7;padding:.5em;"
        "overflow-x:auto}\n</style>\n</head>\n<body>\n<h1>" +
        escaped(name) + "</h1>\n<p>Written by PipeLens " +
        escaped(applicationVersion().toStdString()) + " on " +
        escaped(QDateTime::currentDateTime().toString(Qt::ISODate).toStdString()) +
        "; the data files beside this page hold every number (docs/results.md describes them)."
        "</p>\n<h2>Summary</h2>\n" +
        methodsTable(summaryJson(result)) + "<pre>" + escaped(summaryText(result)) + "</pre>\n";
    html += "<h2>Figures</h2>\n";
    for (const RunFigure& f : figures) {
        html += "<figure id=\"" + escaped(f.file) + "\">\n<img src=\"" + escaped(f.file) +
                "\" alt=\"" + escaped(f.title) + "\">\n<figcaption><b>" + escaped(f.title) +
                ".</b> " + escaped(f.caption) + "</figcaption>\n</figure>\n";
    }
    html += "<h2>Data</h2>\n<ul>\n";
    for (const std::string& d : dataFiles) {
        html += "<li><a href=\"" + escaped(d) + "\">" + escaped(d) + "</a></li>\n";
    }
    return html + "</ul>\n</body>\n</html>\n";
}

std::vector<RunFigure> writeRunFigures(const ExperimentResult& result, double seconds,
                                       const fs::path& folder) {
    const auto app = ensureOffscreenApplication();
    MainWindow window;
    window.resize(kWindowWidth, kWindowHeight);
    window.show();
    QString error;
    if (!window.showFinishedRun(result, seconds, &error)) throw ConfigError(error.toStdString());
    if (!window.waitForResults(60'000, &error)) throw IoError(error.toStdString());
    QApplication::processEvents();

    std::vector<RunFigure> figures;
    const auto path = [&](const std::string& file) {
        return QString::fromStdString((folder / file).string());
    };
    GanttChart* gantt = window.gantt();
    const std::string method = window.ganttMethodField()->currentText().toStdString();
    if (gantt->timeline()) {
        const int stages = gantt->timeline()->params.stages;
        const int total = gantt->timeline()->totalSlots;
        // Wide enough for numbered cells, a row height that reads at any S.
        const QSize size(1400, std::clamp(140 + 26 * stages, 300, 1000));
        const double first = gantt->visibleFirst();
        const double last = gantt->visibleLast();
        gantt->showStartUp();
        check(gantt->exportPng(path("gantt.png"), 1.0, &error, size), error, "gantt.png");
        figures.push_back({"gantt.png", "Pipeline, start-up (" + method + ")",
                           "Stages (rows) by the first " + std::to_string(gantt->startUpSlots()) +
                               " slots of " + std::to_string(total) +
                               ": the pipeline filling and its first steady rounds. Each cell is "
                               "one forward (F) or backward (B) of the microbatch it names; "
                               "hatched cells are idle. The app opens on this view."});
        gantt->fitAll();
        check(gantt->exportPng(path("gantt-all.png"), 1.0, &error, size), error, "gantt-all.png");
        figures.push_back({"gantt-all.png", "Pipeline, whole run (" + method + ")",
                           "All " + std::to_string(total) +
                               " slots; where cells are narrower than a pixel a column shows the "
                               "mix of forward, backward and idle it covers."});
        gantt->setVisibleRange(first, last);
    }
    // Two or more pipelines: their timelines stacked on one slot axis, at the start-up.
    ComparisonGantt* compare = window.comparisonGantt();
    if (compare->groupCount() >= 2) {
        int lanes = 0;
        std::string numbers;
        for (int g = 0; g < compare->groupCount(); ++g) {
            const auto& timeline =
                result.methods[static_cast<std::size_t>(compare->groupMethod(g))].result.timeline;
            lanes += timeline ? timeline->params.stages : 0;
            if (g > 0) numbers += "; ";
            numbers.append(compare->groupLabel(g).toStdString())
                .append(": ")
                .append(compare->groupStatsText(g).toStdString());
        }
        const QSize size(1400,
                         std::clamp(120 + 30 * compare->groupCount() + 20 * lanes, 300, 1400));
        compare->showStartUp();
        check(compare->exportPng(path("compare.png"), 1.0, &error, size), error, "compare.png");
        std::string caption =
            "The pipeline methods' timelines stacked on one slot axis (the first " +
            std::to_string(compare->startUpSlots()) +
            " slots), one lane group (its stages) per method. Bubble: idle stage-slots / (S × "
            "the method's slots); peak: the most weight copies stashed at once on one stage. " +
            numbers + ".";
        if (!compare->noteText().isEmpty())
            caption += " " + compare->noteText().toStdString() + ".";
        figures.push_back({"compare.png", "Pipelines compared", caption});
    }
    if (window.heatmapMethodIndex() >= 0) {
        check(window.heatmap()->exportPng(path("heatmap.png"), 2.0, &error), error, "heatmap.png");
        figures.push_back(
            {"heatmap.png", "Staleness",
             "Blocks (rows) by block updates (columns): the colour is the delay of the weights "
             "each update of that block read, in updates; the colour bar gives the scale."});
    }
    check(window.lossChart()->exportPng(path("loss.png"), 2.0, &error), error, "loss.png");
    figures.push_back({"loss.png", "Loss curves",
                       result.config.languageModel()
                           ? "The training loss of every method (the last stage's forward loss), "
                             "as the app's loss chart draws it."
                           : "f − f* of every method against slots, as the app's loss chart "
                             "draws it (its axes and scales)."});
    check(window.figureStrip()->exportPng(path("figures.png"), 2.0, &error), error, "figures.png");
    figures.push_back({"figures.png", "Figure strip",
                       "Utilization and bubble per method, measured delays beside their closed "
                       "forms, peak stashed copies per stage, the max delay against S, and the run "
                       "lengths."});
    check(window.exportWindow(path("window.png"), 1.0, &error), error, "window.png");
    figures.push_back({"window.png", "The window",
                       "The whole PipeLens window at " + std::to_string(kWindowWidth) + "×" +
                           std::to_string(kWindowHeight) + ", as the app shows this run."});

    std::vector<std::string> dataFiles;
    for (const auto& entry : fs::directory_iterator(folder)) {
        const std::string file = entry.path().filename().string();
        const std::string ext = entry.path().extension().string();
        if (ext == ".csv" || ext == ".json" || ext == ".txt") dataFiles.push_back(file);
    }
    std::sort(dataFiles.begin(), dataFiles.end());
    writeFileAtomically((folder / "index.html").string(), runIndexHtml(result, figures, dataFiles));
    return figures;
}

}  // namespace pipelens::ui

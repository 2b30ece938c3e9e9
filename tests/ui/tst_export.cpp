// Exports: PNGs show what the widget shows at the requested size, SVGs hold the chart's text,
// CSVs have the header and one row per item drawn.
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QFontInfo>
#include <QHash>
#include <QImage>
#include <QLabel>
#include <QLineSeries>
#include <QMenuBar>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "charts/chart_support.hpp"
#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/line_legend.hpp"
#include "charts/loss_chart.hpp"
#include "charts/range_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "controls/controls_panel.hpp"
#include "controls/playback_bar.hpp"
#include "main_window.hpp"
#include "models/run_snapshot.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// Distinct colours in a grid of samples: a blank or single-colour image has one or two.
int distinctColours(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
    }
    return static_cast<int>(colours.size());
}

// Share of pixels whose colours differ by at most `tolerance` (summed over R, G, B) between two
// images of one size (0 when the sizes differ).
double alikeShare(const QImage& a, const QImage& b, int tolerance) {
    if (a.size() != b.size() || a.isNull()) return 0.0;
    const QImage x = a.convertToFormat(QImage::Format_RGB32);
    const QImage y = b.convertToFormat(QImage::Format_RGB32);
    long long alike = 0;
    for (int row = 0; row < x.height(); ++row) {
        for (int col = 0; col < x.width(); ++col) {
            const QRgb p = x.pixel(col, row);
            const QRgb q = y.pixel(col, row);
            alike += std::abs(qRed(p) - qRed(q)) + std::abs(qGreen(p) - qGreen(q)) +
                         std::abs(qBlue(p) - qBlue(q)) <=
                     tolerance;
        }
    }
    return static_cast<double>(alike) / (static_cast<double>(x.width()) * x.height());
}

// Pixels of `image` that differ from `background` by more than `tolerance` (summed over R, G, B).
long long inkOf(const QImage& image, QRgb background, int tolerance) {
    const QImage x = image.convertToFormat(QImage::Format_RGB32);
    long long inked = 0;
    for (int row = 0; row < x.height(); ++row) {
        for (int col = 0; col < x.width(); ++col) {
            const QRgb p = x.pixel(col, row);
            inked += std::abs(qRed(p) - qRed(background)) +
                         std::abs(qGreen(p) - qGreen(background)) +
                         std::abs(qBlue(p) - qBlue(background)) >
                     tolerance;
        }
    }
    return inked;
}

// The most common colour of an image.
QRgb commonest(const QImage& image) {
    const QImage x = image.convertToFormat(QImage::Format_RGB32);
    QHash<QRgb, int> counts;
    for (int row = 0; row < x.height(); ++row)
        for (int col = 0; col < x.width(); ++col) ++counts[x.pixel(col, row)];
    QRgb best = 0;
    for (auto it = counts.begin(); it != counts.end(); ++it)
        if (it.value() > counts.value(best)) best = it.key();
    return best;
}

// Fields of a CSV row (commas inside double quotes do not separate).
int fieldCount(const QString& row) {
    int fields = 1;
    bool quoted = false;
    for (QChar ch : row) {
        if (ch == '"') quoted = !quoted;
        if (ch == ',' && !quoted) ++fields;
    }
    return fields;
}

// The SVG's text elements in document order: each one's text and font size.
struct SvgText {
    QString text;
    double fontSize = 0.0;
};
QList<SvgText> svgTexts(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QList<SvgText> out;
    QXmlStreamReader xml(&f);
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement || xml.name() != QLatin1String("text"))
            continue;
        SvgText t;
        t.fontSize = xml.attributes().value("font-size").toDouble();
        t.text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
        out << t;
    }
    return out;
}

bool hasRun(const QList<SvgText>& texts, const QString& whole) {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const SvgText& t) { return t.text == whole; });
}

QString runsContaining(const QList<SvgText>& texts, const QString& part) {
    QStringList out;
    for (const SvgText& t : texts)
        if (t.text.contains(part)) out << '"' + t.text + '"';
    return out.join(", ");
}

QStringList lines(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
}

}  // namespace

class TestExport : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        test::isolateSettings();
        window_ = new MainWindow;
        window_->resize(1500, 950);
        window_->show();
        QVERIFY(window_->waitForResults(test::timeout(60000)));
    }
    void cleanupTestCase() { delete window_; }

    void windowPngHasTheRequestedSize_data() {
        QTest::addColumn<double>("scale");
        QTest::newRow("1x") << 1.0;
        QTest::newRow("1.5x") << 1.5;
        QTest::newRow("2x") << 2.0;
    }
    void windowPngHasTheRequestedSize() {
        QFETCH(double, scale);
        const QString path = dir_.filePath(QStringLiteral("window-%1.png").arg(scale));
        QString error;
        QVERIFY2(window_->exportWindow(path, scale, &error), qPrintable(error));
        const QImage image(path);
        QCOMPARE(image.size(),
                 QSize(qRound(window_->width() * scale), qRound(window_->height() * scale)));
        QVERIFY(distinctColours(image) > 50);
    }

    void everyChartExportsPngSvgAndCsv() {
        GanttChart* gantt = window_->gantt();
        StalenessHeatmap* heatmap = window_->heatmap();
        LossChart* loss = window_->lossChart();
        FigureStrip* figures = window_->figureStrip();
        QVERIFY(gantt->timeline() && heatmap->delays());
        const long long heatmapRows =
            heatmap->cursorUpdate() < 0 ? heatmap->delays()->updates() : heatmap->cursorUpdate();
        qsizetype lossRows = 0;
        for (int i = 0; i < loss->methodSeries().size(); ++i)
            lossRows += static_cast<qsizetype>(loss->methodData(i).size());
        struct Case {
            QString name;
            std::function<bool(const QString&, double, QString*)> png;
            std::function<bool(const QString&, QString*)> svg;
            std::function<bool(const QString&, QString*)> csv;
            QWidget* widget;
            QString svgTitle;
            bool svgLikeWidget;  // the SVG, drawn, must look like the widget
            QString csvHeader;
            qsizetype csvRows;  // data rows; -1: at least one
        };
        const QList<Case> cases = {
            {"loss",
             [&](const QString& p, double sc, QString* e) { return loss->exportPng(p, sc, e); },
             [&](const QString& p, QString* e) { return loss->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return loss->exportCsv(p, e); }, loss->plot(),
             "PipeLens", false, "series,slot,value", lossRows},
            {"figures",
             [&](const QString& p, double sc, QString* e) { return figures->exportPng(p, sc, e); },
             [&](const QString& p, QString* e) { return figures->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return figures->exportCsv(p, e); }, figures,
             "PipeLens", false, "figure,method,value", -1},
            {"gantt",
             [&](const QString& p, double sc, QString* e) { return gantt->exportPng(p, sc, e); },
             [&](const QString& p, QString* e) { return gantt->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return gantt->exportCsv(p, e); }, gantt,
             "PipeLens pipeline timeline", true,
             "method,slot,end_slot,stage,op,microbatch,version_read,replica,round",
             static_cast<qsizetype>(gantt->timeline()->cells.size())},
            {"heatmap",
             [&](const QString& p, double sc, QString* e) { return heatmap->exportPng(p, sc, e); },
             [&](const QString& p, QString* e) { return heatmap->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return heatmap->exportCsv(p, e); }, heatmap,
             "PipeLens staleness heatmap", true,
             "method,block_update,updated_stage,microbatch,slot,delay_block1", heatmapRows},
        };
        for (const Case& c : cases) {
            QString error;
            // PNG: what the widget shows, at the scale asked for.
            const QImage shown = c.widget->grab().toImage().convertToFormat(QImage::Format_RGB32);
            QVERIFY2(distinctColours(shown) > 8, qPrintable(c.name + ": the widget shows nothing"));
            const QString png1 = dir_.filePath(c.name + "-1x.png");
            QVERIFY2(c.png(png1, 1.0, &error), qPrintable(c.name + ": " + error));
            const double same = alikeShare(QImage(png1), shown, 0);
            QVERIFY2(same > 0.98, qPrintable(QStringLiteral("%1: the PNG matches the widget in %2 "
                                                            "of its pixels")
                                                 .arg(c.name)
                                                 .arg(same)));
            const QString png2 = dir_.filePath(c.name + "-2x.png");
            QVERIFY2(c.png(png2, 2.0, &error), qPrintable(c.name + ": " + error));
            const QImage twice(png2);
            QCOMPARE(twice.size(), c.widget->size() * 2);
            QVERIFY2(distinctColours(twice) > 8, qPrintable(c.name + ": the 2x PNG is blank"));
            // SVG: a document titled as the chart. (Its text is not searched for: Qt's SVG engine
            // writes text as outlines in some states, e.g. after a scaled export.)
            const QString svg = dir_.filePath(c.name + ".svg");
            QVERIFY2(c.svg(svg, &error), qPrintable(c.name + ": " + error));
            QFile f(svg);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray svgBytes = f.readAll();
            QVERIFY(svgBytes.contains("<svg") && svgBytes.trimmed().endsWith("</svg>"));
            QVERIFY2(svgBytes.contains("<title>" + c.svgTitle.toUtf8() + "</title>"),
                     qPrintable(c.name + ": SVG title"));
            // Drawn, not an empty page: many shapes, and for the hand-drawn charts (whose SVG
            // cells are vector rectangles) a rendering far closer to the widget than white is.
            QVERIFY2(
                svgBytes.count("<path") + svgBytes.count("<polyline") + svgBytes.count("<rect") >=
                    20,
                qPrintable(c.name + ": the SVG draws almost nothing"));
            QSvgRenderer renderer(svgBytes);
            QVERIFY(renderer.isValid());
            if (c.svgLikeWidget) {
                QImage drawn(c.widget->size(), QImage::Format_RGB32);
                drawn.fill(Qt::white);
                {
                    QPainter painter(&drawn);
                    renderer.render(&painter);
                }
                QImage white(shown.size(), QImage::Format_RGB32);
                white.fill(Qt::white);
                // Antialiasing and vector versus image cells differ a little.
                const double alike = alikeShare(drawn, shown, 48);
                const double blank = alikeShare(white, shown, 48);
                QVERIFY2(
                    alike > blank + 0.15,
                    qPrintable(QStringLiteral("%1: the SVG drawn matches the widget in %2 of its "
                                              "pixels, a white page in %3")
                                   .arg(c.name)
                                   .arg(alike)
                                   .arg(blank)));
            }
            // CSV: the header, then one row per item drawn, each with the header's columns.
            const QString csv = dir_.filePath(c.name + ".csv");
            QVERIFY2(c.csv(csv, &error), qPrintable(c.name + ": " + error));
            const QStringList rows = lines(csv);
            QVERIFY2(!rows.isEmpty() && rows.first().startsWith(c.csvHeader),
                     qPrintable(c.name + ": header " + rows.value(0)));
            if (c.csvRows >= 0)
                QCOMPARE(rows.size() - 1, c.csvRows);
            else
                QVERIFY(rows.size() > 1);
            const int columns = fieldCount(rows.first());
            for (const QString& row : rows.mid(1))
                QVERIFY2(fieldCount(row) == columns, qPrintable(c.name + ": row " + row));
        }
    }

    void theLossCsvHoldsEveryPointOfEveryMethod() {
        const QString csv = dir_.filePath("loss-data.csv");
        QVERIFY(window_->lossChart()->exportCsv(csv));
        const QStringList rows = lines(csv);
        size_t expected = 0;
        for (int i = 0; i < window_->lossChart()->methodSeries().size(); ++i) {
            expected += window_->lossChart()->methodData(i).size();
        }
        QCOMPARE(static_cast<size_t>(rows.size() - 1), expected);
        // The first data row is PipeDream's f(w0) - f* at slot 0.
        const SnapshotPtr s = window_->controller()->latest();
        const QStringList first = rows.at(1).split(',');
        QCOMPARE(first.at(first.size() - 2), QString("0"));
        QCOMPARE(first.last().toDouble(), s->result(0).initialObjective - s->result(0).optimum);
    }

    // Each legend name ("RPD δ=60, γ=0.25") is one text run in the SVG, in the chart's export and
    // in the window's: Qt writes a run per script, which a viewer draws with gaps.
    void svgTextRunsHoldWholeNames() {
        const QList<LineLegend::Entry> entries = window_->lossChart()->legend()->entries();
        QVERIFY(entries.size() >= 3);
        const QString chart = dir_.filePath("loss-runs.svg");
        const QString whole = dir_.filePath("window-runs.svg");
        QVERIFY(window_->lossChart()->exportSvg(chart));
        QVERIFY(window_->exportWindow(whole, 1.0));
        for (const QString& path : {chart, whole}) {
            const QList<SvgText> texts = svgTexts(path);
            for (const LineLegend::Entry& e : entries) {
                QVERIFY(e.name.contains(QStringLiteral("γ=")));
                QVERIFY2(hasRun(texts, e.name),
                         qPrintable(QStringLiteral("%1: \"%2\" is not one run; runs with γ: %3")
                                        .arg(QFileInfo(path).fileName(), e.name,
                                             runsContaining(texts, QStringLiteral("γ")))));
            }
        }
    }

    // Joining runs joins one line's pieces only: two labels drawn apart on one baseline in one
    // painter state (tick labels) stay two runs, each at its own place.
    void separateLabelsStaySeparateRuns() {
        const QString path = dir_.filePath("labels.svg");
        QString error;
        QVERIFY2(chart::exportSvgImage(
                     path, QSize(400, 100), "labels",
                     [](QPainter& p) {
                         p.drawText(QPointF(10, 50), "0");
                         p.drawText(QPointF(100, 50), "500");
                         p.drawText(QPointF(200, 50), QStringLiteral("RPD δ=60, γ=0.25"));
                     },
                     &error),
                 qPrintable(error));
        const QList<SvgText> texts = svgTexts(path);
        QStringList runs;
        for (const SvgText& t : texts) runs << t.text;
        QCOMPARE(runs, QStringList({"0", "500", QStringLiteral("RPD δ=60, γ=0.25")}));
    }

    // Text in the SVG is as large as on screen: a 9 pt font is 12 px on a 96 dpi screen, and
    // 12 SVG units in a picture as many units wide as the widget is pixels.
    void svgTextIsAsLargeAsOnScreen() {
        GanttChart* gantt = window_->gantt();
        const QString path = dir_.filePath("gantt-size.svg");
        QVERIFY(gantt->exportSvg(path));
        const QList<SvgText> texts = svgTexts(path);
        const auto label = std::find_if(texts.begin(), texts.end(),
                                        [](const SvgText& t) { return t.text == "stage 1"; });
        QVERIFY2(label != texts.end(), qPrintable(runsContaining(texts, "stage")));
        QCOMPARE(label->fontSize, static_cast<double>(QFontInfo(gantt->font()).pixelSize()));
    }

    // An exported Gantt chart or heatmap names the method it shows, and leaves out the playback
    // cursor's on-screen note.
    void chartExportsNameTheMethodWithoutTheCursorNote() {
        window_->playback()->setCursor(window_->playback()->totalSlots() / 2);
        QCoreApplication::processEvents();
        const QString method = window_->ganttMethodField()->currentText();
        QVERIFY(!method.isEmpty());
        struct Case {
            QString name;
            RangeChart* chart;
        };
        for (const Case& c :
             {Case{"gantt", window_->gantt()}, Case{"heatmap", window_->heatmap()}}) {
            const QString svg = dir_.filePath(c.name + "-named.svg");
            QVERIFY(c.chart->exportSvg(svg));
            const QList<SvgText> texts = svgTexts(svg);
            const bool named = std::any_of(texts.begin(), texts.end(), [&](const SvgText& t) {
                return t.text.contains(method);
            });
            QVERIFY2(named, qPrintable(c.name + ": the SVG does not name " + method));
            QVERIFY2(runsContaining(texts, "not yet run").isEmpty(),
                     qPrintable(c.name + ": " + runsContaining(texts, "not yet run")));
            // The PNG draws the same: it differs from the screen where the name is written.
            const QString png = dir_.filePath(c.name + "-named.png");
            QVERIFY(c.chart->exportPng(png, 1.0));
            const QImage shown = c.chart->grab().toImage();
            QVERIFY(alikeShare(QImage(png), shown, 0) < 0.999);
        }
        QVERIFY(window_->waitForResults(test::timeout(60000)));  // cursor back at the end
    }

    // The window's SVG shows the menu bar as the screen does, and the Experiment panel as far as
    // it shows: a control cut by the panel's edge, drawn whole, lay over the dock's title below.
    void windowSvgLooksLikeTheWindow() {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        auto* area = qobject_cast<QScrollArea*>(w.controls()->parentWidget()->parentWidget());
        QVERIFY(area);
        // A label cut by the bottom edge of the panel's view: drawn whole, it lies over the
        // dock below.
        auto straddling = [&] {
            QList<const QLabel*> out;
            for (const QLabel* label : w.controls()->findChildren<QLabel*>()) {
                const QRect at(label->mapTo(area->viewport(), QPoint(0, 0)), label->size());
                const QRect view = area->viewport()->rect();
                if (label->isVisible() && !label->text().isEmpty() && at.intersects(view) &&
                    !view.contains(at))
                    out << label;
            }
            return out;
        };
        QScrollBar* bar = area->verticalScrollBar();
        for (int v = 0; v <= bar->maximum() && straddling().isEmpty(); ++v) bar->setValue(v);
        QCoreApplication::processEvents();
        const QList<const QLabel*> cut = straddling();
        QVERIFY(!cut.isEmpty());
        const QString path = dir_.filePath("window-look.svg");
        QString error;
        QVERIFY2(w.exportWindow(path, 1.0, &error), qPrintable(error));
        QSvgRenderer renderer(path);
        QVERIFY(renderer.isValid());
        QImage drawn(w.size(), QImage::Format_RGB32);
        drawn.fill(Qt::white);
        {
            QPainter painter(&drawn);
            renderer.render(&painter);
        }
        const QImage shown = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
        // The menu bar: as much ink as on screen (its style drew nothing into the SVG: blank).
        QStringList wrong;
        const QRect menu = w.menuBar()->geometry();
        const QRgb background = commonest(shown.copy(menu));
        const double ink =
            static_cast<double>(inkOf(drawn.copy(menu), background, 60)) /
            static_cast<double>(std::max(1LL, inkOf(shown.copy(menu), background, 60)));
        if (!(ink > 0.6 && ink < 1.6))
            wrong << QStringLiteral("the menu bar has %1 times the screen's ink").arg(ink);
        // Nor is the text of a label cut by the panel's edge (the SVG cannot cut it).
        const QList<SvgText> texts = svgTexts(path);
        for (const QLabel* label : cut) {
            if (hasRun(texts, label->text()))
                wrong << QStringLiteral("\"%1\", cut by the panel's edge, is drawn whole")
                             .arg(label->text());
        }
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join('\n')));
    }

    void aBadScaleOrPathIsRefused() {
        QString error;
        QVERIFY(!window_->exportWindow(dir_.filePath("x.png"), 0.0, &error));
        QVERIFY2(error.startsWith("Scale factor = 0"), qPrintable(error));
        QVERIFY(!window_->exportWindow("/nonexistent-dir/x.png", 1.0, &error));
        QVERIFY(!error.isEmpty());
    }

    // "All results" writes the folder the user chose, not a "results" folder inside it; a folder
    // holding anything else is refused by its on-screen name and left as it was.
    void allResultsGoWhereTheUserChose() {
        const QString chosen = dir_.filePath(QStringLiteral("chosen"));
        QVERIFY(QDir().mkpath(chosen));
        QString error;
        QVERIFY2(window_->exportAllResults(chosen, &error), qPrintable(error));
        QVERIFY(QFile::exists(chosen + "/summary.json"));
        QVERIFY(QFile::exists(chosen + "/timeline_0.csv"));
        QVERIFY(!QFile::exists(chosen + "/results"));
        QCOMPARE(lines(chosen + "/timeline_0.csv").value(0),
                 QString("method,slot,end_slot,stage,op,microbatch,version_read,replica,round"));
        // Written by PipeLens, so a second export may replace it.
        QVERIFY2(window_->exportAllResults(chosen, &error), qPrintable(error));

        const QString other = dir_.filePath(QStringLiteral("thesis"));
        QVERIFY(QDir().mkpath(other));
        QFile mine(other + "/chapter1.tex");
        QVERIFY(mine.open(QIODevice::WriteOnly));
        mine.write("\\chapter{Pipelines}\n");
        mine.close();
        QVERIFY(!window_->exportAllResults(other, &error));
        QVERIFY2(error.startsWith(QStringLiteral("Results folder = \"") + other),
                 qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("choose a new folder")), qPrintable(error));
        QCOMPARE(QDir(other).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{QStringLiteral("chapter1.tex")});
    }

    void traceForPerfettoHasEveryOpOfTheRun() {
        // File > Export > Trace for Perfetto, without its dialog: one complete event per cell
        // of every pipeline method's timeline, at its slot (1 slot = 1 ms), on its stage.
        const QString path = dir_.filePath(QStringLiteral("trace.json"));
        QString error;
        QVERIFY2(window_->exportTrace(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const nlohmann::json trace = nlohmann::json::parse(file.readAll().toStdString());
        QCOMPARE(QString::fromStdString(trace.at("displayTimeUnit").get<std::string>()),
                 QStringLiteral("ms"));
        // "F 3 @ 2000+1000 stage 2" -> how many.
        std::map<std::string, int> want;
        std::map<std::string, int> got;
        auto key = [](const std::string& name, long long ts, long long dur, int stage) {
            return name + " @ " + std::to_string(ts) + "+" + std::to_string(dur) + " stage " +
                   std::to_string(stage);
        };
        const SnapshotPtr snapshot = window_->controller()->latest();
        QVERIFY(snapshot && !snapshot->planOnly);
        long long cells = 0;
        for (std::size_t i = 0; i < snapshot->runs().size(); ++i) {
            const auto& timeline = snapshot->result(i).timeline;
            if (!timeline) continue;
            for (const TimelineCell& c : timeline->cells) {
                // F, B, and the split backward's I and W (results.md, "Traces for Perfetto").
                const std::string name = std::string(1, "FBIW"[static_cast<int>(c.op)]) + " " +
                                         std::to_string(c.microbatch);
                ++want[key(name, c.startSlot * 1000LL, (c.endSlot - c.startSlot + 1) * 1000LL,
                           c.stage + 1)];
                ++cells;
            }
        }
        QVERIFY(cells > 0);
        long long complete = 0;
        bool loss = false;
        for (const nlohmann::json& e : trace.at("traceEvents")) {
            const std::string ph = e.at("ph").get<std::string>();
            if (ph == "C") loss = loss || e.at("name") == "loss";
            if (ph != "X") continue;
            ++complete;
            ++got[key(e.at("name").get<std::string>(), e.at("ts").get<long long>(),
                      e.at("dur").get<long long>(), e.at("args").at("stage").get<int>())];
        }
        QCOMPARE(complete, cells);
        QVERIFY(got == want);
        QVERIFY(loss);  // the run is done: its loss is a counter track
        // A folder is no file to write: refused, named.
        QVERIFY(!window_->exportTrace(dir_.path(), &error));
        QVERIFY2(error.contains(dir_.path()), qPrintable(error));
    }

  private:
    MainWindow* window_ = nullptr;
    QTemporaryDir dir_;
};

QTEST_MAIN(TestExport)
#include "tst_export.moc"

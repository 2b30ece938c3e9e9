// ComparisonGantt: one lane group per method with a timeline on one slot axis, the numbers in
// each group's head line, the note on methods without a timeline, zoom together, export.
#include <QComboBox>
#include <QImage>
#include <QPainter>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>
#include <memory>

#include "charts/chart_support.hpp"
#include "charts/comparison_gantt.hpp"
#include "charts/gantt_chart.hpp"
#include "controllers/presets.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/objective_cache.hpp"
#include "main_window.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// The default preset (PD, RPD, LocalSGD) with a fill-drain method added, planned at S stages:
// every schedule view, no run.
SnapshotPtr plannedSnapshot(int stages) {
    ExperimentConfig c = loadPreset("default").config;
    c.stages = stages;
    MethodSpec fillDrain = c.methods.front();
    fillDrain.method = Method::FillDrain;
    fillDrain.label.clear();
    c.methods.insert(c.methods.begin() + 1, fillDrain);  // PD, fill-drain, RPD, LocalSGD
    auto s = std::make_shared<RunSnapshot>();
    s->experiment = plannedViews(c, *prepareObjective(c));
    s->planOnly = true;
    deriveRunViews(*s);
    return s;
}

// Idle stage-slots / (S x slots), counted from the cells (independent of the engine's count).
double scannedBubble(const Timeline& tl) {
    long long busy = 0;
    for (const TimelineCell& c : tl.cells) busy += c.endSlot - c.startSlot + 1;
    const double all = static_cast<double>(tl.params.stages) * tl.totalSlots;
    return 1.0 - static_cast<double>(busy) / all;
}

// Most weight copies held at once on one stage: F started, B not yet finished.
int scannedPeakStash(const Timeline& tl) {
    int peak = 0;
    for (int s = 0; s < tl.params.stages; ++s) {
        std::vector<int> change(static_cast<std::size_t>(tl.totalSlots) + 2, 0);
        for (const TimelineCell& c : tl.cells) {
            if (c.stage != s) continue;
            if (c.op == OpKind::Forward) ++change[static_cast<std::size_t>(c.startSlot)];
            if (c.op == OpKind::Backward) --change[static_cast<std::size_t>(c.endSlot) + 1];
        }
        int depth = 0;
        for (int d : change) peak = std::max(peak, depth += d);
    }
    return peak;
}

const TimelineCell* cellAt(const Timeline& tl, int stage, int slot) {
    for (const TimelineCell& c : tl.cells) {
        if (c.stage == stage && c.startSlot <= slot && slot <= c.endSlot) return &c;
    }
    return nullptr;
}

}  // namespace

class TestComparisonGantt : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() { test::isolateSettings(); }

    void oneGroupPerTimelineMethodInSnapshotOrder() {
        const SnapshotPtr s = plannedSnapshot(4);
        ComparisonGantt chart;
        chart.setSnapshot(s);
        QStringList expected;
        for (std::size_t i = 0; i < s->runs().size(); ++i) {
            if (s->result(i).timeline) expected << s->label(i);
        }
        QCOMPARE(expected.size(), 3);  // PD, fill-drain, LocalSGD
        QCOMPARE(chart.groupCount(), 3);
        for (int g = 0; g < chart.groupCount(); ++g) {
            QCOMPARE(chart.groupLabel(g), expected[g]);
            QVERIFY(s->result(static_cast<std::size_t>(chart.groupMethod(g))).timeline);
        }
        QCOMPARE(s->runs()[static_cast<std::size_t>(chart.groupMethod(1))].spec.method,
                 Method::FillDrain);
        chart.setSnapshot(nullptr);
        QCOMPARE(chart.groupCount(), 0);
    }

    void methodsWithoutTimelineAreNamed() {
        const SnapshotPtr s = plannedSnapshot(4);
        ComparisonGantt chart;
        chart.setSnapshot(s);
        QCOMPARE(chart.noteText(), s->label(2) + " has no pipeline timeline");
        QVERIFY(s->label(2).startsWith("RPD"));
    }

    void headNumbersAreTheEnginesForEachMethod() {
        for (int stages : {4, 8}) {
            const SnapshotPtr s = plannedSnapshot(stages);
            ComparisonGantt chart;
            chart.setSnapshot(s);
            for (int g = 0; g < chart.groupCount(); ++g) {
                const RunResult& r = s->result(static_cast<std::size_t>(chart.groupMethod(g)));
                QVERIFY(r.utilization);
                QCOMPARE(chart.groupBubble(g), r.utilization->bubbleFraction);
                QVERIFY(qAbs(chart.groupBubble(g) - scannedBubble(*r.timeline)) < 1e-12);
                QCOMPARE(chart.groupPeakStash(g), scannedPeakStash(*r.timeline));
                QCOMPARE(r.timeline->peakStash[static_cast<std::size_t>(chart.groupPeakStage(g))],
                         chart.groupPeakStash(g));
                const QString text = chart.groupStatsText(g);
                QVERIFY2(text.contains(QStringLiteral("bubble %1%")
                                           .arg(scannedBubble(*r.timeline) * 100.0, 0, 'f', 1)),
                         qPrintable(text));
                QVERIFY2(text.contains(QStringLiteral("peak %1 stashed weight copies")
                                           .arg(scannedPeakStash(*r.timeline))),
                         qPrintable(text));
                QVERIFY2(text.contains(QStringLiteral("%1 slots").arg(r.timeline->totalSlots)),
                         qPrintable(text));
            }
        }
    }

    // Every group shares one slot scale: the pixel a slot's cell covers in each group is the
    // colour of that method's cell at that slot (F, B) or not a cell colour (idle, run over).
    void aSlotSitsAtTheSameXInEveryGroup() {
        const SnapshotPtr s = plannedSnapshot(4);
        ComparisonGantt chart;
        chart.resize(1200, 700);
        chart.setSnapshot(s);
        chart.setVisibleRange(0, 60);
        QImage image(chart.size(), QImage::Format_RGB32);
        {
            QPainter p(&image);
            chart.paintChart(p, chart.size());
        }
        const QRectF lane0 = chart.laneRect(0, 0);
        int checked = 0;
        for (int g = 0; g < chart.groupCount(); ++g) {
            const Timeline& tl =
                *s->result(static_cast<std::size_t>(chart.groupMethod(g))).timeline;
            for (int stage = 0; stage < tl.params.stages; ++stage) {
                const QRectF lane = chart.laneRect(g, stage);
                QCOMPARE(lane.left(), lane0.left());
                QCOMPARE(lane.width(), lane0.width());
                for (int t = 0; t < 60; ++t) {
                    // A quarter into the slot and the lane: clear of boundaries and numbers.
                    const double x = lane0.left() + (t + 0.25) / 60.0 * lane0.width();
                    const double y = lane.top() + 0.2 * lane.height();
                    const QRgb pixel = image.pixel(static_cast<int>(x), static_cast<int>(y));
                    const TimelineCell* c = cellAt(tl, stage, t);
                    if (c) {
                        QCOMPARE(pixel, c->op == OpKind::Forward ? chart::kGanttForward
                                                                 : chart::kGanttBackward);
                        ++checked;
                    } else {
                        QVERIFY(pixel != chart::kGanttForward && pixel != chart::kGanttBackward);
                    }
                }
            }
        }
        QVERIFY(checked > 200);
    }

    // The whole run: a run shorter than the longest ends where its last slot is on the shared
    // axis, and its lanes are grey ("finished") from there on.
    void aShorterRunEndsWhereItsSlotsEnd() {
        const SnapshotPtr s = plannedSnapshot(4);
        ComparisonGantt chart;
        chart.resize(1200, 700);
        chart.setSnapshot(s);
        chart.fitAll();
        QImage image(chart.size(), QImage::Format_RGB32);
        {
            QPainter p(&image);
            chart.paintChart(p, chart.size());
        }
        const QRgb finished = qRgb(236, 236, 236);
        const double longest = chart.visibleLast();
        int shorter = 0;
        for (int g = 0; g < chart.groupCount(); ++g) {
            const int total =
                s->result(static_cast<std::size_t>(chart.groupMethod(g))).timeline->totalSlots;
            const QRectF lane = chart.laneRect(g, 0);
            const int y = static_cast<int>(lane.top() + 0.3 * lane.height());
            const double end = lane.left() + total / longest * lane.width();
            const QRgb after = image.pixel(static_cast<int>(end) + 2, y);
            const QRgb before = image.pixel(static_cast<int>(end) - 3, y);
            QVERIFY(before != finished);
            if (total < longest) {
                QCOMPARE(after, finished);
                ++shorter;
            }
        }
        QVERIFY(shorter > 0);  // fill-drain's run is a few slots shorter
    }

    void zoomIsSharedAndOpensOnTheStartUp() {
        const SnapshotPtr s = plannedSnapshot(8);
        ComparisonGantt chart;
        chart.resize(1000, 600);
        chart.setSnapshot(s);
        int longest = 0;
        int startUp = 0;
        for (int g = 0; g < chart.groupCount(); ++g) {
            const Timeline& tl =
                *s->result(static_cast<std::size_t>(chart.groupMethod(g))).timeline;
            longest = std::max(longest, tl.totalSlots);
            startUp = std::max(startUp, std::min(tl.totalSlots, std::max(24, 3 * 8)));
        }
        QCOMPARE(chart.visibleFirst(), 0.0);
        QCOMPARE(chart.visibleLast(), static_cast<double>(startUp));
        chart.fitAll();
        QCOMPARE(chart.visibleLast(), static_cast<double>(longest));
        chart.showStartUp();
        QCOMPARE(chart.visibleLast(), static_cast<double>(startUp));
    }

    void exportsPngAndSvgAtTheSizeAsked() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ComparisonGantt chart;
        chart.resize(900, 500);
        chart.setSnapshot(plannedSnapshot(4));
        QString error;
        const QString png = dir.filePath("compare.png");
        QVERIFY2(chart.exportPng(png, 1.0, &error, QSize(1400, 640)), qPrintable(error));
        const QImage image(png);
        QCOMPARE(image.size(), QSize(1400, 640));
        int forward = 0;
        for (int y = 0; y < image.height(); y += 3) {
            for (int x = 0; x < image.width(); x += 3) {
                forward += image.pixel(x, y) == chart::kGanttForward ? 1 : 0;
            }
        }
        QVERIFY(forward > 100);
        const QString svg = dir.filePath("compare.svg");
        QVERIFY2(chart.exportSvg(svg, &error), qPrintable(error));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("no pipeline timeline"));
    }

    // The Pipeline area's "Compare" button swaps the one-method chart for the comparison (the
    // method box, which picks one method, is then off); --view compare exports it.
    void theWindowSwitchesItsPipelineArea() {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
        auto* button = w.findChild<QToolButton*>("ganttCompare");
        QVERIFY(button);
        QVERIFY(!w.comparing());
        QVERIFY(w.gantt()->isVisible());
        QVERIFY(!w.comparisonGantt()->isVisible());
        button->click();
        QVERIFY(w.comparing());
        QVERIFY(w.comparisonGantt()->isVisible());
        QVERIFY(!w.gantt()->isVisible());
        QVERIFY(!w.ganttMethodField()->isEnabled());
        QCOMPARE(w.comparisonGantt()->groupCount(), 2);  // the default's PD and LocalSGD
        QVERIFY(w.comparisonGantt()->noteText().startsWith("RPD"));
        // Lanes stay readable in a 1024 x 700 window: the Pipeline area scrolls instead.
        QVERIFY2(w.comparisonGantt()->laneRect(1, 7).height() >= 9.5,
                 qPrintable(QString::number(w.comparisonGantt()->laneRect(1, 7).height())));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY2(w.exportView("compare", "png", dir.filePath("c.png"), 1.0, &error),
                 qPrintable(error));
        const QImage image(dir.filePath("c.png"));
        QCOMPARE(image.width(), w.comparisonGantt()->width());
        QVERIFY(image.height() >= w.comparisonGantt()->sizeHint().height());
        QVERIFY2(w.exportView("compare", "csv", dir.filePath("c.csv"), 1.0, &error),
                 qPrintable(error));
        QFile csv(dir.filePath("c.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QVERIFY(csv.readLine().startsWith("method,slot,stage,op,microbatch,end_slot"));
        button->click();
        QVERIFY(!w.comparing());
        QVERIFY(w.gantt()->isVisible());
        QVERIFY(w.ganttMethodField()->isEnabled());
    }

    void emptyChartSaysWhy() {
        ComparisonGantt chart;
        chart.resize(500, 300);
        QCOMPARE(test::checkEmptyState(chart, "Run an experiment to compare its pipelines"),
                 QString());
    }
};

QTEST_MAIN(TestComparisonGantt)
#include "tst_comparison_gantt.moc"

// GanttChart: hover text against the timeline, stash depth, exports, zoom, large timelines.
#include <QApplication>
#include <QFile>
#include <QHelpEvent>
#include <QImage>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QToolTip>
#include <QtTest>
#include <cmath>
#include <memory>

#include "charts/gantt_chart.hpp"
#include "charts/gantt_selection.hpp"
#include "schedule/delays.hpp"
#include "schedule/program.hpp"
#include "schedule/pytorch_csv.hpp"
#include "schedule/timeline.hpp"
#include "ui_test_support.hpp"

using pipelens::DelayTable;
using pipelens::OpKind;
using pipelens::ScheduleKind;
using pipelens::ScheduleParams;
using pipelens::Timeline;
using pipelens::TimelineCell;
using pipelens::ui::GanttChart;

namespace {

std::shared_ptr<const Timeline> makeTimeline(ScheduleKind kind, int stages, int microbatches,
                                             int localSteps = 1) {
    ScheduleParams p;
    p.kind = kind;
    p.stages = stages;
    p.microbatches = microbatches;
    p.localSteps = localSteps;
    return std::make_shared<const Timeline>(pipelens::buildTimeline(p));
}

// ZB-H1 at S = 4, M = 4, with the zero-bubble paper's costs (F 1, B 2 split into I 1 + W 1).
std::shared_ptr<const Timeline> zeroBubbleTimeline(int microbatches = 8) {
    ScheduleParams p;
    p.kind = ScheduleKind::ZeroBubbleH1;
    p.stages = 4;
    p.microbatches = microbatches;
    p.flushGroup = 4;
    p.costs.backwardSlots = 2;
    p.costs.weightSlots = 1;
    return std::make_shared<const Timeline>(pipelens::buildTimeline(p));
}

// The interleaved example (4 ranks, 8 stages: stage s on rank s mod 4) imported, two steps.
std::shared_ptr<const Timeline> interleavedImport() {
    auto program =
        std::make_shared<const pipelens::PipelineProgram>(pipelens::readPytorchScheduleCsv(
            PIPELENS_SOURCE_DIR "/examples/schedules/interleaved_s4_m8_v2.csv"));
    const pipelens::ProgramSummary summary = pipelens::summarizeProgram(*program);
    if (summary.ranks != 4 || summary.stages != 8) return nullptr;
    ScheduleParams p;
    p.kind = ScheduleKind::Imported;
    p.stages = summary.stages;
    p.microbatches = 2 * summary.microbatches;
    p.program = program;
    return std::make_shared<const Timeline>(pipelens::buildTimeline(p));
}

// The first x (scanning right along row y) whose cell is at slot `slot` or later; -1 if none.
int xOfSlot(const GanttChart& chart, int y, int slot) {
    int stage = 0;
    int at = 0;
    for (int x = 0; x < chart.width(); ++x) {
        if (chart.cellAtPosition(QPointF(x, y), &stage, &at) && at >= slot) return x;
    }
    return -1;
}

// The cell busy on `stage` at `slot`, found by a plain scan (independent of the chart's index).
const TimelineCell* scanCell(const Timeline& tl, int stage, int slot) {
    for (const TimelineCell& c : tl.cells) {
        if (c.stage == stage && c.startSlot <= slot && slot <= c.endSlot) return &c;
    }
    return nullptr;
}

// Copies held on `stage` during `slot`: F started at or before the slot, B not finished before.
int scanStashDepth(const Timeline& tl, int stage, int slot) {
    int depth = 0;
    for (int m = 0; m < tl.params.microbatches; ++m) {
        int fStart = -1;
        int bEnd = -1;
        for (const TimelineCell& c : tl.cells) {
            if (c.stage != stage || c.microbatch != m) continue;
            if (c.op == OpKind::Forward) fStart = c.startSlot;
            if (c.op == OpKind::Backward) bEnd = c.endSlot;
        }
        if (fStart >= 0 && fStart <= slot && bEnd >= slot) ++depth;
    }
    return depth;
}

// Weight version read by F(m, s): backwards of stage s that finished before the forward began.
int scanVersion(const Timeline& tl, int microbatch, int stage) {
    const TimelineCell* f = nullptr;
    for (const TimelineCell& c : tl.cells) {
        if (c.stage == stage && c.microbatch == microbatch && c.op == OpKind::Forward) f = &c;
    }
    int version = 0;
    for (const TimelineCell& c : tl.cells) {
        if (c.stage == stage && c.op == OpKind::Backward && c.endSlot < f->startSlot) ++version;
    }
    return version;
}

int distinctColours(const QImage& image, int enough = 1000) {
    QSet<QRgb> seen;
    for (int y = 0; y < image.height(); y += 2) {
        for (int x = 0; x < image.width(); x += 2) {
            seen.insert(image.pixel(x, y));
            if (seen.size() >= enough) return static_cast<int>(seen.size());
        }
    }
    return static_cast<int>(seen.size());
}

// Counts pixels close to a colour (the forward blue / backward orange of the chart).
int pixelsNear(const QImage& image, QColor colour, int tolerance = 40) {
    int n = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            const QColor c = image.pixelColor(x, y);
            if (std::abs(c.red() - colour.red()) + std::abs(c.green() - colour.green()) +
                    std::abs(c.blue() - colour.blue()) <=
                tolerance)
                ++n;
        }
    }
    return n;
}

}  // namespace

class TestGanttChart : public QObject {
    Q_OBJECT

  private slots:
    void showsEmptyStateWithoutTimeline() {
        GanttChart chart;
        chart.resize(600, 300);
        QCOMPARE(chart.cellDescription(0, 0), QString());
        const QString problem =
            pipelens::ui::test::checkEmptyState(chart, "Run an experiment to see its pipeline");
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // And again after a timeline is cleared.
        chart.setTimeline(makeTimeline(ScheduleKind::PipeDream, 4, 8));
        chart.setTimeline(nullptr);
        QVERIFY(pipelens::ui::test::checkEmptyState(chart, "Run an experiment to see its pipeline")
                    .isEmpty());
        QCOMPARE(chart.focusPolicy(), Qt::StrongFocus);
        QVERIFY(chart.sizeHint().width() > 0 && chart.sizeHint().height() > 0);
    }

    void fitsTheWholeRunForSmallAndLargeTimelines_data() {
        QTest::addColumn<int>("stages");
        QTest::addColumn<int>("microbatches");
        QTest::newRow("S=2 N=4") << 2 << 4;
        QTest::newRow("S=128 N=9873") << 128 << 9873;
    }
    void fitsTheWholeRunForSmallAndLargeTimelines() {
        QFETCH(int, stages);
        QFETCH(int, microbatches);
        auto tl = makeTimeline(ScheduleKind::PipeDream, stages, microbatches);
        QCOMPARE(tl->totalSlots, 2 * microbatches + 2 * (stages - 1));
        GanttChart chart;
        chart.resize(1200, 600);
        chart.setTimeline(tl, std::make_shared<const DelayTable>(*tl));
        QCOMPARE(chart.timeline(), tl);
        // It opens on the start-up: 3·S slots (at least 24, at most the run); fitAll shows all.
        const int startUp = std::min(tl->totalSlots, std::max(24, 3 * stages));
        QCOMPARE(chart.startUpSlots(), startUp);
        QCOMPARE(chart.visibleFirst(), 0.0);
        QCOMPARE(chart.visibleLast(), double(startUp));
        chart.fitAll();
        QCOMPARE(chart.visibleFirst(), 0.0);
        QCOMPARE(chart.visibleLast(), double(tl->totalSlots));
        // The last stage's first forward is F(m=0) at slot S-1.
        QVERIFY(chart.cellDescription(stages - 1, stages - 1)
                    .startsWith(QStringLiteral("F(m=0) on stage %1,").arg(stages)));
        QImage image(chart.size(), QImage::Format_ARGB32_Premultiplied);
        chart.render(&image);
        QVERIFY(distinctColours(image) > 3);
        chart.setTimeline(nullptr);
        QCOMPARE(chart.cellDescription(0, 0), QString());
    }

    void describesEveryCellOfAPipeDreamRun() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 12);
        auto delays = std::make_shared<const DelayTable>(*tl);
        GanttChart chart;
        chart.setTimeline(tl, delays);
        int busy = 0;
        for (int s = 0; s < 4; ++s) {
            for (int t = 0; t < tl->totalSlots; ++t) {
                const TimelineCell* c = scanCell(*tl, s, t);
                const QString text = chart.cellDescription(s, t);
                if (!c) {
                    QVERIFY2(text.isEmpty(), qPrintable(text));
                    continue;
                }
                ++busy;
                const bool fwd = c->op == OpKind::Forward;
                const int version = scanVersion(*tl, c->microbatch, s);
                QCOMPARE(version, delays->versionRead(c->microbatch, s));
                const QString expected =
                    QStringLiteral("%1(m=%2) on stage %3, slot %4, %5 %6, stash depth %7")
                        .arg(fwd ? "F" : "B")
                        .arg(c->microbatch)
                        .arg(s + 1)
                        .arg(t)
                        .arg(fwd ? "reads weight version" : "uses stashed weight version")
                        .arg(version)
                        .arg(scanStashDepth(*tl, s, t));
                QCOMPARE(text, expected);
            }
        }
        QCOMPARE(busy, 2 * 4 * 12);
        // Out of range: nothing.
        QCOMPARE(chart.cellDescription(4, 0), QString());
        QCOMPARE(chart.cellDescription(0, tl->totalSlots), QString());
        QCOMPARE(chart.cellDescription(-1, 3), QString());
    }

    void describesMultiSlotCellsWithTheirSpan() {
        ScheduleParams p;
        p.stages = 3;
        p.microbatches = 5;
        p.costs.backwardSlots = 2;
        auto tl = std::make_shared<const Timeline>(pipelens::buildTimeline(p));
        GanttChart chart;
        chart.setTimeline(tl);
        const TimelineCell* b = nullptr;
        for (const TimelineCell& c : tl->cells) {
            if (c.op == OpKind::Backward && c.stage == 1 && c.microbatch == 2) b = &c;
        }
        QVERIFY(b && b->endSlot == b->startSlot + 1);
        const QString prefix = QStringLiteral("B(m=2) on stage 2, slots %1\u2013%2, stash depth")
                                   .arg(b->startSlot)
                                   .arg(b->endSlot);
        QVERIFY2(chart.cellDescription(1, b->startSlot).startsWith(prefix),
                 qPrintable(chart.cellDescription(1, b->startSlot)));
        QVERIFY(chart.cellDescription(1, b->endSlot).startsWith(prefix));
    }

    void stashDepthOfStageOneIsSInSteadyState() {
        // PD, S = 4, N = 12 (hand-checked): stage 1 admits F(m) only while fewer than 4
        // microbatches are in flight, so from its first backward (slot 2S-1 = 7) until it admits
        // its last forward it holds exactly 4 stashed copies in every slot; in the drain the
        // copies go one per backward.
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 12);
        GanttChart chart;
        chart.setTimeline(tl);
        const TimelineCell* firstB = nullptr;
        const TimelineCell* lastF = nullptr;
        for (const TimelineCell& c : tl->cells) {
            if (c.stage != 0) continue;
            if (c.op == OpKind::Backward && !firstB) firstB = &c;
            if (c.op == OpKind::Forward) lastF = &c;
        }
        QCOMPARE(firstB->startSlot, 7);
        QCOMPARE(lastF->microbatch, 11);
        for (int t = firstB->startSlot; t <= lastF->startSlot; ++t)
            QCOMPARE(chart.stashDepth(0, t), 4);
        // Startup: one more copy per slot (F0 at slot 0, F1 at slot 1, ...).
        QCOMPARE(chart.stashDepth(0, 0), 1);
        QCOMPARE(chart.stashDepth(0, 2), 3);
        // After the run nothing is held.
        QCOMPARE(chart.stashDepth(0, tl->totalSlots), 0);
        // The peak over the run equals the timeline's peakStash on every stage.
        for (int s = 0; s < 4; ++s) {
            int peak = 0;
            for (int t = 0; t < tl->totalSlots; ++t) peak = std::max(peak, chart.stashDepth(s, t));
            QCOMPARE(peak, tl->peakStash[static_cast<size_t>(s)]);
        }
    }

    void describesLocalSgdReplicas() {
        auto tl = makeTimeline(ScheduleKind::LocalSgd, 4, 32, 2);
        QVERIFY(!tl->averagingSlots.empty());
        GanttChart chart;
        chart.setTimeline(tl);
        const TimelineCell& c = tl->cells.back();
        const QString text = chart.cellDescription(c.stage, c.startSlot);
        QVERIFY2(text.endsWith(QStringLiteral(", replica %1, round %2")
                                   .arg(c.microbatch % 4 + 1)
                                   .arg(c.microbatch / 8 + 1)),
                 qPrintable(text));
    }

    // LocalSGD interleaves R replicas on the same stages: each cell names its replica, m mod R
    // counted from 1 (SPEC §2). Hand-checked on S = R = 4, H = 2 (pipelens-cli schedule --art):
    // stage 1 runs F1 at slot 1, F5 at slot 10, F10 at slot 24 and F11 at slot 25.
    void localSgdCellsNameTheirReplica() {
        auto tl = makeTimeline(ScheduleKind::LocalSgd, 4, 16, 2);
        GanttChart chart;
        chart.resize(1200, 400);
        chart.setTimeline(tl);
        chart.setVisibleRange(0, 30);
        QCOMPARE(chart.cellLabel(0, 1), QStringLiteral("1\nr2"));
        QCOMPARE(chart.cellLabel(0, 10), QStringLiteral("5\nr2"));
        QCOMPARE(chart.cellLabel(0, 24), QStringLiteral("10\nr3"));
        QCOMPARE(chart.cellLabel(0, 25), QStringLiteral("11\nr4"));
        QVERIFY(chart.cellLabel(0, 5).isEmpty());  // idle
        QVERIFY2(chart.cellDescription(0, 24).contains(QStringLiteral("F(m=10) on stage 1")) &&
                     chart.cellDescription(0, 24).endsWith(QStringLiteral(", replica 3, round 2")),
                 qPrintable(chart.cellDescription(0, 24)));
        // Rows one line tall: the replica follows the number.
        chart.resize(1200, 150);
        QCOMPARE(chart.cellLabel(0, 10), QStringLiteral("5 r2"));
        // Cells too narrow for both: the number alone (the tooltip still names the replica).
        chart.setVisibleRange(0, 44);
        chart.resize(320, 150);
        const QString narrow = chart.cellLabel(0, 10);
        QVERIFY2(narrow == QStringLiteral("5") || narrow.isEmpty(), qPrintable(narrow));
        // Other schedules have no replicas.
        GanttChart pd;
        pd.resize(1200, 400);
        pd.setTimeline(makeTimeline(ScheduleKind::PipeDream, 4, 16));
        pd.setVisibleRange(0, 30);
        QCOMPARE(pd.cellLabel(0, 1), QStringLiteral("1"));
    }

    // Sequential SGD fits fewer slots into the budget than PipeDream (each microbatch waits
    // for the last): its run is shorter than the experiment the playback bar counts. The chart
    // spans the playback's slots, shows the rest as "finished", and its cursor goes as far as
    // the playback's, so both count the same slots.
    void aShorterRunShowsTheRestOfThePlaybackAsFinished() {
        ScheduleParams p;
        p.kind = ScheduleKind::LocalSgd;  // what "sgd" runs: one replica, never averaged
        p.stages = 2;
        p.microbatches = 2;
        p.replicas = 1;
        p.localSteps = 1 << 29;
        auto tl = std::make_shared<const Timeline>(pipelens::buildTimeline(p));
        QCOMPARE(tl->totalSlots, 8);  // 2 S slots per microbatch
        struct Exposed : GanttChart {
            using GanttChart::plotArea;
        };
        Exposed chart;
        chart.resize(800, 200);
        chart.setPlaybackSlots(10);  // PipeDream's 2 N + 2 (S - 1) with N = 3
        chart.setTimeline(tl);
        QCOMPARE(chart.shownSlots(), 10);
        chart.fitAll();
        QCOMPARE(chart.visibleLast(), 10.0);
        chart.setCursorSlot(10);
        QCOMPARE(chart.cursorSlot(), 10);
        QCOMPARE(chart.cursorLegendText(), QStringLiteral("slot 10"));
        QVERIFY(chart.cellDescription(0, 9).isEmpty());
        // One replica: nothing to tell apart, no "r1" on every cell.
        QCOMPARE(chart.cellLabel(0, 0), QStringLiteral("0"));
        QVERIFY(!chart.cellDescription(0, 0).contains(QStringLiteral("replica")));
        // Slot 9 is drawn in the "finished" grey, unhatched; slot 5 (idle on stage 1 inside
        // the run) is hatched.
        const QImage image = chart.grab().toImage();
        const QRectF plot = chart.plotArea();
        auto coloursOfSlot = [&](int slot) {
            QSet<QRgb> colours;
            const int x0 = qRound(plot.left() + (slot + 0.3) * plot.width() / 10);
            const int x1 = qRound(plot.left() + (slot + 0.7) * plot.width() / 10);
            for (int x = x0; x <= x1; ++x)
                for (int y = qRound(plot.top() + 3); y < qRound(plot.center().y() - 3); ++y)
                    colours << (image.pixel(x, y) & 0xffffff);
            return colours;
        };
        QCOMPARE(coloursOfSlot(9), QSet<QRgb>{0xe4e4e4});
        QVERIFY(coloursOfSlot(5).size() > 1);
        // Without the playback's length the chart spans the run alone.
        GanttChart own;
        own.setTimeline(tl);
        QCOMPARE(own.shownSlots(), 8);
        own.setCursorSlot(10);
        QCOMPARE(own.cursorSlot(), 8);
    }

    void exportsPngAtTheRequestedScale_data() {
        QTest::addColumn<double>("scale");
        QTest::newRow("1x") << 1.0;
        QTest::newRow("2x") << 2.0;
    }
    void exportsPngAtTheRequestedScale() {
        QFETCH(double, scale);
        QTemporaryDir dir;
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 12);
        GanttChart chart;
        chart.resize(700, 260);
        chart.setTimeline(tl, std::make_shared<const DelayTable>(*tl));
        chart.setCursorSlot(20);
        const QString path = dir.filePath(QStringLiteral("gantt.png"));
        QString error;
        QVERIFY2(chart.exportPng(path, scale, &error), qPrintable(error));
        QImage image(path);
        QCOMPARE(image.size(), QSize(qRound(700 * scale), qRound(260 * scale)));
        QVERIFY(distinctColours(image) > 3);
        // Forward blue and backward orange are both drawn.
        QVERIFY(pixelsNear(image, QColor(86, 180, 233)) > 100);
        QVERIFY(pixelsNear(image, QColor(230, 159, 0)) > 100);
        QVERIFY(!chart.exportPng(path, 0.0, &error));
        QVERIFY(!error.isEmpty());
    }

    // Idle hatching in the SVG is plain grey lines, not a pattern brush: Qt writes those as a
    // <pattern> filled through a <mask> whose units other renderers (ImageMagick, librsvg,
    // browsers) read differently, so the idle cells came out blank or solid there.
    void theSvgHatchingIsPlainLines() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 8);
        GanttChart chart;
        chart.resize(800, 300);
        chart.setTimeline(tl);
        const QString svg = pipelens::ui::test::exportedSvg(chart);
        QVERIFY(!svg.contains(QStringLiteral("<pattern")));
        QVERIFY(!svg.contains(QStringLiteral("<mask")));
        QVERIFY(!svg.contains(QStringLiteral("url(#")));
        // The hatch lines: grey #a0a0a0 strokes, one every 8 px along the plot's width and
        // height (the plot is most of 800 x 300), each inside the plot.
        const QRegularExpression group(
            QStringLiteral("<g fill=\"none\"[^>]*stroke=\"#a0a0a0\"[^>]*>(.*?)</g>"),
            QRegularExpression::DotMatchesEverythingOption);
        const QRegularExpression line(
            QStringLiteral("points=\"([-0-9.]+),([-0-9.]+) ([-0-9.]+),([-0-9.]+) \""));
        int lines = 0;
        for (auto g = group.globalMatch(svg); g.hasNext();) {
            const QString body = g.next().captured(1);
            for (auto m = line.globalMatch(body); m.hasNext();) {
                const auto match = m.next();
                const double x0 = match.captured(1).toDouble();
                const double y0 = match.captured(2).toDouble();
                const double x1 = match.captured(3).toDouble();
                const double y1 = match.captured(4).toDouble();
                QVERIFY(std::abs((x0 + y0) - (x1 + y1)) < 0.01);  // a "/" line
                QVERIFY(x0 >= 0 && x1 <= 800 && y0 <= 300 && y1 >= 0);
                ++lines;
            }
        }
        QVERIFY2(lines > (700 + 200) / 8 - 10, qPrintable(QString::number(lines)));
    }

    void exportsParseableSvg() {
        QTemporaryDir dir;
        auto tl = makeTimeline(ScheduleKind::LocalSgd, 4, 16, 2);
        GanttChart chart;
        chart.resize(800, 300);
        chart.setTimeline(tl);
        const QString path = dir.filePath(QStringLiteral("gantt.svg"));
        QString error;
        QVERIFY2(chart.exportSvg(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray svg = file.readAll();
        QVERIFY(svg.startsWith("<?xml"));
        QVERIFY(svg.contains("<svg"));
        QVERIFY(svg.contains("</svg>"));
        QVERIFY(svg.contains("#56b4e9"));  // vector forward cells
        QVERIFY(!chart.exportSvg(dir.filePath(QStringLiteral("missing/x.svg")), &error));
    }

    void exportsCsvOfTheCells() {
        QTemporaryDir dir;
        auto tl = makeTimeline(ScheduleKind::PipeDream, 3, 7);
        auto delays = std::make_shared<const DelayTable>(*tl);
        GanttChart chart;
        chart.setTimeline(tl, delays);
        chart.setExportTitle(QStringLiteral("PD"));
        const QString path = dir.filePath(QStringLiteral("gantt.csv"));
        QVERIFY(chart.exportCsv(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
        QCOMPARE(lines.front(),
                 QByteArray("method,slot,end_slot,stage,op,microbatch,version_read,replica,round"));
        QCOMPARE(lines.size(), qsizetype(tl->cells.size() + 1));
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QList<QByteArray> f = lines[i].split(',');
            QCOMPARE(f.size(), qsizetype(9));
            const TimelineCell& c = tl->cells[static_cast<size_t>(i - 1)];
            QCOMPARE(f[0], QByteArray("\"PD\""));
            QCOMPARE(f[1].toInt(), c.startSlot);
            QCOMPARE(f[2].toInt(), c.endSlot);
            QCOMPARE(f[3].toInt(), c.stage + 1);  // as the chart's rows are labelled
            QCOMPARE(f[4], QByteArray(c.op == OpKind::Forward ? "F" : "B"));
            QCOMPARE(f[5].toInt(), c.microbatch);
            QCOMPARE(f[6].toInt(), scanVersion(*tl, c.microbatch, c.stage));
            QVERIFY(f[7].isEmpty() && f[8].isEmpty());  // not LocalSGD
        }
    }

    void zoomsAndFitsAll() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 40);
        GanttChart chart;
        chart.resize(800, 300);
        chart.setTimeline(tl);
        QSignalSpy spy(&chart, &GanttChart::visibleRangeChanged);
        chart.setVisibleRange(10.0, 30.0);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(chart.visibleFirst(), 10.0);
        QCOMPARE(chart.visibleLast(), 30.0);
        QCOMPARE(spy.last().at(0).toDouble(), 10.0);
        // Keyboard: '+' zooms in around the centre, Home fits all.
        QTest::keyClick(&chart, Qt::Key_Plus);
        QVERIFY(chart.visibleLast() - chart.visibleFirst() < 20.0);
        QTest::keyClick(&chart, Qt::Key_Right);
        QTest::keyClick(&chart, Qt::Key_Home);
        QCOMPARE(chart.visibleFirst(), 0.0);
        QCOMPARE(chart.visibleLast(), double(tl->totalSlots));
        QCOMPARE(spy.last().at(1).toDouble(), double(tl->totalSlots));
        const int before = static_cast<int>(spy.count());
        chart.fitAll();  // already fitted: no signal
        QCOMPARE(spy.count(), before);
        // Ranges are clamped to the run.
        chart.setVisibleRange(-50.0, 10.0);
        QCOMPARE(chart.visibleFirst(), 0.0);
        QCOMPARE(chart.visibleLast(), 60.0);
        chart.setVisibleRange(5.0, 5.5);
        QVERIFY(chart.visibleLast() - chart.visibleFirst() >= 4.0);
        chart.fitAll();
        QCOMPARE(chart.visibleLast(), double(tl->totalSlots));
    }

    void movesTheCursor() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 12);
        GanttChart chart;
        chart.setTimeline(tl);
        QSignalSpy spy(&chart, &GanttChart::cursorSlotChanged);
        QCOMPARE(chart.cursorSlot(), -1);
        chart.setCursorSlot(10);
        QCOMPARE(chart.cursorSlot(), 10);
        chart.setCursorSlot(10);
        QCOMPARE(spy.count(), 1);
        chart.setCursorSlot(1000);
        QCOMPARE(chart.cursorSlot(), tl->totalSlots);
        chart.setCursorSlot(-5);
        QCOMPARE(chart.cursorSlot(), -1);
        QCOMPARE(spy.count(), 3);
    }

    // The legend says slots are faded only while some are: at the end of playback none is.
    void cursorLegendSaysFadedOnlyWhileSlotsAreFaded() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 12);
        GanttChart chart;
        chart.setTimeline(tl);
        QCOMPARE(chart.cursorLegendText(), QString());
        chart.setCursorSlot(10);
        QCOMPARE(chart.cursorLegendText(), QStringLiteral("slot 10 (faded: not yet run)"));
        chart.setCursorSlot(tl->totalSlots);
        QCOMPARE(chart.cursorLegendText(), QStringLiteral("slot %1").arg(tl->totalSlots));
    }

    // The opening view counts a pipeline crossing in slots: costs of 1 and 3 slots per forward
    // and backward make it twice as long as the paper's 1 and 1.
    void theStartUpViewScalesWithTheOperationCosts() {
        ScheduleParams p;
        p.kind = ScheduleKind::PipeDream;
        p.stages = 16;
        p.microbatches = 64;
        p.costs = pipelens::OpCosts{1, 3, 0};
        auto tl = std::make_shared<const Timeline>(buildTimeline(p));
        GanttChart chart;
        chart.resize(900, 400);
        chart.setTimeline(tl);
        QCOMPARE(chart.startUpSlots(), 3 * 16 * 2);
        QCOMPARE(chart.visibleLast(), double(3 * 16 * 2));
        // A new run of the same length keeps the person's zoom; another length opens anew.
        chart.setVisibleRange(10.0, 50.0);
        chart.setTimeline(std::make_shared<const Timeline>(buildTimeline(p)));
        QCOMPARE(chart.visibleLast(), 50.0);
        p.microbatches = 65;
        chart.setTimeline(std::make_shared<const Timeline>(buildTimeline(p)));
        QCOMPARE(chart.visibleFirst(), 0.0);
        QCOMPARE(chart.visibleLast(), double(3 * 16 * 2));
    }

    // The split backward: I and W cells are named in the hover text and the labels, and drawn
    // in their own colours (none of which a PipeDream chart uses).
    void drawsInputAndWeightGradientCells() {
        auto tl = zeroBubbleTimeline();
        int inputs = 0;
        int weights = 0;
        for (const TimelineCell& c : tl->cells) {
            inputs += c.op == OpKind::InputGrad ? 1 : 0;
            weights += c.op == OpKind::WeightGrad ? 1 : 0;
        }
        QCOMPARE(inputs, 4 * 8);
        QCOMPARE(weights, 4 * 8);
        GanttChart chart;
        chart.resize(1400, 400);
        chart.setTimeline(tl);
        chart.setVisibleRange(0, 40);  // 30 pixels a slot: every cell labelled
        int checked = 0;
        for (const TimelineCell& c : tl->cells) {
            const QString text = chart.cellDescription(c.stage, c.startSlot);
            const QString label = chart.cellLabel(c.stage, c.startSlot);
            const QString number = QString::number(c.microbatch);
            if (c.startSlot >= 38) continue;
            ++checked;
            switch (c.op) {
                case OpKind::InputGrad:
                    QVERIFY2(text.startsWith(QStringLiteral("I(m=%1) (input gradient) on stage %2")
                                                 .arg(c.microbatch)
                                                 .arg(c.stage + 1)),
                             qPrintable(text));
                    QCOMPARE(label, "I" + number);
                    break;
                case OpKind::WeightGrad:
                    QVERIFY2(text.startsWith(QStringLiteral("W(m=%1) (weight gradient) on stage %2")
                                                 .arg(c.microbatch)
                                                 .arg(c.stage + 1)),
                             qPrintable(text));
                    QCOMPARE(label, "W" + number);
                    break;
                default:
                    QVERIFY2(text.startsWith(QStringLiteral("F(m=%1) on stage %2")
                                                 .arg(c.microbatch)
                                                 .arg(c.stage + 1)),
                             qPrintable(text));
                    QCOMPARE(label, number);
            }
            QVERIFY2(text.contains("optimizer step 1") || text.contains("optimizer step 2"),
                     qPrintable(text));
        }
        QVERIFY(checked > 40);
        // One lane per stage: ZB-H1 keeps one stage per device.
        QCOMPARE(chart.laneCount(), 4);
        QCOMPARE(chart.laneTitle(2), QStringLiteral("stage 3"));

        const QColor input = pipelens::ui::ganttOpColour(OpKind::InputGrad);
        const QColor weight = pipelens::ui::ganttOpColour(OpKind::WeightGrad);
        QVERIFY(input != QColor(pipelens::ui::ganttOpColour(OpKind::Backward)));
        QVERIFY(input != weight);
        QImage image(1400, 400, QImage::Format_ARGB32_Premultiplied);
        chart.render(&image);
        QVERIFY2(pixelsNear(image, input, 12) > 2000,
                 qPrintable(QString::number(pixelsNear(image, input, 12))));
        QVERIFY(pixelsNear(image, weight, 12) > 2000);
        // Zoomed out to many slots a pixel, I and W still tint the backward share.
        auto many = zeroBubbleTimeline(4000);
        chart.setTimeline(many);
        chart.fitAll();
        chart.render(&image);
        QVERIFY(distinctColours(image) > 3);
        // A PipeDream chart has neither colour.
        chart.setTimeline(makeTimeline(ScheduleKind::PipeDream, 4, 8));
        chart.render(&image);
        QCOMPARE(pixelsNear(image, input, 12), 0);
        QCOMPARE(pixelsNear(image, weight, 12), 0);
    }

    // A click on an I or W cell selects its microbatch; the outline keeps the op's colour.
    void selectsSplitBackwardCells() {
        auto tl = zeroBubbleTimeline();
        GanttChart chart;
        chart.resize(1000, 300);
        chart.setTimeline(tl);
        chart.selectMicrobatch(2);
        int halves = 0;
        for (const auto& c : chart.selection().cells) {
            QCOMPARE(c.lane, c.stage);
            halves += c.op == OpKind::InputGrad || c.op == OpKind::WeightGrad ? 1 : 0;
        }
        QCOMPARE(chart.selection().cells.size(), size_t(3 * 4));  // F, I, W on 4 stages
        QCOMPARE(halves, 8);
    }

    // An imported interleaved schedule holds two stages per device: one lane per device, titled
    // with its stages; each cell is drawn in its device's lane and names its stage.
    void drawsOneLanePerDeviceForAnInterleavedImport() {
        auto tl = interleavedImport();
        QVERIFY(tl);
        QCOMPARE(tl->stageRank.size(), size_t(8));
        GanttChart chart;
        chart.resize(1500, 400);
        chart.setTimeline(tl);
        QCOMPARE(chart.laneCount(), 4);
        QCOMPARE(chart.laneTitle(0), QStringLiteral("device 1 (stages 1, 5)"));
        QCOMPARE(chart.laneTitle(3), QStringLiteral("device 4 (stages 4, 8)"));
        for (int s = 0; s < 8; ++s) QCOMPARE(chart.laneOfStage(s), tl->stageRank[size_t(s)]);
        chart.setVisibleRange(0, 30);  // 50 pixels a slot
        QCOMPARE(chart.visibleLast(), 30.0);
        // Each cell, hit at its middle on its device's lane, is found with its own stage.
        const int plotTop = [&] {
            for (int y = 0; y < 400; ++y) {
                if (chart.cellAtPosition(QPointF(750, y), nullptr, nullptr)) return y;
            }
            return -1;
        }();
        int plotBottom = plotTop;
        while (chart.cellAtPosition(QPointF(750, plotBottom + 1), nullptr, nullptr)) ++plotBottom;
        QVERIFY(plotTop > 0 && plotBottom > plotTop + 40);
        const double laneHeight = (plotBottom - plotTop + 1) / 4.0;
        int checked = 0;
        for (const TimelineCell& c : tl->cells) {
            if (c.endSlot >= 29) continue;
            const int y =
                static_cast<int>(plotTop + (tl->stageRank[size_t(c.stage)] + 0.5) * laneHeight);
            const int x = xOfSlot(chart, y, c.startSlot) + 10;
            int stage = -1;
            int slot = -1;
            QVERIFY2(chart.cellAtPosition(QPointF(x, y), &stage, &slot),
                     qPrintable(QStringLiteral("slot %1 stage %2 at (%3, %4), plot rows %5 … %6")
                                    .arg(c.startSlot)
                                    .arg(c.stage)
                                    .arg(x)
                                    .arg(y)
                                    .arg(plotTop)
                                    .arg(plotBottom)));
            QCOMPARE(slot, c.startSlot);
            QCOMPARE(stage, c.stage);
            const QString label = chart.cellLabel(c.stage, c.startSlot);
            const QString want = (c.op == OpKind::Forward ? "F" : "B") +
                                 QString::number(c.microbatch) + QChar(0x00b7) +
                                 QStringLiteral("s%1").arg(c.stage + 1);
            QCOMPARE(label, want);
            QVERIFY(
                chart.cellDescription(c.stage, c.startSlot)
                    .contains(QStringLiteral("device %1").arg(tl->stageRank[size_t(c.stage)] + 1)));
            ++checked;
        }
        QVERIFY(checked > 50);
        // The second chunk on a device has its own shade.
        QImage image(1500, 400, QImage::Format_ARGB32_Premultiplied);
        chart.render(&image);
        QVERIFY(pixelsNear(image, pipelens::ui::ganttOpColour(OpKind::Forward, 0), 6) > 1000);
        QVERIFY(pixelsNear(image, pipelens::ui::ganttOpColour(OpKind::Forward, 1), 6) > 1000);
        chart.fitAll();
        chart.selectMicrobatch(3);
        chart.render(&image);  // aggregated, with a selection: nothing out of its lane
        for (const auto& c : chart.selection().cells)
            QCOMPARE(c.lane, tl->stageRank[size_t(c.stage)]);
    }

    // Program schedules: a thin dark line where each optimizer step ends.
    void drawsOptimizerStepEnds() {
        ScheduleParams p;
        p.kind = ScheduleKind::OneFOneB;
        p.stages = 4;
        p.microbatches = 12;
        p.flushGroup = 4;
        auto tl = std::make_shared<const Timeline>(pipelens::buildTimeline(p));
        QCOMPARE(tl->stepEndSlots.size(), size_t(3));
        GanttChart chart;
        chart.resize(1200, 300);
        chart.setTimeline(tl);
        chart.fitAll();
        QImage image(1200, 300, QImage::Format_ARGB32_Premultiplied);
        chart.render(&image);
        // The row through the middle of the plot: find x of each step's end.
        const int y = 150;
        for (size_t i = 0; i + 1 < tl->stepEndSlots.size(); ++i) {
            const int x = xOfSlot(chart, y, tl->stepEndSlots[i] + 1);
            QVERIFY(x > 0);
            int dark = 0;
            for (int yy = 60; yy < 240; ++yy) {
                for (int dx = -1; dx <= 0; ++dx) {
                    const QColor c = image.pixelColor(x + dx, yy);
                    if (c.red() + c.green() + c.blue() < 200) ++dark;
                }
            }
            QVERIFY2(dark > 40, qPrintable(QStringLiteral("step %1: %2 dark pixels at x = %3")
                                               .arg(i + 1)
                                               .arg(dark)
                                               .arg(x)));
        }
        // PipeDream has no steps: no such line in the middle of its run.
        QVERIFY(makeTimeline(ScheduleKind::PipeDream, 4, 12)->stepEndSlots.empty());
    }

    void mapsPositionsToCells() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 12);
        GanttChart chart;
        chart.resize(800, 300);
        chart.setTimeline(tl);
        chart.fitAll();  // the whole run: the scan below crosses every slot
        int stage = -1;
        int slot = -1;
        QVERIFY(!chart.cellAtPosition(QPointF(1, 1), &stage, &slot));
        // Scan a horizontal line through the plot: slots grow left to right, one stage.
        int lastSlot = -1;
        int found = 0;
        for (int x = 0; x < 800; x += 4) {
            if (!chart.cellAtPosition(QPointF(x, 150), &stage, &slot)) continue;
            ++found;
            QVERIFY(slot >= lastSlot);
            lastSlot = slot;
        }
        QVERIFY(found > 100);
        QCOMPARE(lastSlot, tl->totalSlots - 1);
        // Hovering shows the description of the cell under the pointer.
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        for (int x = 0; x < 800; x += 4) {
            if (!chart.cellAtPosition(QPointF(x, 150), &stage, &slot)) continue;
            const QString text = chart.cellDescription(stage, slot);
            if (text.isEmpty()) continue;
            QHelpEvent help(QEvent::ToolTip, QPoint(x, 150), chart.mapToGlobal(QPoint(x, 150)));
            QApplication::sendEvent(&chart, &help);
            QCOMPARE(QToolTip::text(), text);
            break;
        }
    }

    void paintsAggregatedLargeRuns() {
        // S = 128 with about 20,000 slots in 1200 x 600 pixels: many slots per pixel column.
        auto tl = makeTimeline(ScheduleKind::PipeDream, 128, 9873);
        GanttChart chart;
        chart.resize(1200, 600);
        chart.setTimeline(tl, std::make_shared<const DelayTable>(*tl));
        chart.setCursorSlot(tl->totalSlots / 2);
        QImage image(1200, 600, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::black);
        chart.render(&image);
        QVERIFY(distinctColours(image) > 3);
        // Zoomed in to 200 slots and at 2x device pixels, nothing faded.
        chart.setCursorSlot(-1);
        chart.setVisibleRange(10000, 10200);
        QImage hidpi(2400, 1200, QImage::Format_ARGB32_Premultiplied);
        hidpi.setDevicePixelRatio(2.0);
        chart.render(&hidpi);
        QVERIFY(pixelsNear(hidpi, QColor(86, 180, 233)) > 1000);
        QVERIFY(pixelsNear(hidpi, QColor(230, 159, 0)) > 1000);
    }

    // Weight stashing made visible: a click on a cell selects its microbatch; its F and B on
    // every stage are drawn outlined over the dimmed rest, each with the version it read (the
    // same for F and B on a stage: B uses the copy F stashed). A click on an idle cell clears it.
    void clickingACellHighlightsItsMicrobatchOnEveryStage() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 12);
        auto delays = std::make_shared<const DelayTable>(*tl);
        GanttChart chart;
        chart.resize(900, 320);
        chart.setTimeline(tl, delays);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        // A point on F(m = 5) of stage 2, one on another microbatch's cell, one idle.
        QPoint onF5;
        QPoint onOther;
        QPoint idle;
        for (int y = 0; y < chart.height(); y += 3) {
            for (int x = 0; x < chart.width(); x += 2) {
                int stage = 0;
                int slot = 0;
                if (!chart.cellAtPosition(QPointF(x, y), &stage, &slot)) continue;
                const TimelineCell* c = scanCell(*tl, stage, slot);
                if (!c && idle.isNull()) idle = QPoint(x, y);
                if (c && c->microbatch == 5 && c->op == OpKind::Forward && stage == 1 &&
                    onF5.isNull())
                    onF5 = QPoint(x, y);
                // Inside the cell, off its white border and its centred label.
                if (c && c->microbatch == 9 && stage == 3 && onOther.isNull())
                    onOther = QPoint(x + 4, y + 4);
            }
        }
        QVERIFY(!onF5.isNull() && !onOther.isNull() && !idle.isNull());
        QCOMPARE(chart.selectedMicrobatch(), -1);
        const QImage before = chart.grab().toImage();
        QSignalSpy clicked(&chart, &GanttChart::slotClicked);
        QTest::mouseClick(&chart, Qt::LeftButton, {}, onF5);
        QCOMPARE(clicked.count(), 1);  // the click still moves the playback cursor
        QCOMPARE(chart.selectedMicrobatch(), 5);
        const auto& cells = chart.selection().cells;
        QCOMPARE(cells.size(), size_t{8});  // F and B on each of the 4 stages
        for (int stage = 0; stage < 4; ++stage) {
            int forwards = 0;
            int backwards = 0;
            for (const auto& c : cells) {
                if (c.stage != stage) continue;
                (c.op == OpKind::Forward ? forwards : backwards) += 1;
                QCOMPARE(c.version, scanVersion(*tl, 5, stage));  // independent of the table
                QCOMPARE(c.version, delays->versionRead(5, stage));
            }
            QCOMPARE(forwards, 1);
            QCOMPARE(backwards, 1);
        }
        QVERIFY(chart.selection().summary().contains("microbatch 5"));
        // Drawn: the rest dimmed (lighter), the selection outlined (more near-black pixels).
        const QImage after = chart.grab().toImage();
        const QByteArray grab = qgetenv("PIPELENS_SELECTION_GRAB");  // a picture to look at
        if (!grab.isEmpty()) after.save(QString::fromLocal8Bit(grab));
        QVERIFY(QColor(after.pixel(onOther)).lightness() >
                QColor(before.pixel(onOther)).lightness());
        auto dark = [](const QImage& image) {
            int n = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x)
                    n += QColor(image.pixel(x, y)).lightness() < 40;
            return n;
        };
        QVERIFY2(dark(after) > dark(before) + 200,
                 qPrintable(QStringLiteral("%1 -> %2").arg(dark(before)).arg(dark(after))));
        // A new timeline with that microbatch keeps the selection; an idle click clears it.
        chart.setTimeline(makeTimeline(ScheduleKind::PipeDream, 4, 12), delays);
        QCOMPARE(chart.selectedMicrobatch(), 5);
        QTest::mouseClick(&chart, Qt::LeftButton, {}, idle);
        QCOMPARE(chart.selectedMicrobatch(), -1);
        QVERIFY(chart.selection().empty());
    }

    // Zoomed in, the view pans to keep the playback cursor in sight; the whole run stays put.
    void followsTheCursorWhenZoomedIn() {
        auto tl = makeTimeline(ScheduleKind::PipeDream, 4, 40);
        GanttChart chart;
        chart.resize(800, 300);
        chart.setTimeline(tl);
        chart.setVisibleRange(0.0, 20.0);
        chart.setCursorSlot(10);  // in view: nothing moves
        QCOMPARE(chart.visibleFirst(), 0.0);
        for (int slot = 11; slot <= tl->totalSlots; ++slot) {  // playback, slot by slot
            chart.setCursorSlot(slot);
            QVERIFY2(chart.visibleFirst() <= slot && slot <= chart.visibleLast(),
                     qPrintable(QStringLiteral("slot %1, view %2 … %3")
                                    .arg(slot)
                                    .arg(chart.visibleFirst())
                                    .arg(chart.visibleLast())));
            QCOMPARE(chart.visibleLast() - chart.visibleFirst(), 20.0);
        }
        chart.setCursorSlot(3);  // back to the start
        QVERIFY(chart.visibleFirst() <= 3.0);
        chart.fitAll();
        chart.setCursorSlot(50);
        QCOMPARE(chart.visibleFirst(), 0.0);
        QCOMPARE(chart.visibleLast(), double(tl->totalSlots));
    }
};

QTEST_MAIN(TestGanttChart)
#include "tst_gantt_chart.moc"

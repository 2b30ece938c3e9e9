// Clicking a chart moves the playback cursor: a click on the Gantt sets it to the slot under the
// pointer, a click on the heatmap to the slot where that many block updates are done; a drag
// still pans and leaves the cursor alone. Also: the heatmap's header and axis title stay inside
// a narrow widget.
#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QTest>
#include <QWheelEvent>
#include <cmath>

#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "controllers/experiment_controller.hpp"
#include "controls/playback_bar.hpp"
#include "main_window.hpp"
#include "schedule/timeline.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// A point inside the chart's plot, found through the chart's own hit test.
bool findCell(const GanttChart& g, double xFraction, QPoint* at, int* slot) {
    for (int y = g.height() / 2; y < g.height(); ++y) {
        const QPoint p(static_cast<int>(g.width() * xFraction), y);
        int stage = 0;
        if (g.cellAtPosition(p, &stage, slot)) {
            *at = p;
            return true;
        }
    }
    return false;
}

// True if any pixel of `image` in the column band [x0, x1) and row band [y0, y1) is not white.
bool inked(const QImage& image, int x0, int x1, int y0, int y1) {
    for (int y = std::max(0, y0); y < std::min(image.height(), y1); ++y) {
        for (int x = std::max(0, x0); x < std::min(image.width(), x1); ++x) {
            if (image.pixelColor(x, y) != QColor(Qt::white)) return true;
        }
    }
    return false;
}

}  // namespace

class TestClickCursor : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    // The wheel and the keys zoom and pan both charts the same way (shared RangeNavigation).
    void wheelAndKeysZoomAndPan() {
        ScheduleParams p;
        p.stages = 4;
        p.microbatches = 40;
        auto timeline = std::make_shared<const Timeline>(buildTimeline(p));
        auto delays = std::make_shared<const DelayTable>(*timeline);
        GanttChart g;
        g.resize(800, 300);
        g.setTimeline(timeline, delays);
        StalenessHeatmap h;
        h.resize(800, 300);
        h.setDelays(delays);
        g.show();
        h.show();
        QVERIFY(QTest::qWaitForWindowExposed(&g));
        QVERIFY(QTest::qWaitForWindowExposed(&h));
        const double slotCount = timeline->totalSlots;
        QCOMPARE(g.visibleLast() - g.visibleFirst(), 24.0);  // it opens on the start-up
        g.fitAll();
        QCOMPARE(g.visibleLast() - g.visibleFirst(), slotCount);
        QTest::keyClick(&g, Qt::Key_Plus);  // one step shows 80 % of the span
        QVERIFY(std::abs((g.visibleLast() - g.visibleFirst()) - 0.8 * slotCount) < 1e-9);
        const double firstBefore = g.visibleFirst();
        QTest::keyClick(&g, Qt::Key_Right);  // pans by a tenth of the span
        QVERIFY(std::abs(g.visibleFirst() - (firstBefore + 0.08 * slotCount)) < 1e-9);
        QTest::keyClick(&g, Qt::Key_Home);
        QCOMPARE(g.visibleFirst(), 0.0);
        QCOMPARE(g.visibleLast(), slotCount);
        // One wheel notch forward over the middle of the plot zooms in by the same step.
        const QPointF centre(g.width() / 2.0, g.height() / 2.0);
        QWheelEvent wheel(centre, g.mapToGlobal(centre), QPoint(), QPoint(0, 120), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(&g, &wheel);
        QVERIFY(std::abs((g.visibleLast() - g.visibleFirst()) - 0.8 * slotCount) < 1e-9);
        const double updates = static_cast<double>(delays->updates());
        QTest::keyClick(&h, Qt::Key_Plus);
        QVERIFY(std::abs((h.visibleLast() - h.visibleFirst()) - 0.8 * updates) < 1e-9);
        QTest::keyClick(&h, Qt::Key_Minus);
        QVERIFY(std::abs((h.visibleLast() - h.visibleFirst()) - updates) < 1e-9);
    }

    void aClickOnTheGanttSetsTheCursorAndADragPans() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        GanttChart* g = w.gantt();
        g->setVisibleRange(0.0, 40.0);
        QPoint at;
        int slot = -1;
        QVERIFY(findCell(*g, 0.5, &at, &slot));
        QTest::mouseClick(g, Qt::LeftButton, {}, at);
        const int cursor = w.playback()->cursor();
        // The slot boundary nearest the pointer: the start or the end of the cell clicked.
        QVERIFY2(cursor == slot || cursor == slot + 1,
                 qPrintable(QStringLiteral("cursor %1, cell %2").arg(cursor).arg(slot)));
        QCOMPARE(g->cursorSlot(), cursor);
        QCOMPARE(w.lossChart()->cursorSlot(), cursor);

        // A drag pans and does not move the cursor.
        const double first = g->visibleFirst();
        QTest::mousePress(g, Qt::LeftButton, {}, at);
        QTest::mouseMove(g, at - QPoint(80, 0));
        QTest::mouseRelease(g, Qt::LeftButton, {}, at - QPoint(80, 0));
        QVERIFY(g->visibleFirst() > first);
        QCOMPARE(w.playback()->cursor(), cursor);
    }

    void aClickOnTheHeatmapSetsTheCursorToThatUpdate() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(w.heatmapMethodIndex() >= 0);
        StalenessHeatmap* h = w.heatmap();
        h->setVisibleRange(0.0, 100.0);
        QPoint at;
        long long update = -1;
        long long first = -1;
        long long last = -1;
        int block = 0;
        for (int y = h->height() / 2; y < h->height() && update < 0; ++y) {
            const QPoint p(h->width() / 3, y);
            if (h->cellAtPosition(p, &update, &block, &first, &last)) at = p;
        }
        QVERIFY(update >= 0);
        w.playback()->toEnd();
        QTest::mouseClick(h, Qt::LeftButton, {}, at);
        const int cursor = w.playback()->cursor();
        QVERIFY(cursor < w.playback()->totalSlots());
        // Several blocks update in one slot, so the cursor (which counts slots) goes to the end
        // of the slot in which the clicked update count is reached.
        const MethodRun& run =
            w.controller()->latest()->runs()[static_cast<size_t>(w.heatmapMethodIndex())];
        const long long done = run.updatesBefore(cursor);
        const long long before = run.updatesBefore(cursor - 1);
        // Some count k in the clicked column's [first, last + 1] is reached in slot cursor - 1.
        QVERIFY2(before < last + 1 && done >= std::max(first, 1LL),
                 qPrintable(QStringLiteral("slot %1 holds updates (%2, %3], clicked [%4, %5]")
                                .arg(cursor - 1)
                                .arg(before)
                                .arg(done)
                                .arg(first)
                                .arg(last + 1)));
        QCOMPARE(h->cursorUpdate(), done);
    }

    void theHeatmapTextStaysInsideANarrowWidget() {
        ScheduleParams p;
        p.kind = ScheduleKind::PipeDream;
        p.stages = 8;
        p.microbatches = 400;
        StalenessHeatmap h;
        h.setDelays(std::make_shared<const DelayTable>(buildTimeline(p)));
        for (int width : {400, 300, 220}) {
            const QSize size(width, 300);
            QImage image(size, QImage::Format_RGB32);
            image.fill(Qt::white);
            {
                QPainter painter(&image);
                h.paintChart(painter, size);
            }
            // Text touching the left or right edge is text cut off there.
            QVERIFY2(!inked(image, 0, 2, 0, size.height()), qPrintable(QString::number(width)));
            QVERIFY2(!inked(image, width - 2, width, 0, size.height()),
                     qPrintable(QString::number(width)));
        }
    }
};

QTEST_MAIN(TestClickCursor)
#include "tst_click_cursor.moc"

// The loss chart as a person reads it: hovering reads out the nearest curve's method, x and
// value; a rubber band zooms in (with every point of the range shown, not the whole run's
// thinned points) and reset zoom shows the whole run; a pinned run stays, dashed and faded and
// labelled with its settings, under the runs of the next settings.
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QTest>
#include <QToolButton>
#include <QValueAxis>
#include <cmath>

#include "charts/loss_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

SnapshotPtr run(const std::function<void(ExperimentConfig&)>& change) {
    ExperimentController c;
    ExperimentConfig config = c.config();
    change(config);
    c.setConfig(config);
    if (!test::waitForCurrentResults(c)) return nullptr;
    return c.latest();
}

// Where point `p` of `series` is drawn, in the view's viewport coordinates.
QPoint drawnAt(LossChart& chart, QLineSeries* series, const QPointF& p) {
    const QPointF inChart = chart.chart()->mapToPosition(p, series);
    return chart.view()->mapFromScene(chart.chart()->mapToScene(inChart));
}

// Shows `s` in `chart` on screen, laid out (the hover and zoom map pixels to values).
bool showOnScreen(LossChart& chart, const SnapshotPtr& s) {
    chart.resize(760, 480);
    chart.setSnapshot(s);
    chart.show();
    if (!QTest::qWaitForWindowExposed(&chart)) return false;
    QTest::qWait(50);
    return true;
}

double axisMin(QAbstractAxis* a) {
    return a->property("min").toDouble();
}
double axisMax(QAbstractAxis* a) {
    return a->property("max").toDouble();
}

}  // namespace

class TestLossChart : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void hoveringReadsOutTheNearestCurve() {
        const SnapshotPtr s = run([](ExperimentConfig&) {});
        QVERIFY(s);
        LossChart chart;
        QVERIFY(showOnScreen(chart, s));
        for (int m = 0; m < chart.methodSeries().size(); ++m) {
            const std::vector<QPointF>& data = chart.methodData(m);
            const QPointF p = data[data.size() * 2 / 3];
            const QPoint at = drawnAt(chart, chart.methodSeries()[m], p);
            const LossChart::Readout r = chart.readoutAt(at);
            QVERIFY2(r.method >= 0, qPrintable(QString::number(m)));
            // The point read out is a point of the curve it names, drawn under the pointer.
            const auto& named = chart.methodData(r.method);
            bool onCurve = false;
            for (const QPointF& q : named) onCurve = onCurve || (q.x() == r.x && q.y() == r.y);
            QVERIFY(onCurve);
            QCOMPARE(r.name, chart.methodSeries()[r.method]->name());
            const QPoint drawn = drawnAt(chart, chart.methodSeries()[r.method], QPointF(r.x, r.y));
            QVERIFY((drawn - at).manhattanLength() <= 3);
            QVERIFY(r.text.contains(r.name));
            QVERIFY(r.text.contains(QStringLiteral("slot %1").arg(r.x, 0, 'f', 0)));
            QVERIFY(r.text.contains(QString::number(r.y, 'g', 4)));
        }
        // A real pointer move shows it beside the pointer; far from every curve, nothing.
        const std::vector<QPointF>& data = chart.methodData(0);
        const QPoint at = drawnAt(chart, chart.methodSeries()[0], data[data.size() / 2]);
        QTest::mouseMove(chart.view()->viewport(), at);
        QTRY_VERIFY_WITH_TIMEOUT(chart.readoutLabel()->isVisible(), test::timeout(5000));
        QCOMPARE(chart.readoutLabel()->text(), chart.readoutAt(at).text);
        const QByteArray grab = qgetenv("PIPELENS_HOVER_GRAB");  // a picture to look at
        if (!grab.isEmpty()) chart.grab().save(QString::fromLocal8Bit(grab));
        QCOMPARE(chart.readoutAt(QPoint(2, 2)).method, -1);  // outside the plot
    }

    void aRubberBandZoomsAndResetShowsTheWholeRun() {
        // A run longer than the points a series keeps (2500), so the whole run is thinned.
        const SnapshotPtr s = run([](ExperimentConfig& c) {
            c.budget = BudgetSpec{};
            c.budget.microbatches = 3000;
        });
        QVERIFY(s);
        LossChart chart;
        QVERIFY(showOnScreen(chart, s));
        QCOMPARE(chart.view()->rubberBand(), QChartView::RectangleRubberBand);
        QAbstractAxis* x = chart.chart()->axes(Qt::Horizontal)[0];
        const double fullMax = axisMax(x);
        QVERIFY(!chart.zoomed());
        QVERIFY(!chart.resetZoomButton()->isEnabled());
        QVERIFY(static_cast<qsizetype>(chart.methodData(0).size()) >
                chart.methodSeries()[0]->count());

        const QRectF plot = chart.chart()->plotArea();
        const QPoint from = chart.view()->mapFromScene(
            chart.chart()->mapToScene(QPointF(plot.left() + plot.width() * 0.40, plot.top() + 5)));
        const QPoint to = chart.view()->mapFromScene(chart.chart()->mapToScene(
            QPointF(plot.left() + plot.width() * 0.45, plot.bottom() - 5)));
        QTest::mousePress(chart.view()->viewport(), Qt::LeftButton, {}, from);
        QTest::mouseMove(chart.view()->viewport(), (from + to) / 2);
        QTest::mouseMove(chart.view()->viewport(), to);
        QTest::mouseRelease(chart.view()->viewport(), Qt::LeftButton, {}, to);
        QTRY_VERIFY_WITH_TIMEOUT(chart.zoomed(), test::timeout(5000));
        QVERIFY(chart.resetZoomButton()->isEnabled());
        const double lo = axisMin(x);
        const double hi = axisMax(x);
        QVERIFY2(lo > 0.3 * fullMax && hi < 0.55 * fullMax && hi > lo,
                 qPrintable(QStringLiteral("%1 … %2 of %3").arg(lo).arg(hi).arg(fullMax)));
        // Every point of the range is drawn (and one beyond each edge).
        qsizetype inRange = 0;
        for (const QPointF& p : chart.methodData(0)) inRange += p.x() >= lo && p.x() <= hi ? 1 : 0;
        QVERIFY(inRange > 0);
        QVERIFY2(std::abs(chart.methodSeries()[0]->count() - inRange) <= 2,
                 qPrintable(QStringLiteral("%1 drawn, %2 in range")
                                .arg(chart.methodSeries()[0]->count())
                                .arg(inRange)));
        // Playback and a new run keep the zoom.
        chart.setCursorSlot(static_cast<int>(hi));
        chart.setSnapshot(s);
        QVERIFY(chart.zoomed());
        QCOMPARE(axisMin(chart.chart()->axes(Qt::Horizontal)[0]), lo);
        chart.resetZoomButton()->click();
        QVERIFY(!chart.zoomed());
        QCOMPARE(axisMin(chart.chart()->axes(Qt::Horizontal)[0]), 0.0);
        QCOMPARE(axisMax(chart.chart()->axes(Qt::Horizontal)[0]), fullMax);
    }

    void aPinnedRunStaysUnderTheNextSettings() {
        const SnapshotPtr first = run([](ExperimentConfig&) {});
        const SnapshotPtr second = run([](ExperimentConfig& c) { c.stages = 4; });
        QVERIFY(first && second);
        LossChart chart;
        chart.setSnapshot(first);
        QVERIFY(chart.pinnedSeries().isEmpty());
        chart.pinButton()->click();
        QCOMPARE(chart.pinned(), first);
        QCOMPARE(chart.pinnedSeries().size(), chart.methodSeries().size());
        QVERIFY(chart.pinnedSettings().contains("S = 8"));
        QVERIFY(chart.chart()->title().contains(chart.pinnedSettings()));

        chart.setSnapshot(second);
        QCOMPARE(chart.methodSeries().size(), static_cast<qsizetype>(second->runs().size()));
        QCOMPARE(chart.pinnedSeries().size(), static_cast<qsizetype>(first->runs().size()));
        for (int i = 0; i < chart.pinnedSeries().size(); ++i) {
            QLineSeries* pinned = chart.pinnedSeries()[i];
            QVERIFY(pinned->name().contains("pinned"));
            QCOMPARE(pinned->pen().style(), Qt::DashLine);
            QVERIFY(pinned->pen().color().alpha() < 255);  // faded
            QCOMPARE(pinned->pen().color().rgb(), chart.methodSeries()[i]->pen().color().rgb());
            // The first run's curve, whole.
            QCOMPARE(
                pinned->count(),
                static_cast<qsizetype>(first->curves[static_cast<size_t>(i)].loss.bySlot.size()));
            QCOMPARE(pinned->attachedAxes().size(), 2);
        }
        QVERIFY(chart.chart()->title().contains("S = 8"));
        // Hovering a pinned curve says it is the pinned one (LocalSGD: apart from the others).
        QVERIFY(showOnScreen(chart, second));
        QLineSeries* pinnedLocal = chart.pinnedSeries().back();
        const auto& pinnedPoints = first->curves.back().loss.bySlot;
        const LossChart::Readout r =
            chart.readoutAt(drawnAt(chart, pinnedLocal, pinnedPoints[pinnedPoints.size() * 3 / 4]));
        QVERIFY(r.pinned);
        QCOMPARE(r.name, pinnedLocal->name());
        QVERIFY(r.text.contains("(pinned)"));
        const QByteArray grab = qgetenv("PIPELENS_PIN_GRAB");  // a picture to look at
        if (!grab.isEmpty()) chart.grab().save(QString::fromLocal8Bit(grab));
        chart.pinButton()->click();  // unpin
        QVERIFY(!chart.pinned());
        QVERIFY(chart.pinnedSeries().isEmpty());
        QVERIFY(!chart.chart()->title().contains("pinned"));
        // Nothing to pin while a run computes.
        chart.setComputing(second);
        QVERIFY(!chart.pin());
        QVERIFY(!chart.pinButton()->isChecked());
    }
};

QTEST_MAIN(TestLossChart)
#include "tst_loss_chart.moc"

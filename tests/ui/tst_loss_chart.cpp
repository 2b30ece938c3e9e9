// The loss chart as a person reads it: hovering reads out every curve's value at the x under the
// pointer; smoothing draws each curve's debiased moving average over the raw curve, faint, and
// never averages across a NaN; a rubber band zooms in (with every point of the range shown, not
// the whole run's thinned points) and reset zoom shows the whole run; pinned runs (several) stay,
// dashed and faded and labelled with their settings, under the runs of the next settings.
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGraphicsLineItem>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QSettings>
#include <QTest>
#include <QToolButton>
#include <QValueAxis>
#include <cmath>
#include <limits>

#include "charts/line_legend.hpp"
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

// The last point of `data` at or before x, or nullptr.
const QPointF* atOrBefore(const std::vector<QPointF>& data, double x) {
    const QPointF* found = nullptr;
    for (const QPointF& p : data) {
        if (p.x() <= x) found = &p;
    }
    return found;
}

bool near(double a, double b) {
    return std::abs(a - b) <= 1e-12 * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

}  // namespace

class TestLossChart : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void init() { QSettings().remove("lossChart/smoothing"); }

    void hoveringReadsOutEveryCurveAtX() {
        const SnapshotPtr s = run([](ExperimentConfig&) {});
        QVERIFY(s);
        LossChart chart;
        QVERIFY(showOnScreen(chart, s));
        QVERIFY(chart.methodSeries().size() >= 2);
        for (int m = 0; m < chart.methodSeries().size(); ++m) {
            const std::vector<QPointF>& data = chart.methodData(m);
            const QPoint at = drawnAt(chart, chart.methodSeries()[m], data[data.size() * 2 / 3]);
            const LossChart::Readout r = chart.readoutAt(at);
            QVERIFY2(r.method >= 0, qPrintable(QString::number(m)));
            // One line per curve, each that curve's last point at or before the x under the
            // pointer, in the curve's colour, named as in the legend.
            QCOMPARE(r.lines.size(), chart.methodSeries().size());
            const QStringList text = r.text.split('\n');
            QCOMPARE(text.size(), r.lines.size() + 1);
            QCOMPARE(text[0], QStringLiteral("slot %1").arg(r.atX, 0, 'f', 0));
            for (int i = 0; i < r.lines.size(); ++i) {
                const LossChart::ReadoutLine& line = r.lines[i];
                const QPointF* expected = atOrBefore(chart.methodData(i), r.atX);
                QVERIFY(expected != nullptr);
                QVERIFY(line.hasValue);
                QCOMPARE(line.x, expected->x());
                QCOMPARE(line.y, expected->y());
                QCOMPARE(line.name, chart.methodSeries()[i]->name());
                QCOMPARE(line.colour.rgb(), chart.methodSeries()[i]->pen().color().rgb());
                QCOMPARE(text[i + 1], line.name + ": " + LossChart::readoutNumber(expected->y()));
            }
            // The marker's curve is the one drawn nearest the pointer: the one hovered.
            const QPoint drawn = drawnAt(chart, chart.methodSeries()[r.method], QPointF(r.x, r.y));
            QVERIFY((drawn - at).manhattanLength() <= 3);
        }
        // A real pointer move shows it beside the pointer, with a vertical guide at x.
        const std::vector<QPointF>& data = chart.methodData(0);
        const QPoint at = drawnAt(chart, chart.methodSeries()[0], data[data.size() / 2]);
        QTest::mouseMove(chart.view()->viewport(), at);
        QTRY_VERIFY_WITH_TIMEOUT(chart.readoutLabel()->isVisible(), test::timeout(5000));
        for (const LossChart::ReadoutLine& line : chart.readoutAt(at).lines)
            QVERIFY(chart.readoutLabel()->text().contains(line.name.toHtmlEscaped()));
        QVERIFY(chart.readoutGuide()->isVisible());
        const QLineF guide = chart.readoutGuide()->line();
        QCOMPARE(guide.x1(), guide.x2());
        QVERIFY(std::abs(chart.view()->mapFromScene(guide.p1()).x() - at.x()) <= 1);
        const QByteArray grab = qgetenv("PIPELENS_HOVER_GRAB");  // a picture to look at
        if (!grab.isEmpty()) chart.grab().save(QString::fromLocal8Bit(grab));
        QCOMPARE(chart.readoutAt(QPoint(2, 2)).method, -1);  // outside the plot
    }

    void readoutNumbersHaveFourSignificantDigits() {
        QCOMPARE(LossChart::readoutNumber(0.5), QString("0.5000"));
        QCOMPARE(LossChart::readoutNumber(12.34567), QString("12.35"));
        QCOMPARE(LossChart::readoutNumber(0.00123456), QString("0.001235"));
        QCOMPARE(LossChart::readoutNumber(0.00012345), QString("1.234e-04"));
        QCOMPARE(LossChart::readoutNumber(123456.0), QString("1.235e+05"));
        QCOMPARE(LossChart::readoutNumber(std::nan("")), QString("NaN"));
    }

    void smoothingIsTensorBoardsDebiasedAverage() {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const std::vector<QPointF> points{{0, 1.0}, {1, 2.0}, {2, 4.0},
                                          {3, nan}, {4, 8.0}, {5, 2.0}};
        const std::vector<QPointF> s = smoothEma(points, 0.5);
        QCOMPARE(s.size(), points.size());
        // By hand: a = 0.5·a + 0.5·x from a = 0, shown as a / (1 − 0.5^t).
        QCOMPARE(s[0].y(), 1.0);                 // 0.5 / 0.5
        QCOMPARE(s[1].y(), 1.25 / 0.75);         // a = 0.25 + 1
        QCOMPARE(s[2].y(), 2.625 / 0.875);       // a = 0.625 + 2
        QVERIFY(std::isnan(s[3].y()));           // kept
        QCOMPARE(s[4].y(), 8.0);                 // afresh: nothing of before the NaN
        QCOMPARE(s[5].y(), (2.0 + 1.0) / 0.75);  // a = 0.5·4 + 0.5·2
        for (size_t i = 0; i < points.size(); ++i) QCOMPARE(s[i].x(), points[i].x());
        const std::vector<QPointF> off = smoothEma(points, 0.0);
        for (size_t i = 0; i < points.size(); ++i) {
            if (i != 3) QCOMPARE(off[i].y(), points[i].y());
        }
    }

    void smoothingDrawsTheAverageOverTheFaintRawCurve() {
        const SnapshotPtr s = run([](ExperimentConfig&) {});
        QVERIFY(s);
        LossChart chart;
        chart.setLogY(false);
        chart.setSnapshot(s);
        QCOMPARE(chart.smoothing(), 0.0);  // off by default
        QVERIFY(chart.rawSeries().isEmpty());
        auto drawnYs = [](const QLineSeries* series) {
            QList<double> ys;
            for (const QPointF& p : series->points()) ys << p.y();
            return ys;
        };
        auto dataYs = [](const std::vector<QPointF>& data) {
            QList<double> ys;
            for (const QPointF& p : data) ys << p.y();
            return ys;
        };
        for (int i = 0; i < chart.methodSeries().size(); ++i) {
            QVERIFY(chart.methodData(i).size() < 2500);  // drawn whole
            QCOMPARE(drawnYs(chart.methodSeries()[i]), dataYs(chart.methodData(i)));
        }
        chart.smoothingBox()->setValue(0.8);  // as a person sets it
        QCOMPARE(chart.smoothing(), 0.8);
        QCOMPARE(chart.rawSeries().size(), chart.methodSeries().size());
        QCOMPARE(chart.legend()->entries().size(), chart.methodSeries().size());  // no raw entry
        for (int i = 0; i < chart.methodSeries().size(); ++i) {
            const QLineSeries* main = chart.methodSeries()[i];
            const QLineSeries* raw = chart.rawSeries()[i];
            QCOMPARE(drawnYs(raw), dataYs(chart.methodData(i)));
            const std::vector<QPointF> smoothed = smoothEma(chart.methodData(i), 0.8);
            QCOMPARE(dataYs(chart.methodDrawnData(i)), dataYs(smoothed));
            QCOMPARE(drawnYs(main), dataYs(smoothed));
            QVERIFY(drawnYs(main) != drawnYs(raw));
            // Same colour, faint and thin behind the full-colour line.
            QCOMPARE(raw->pen().color().rgb(), main->pen().color().rgb());
            QVERIFY(raw->pen().color().alpha() <= 80);
            QCOMPARE(main->pen().color().alpha(), 255);
            QVERIFY(raw->pen().widthF() < main->pen().widthF());
            const QList<QAbstractSeries*> order = chart.chart()->series();
            QVERIFY(order.indexOf(const_cast<QLineSeries*>(raw)) <
                    order.indexOf(const_cast<QLineSeries*>(main)));
        }
        // Kept for the next start; off again shows the recorded points only.
        QCOMPARE(QSettings().value("lossChart/smoothing").toDouble(), 0.8);
        QCOMPARE(LossChart().smoothing(), 0.8);
        chart.setSmoothing(0.0);
        QVERIFY(chart.rawSeries().isEmpty());
        QCOMPARE(drawnYs(chart.methodSeries()[0]), dataYs(chart.methodData(0)));
    }

    void liveCurvesAreSmoothedButNotAcrossNaN() {
        LossChart chart;
        chart.setSmoothing(0.5);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        LiveCurve live;
        live.name = "PD";
        live.bySlot = {{1, 4.0}, {2, 2.0}, {3, nan}, {4, 1.0}, {5, 3.0}};
        live.byUpdate = live.bySlot;
        chart.setLive({live}, 10.0, 10.0);
        const std::vector<QPointF>& drawn = chart.methodDrawnData(0);
        QCOMPARE(drawn.size(), size_t{5});
        QCOMPARE(drawn[1].y(), (0.5 * 2.0 + 1.0) / 0.75);
        QVERIFY(std::isnan(drawn[2].y()));
        QCOMPARE(drawn[3].y(), 1.0);  // not pulled up by the 4 and 2 before the NaN
        QCOMPARE(drawn[4].y(), (0.5 * 0.5 + 1.5) / 0.75);
        QCOMPARE(chart.rawSeries().size(), 1);
        QVERIFY(std::isnan(chart.methodSeries()[0]->points()[2].y()));
    }

    void aLogAxisOverManyDecadesIsLaidOut() {
        // 28 decades in a short chart: one y label per 14 decades. (The axis once switched to a
        // base of 10^14 with Qt's automatic minor ticks, base − 2 of them, and never returned.)
        LossChart chart;
        chart.resize(420, 230);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        LiveCurve live;
        live.name = "PD";
        live.bySlot = {{1, 1e11}, {2, 1e14}, {3, 1e-14}};
        live.byUpdate = live.bySlot;
        chart.setLive({live}, 3.0, 3.0);
        auto* y = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical)[0]);
        QVERIFY(y != nullptr);
        QVERIFY2(y->base() >= 1e7, qPrintable(QString::number(y->base())));
        QCOMPARE(y->minorTickCount(), static_cast<int>(std::lround(std::log10(y->base()))) - 1);
        QVERIFY(axisMin(y) <= 1e-14 && axisMax(y) >= 1e14);
        QTest::qWait(20);  // laid out and painted
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
        QVERIFY(!chart.pinSelector()->isVisibleTo(&chart));
        chart.pinButton()->click();
        QCOMPARE(chart.pinned(), first);
        QCOMPARE(chart.pinCount(), 1);
        QCOMPARE(chart.pinnedSeries().size(), chart.methodSeries().size());
        QVERIFY(chart.pinnedSettings().contains("S = 8"));
        QVERIFY(chart.chart()->title().contains(chart.pinnedSettings()));
        QVERIFY(chart.pinSelector()->isVisibleTo(&chart));

        chart.setSnapshot(second);
        QCOMPARE(chart.methodSeries().size(), static_cast<qsizetype>(second->runs().size()));
        QCOMPARE(chart.pinnedSeries().size(), static_cast<qsizetype>(first->runs().size()));
        for (int i = 0; i < chart.pinnedSeries().size(); ++i) {
            QLineSeries* pinned = chart.pinnedSeries()[i];
            QVERIFY(pinned->name().startsWith("pin 1: "));
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
        // The readout lists the pinned curves too (LocalSGD: apart from the others).
        QVERIFY(showOnScreen(chart, second));
        QLineSeries* pinnedLocal = chart.pinnedSeries().back();
        const auto& pinnedPoints = first->curves.back().loss.bySlot;
        const LossChart::Readout r =
            chart.readoutAt(drawnAt(chart, pinnedLocal, pinnedPoints[pinnedPoints.size() * 3 / 4]));
        QCOMPARE(r.lines.size(), chart.methodSeries().size() + chart.pinnedSeries().size());
        QVERIFY(r.pinned);
        QCOMPARE(r.name, pinnedLocal->name());
        const LossChart::ReadoutLine& local = r.lines.back();
        QVERIFY(local.pinned);
        QCOMPARE(local.y, atOrBefore(pinnedPoints, r.atX)->y());
        QVERIFY(r.text.contains(pinnedLocal->name() + ": " + LossChart::readoutNumber(local.y)));
        const QByteArray grab = qgetenv("PIPELENS_PIN_GRAB");  // a picture to look at
        if (!grab.isEmpty()) chart.grab().save(QString::fromLocal8Bit(grab));
        chart.unpinButton()->click();  // removes the one selected: the only one
        QVERIFY(!chart.pinned());
        QVERIFY(chart.pinnedSeries().isEmpty());
        QVERIFY(!chart.chart()->title().contains("pin"));
        // Nothing to pin while a run computes.
        chart.setComputing(second);
        QVERIFY(!chart.pin());
        QCOMPARE(chart.pinCount(), 0);
    }

    void severalRunsStayPinned() {
        const SnapshotPtr first = run([](ExperimentConfig&) {});
        const SnapshotPtr second = run([](ExperimentConfig& c) { c.stages = 4; });
        const SnapshotPtr third = run([](ExperimentConfig& c) { c.stages = 2; });
        QVERIFY(first && second && third);
        LossChart chart;
        chart.setSmoothing(0.6);  // pinned curves are smoothed the same way
        chart.setSnapshot(first);
        QVERIFY(chart.pin());
        chart.setSnapshot(second);
        QVERIFY(chart.pin());
        chart.setSnapshot(third);
        QCOMPARE(chart.pinCount(), 2);
        QCOMPARE(chart.pins()[0].snapshot, first);
        QCOMPARE(chart.pins()[1].snapshot, second);
        QCOMPARE(chart.pinned(), second);  // the latest
        // Both sets of curves, each named with its pin, a dash pattern per pin.
        const auto n1 = static_cast<qsizetype>(first->runs().size());
        const auto n2 = static_cast<qsizetype>(second->runs().size());
        QCOMPARE(chart.pinnedSeries().size(), n1 + n2);
        for (qsizetype i = 0; i < n1 + n2; ++i) {
            const QLineSeries* s = chart.pinnedSeries()[i];
            const SnapshotPtr& of = i < n1 ? first : second;
            const auto method = static_cast<size_t>(i < n1 ? i : i - n1);
            QVERIFY(s->name().startsWith(i < n1 ? "pin 1: " : "pin 2: "));
            // Drawn smoothed, whole.
            const std::vector<QPointF> smoothed = smoothEma(of->curves[method].loss.bySlot, 0.6);
            QCOMPARE(s->count(), static_cast<qsizetype>(smoothed.size()));
            QVERIFY(near(s->points().back().y(), std::max(smoothed.back().y(), 1e-16)));
        }
        QVERIFY(chart.pinnedSeries()[0]->pen().dashPattern() !=
                chart.pinnedSeries()[n1]->pen().dashPattern());
        QCOMPARE(chart.rawSeries().size(), chart.methodSeries().size() + n1 + n2);
        // The selector lists both with their settings.
        QComboBox* list = chart.pinSelector();
        QCOMPARE(list->count(), 2);
        QVERIFY(list->itemText(0).startsWith("pin 1: S = 8"));
        QVERIFY(list->itemText(1).startsWith("pin 2: S = 4"));
        QVERIFY(chart.chart()->title().contains("pins 1, 2"));
        // Removing pin 1 keeps pin 2.
        list->setCurrentIndex(0);
        chart.unpinButton()->click();
        QCOMPARE(chart.pinCount(), 1);
        QCOMPARE(chart.pins()[0].number, 2);
        QCOMPARE(chart.pins()[0].snapshot, second);
        QCOMPARE(list->count(), 1);
        QCOMPARE(chart.pinnedSeries().size(), n2);
        for (const QLineSeries* s : chart.pinnedSeries()) QVERIFY(s->name().startsWith("pin 2: "));
        QVERIFY(chart.chart()->title().contains("pin 2 (S = 4"));
        // At most kMaxPins: the oldest goes.
        for (int i = 0; i < LossChart::kMaxPins; ++i) QVERIFY(chart.pin());
        QCOMPARE(chart.pinCount(), LossChart::kMaxPins);
        QCOMPARE(chart.pins()[0].number, 3);
        QCOMPARE(list->count(), LossChart::kMaxPins);
        chart.unpin();  // unpin all
        QCOMPARE(chart.pinCount(), 0);
        QVERIFY(chart.pinnedSeries().isEmpty());
        QVERIFY(!list->isVisibleTo(&chart));
    }

    // Pictures to look at (PIPELENS_LOSS_PICTURES=folder): the default preset and E2, smoothed,
    // two runs pinned (seeds 2 and 3) under seed 1, hovered; the PNG export and a grab.
    void pictures() {
        const QByteArray folder = qgetenv("PIPELENS_LOSS_PICTURES");
        if (folder.isEmpty()) QSKIP("PIPELENS_LOSS_PICTURES not set");
        for (const QString id : {"default", "e2-pd-vs-rpd"}) {
            const ExperimentConfig base = loadPreset(id).config;
            LossChart chart;
            chart.setSmoothing(0.6);
            for (const unsigned seed : {2U, 3U, 1U}) {
                const SnapshotPtr s = run([&](ExperimentConfig& c) {
                    c = base;
                    c.seed = seed;
                });
                QVERIFY(s);
                QVERIFY(showOnScreen(chart, s));
                if (seed != 1) QVERIFY(chart.pin());
            }
            const QString dir = QString::fromLocal8Bit(folder);
            QVERIFY(chart.exportPng(dir + "/loss_" + id + ".png", 1.0));
            const std::vector<QPointF>& data = chart.methodData(0);
            const QPoint at = drawnAt(chart, chart.methodSeries()[0], data[data.size() * 2 / 5]);
            QTest::mouseMove(chart.view()->viewport(), at);
            QTRY_VERIFY_WITH_TIMEOUT(chart.readoutLabel()->isVisible(), test::timeout(5000));
            chart.grab().save(dir + "/loss_" + id + "_hover.png");
        }
    }
};

QTEST_MAIN(TestLossChart)
#include "tst_loss_chart.moc"

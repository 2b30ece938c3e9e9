// Live results: a long run publishes its loss curves while it computes (the chart's curve grows,
// and what was shown is exactly the finished run's data), and a change during a long run cancels
// it without any of its partial data reaching the chart afterwards.
#include <QChart>
#include <QLabel>
#include <QLineSeries>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>
#include <QValueAxis>
#include <cmath>
#include <cstddef>
#include <vector>

#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "main_window.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// Logistic regression with one PipeDream run at `stages` stages and `microbatches` microbatches.
ExperimentConfig pipeDreamRun(int stages, int microbatches, double stepSize) {
    ExperimentConfig c = loadPreset("e3-logistic").config;
    c.stages = stages;
    c.budget = BudgetSpec{};
    c.budget.microbatches = microbatches;
    MethodSpec pd;
    pd.method = Method::PipeDream;
    pd.step.value = stepSize;
    c.methods = {pd};
    return c;
}

// S = 32, long enough (over a second on this machine) that several live publishes happen before
// it ends. 5000 microbatches took 0.3 s once the replay got faster, and a second publish then
// came only on a loaded machine.
ExperimentConfig longRun(double stepSize) {
    return pipeDreamRun(32, 20000, stepSize);
}

// A short run of PipeDream and RPD (well under a second), for checks that drive the live curves
// themselves. Both converge at this γ: no curve is capped at the top of the axis.
ExperimentConfig twoMethodRun() {
    ExperimentConfig c = pipeDreamRun(8, 400, 0.05);
    MethodSpec rpd = c.methods[0];
    rpd.method = Method::RandomizedPipeDream;
    c.methods.push_back(rpd);
    return c;
}

// What a publish of the controller hands over while `finished` was `fraction` done: each
// method's curve up to that share of its points, named as the worker names it.
std::vector<LiveCurve> livePrefix(const RunSnapshot& finished, double fraction) {
    std::vector<LiveCurve> out;
    for (size_t i = 0; i < finished.runs().size(); ++i) {
        const CurvePoints& all = finished.curves[i].loss;
        auto prefix = [&](const std::vector<QPointF>& points) {
            const auto n = static_cast<std::ptrdiff_t>(
                std::ceil(fraction * static_cast<double>(points.size())));
            return std::vector<QPointF>(points.begin(), points.begin() + n);
        };
        LiveCurve live;
        live.name = finished.label(i);
        live.method = static_cast<int>(i);
        live.bySlot = prefix(all.bySlot);
        live.byUpdate = prefix(all.byUpdate);
        live.fraction = fraction;
        live.stepSize = finished.result(i).stepSize;
        out.push_back(std::move(live));
    }
    return out;
}

// Every live point (x = slots done) must be the finished run's f − f* at that slot.
int mismatches(const std::vector<QPointF>& live, const RunResult& r) {
    int bad = 0;
    for (const QPointF& p : live) {
        const auto t = static_cast<size_t>(std::llround(p.x()));
        if (t >= r.objectivePerSlot.size() || r.objectivePerSlot[t] - r.optimum != p.y()) ++bad;
    }
    return bad;
}

}  // namespace

class TestLiveResults : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void aLongRunPublishesPartialCurvesBeforeItEnds() {
        ExperimentController c;
        c.setConfig(longRun(0.25));
        LossChart chart;
        std::vector<qsizetype> shownPoints;
        std::vector<double> fractions;
        std::vector<QPointF> lastLive;
        bool finished = false;
        bool partialAfterFinish = false;
        connect(&c, &ExperimentController::partialResults, &chart, [&] {
            if (finished) partialAfterFinish = true;
            chart.setLive(c.liveCurves());
            if (c.liveCurves().empty() || c.liveCurves()[0].bySlot.empty()) return;
            QCOMPARE(chart.methodSeries().size(), 1);
            shownPoints.push_back(static_cast<qsizetype>(chart.methodData(0).size()));
            QVERIFY(chart.methodSeries()[0]->count() > 0);
            fractions.push_back(c.liveFraction());
            lastLive = c.liveCurves()[0].bySlot;
        });
        connect(&c, &ExperimentController::resultsReady, &chart, [&] { finished = true; });
        c.runNow();
        QVERIFY(test::waitForCurrentResults(c));
        QVERIFY(!partialAfterFinish);
        QVERIFY2(shownPoints.size() >= 2, qPrintable(QString::number(shownPoints.size())));
        // The curve grows while the run computes, and so does the progress.
        QVERIFY(shownPoints.back() > shownPoints.front());
        for (size_t i = 1; i < fractions.size(); ++i) QVERIFY(fractions[i] >= fractions[i - 1]);
        QVERIFY(fractions.front() < 1.0);
        // What was shown live is the finished run's data, point for point, starting at slot 0.
        const RunResult& r = c.latest()->result(0);
        QVERIFY(!lastLive.empty());
        QCOMPARE(lastLive.front().x(), 0.0);
        QCOMPARE(mismatches(lastLive, r), 0);
        QVERIFY(lastLive.back().x() < r.objectivePerSlot.size());
        // Bounded: never more points than a few publishes' worth.
        QVERIFY(lastLive.size() <= r.objectivePerSlot.size());
        QVERIFY(c.liveCurves().empty());  // the finished run replaces the live curves
        chart.setSnapshot(c.latest());
        QVERIFY(!chart.showingLive());
        QCOMPARE(chart.methodData(0).size(), r.objectivePerSlot.size());
    }

    void aChangeDuringALongRunCancelsItAndDropsItsPartialData() {
        ExperimentController c;
        c.setDebounceMs(0);
        c.setConfig(longRun(0.25));
        c.runNow();
        const quint64 oldGeneration = c.generation();
        QSignalSpy partial(&c, &ExperimentController::partialResults);
        QVERIFY(partial.wait(test::timeout(20000)));  // the old run is publishing
        QCOMPARE(partial.last().at(0).value<quint64>(), oldGeneration);

        // Change the step size mid-run: the old run is cancelled, the new one takes over.
        QCOMPARE(c.tryModify([](ExperimentConfig& x) { x.methods[0].step.value = 0.125; }),
                 QString());
        c.runNow();
        const quint64 newGeneration = c.generation();
        QVERIFY(newGeneration > oldGeneration);
        LossChart chart;
        std::vector<std::vector<QPointF>> shown;
        std::vector<quint64> generations;
        connect(&c, &ExperimentController::partialResults, &chart, [&](quint64 g) {
            generations.push_back(g);
            chart.setLive(c.liveCurves());
            if (!c.liveCurves().empty() && !c.liveCurves()[0].bySlot.empty())
                shown.push_back(chart.methodData(0));
        });
        QSignalSpy ready(&c, &ExperimentController::resultsReady);
        QVERIFY(test::waitForCurrentResults(c));
        QCOMPARE(ready.count(), 1);  // only the new run's results arrive
        QCOMPARE(c.latest()->generation, newGeneration);
        QCOMPARE(c.latest()->result(0).stepSize, 0.125);
        for (quint64 g : generations) QCOMPARE(g, newGeneration);
        // Everything the chart was given after the change belongs to the new run.
        const RunResult& r = c.latest()->result(0);
        QVERIFY(!shown.empty());
        for (const auto& points : shown) QCOMPARE(mismatches(points, r), 0);
    }

    // The live preview and the finished curves are one model: one x and one y axis on the
    // chart at every moment (the preview once drew two overlapping sets), every curve attached
    // to exactly those, and the live legend names what the finished run's legend names. The
    // publishes are driven here (growing prefixes of a finished run, as the controller hands
    // them over), so the check does not depend on how many publishes a run's timing allows.
    void liveAndFinalCurvesShareOneAxisPairAndNames() {
        ExperimentController c;
        SnapshotPtr plan;
        connect(&c, &ExperimentController::planReady, &c,
                [&](SnapshotPtr p) { plan = std::move(p); });
        c.setConfig(twoMethodRun());
        QVERIFY(test::waitForCurrentResults(c));
        QVERIFY(plan);
        const SnapshotPtr finished = c.latest();
        QCOMPARE(finished->runs().size(), size_t{2});

        LossChart chart;
        chart.resize(640, 420);
        chart.show();
        QStringList problems;
        auto check = [&](const QString& when) {
            QChart* ch = chart.chart();
            const auto xs = ch->axes(Qt::Horizontal);
            const auto ys = ch->axes(Qt::Vertical);
            if (xs.size() != 1 || ys.size() != 1) {
                problems << QStringLiteral("%1: %2 x and %3 y axes")
                                .arg(when)
                                .arg(xs.size())
                                .arg(ys.size());
                return;
            }
            for (QAbstractSeries* series : ch->series()) {
                const auto attached = series->attachedAxes();
                if (attached.size() != 2 || !attached.contains(xs[0]) || !attached.contains(ys[0]))
                    problems << QStringLiteral("%1: a series not on the chart's axes").arg(when);
            }
        };
        auto names = [&] {
            QStringList out;
            for (QLineSeries* s : chart.methodSeries()) out << s->name();
            return out;
        };

        chart.setComputing(plan);
        check("computing");
        // Four publishes, each a longer prefix of the run; the scales switch between them.
        QStringList liveNames;
        for (int publish = 1; publish <= 4; ++publish) {
            chart.setLive(livePrefix(*finished, publish / 4.0));
            check(QStringLiteral("live publish %1").arg(publish));
            if (publish == 2) chart.setLogY(false);
            if (publish == 3) chart.setLogX(true);
            check(QStringLiteral("scale switch after publish %1").arg(publish));
            QCOMPARE(chart.methodSeries().size(), 2);
            QVERIFY(chart.showingLive());
            liveNames = names();
        }
        chart.setSnapshot(finished);
        check("final");
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        QVERIFY(!chart.showingLive());
        QCOMPARE(liveNames, names());
        // The finished curves lie inside the axis range they are drawn against.
        auto* y = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical)[0]);
        QVERIFY(y);
        for (QLineSeries* series : chart.methodSeries()) {
            QVERIFY(series->count() > 0);
            for (const QPointF& p : series->points())
                QVERIFY2(p.y() >= y->min() && p.y() <= y->max(),
                         qPrintable(QStringLiteral("%1: y = %2 outside [%3, %4]")
                                        .arg(series->name())
                                        .arg(p.y())
                                        .arg(y->min())
                                        .arg(y->max())));
        }
    }

    void theWindowShowsLiveCurvesAndProgress() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        w.controller()->setConfig(longRun(0.25));
        QSignalSpy partial(w.controller(), &ExperimentController::partialResults);
        const bool live = QTest::qWaitFor(
            [&] {
                const auto& curves = w.controller()->liveCurves();
                return !curves.empty() && curves[0].bySlot.size() > 100 &&
                       w.lossChart()->showingLive();
            },
            test::timeout(20000));
        QVERIFY(live);
        QVERIFY(w.controller()->running());
        QCOMPARE(w.lossChart()->methodSeries().size(), 1);
        QVERIFY(w.lossChart()->methodSeries()[0]->count() > 100);
        bool progressShown = false;
        for (QLabel* label : w.statusBar()->findChildren<QLabel*>()) {
            if (label->text().startsWith("running: ")) progressShown = true;
        }
        QVERIFY(progressShown);
        // The new run's Gantt is shown at once (its timeline is known before the run).
        QVERIFY(w.gantt()->timeline() != nullptr);
        QCOMPARE(w.gantt()->timeline()->params.stages, 32);
        QTest::qWait(150);                                      // let the chart lay out
        const QByteArray grab = qgetenv("PIPELENS_LIVE_GRAB");  // a picture for the docs
        if (!grab.isEmpty()) w.grab().save(QString::fromLocal8Bit(grab));
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(!w.lossChart()->showingLive());
    }
};

QTEST_MAIN(TestLiveResults)
#include "tst_live_results.moc"

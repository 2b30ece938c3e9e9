// Never stale: when S changes, the views that depend only on the schedule (Gantt chart, figure
// strip) show the new S at once; the loss curves and the heatmap say they are computing until
// the new run arrives, never showing an earlier run's picture as current; a superseded run is
// cancelled when the config changes, not after the debounce.
#include <QChart>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTest>
#include <QTimer>

#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "controllers/experiment_controller.hpp"
#include "controls/controls_panel.hpp"
#include "main_window.hpp"
#include "samples_view.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// Logistic regression with d = 512 (S up to 128 allowed), PD and LocalSGD, a short budget.
ExperimentConfig wide(int stages, double epochs) {
    ExperimentConfig c = defaultExperiment();
    c.data.dim = 512;
    c.stages = stages;
    c.budget.epochs = epochs;
    c.methods.resize(1);  // PD
    return c;
}

// What every chart draws, against the S the controls show: empty when all agree, else what
// does not. A chart that says it is computing belongs to no S and is fine.
QString disagreement(MainWindow& w) {
    const int shown = w.controls()->stagesField()->value();
    QStringList bad;
    const auto timeline = w.gantt()->timeline();
    if (!timeline || timeline->params.stages != shown)
        bad << QStringLiteral("Gantt S = %1").arg(timeline ? timeline->params.stages : -1);
    const SnapshotPtr figures = w.figureStrip()->snapshot();
    if (!figures || figures->experiment.config.stages != shown)
        bad << QStringLiteral("figure strip S = %1")
                   .arg(figures ? figures->experiment.config.stages : -1);
    if (!w.figureStrip()->numbersTable()->text().contains(QStringLiteral("(S = %1)").arg(shown)))
        bad << QStringLiteral("run-lengths table does not say S = %1").arg(shown);
    LossChart* loss = w.lossChart();
    if (loss->computing()) {
        if (!loss->chart()->title().contains(QStringLiteral("S = %1: computing").arg(shown)))
            bad << QStringLiteral("loss chart title \"%1\"").arg(loss->chart()->title());
    } else if (!loss->snapshot() || loss->snapshot()->experiment.config.stages != shown) {
        bad << QStringLiteral("loss curves of S = %1")
                   .arg(loss->snapshot() ? loss->snapshot()->experiment.config.stages : -1);
    }
    StalenessHeatmap* heatmap = w.heatmap();
    if (!heatmap->computing() && (!heatmap->delays() || heatmap->delays()->stages() != shown))
        bad << QStringLiteral("heatmap S = %1")
                   .arg(heatmap->delays() ? heatmap->delays()->stages() : -1);
    return bad.isEmpty() ? QString()
                         : QStringLiteral("S shown %1: %2").arg(shown).arg(bad.join(", "));
}

}  // namespace

class TestStaleViews : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void aChangeOfSShowsTheNewScheduleAtOnceAndMarksTheRunViews() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QCOMPARE(disagreement(w), QString());
        // No event loop between the edit and the checks: the schedule views follow at once.
        w.controls()->stagesField()->setValue(12);
        QCOMPARE(w.controller()->config().stages, 12);
        QCOMPARE(disagreement(w), QString());
        QVERIFY(w.lossChart()->computing());
        QCOMPARE(w.lossChart()->methodSeries().size(), 0);  // no curve of the S = 8 run
        QVERIFY(w.heatmap()->computing());
        // The heatmap says it computes, not "Run an experiment to see its pipeline".
        QCOMPARE(
            test::checkEmptyState(*w.heatmap(), "computing… the delays appear when the run ends"),
            QString());
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(!w.lossChart()->computing());
        QVERIFY(!w.heatmap()->computing());
        QCOMPARE(disagreement(w), QString());
    }

    void draggingSFrom128To23ShowsOnlyTheSShownOrComputing() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        w.controller()->setConfig(wide(128, 2.0));
        QVERIFY(w.waitForResults(test::timeout(120000)));
        QCOMPARE(disagreement(w), QString());
        // Checked on every turn of the event loop while the slider is dragged down.
        QStringList seen;
        int checks = 0;
        QTimer probe;
        probe.setInterval(0);
        connect(&probe, &QTimer::timeout, this, [&] {
            ++checks;
            const QString d = disagreement(w);
            if (!d.isEmpty() && seen.size() < 10) seen << d;
        });
        probe.start();
        QSlider* slider = w.controls()->stagesSlider();
        slider->setSliderDown(true);  // a drag, as the mouse does it
        for (int s = 128; s >= 23; s -= 7) {
            slider->setSliderPosition(s);  // emits valueChanged while tracking
            QCOMPARE(w.controls()->stagesField()->value(), s);
            QCOMPARE(disagreement(w), QString());
            QTest::qWait(15);
        }
        slider->setSliderPosition(23);
        slider->setSliderDown(false);
        QCOMPARE(w.controller()->config().stages, 23);
        QVERIFY(w.waitForResults(test::timeout(120000)));
        probe.stop();
        QVERIFY2(seen.isEmpty(), qPrintable(seen.join("\n")));
        QVERIFY(checks > 20);
        QCOMPARE(disagreement(w), QString());
        QVERIFY(!w.lossChart()->computing());
        QCOMPARE(w.lossChart()->snapshot()->experiment.config.stages, 23);
    }

    void aChangeCancelsTheRunInFlightWithoutWaitingForTheDebounce() {
        ExperimentController c;
        c.setConfig(wide(128, 20.0));  // seconds of work
        c.runNow();
        QSignalSpy partial(&c, &ExperimentController::partialResults);
        QVERIFY(partial.wait(test::timeout(30000)));  // it is computing
        QCOMPARE(c.workersInFlight(), 1);
        c.setDebounceMs(600000);  // the new run would start only after ten minutes
        QCOMPARE(c.tryModify([](ExperimentConfig& x) { x.stages = 64; }), QString());
        QVERIFY(c.planned());
        QCOMPARE(c.planned()->experiment.config.stages, 64);
        QVERIFY(QTest::qWaitFor([&] { return c.workersInFlight() == 0; }, test::timeout(10000)));
    }

    // A run that fails (here: its data file does not exist) leaves no view saying "computing…"
    // and none showing the earlier run: each says there is no result because the run failed.
    void aFailedRunLeavesNoViewComputing() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(w.lossChart()->snapshot());
        const ExperimentConfig before = w.controller()->config();
        QSignalSpy failed(w.controller(), &ExperimentController::runFailed);
        const QString refused = w.controller()->tryModify([](ExperimentConfig& c) {
            c.data.source = DataSource::Npy;
            c.data.x = "/nonexistent/pipelens-test-x.npy";
            c.data.y = "/nonexistent/pipelens-test-y.npy";
        });
        QVERIFY2(refused.isEmpty(), qPrintable(refused));
        QVERIFY(failed.wait(test::timeout(30000)));
        QVERIFY(!w.lossChart()->computing());
        QVERIFY(!w.lossChart()->snapshot());
        QVERIFY2(w.lossChart()->chart()->title().startsWith("No result: "),
                 qPrintable(w.lossChart()->chart()->title()));
        QVERIFY2(w.lossChart()->chart()->title().contains("pipelens-test-x.npy"),
                 qPrintable(w.lossChart()->chart()->title()));
        QVERIFY(!w.heatmap()->computing());
        QVERIFY(w.heatmap()->failed());
        QVERIFY(!w.heatmap()->delays());
        QVERIFY(!w.samplesView()->computing());
        QVERIFY(w.samplesView()->heading().contains("failed"));
        // The next good config ends the failed state.
        w.controller()->setConfig(before);
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        QVERIFY(!w.heatmap()->failed());
        QVERIFY(w.lossChart()->failure().isEmpty());
    }
};

QTEST_MAIN(TestStaleViews)
#include "tst_stale_views.moc"

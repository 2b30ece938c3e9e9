// The Sweep view on real small sweeps: it fills in point by point while the sweep runs, cancel
// keeps the finished points (the same numbers a point run alone gives), clicking a marker opens
// that point's run with the γ its rule chose in the main window's charts, the view says when it
// waits or is out of date, the sweep presets open in it, and its chart exports.
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "charts/gantt_chart.hpp"
#include "charts/schedule_comparison_view.hpp"
#include "charts/sweep_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controllers/sweep_controller.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/sweep/sweep.hpp"
#include "main_window.hpp"
#include "sweep_view.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;
using nlohmann::json;

namespace {

// PD and RPD on a small quadratic, each tuned on a 5-step grid. Slow: a point takes about half a
// second on one core, so a sweep of a few points is still running when its first point arrives.
ExperimentConfig smallExperiment(bool slow = false) {
    return ExperimentConfig::fromJson(
        {{"name", "small"},
         {"seed", 1},
         {"objective", {{"kind", "quadratic"}}},
         {"data",
          {{"source", "synthetic"},
           {"kind", "random"},
           {"rows", slow ? 1000 : 200},
           {"dim", slow ? 128 : 32},
           {"seed", 2}}},
         {"stages", 4},
         {"batch_size", 10},
         {"budget", {{"epochs", 20}}},
         {"backend", "cpu"},
         {"methods",
          json::array({{{"method", "pd"}, {"step_size", {{"grid", {-6, -2}}}}},
                       {{"method", "rpd"}, {"step_size", {{"grid", {-6, -2}}}}, {"delta", 1}}})}});
}

// The view's fields set to a delta sweep over `values` on the small experiment.
void setUpDeltaSweep(ExperimentController& experiment, SweepView& view, const QString& values,
                     bool slow = false) {
    experiment.setConfig(smallExperiment(slow));
    view.axisField()->setCurrentIndex(view.axisField()->findData(QStringLiteral("delta")));
    view.valuesField()->setText(values);
}

bool waitForSweep(SweepView& view, int timeoutMs = 60000) {
    return QTest::qWaitFor([&] { return !view.controller()->running(); }, test::timeout(timeoutMs));
}

}  // namespace

class TestSweepView : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    // A schedule sweep: the keys typed in the values field, one point per schedule on the
    // same experiment, a categorical axis (one series per schedule, named under the plot) and
    // the comparison table below the chart, which numeric sweeps do not show.
    void aScheduleSweepShowsItsComparisonTable() {
        ExperimentController experiment;
        SweepView view(&experiment);
        experiment.setConfig(smallExperiment());
        QVERIFY(!view.comparisonTable()->isVisibleTo(&view));
        view.axisField()->setCurrentIndex(view.axisField()->findData(QStringLiteral("schedule")));
        QVERIFY(view.axisField()->currentIndex() >= 0);
        QCOMPARE(view.axisField()->currentText(), QStringLiteral("schedule"));
        view.valuesField()->setText(QStringLiteral("pd, 1f1b zb-h1, 2bw"));
        QString error;
        const auto pending = view.pendingSpec(&error);
        QVERIFY2(pending, qPrintable(error));
        QCOMPARE(pending->schedules, (std::vector<std::string>{"pd", "1f1b", "zb-h1", "2bw"}));
        QCOMPARE(pending->values, (std::vector<double>{0, 1, 2, 3}));
        view.run();
        QVERIFY(waitForSweep(view));
        QCOMPARE(view.controller()->pointsDone(), std::size_t(4));
        const SweepPlot& plot = view.chart()->plot();
        QCOMPARE(plot.xLabels, pending->schedules);
        QCOMPARE(plot.series.size(), std::size_t(4));
        QCOMPARE(plot.series[1].method, std::string("1f1b"));
        QVERIFY(view.comparisonTable()->isVisibleTo(&view));
        QTableWidget* table = view.comparisonTable()->table();
        QCOMPARE(table->rowCount(), 4);
        QCOMPARE(table->columnCount(), 10);
        QCOMPARE(table->item(2, 1)->text(), QStringLiteral("zb-h1"));
        // 1F1B at S = 4 with M = S: bubble 3/7 per step, one weight version + 4 activations.
        const PointResult& one = *view.controller()->points()[1];
        QCOMPARE(table->item(1, 4)->data(Qt::UserRole).toDouble(), one.methods[0].stepSize);
        QCOMPARE(table->item(1, 5)->data(Qt::UserRole).toDouble(), one.methods[0].finalGap.mean);
        QCOMPARE(table->item(1, 8)->text(), QStringLiteral("5"));
        QCOMPARE(table->item(3, 8)->text(), QStringLiteral("6"));  // 2BW: two versions
        QVERIFY(view.comparisonTable()->caption().contains("2 × the best final value"));
        // The CSV export carries the schedule column and the comparison columns.
        QTemporaryDir tmp;
        const QString path = tmp.filePath("summary.csv");
        QVERIFY(view.exportCsv(path));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray csv = f.readAll();
        QVERIFY(csv.startsWith("point,schedule,method,"));
        QVERIFY(csv.contains("peak_stage_memory_units"));
        // An unknown key is refused in the state line, naming it and the keys allowed.
        view.valuesField()->setText(QStringLiteral("pd, gpipe9"));
        QVERIFY(!view.pendingSpec(&error));
        QVERIFY2(error.contains("gpipe9") && error.contains("zb-h1"), qPrintable(error));
        QVERIFY(!view.runButton()->isEnabled());
        // Back to a numeric axis: the table goes once that sweep runs.
        setUpDeltaSweep(experiment, view, "0, 2");
        view.run();
        QVERIFY(waitForSweep(view));
        QVERIFY(!view.comparisonTable()->isVisibleTo(&view));
        QVERIFY(view.chart()->plot().xLabels.empty());
    }

    // A corrector sweep file opens with its points named, never numbered: the values field
    // reads the names back as the same sweep, and the chart's categorical x axis names them.
    void aCorrectorSweepOpensWithItsNames() {
        ExperimentController experiment;
        SweepView view(&experiment);
        experiment.setConfig(smallExperiment());
        const SweepSpec spec = SweepSpec::fromJson(
            {{"name", "correctors"},
             {"experiment", smallExperiment().toJson()},
             {"axis",
              {{"name", "corrector"},
               {"values", json::array({"none",
                                       json::array({{{"kind", "prediction"}, {"s", "pipeoptim"}},
                                                    {{"kind", "dc"}}}),
                                       json::array({{{"kind", "accumulate"}, {"k", 4}}})})}}}});
        view.openSweep(spec, SweepMetric::FinalGap, false);
        QCOMPARE(view.axisField()->currentData().toString(), QString("corrector"));
        QCOMPARE(view.valuesField()->text(),
                 QString("none, prediction (pipeoptim) + dc, accumulate (k=4)"));
        QString error;
        const auto pending = view.pendingSpec(&error);
        QVERIFY2(pending, qPrintable(error));
        QVERIFY2(pending->toJson() == spec.toJson(),
                 qPrintable(
                     QString::fromStdString(json::diff(spec.toJson(), pending->toJson()).dump())));
        view.run();
        QVERIFY(waitForSweep(view));
        QCOMPARE(view.controller()->pointsDone(), std::size_t(3));
        QVERIFY(view.upToDate());
        QCOMPARE(
            view.chart()->plot().xLabels,
            (std::vector<std::string>{"none", "prediction (pipeoptim) + dc", "accumulate (k=4)"}));
        // The optimizer axis the same way: "adam", not "2".
        const SweepSpec optimizers = SweepSpec::fromJson(
            {{"experiment", smallExperiment().toJson()},
             {"axis",
              {{"name", "optimizer"},
               {"values", json::array({"sgd", {{"kind", "adam"}, {"beta1", 0.8}}, "adam"})}}}});
        view.openSweep(optimizers, SweepMetric::FinalGap, false);
        QCOMPARE(view.valuesField()->text(), QString("sgd, adam (beta1=0.8), adam"));
        const auto again = view.pendingSpec(&error);
        QVERIFY2(again, qPrintable(error));
        QVERIFY(again->toJson() == optimizers.toJson());
    }

    // Built in the app as the schedule axis is: pick the axis, its kinds are offered (each at
    // its defaults), edit the list; the spec is the one a sweep file with those values gives.
    void optimizerAndCorrectorSweepsAreBuiltInTheApp() {
        ExperimentController experiment;
        SweepView view(&experiment);
        experiment.setConfig(smallExperiment());
        const auto pick = [&](const char* axis) {
            const int i = view.axisField()->findData(QString::fromLatin1(axis));
            QVERIFY(i >= 0);
            view.axisField()->setCurrentIndex(i);
            emit view.axisField()->activated(i);
        };
        const auto fileSpec = [&](const char* axis, const json& values) {
            return SweepSpec::fromJson({{"name", "small"},
                                        {"experiment", smallExperiment().toJson()},
                                        {"axis", {{"name", axis}, {"values", values}}}});
        };
        QString error;
        pick("optimizer");
        QCOMPARE(view.valuesField()->text(), QString("sgd, momentum, nesterov, adam, adamw"));
        auto pending = view.pendingSpec(&error);
        QVERIFY2(pending, qPrintable(error));
        QCOMPARE(pending->axis, SweepAxis::Optimizer);
        QVERIFY(pending->toJson() ==
                fileSpec("optimizer", {"sgd", "momentum", "nesterov", "adam", "adamw"}).toJson());
        view.valuesField()->setText("adam (beta1=0.8, weight_decay=0.1), momentum (beta=0.5)");
        pending = view.pendingSpec(&error);
        QVERIFY2(pending, qPrintable(error));
        QVERIFY(pending->toJson() ==
                fileSpec("optimizer", {{{"kind", "adam"}, {"beta1", 0.8}, {"weight_decay", 0.1}},
                                       {{"kind", "momentum"}, {"beta", 0.5}}})
                    .toJson());
        view.valuesField()->setText("adam, rmsprop");
        QVERIFY(!view.pendingSpec(&error));
        QVERIFY2(error.contains("axis.values[1]") && error.contains("rmsprop") &&
                     error.contains("adamw"),
                 qPrintable(error));
        QVERIFY(!view.runButton()->isEnabled());

        pick("corrector");
        QCOMPARE(view.valuesField()->text(),
                 QString("none, delay_adaptive, prediction, dc, lookahead, accumulate"));
        pending = view.pendingSpec(&error);
        QVERIFY2(pending, qPrintable(error));
        QVERIFY(pending->toJson() == fileSpec("corrector", {"none", "delay_adaptive", "prediction",
                                                            "dc", "lookahead", "accumulate"})
                                         .toJson());
        QCOMPARE(pending->correctors[5].accumulate, 2);
        view.valuesField()->setText(
            "prediction (pipeoptim) + dc (lambda=0.2), delay_adaptive (unit=slots, per_block=true)"
            ", accumulate (k=4)");
        pending = view.pendingSpec(&error);
        QVERIFY2(pending, qPrintable(error));
        QVERIFY(
            pending->toJson() ==
            fileSpec("corrector",
                     {json::array({{{"kind", "prediction"}, {"s", "pipeoptim"}},
                                   {{"kind", "dc"}, {"lambda", 0.2}}}),
                      json::array(
                          {{{"kind", "delay_adaptive"}, {"unit", "slots"}, {"per_block", true}}}),
                      json::array({{{"kind", "accumulate"}, {"k", 4}}})})
                .toJson());
        QCOMPARE(pending->valueText(0), std::string("prediction (pipeoptim) + dc (lambda=0.2)"));
        view.valuesField()->setText("dc (lambda=-1)");
        QVERIFY(!view.pendingSpec(&error));
        QVERIFY2(error.contains("lambda") && error.contains("-1"), qPrintable(error));
        view.valuesField()->setText("none, dc");
        QVERIFY(view.runButton()->isEnabled());
        view.run();
        QVERIFY(waitForSweep(view));
        QCOMPARE(view.controller()->pointsDone(), std::size_t(2));
        QCOMPARE(view.chart()->plot().xLabels, (std::vector<std::string>{"none", "dc"}));
    }

    // The comparison widget on a run's methods (what the main window shows for an experiment
    // with several methods): one row per method in config order, the planned run's schedule
    // columns at once and the results when the run ends.
    void theComparisonViewShowsARunsMethods() {
        json j = {
            {"name", "family"},
            {"seed", 0},
            {"objective", {{"kind", "quadratic"}}},
            {"data",
             {{"source", "synthetic"}, {"kind", "random"}, {"rows", 64}, {"dim", 16}, {"seed", 2}}},
            {"stages", 4},
            {"batch_size", 4},
            {"budget", {{"slots", 210}}},
            {"costs", {{"backward_slots", 2}, {"weight_slots", 1}}},
            {"backend", "cpu"},
            {"methods", json::array({{{"method", "pd"}, {"step_size", 0.05}},
                                     {{"method", "1f1b"}, {"step_size", 0.2}},
                                     {{"method", "zb-h1"}, {"step_size", 0.2}},
                                     {{"method", "rpd"}, {"step_size", 0.05}}})}};
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        auto snapshot = std::make_shared<RunSnapshot>();
        snapshot->experiment = r;
        ScheduleComparisonView view;
        QCOMPARE(view.table()->rowCount(), 0);
        view.setSnapshot(snapshot);
        QTableWidget* table = view.table();
        QCOMPARE(table->rowCount(), 4);
        QCOMPARE(table->item(0, 1)->text(), QStringLiteral("pd"));
        QCOMPARE(table->item(3, 1)->text(), QStringLiteral("rpd"));
        // 1F1B: 210 slots are ten whole steps; bubble (S-1)/(M+S-1) = 3/7.
        QCOMPARE(table->item(1, 9)->text(), QStringLiteral("210"));
        QVERIFY(std::abs(table->item(1, 7)->data(Qt::UserRole).toDouble() - 3.0 / 7.0) < 1e-12);
        QCOMPARE(table->item(1, 7)->text(), QStringLiteral("42.9%"));
        QVERIFY(std::abs(table->item(2, 7)->data(Qt::UserRole).toDouble() - 0.2) < 1e-12);
        QCOMPARE(table->item(0, 8)->text(), QStringLiteral("8"));     // PD: 4 stashed + 4 in flight
        QCOMPARE(table->item(3, 7)->text(), QString::fromUtf8("—"));  // RPD has no timeline
        QCOMPARE(view.comparison().rows.size(), std::size_t(4));
        QVERIFY(view.csv().rfind("label,method,stages,", 0) == 0);
        // The same experiment planned only: schedule columns, no results.
        snapshot = std::make_shared<RunSnapshot>(*snapshot);
        snapshot->planOnly = true;
        view.setSnapshot(snapshot);
        QCOMPARE(table->item(1, 5)->text(), QString::fromUtf8("—"));
        QCOMPARE(table->item(1, 8)->text(), QStringLiteral("5"));
        QVERIFY(view.caption().startsWith("Planned"));
        view.setSnapshot(nullptr);
        QCOMPARE(table->rowCount(), 0);
    }

    void fillsInPointByPointWhileTheSweepRuns() {
        ExperimentController experiment;
        SweepView view(&experiment);
        view.controller()->setThreads(1);
        setUpDeltaSweep(experiment, view, "0, 2, 6, 12", true);
        std::vector<std::size_t> drawn;
        std::vector<bool> runningThen;
        QStringList banners;
        // Connected after the view's own slot, so it sees what the view drew for that point.
        connect(view.controller(), &SweepController::pointFinished, this, [&](int) {
            drawn.push_back(view.chart()->plot().pointsDone);
            runningThen.push_back(view.controller()->running());
            banners << view.chart()->banner();
        });
        view.run();
        QVERIFY(waitForSweep(view));
        QCOMPARE(view.controller()->state(), SweepController::State::Done);
        QCOMPARE(drawn, (std::vector<std::size_t>{1, 2, 3, 4}));
        QVERIFY(runningThen.front());  // the first point was drawn while the sweep ran
        QVERIFY2(banners.front().contains("Running: 1 of 4"), qPrintable(banners.front()));
        const SweepPlot& plot = view.chart()->plot();
        QCOMPARE(plot.series.size(), std::size_t(2));
        QCOMPARE(plot.series[1].points.size(), std::size_t(4));
        QCOMPARE(plot.series[1].points[3].x, 12.0);
        QVERIFY(view.chart()->markerPosition(1, 3).has_value());
        QVERIFY(view.chart()->banner().isEmpty());
        QVERIFY(view.stateLabel()->text().startsWith("Done"));
    }

    void cancelKeepsEveryFinishedPoint() {
        ExperimentController experiment;
        SweepView view(&experiment);
        view.controller()->setThreads(1);
        setUpDeltaSweep(experiment, view, "0, 1, 2, 3, 4, 5, 6, 7", true);
        QSignalSpy first(view.controller(), &SweepController::pointFinished);
        view.run();
        QVERIFY(first.wait(test::timeout(60000)));
        view.cancel();
        QVERIFY(waitForSweep(view));
        QCOMPARE(view.controller()->state(), SweepController::State::Cancelled);
        const std::size_t done = view.controller()->pointsDone();
        QVERIFY(done >= 1);
        QVERIFY2(done < 8, "the sweep ran to the end although cancelled");
        QVERIFY2(view.chart()->banner().contains(QString("Cancelled: %1 of 8").arg(done)),
                 qPrintable(view.chart()->banner()));
        QCOMPARE(view.chart()->plot().pointsDone, done);
        // The kept points are whole: the same numbers as the point run alone.
        const SweepSpec& spec = *view.controller()->spec();
        for (std::size_t i = 0; i < 8; ++i) {
            const auto& kept = view.controller()->points()[i];
            if (!kept) continue;
            const auto alone = runSweepPoint(spec, i);
            QVERIFY(alone);
            QVERIFY(pointResultToJson(*kept) == pointResultToJson(*alone));
        }
    }

    void clickingAPointOpensItsRunWithTheChosenStep() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        SweepView& view = *w.sweepView();
        setUpDeltaSweep(*w.controller(), view, "0, 4, 9");
        view.run();
        QVERIFY(waitForSweep(view));
        const PointResult point = *view.controller()->points()[1];
        // The RPD marker at delta = 4.
        const auto at = view.chart()->markerPosition(1, 1);
        QVERIFY(at);
        QVERIFY(view.chart()->markerText(1, 1).contains(
            QString("γ = %1").arg(point.methods[1].stepSize, 0, 'g', 4)));
        QSignalSpy opened(&view, &SweepView::pointOpened);
        QSignalSpy started(w.controller(), &ExperimentController::runStarted);
        // No point's run is open yet: nothing is ringed.
        QCOMPARE(view.chart()->openPoint(), -1);
        QVERIFY(!view.chart()->legendTexts().join('|').contains("ringed"));
        QTest::mouseClick(view.chart(), Qt::LeftButton, {}, at->toPoint());
        QCOMPARE(opened.count(), 1);
        QCOMPARE(opened.at(0).at(0).toInt(), 1);
        // The point opened is ringed and named under the plot.
        QCOMPARE(view.chart()->openPoint(), 1);
        QVERIFY2(view.chart()->legendTexts().contains(
                     QString::fromUtf8("ringed: δ = 4, the run the other views show")),
                 qPrintable(view.chart()->legendTexts().join('|')));
        const ExperimentConfig& c = w.controller()->config();
        QCOMPARE(c.methods[1].delta, 4LL);
        for (std::size_t m = 0; m < 2; ++m) {
            QVERIFY(!c.methods[m].step.grid);
            QCOMPARE(c.methods[m].step.value, point.methods[m].stepSize);
        }
        QVERIFY(started.count() > 0 || started.wait(test::timeout(5000)));  // after the debounce
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        const SnapshotPtr s = w.controller()->latest();
        for (std::size_t m = 0; m < 2; ++m)
            QCOMPARE(s->result(m).stepSize, point.methods[m].stepSize);
        QVERIFY(w.gantt()->timeline() != nullptr);
        QCOMPARE(w.gantt()->timeline()->params.stages, 4);
        // The run opened is the point's (one seed): the same final f - f* as the sweep found.
        const std::vector<GridStep>& grid = s->runs()[1].grid;
        QCOMPARE(grid.size(), std::size_t(1));
        QCOMPARE(grid[0].finalGap.mean, point.methods[1].finalGap.mean);
        // Opening one of its points does not make the sweep out of date.
        QVERIFY(view.upToDate());
        QVERIFY(view.chart()->current());
    }

    void saysWhenItWaitsAndWhenItIsOutOfDate() {
        ExperimentController experiment;
        SweepView view(&experiment);
        QVERIFY(!view.controller()->spec());
        QVERIFY(!view.upToDate());
        setUpDeltaSweep(experiment, view, "0, 3");
        view.run();
        QVERIFY2(view.chart()->banner().startsWith("Waiting for the first point"),
                 qPrintable(view.chart()->banner()));
        QVERIFY(view.upToDate());
        // A change while it runs: the running sweep is for the old parameters.
        view.valuesField()->setText("0, 3, 5");
        QVERIFY(!view.upToDate());
        QVERIFY2(view.chart()->banner().startsWith("Out of date"),
                 qPrintable(view.chart()->banner()));
        view.valuesField()->setText("0, 3");
        QVERIFY(waitForSweep(view));
        QVERIFY(view.upToDate());
        QVERIFY(view.chart()->banner().isEmpty());
        QVERIFY(view.chart()->current());
        // The sweep's own fields...
        view.seedsField()->setValue(2);
        QVERIFY(!view.chart()->current());
        QVERIFY2(view.chart()->banner().contains("Run sweep to update"),
                 qPrintable(view.chart()->banner()));
        QVERIFY(view.stateLabel()->text().startsWith("Out of date"));
        view.seedsField()->setValue(1);
        QVERIFY(view.chart()->current());
        // ...and the experiment it sweeps.
        QCOMPARE(experiment.tryModify([](ExperimentConfig& c) { c.batchSize = 5; }), QString());
        QVERIFY(!view.upToDate());
        QVERIFY(view.chart()->banner().startsWith("Out of date"));
        // Bad values say what is wrong and cannot run.
        view.valuesField()->setText("0, x");
        QVERIFY(view.stateLabel()->text().contains("\"x\""));
        QVERIFY(!view.runButton()->isEnabled());
    }

    // The badge over the chart is never elided: short texts that fit a narrow dock (the
    // chart is about 320 px wide in a 1024 x 700 window), and any text wraps onto more lines
    // rather than losing words.
    void theBadgeIsNeverElided() {
        ExperimentController experiment;
        SweepView view(&experiment);
        setUpDeltaSweep(experiment, view, "0, 3");
        view.run();
        QVERIFY(waitForSweep(view));
        view.seedsField()->setValue(2);
        const QString banner = view.chart()->banner();
        QCOMPARE(banner, QString::fromUtf8("Out of date — Run sweep to update"));
        QCOMPARE(view.chart()->bannerLines(320), QStringList{banner});
        // The state line keeps the reason.
        QCOMPARE(view.stateLabel()->text(),
                 QString::fromUtf8("Out of date: the parameters changed — Run sweep to update"));
        // A long banner in the narrowest chart: every word, on lines that fit.
        SweepChart chart;
        chart.resize(chart.minimumSizeHint());
        const QString text =
            QStringLiteral("Cancelled: 3 of 12 points finished (kept), the others were never run");
        chart.setBanner(text);
        const QStringList lines = chart.bannerLines();
        QVERIFY(lines.size() > 1);
        QCOMPARE(lines.join(' '), text);
        const QFontMetrics fm(chart.font());
        for (const QString& line : lines)
            QVERIFY2(fm.horizontalAdvance(line) <= chart.width() - 32, qPrintable(line));
    }

    void aSweepPresetOpensAndStartsInTheSweepView() {
        MainWindow w;
        QString error;
        QVERIFY2(w.loadPreset("e2-pd-vs-rpd", &error), qPrintable(error));
        SweepView& view = *w.sweepView();
        QVERIFY(view.controller()->running());
        const Preset p = loadPreset("e2-pd-vs-rpd");
        QVERIFY(view.controller()->spec()->toJson() == p.sweep->toJson());
        QVERIFY(view.upToDate());
        QCOMPARE(view.axisField()->currentData().toString(), QString("delta"));
        QCOMPARE(view.valuesField()->text(), QString("8, 30, 60, 180, 420"));
        view.cancel();
        QVERIFY(waitForSweep(view));
        QCOMPARE(view.controller()->state(), SweepController::State::Cancelled);
    }

    void exportsPngSvgAndCsv() {
        ExperimentController experiment;
        SweepView view(&experiment);
        view.resize(640, 420);
        setUpDeltaSweep(experiment, view, "0, 3, 9");
        view.run();
        QVERIFY(waitForSweep(view));
        QTemporaryDir dir;
        QString error;
        const QString png = dir.filePath("sweep.png");
        QVERIFY2(view.chart()->exportPng(png, 2.0, &error), qPrintable(error));
        const QImage image(png);
        QCOMPARE(image.size(), view.chart()->size() * 2);
        QVERIFY(image.pixelColor(image.width() / 2, image.height() / 2).isValid());
        const QString svg = dir.filePath("sweep.svg");
        QVERIFY2(view.chart()->exportSvg(svg, &error), qPrintable(error));
        QFile svgFile(svg);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QByteArray svgText = svgFile.readAll();
        QVERIFY(svgText.contains("<svg"));
        QVERIFY(svgText.contains("RPD delay bound"));  // the axis title is drawn
        const QString csv = dir.filePath("sweep.csv");
        QVERIFY2(view.exportCsv(csv, &error), qPrintable(error));
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly));
        const QStringList rows =
            QString::fromUtf8(csvFile.readAll()).split('\n', Qt::SkipEmptyParts);
        QVERIFY(rows.front().startsWith("point,delta,method,label,step_rule,step_size"));
        QCOMPARE(rows.size(), 1 + 3 * 2);  // header, 3 points x 2 methods
        // Nothing to export before a sweep ran.
        SweepView empty(&experiment);
        QVERIFY(!empty.exportCsv(dir.filePath("none.csv"), &error));
        QVERIFY(error.contains("no sweep"));
    }
};

QTEST_MAIN(TestSweepView)
#include "tst_sweep_view.moc"

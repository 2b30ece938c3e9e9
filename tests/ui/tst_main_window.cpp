// The whole window: it builds with every preset and shows real results; a parameter change
// reruns and the charts receive the new data; the heatmap shows the engine's delays; playback
// moves every view together; log axes carry readable labels.
#include <QApplication>
#include <QChart>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolButton>
#include <QWheelEvent>
#include <nlohmann/json.hpp>

#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controls/controls_panel.hpp"
#include "controls/eliding_label.hpp"
#include "controls/playback_bar.hpp"
#include "main_window.hpp"
#include "schedule/delays.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

class TestMainWindow : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void buildsWithEveryPreset_data() {
        QTest::addColumn<QString>("preset");
        for (const QString& id : presetIds()) QTest::newRow(qPrintable(id)) << id;
    }
    void buildsWithEveryPreset() {
        QFETCH(QString, preset);
        MainWindow w;
        w.show();
        QString error;
        QVERIFY2(w.loadPreset(preset, &error), qPrintable(error));
        QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
        const ExperimentConfig& c = w.controller()->config();
        QCOMPARE(w.lossChart()->methodSeries().size(), static_cast<int>(c.methods.size()));
        for (QLineSeries* s : w.lossChart()->methodSeries()) QVERIFY(s->count() > 1);
        QVERIFY(w.gantt()->timeline() != nullptr);
        QCOMPARE(w.gantt()->timeline()->params.stages, c.stages);
        QVERIFY(!w.figureStrip()->values().empty());
        QVERIFY(!w.lessonView()->toPlainText().trimmed().isEmpty());
        QCOMPARE(w.playback()->cursor(), w.playback()->totalSlots());
        QVERIFY(w.windowTitle().contains("PipeLens"));
        // The Gantt chart opens on the start-up and first steady rounds (no preset saves a
        // range), the cursor at the end notwithstanding; its buttons show all and come back.
        GanttChart* g = w.gantt();
        const int total = g->timeline()->totalSlots;
        const int startUp = std::min(total, std::max(24, 3 * c.stages));
        QCOMPARE(g->startUpSlots(), startUp);
        QCOMPARE(g->visibleFirst(), 0.0);
        QCOMPARE(g->visibleLast(), static_cast<double>(startUp));
        auto* fit = w.findChild<QToolButton*>("ganttFitAll");
        auto* start = w.findChild<QToolButton*>("ganttStartUp");
        QVERIFY(fit && start && fit->isVisible() && start->isVisible());
        fit->click();
        QCOMPARE(g->visibleLast(), static_cast<double>(total));
        start->click();
        QCOMPARE(g->visibleLast(), static_cast<double>(startUp));
        auto* hint = w.findChild<QLabel*>("ganttHint");
        QVERIFY(hint && hint->isVisible() && hint->text().contains("wheel: zoom"));
    }

    // A selected microbatch belongs to one pipeline: another S, New or a preset clears it; a
    // change of γ keeps it. A preset brings its lesson to the front (a sweep preset its chart).
    void selectionAndLessonFollowTheExperiment() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        w.gantt()->selectMicrobatch(3);
        QVERIFY(w.controller()
                    ->tryModify([](ExperimentConfig& c) { c.methods[0].step.value *= 0.5; })
                    .isEmpty());
        QCOMPARE(w.gantt()->selectedMicrobatch(), 3);
        QVERIFY(w.controller()->tryModify([](ExperimentConfig& c) { c.stages = 4; }).isEmpty());
        QCOMPARE(w.gantt()->selectedMicrobatch(), -1);
        QVERIFY(w.waitForResults(test::timeout(60000)));
        w.gantt()->selectMicrobatch(2);
        QVERIFY(w.loadPreset("default"));
        QCOMPARE(w.gantt()->selectedMicrobatch(), -1);
        w.showSweepView();  // the Sweep tab in front of the lesson
        const auto front = [&] {
            for (QTabBar* bar : w.findChildren<QTabBar*>()) {
                for (int i = 0; i < bar->count(); ++i) {
                    if (bar->tabText(i) == "Lesson") return bar->tabText(bar->currentIndex());
                }
            }
            return QString("(no tab bar)");
        };
        QVERIFY(QTest::qWaitFor([&] { return front() == "Sweep"; }, 2000));
        QVERIFY(w.loadPreset("default"));
        QVERIFY2(QTest::qWaitFor([&] { return front() == "Lesson"; }, 2000), qPrintable(front()));
    }

    // Rolling the wheel over the Experiment panel scrolls it: a spin box or combo box under the
    // pointer changes only when it has the focus (it once turned b = 10 into 8 and reran).
    void wheelOverAnUnfocusedFieldChangesNothing() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QSpinBox* spin = nullptr;
        for (QSpinBox* s : w.controls()->findChildren<QSpinBox*>()) {
            if (s->isVisible() && s->isEnabled() && s->value() > s->minimum() &&
                s->value() < s->maximum()) {
                spin = s;
                break;
            }
        }
        QComboBox* combo = nullptr;
        for (QComboBox* b : w.controls()->findChildren<QComboBox*>()) {
            if (b->isVisible() && b->isEnabled() && b->count() > 2 && b->currentIndex() > 0) {
                combo = b;
                break;
            }
        }
        QVERIFY(spin != nullptr && combo != nullptr);
        QCOMPARE(spin->focusPolicy(), Qt::StrongFocus);  // the wheel never gives the focus
        const ExperimentConfig before = w.controller()->config();
        const int value = spin->value();
        const int index = combo->currentIndex();
        const auto roll = [](QWidget* target) {
            const QPointF at(target->width() / 2.0, target->height() / 2.0);
            QWheelEvent wheel(at, target->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                              Qt::NoModifier, Qt::NoScrollPhase, false);
            QApplication::sendEvent(target, &wheel);
        };
        roll(spin);
        roll(spin->findChild<QLineEdit*>());  // where the wheel lands first
        roll(combo);
        QCOMPARE(spin->value(), value);
        QCOMPARE(combo->currentIndex(), index);
        QVERIFY(w.controller()->config() == before);
        // With the focus, the wheel is the field's (so the check above can fail).
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        spin->setFocus();
        QVERIFY(QTest::qWaitFor([&] { return spin->hasFocus(); }, 2000));
        roll(spin);
        QCOMPARE(spin->value(), value - spin->singleStep());
    }

    // A saved experiment keeps the view: opened in another window it looks as its author saw
    // it (Gantt method, x axis, log scales, cursor, zoom), and the view is no part of the run.
    void aSavedExperimentOpensAsItsAuthorSawIt() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("shared.json"));
        ViewState saved;
        {
            MainWindow w;
            w.show();
            QVERIFY(w.waitForResults(test::timeout(60000)));
            QVERIFY(w.ganttMethodField()->count() >= 2);
            w.ganttMethodField()->setCurrentIndex(1);  // not the first: LocalSGD
            w.lossChart()->setXAxis(LossChart::XAxis::Updates);
            w.lossChart()->setLogY(false);
            w.lossChart()->setLogX(true);
            w.playback()->setCursor(37);
            w.gantt()->setVisibleRange(10.0, 60.0);
            w.heatmap()->setVisibleRange(5.0, 90.0);
            saved = w.currentView();
            QCOMPARE(saved.ganttMethod, w.ganttMethodField()->itemText(1).toStdString());
            QCOMPARE(saved.xAxis, LossXAxis::Updates);
            QVERIFY(!saved.logY && saved.logX);
            QCOMPARE(saved.cursor, 37);
            QVERIFY(saved.ganttRange && saved.heatmapRange);
            QString error;
            QVERIFY2(w.saveConfig(path, &error), qPrintable(error));
        }
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(file.readAll().toStdString());
        QCOMPARE(j["view"]["cursor"].get<int>(), 37);
        QCOMPARE(j["view"]["x_axis"].get<std::string>(), std::string("updates"));
        QCOMPARE(j["view"]["gantt_range"][0].get<double>(), 10.0);

        MainWindow w;
        w.show();
        QString error;
        QVERIFY2(w.openConfig(path, &error), qPrintable(error));
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QCoreApplication::processEvents();
        QCOMPARE(w.ganttMethodField()->currentIndex(), 1);
        QCOMPARE(w.gantt()->cursorSlot(), 37);
        QCOMPARE(w.gantt()->visibleFirst(), 10.0);
        QCOMPARE(w.gantt()->visibleLast(), 60.0);
        QCOMPARE(w.heatmap()->visibleFirst(), 5.0);
        QCOMPARE(w.heatmap()->visibleLast(), 90.0);
        QVERIFY(w.currentView() == saved);
        QCOMPARE(w.lossChart()->xAxis(), LossChart::XAxis::Updates);
        QVERIFY(!w.controller()->configAsText().contains(QStringLiteral("\"view\"")));
    }

    void aParameterChangeRerunsAndTheChartsReceiveIt() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const auto before = w.controller()->latest()->generation;
        QSignalSpy started(w.controller(), &ExperimentController::runStarted);
        w.controls()->stagesField()->setValue(4);  // as if typed
        QCOMPARE(w.controller()->config().stages, 4);
        QVERIFY(started.wait(test::timeout(5000)));
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const SnapshotPtr s = w.controller()->latest();
        QVERIFY(s->generation > before);
        QCOMPARE(w.lossChart()->snapshot(), s);
        QCOMPARE(w.gantt()->timeline()->params.stages, 4);
        QCOMPARE(w.heatmap()->delays()->stages(), 4);
        QCOMPARE(w.figureStrip()->value("formula max delay", s->label(0)),
                 static_cast<double>(pipeDreamMaxDelayFormula(4)));
    }

    // LocalSGD with H = 50 at S = 8 never averages in the default budget: the window says so
    // (status bar) as soon as the plan is known, and the legend marks the method.
    void localSgdThatNeverAveragesIsWarnedAbout() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(w.warningsLabel()->isHidden());
        QCOMPARE(w.controller()->tryModify([](ExperimentConfig& c) {
            c.methods[2].localSteps = 50;  // LocalSGD
        }),
                 QString());
        QVERIFY(!w.warningsLabel()->isHidden());  // from the plan, before the run
        QVERIFY2(w.warningsLabel()->fullText().contains("never averages"),
                 qPrintable(w.warningsLabel()->fullText()));
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QCOMPARE(w.controller()->latest()->experiment.warnings.size(), size_t{1});
        QVERIFY(w.warningsLabel()->fullText().contains(
            QString::fromStdString(w.controller()->latest()->experiment.warnings[0])));
        const QString legend = w.lossChart()->methodSeries()[2]->name();
        QVERIFY2(legend.contains("⚠ never averages"), qPrintable(legend));
        QVERIFY(!w.lossChart()->methodSeries()[0]->name().contains("never averages"));
        QCOMPARE(
            w.controller()->tryModify([](ExperimentConfig& c) { c.methods[2].localSteps = 5; }),
            QString());
        QVERIFY(w.warningsLabel()->isHidden());
    }

    void theHeatmapShowsTheEnginesDelays() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const SnapshotPtr s = w.controller()->latest();
        const int pd = w.heatmapMethodIndex();
        QVERIFY(pd >= 0);
        QCOMPARE(s->runs()[static_cast<size_t>(pd)].spec.method, Method::PipeDream);
        // Recompute PD's delays from its schedule, independently of the run.
        const DelayTable expected(
            buildTimeline(s->result(static_cast<size_t>(pd)).timeline->params));
        QCOMPARE(w.heatmap()->delays()->updates(), expected.updates());
        for (long long k = 0; k < expected.updates(); ++k) {
            for (int j = 0; j < expected.stages(); ++j) {
                QCOMPARE(w.heatmap()->valueAt(k, j), expected.delay(k, j));
            }
        }
        QCOMPARE(w.heatmap()->formulaMax(),
                 static_cast<double>(pipeDreamMaxDelayFormula(expected.stages())));
    }

    void playbackMovesEveryViewTogether() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const SnapshotPtr s = w.controller()->latest();
        const int slot = 100;
        w.playback()->setCursor(slot);
        QCOMPARE(w.gantt()->cursorSlot(), slot);
        QCOMPARE(w.lossChart()->cursorSlot(), slot);
        const auto& run = s->runs()[static_cast<size_t>(w.heatmapMethodIndex())];
        QCOMPARE(w.heatmap()->cursorUpdate(), run.updatesBefore(slot));
        // Updates happen in slots before the cursor, none at or after it.
        const long long k = run.updatesBefore(slot);
        QVERIFY(k > 0);
        QVERIFY(run.updateSlot[static_cast<size_t>(k - 1)] < slot);
        QVERIFY(run.updateSlot[static_cast<size_t>(k)] >= slot);
        for (QLineSeries* series : w.lossChart()->methodSeries()) {
            QVERIFY(series->count() > 0);
            QVERIFY(series->at(series->count() - 1).x() <= slot);
        }
        w.playback()->stepForward();
        QCOMPARE(w.gantt()->cursorSlot(), slot + 1);
        w.playback()->setSlotsPerSecond(1000);
        w.playback()->play();
        QVERIFY(QTest::qWaitFor([&] { return w.gantt()->cursorSlot() > slot + 5; },
                                test::timeout(3000)));
        w.playback()->pause();
        QVERIFY(!w.playback()->playing());
        w.playback()->toEnd();
        QCOMPARE(w.gantt()->cursorSlot(), s->totalSlots);
    }

    void logAxisLabelsAreReadable() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        w.lossChart()->setLogY(true);
        QTest::qWait(50);
        const QStringList labels = w.lossChart()->yAxisLabels();
        // Three decades at least: f - f* falls from about 0.6 to below 0.1.
        QVERIFY2(labels.size() >= 3, qPrintable(labels.join(" | ")));
        for (const QString& l : labels) {
            QVERIFY2(l != "0.0" && l != "0", qPrintable(labels.join(" | ")));
            QVERIFY2(l.contains('e'), qPrintable(l));  // 1e-01, not 0.1 / 0.0
        }
        QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"

// The whole window: it builds with every preset and shows real results; a parameter change
// reruns and the charts receive the new data; the heatmap shows the engine's delays; playback
// moves every view together; log axes carry readable labels.
#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTextDocumentFragment>
#include <QToolButton>
#include <QWheelEvent>
#include <nlohmann/json.hpp>

#include "charts/chart_support.hpp"
#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/method_colours.hpp"
#include "charts/schedule_comparison_view.hpp"
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
        // The Schedules tab: one row per method of the finished run, the run's own labels.
        auto* schedules = w.findChild<ScheduleComparisonView*>("scheduleComparison");
        QVERIFY(schedules);
        QCOMPARE(schedules->table()->rowCount(), static_cast<int>(c.methods.size()));
        QVERIFY(w.lessonView()->toPlainText().trimmed().size() > 0);
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

    // Lessons name controls in *italics*, with their labels on screen: each one exists in the
    // window (a label, a button or box, a menu entry, a tab or a panel's title) once the preset
    // is loaded (the language model's fields show only then).
    void everyControlALessonNamesIsOnScreen() {
        MainWindow w;
        w.show();
        const QRegularExpression italic(QStringLiteral("(?<![*\\w])\\*([^*\\n]+)\\*(?![*\\w])"));
        const auto plain = [](QString t) {
            t.remove('&');
            t.remove(QChar(0x2026));  // "…"
            return QTextDocumentFragment::fromHtml(t).toPlainText().trimmed();
        };
        int named = 0;
        for (const QString& id : presetIds()) {
            QVERIFY(w.loadPreset(id));
            QSet<QString> onScreen;
            for (QLabel* l : w.findChildren<QLabel*>()) onScreen << plain(l->text());
            for (QAbstractButton* b : w.findChildren<QAbstractButton*>())
                onScreen << plain(b->text());
            for (QGroupBox* g : w.findChildren<QGroupBox*>()) onScreen << plain(g->title());
            for (QAction* a : w.findChildren<QAction*>()) onScreen << plain(a->text());
            for (QDockWidget* d : w.findChildren<QDockWidget*>())
                onScreen << plain(d->windowTitle());
            for (QTabBar* t : w.findChildren<QTabBar*>()) {
                for (int i = 0; i < t->count(); ++i) onScreen << plain(t->tabText(i));
            }
            const QString lesson = loadPreset(id).lesson;
            for (auto it = italic.globalMatch(lesson); it.hasNext();) {
                const QString name = it.next().captured(1);
                ++named;
                QVERIFY2(onScreen.contains(name),
                         qPrintable(id + ": the lesson names *" + name + "*, not on screen"));
            }
        }
        QVERIFY(named >= 8);  // the check reads the lessons' names
    }

    // One colour per method family in every chart, shades for a family's variants; the Gantt
    // chart's forward and backward fills are no method's colour.
    void everyMethodFamilyHasItsColour() {
        const std::vector<Method> families = {Method::PipeDream, Method::RandomizedPipeDream,
                                              Method::LocalSgd, Method::Sgd, Method::FillDrain};
        QSet<QRgb> used;
        for (const Method f : families) {
            QCOMPARE(methodColour(f, 0), familyColour(f));
            for (int v = 0; v < 4; ++v) {
                const QRgb c = methodColour(f, v).rgb();
                QVERIFY2(
                    !used.contains(c),
                    qPrintable(QString("family %1 variant %2").arg(static_cast<int>(f)).arg(v)));
                used << c;
            }
        }
        QVERIFY(!used.contains(QColor(chart::kGanttForward).rgb()));
        QVERIFY(!used.contains(QColor(chart::kGanttBackward).rgb()));

        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const auto& runs = w.controller()->latest()->runs();
        const QList<QLineSeries*> series = w.lossChart()->methodSeries();
        QCOMPARE(series.size(), static_cast<qsizetype>(runs.size()));
        for (std::size_t i = 0; i < runs.size(); ++i) {
            QCOMPARE(series[static_cast<qsizetype>(i)]->pen().color(),
                     familyColour(runs[i].spec.method));
        }
        // Two LocalSGD: the second a shade of the first's green, PD still blue.
        QVERIFY(w.controller()
                    ->tryModify([](ExperimentConfig& c) {
                        MethodSpec again = c.methods[2];
                        again.localSteps = 2;
                        c.methods.push_back(again);
                    })
                    .isEmpty());
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const QList<QLineSeries*> four = w.lossChart()->methodSeries();
        QCOMPARE(four.size(), 4);
        QCOMPARE(four[0]->pen().color(), familyColour(Method::PipeDream));
        QCOMPARE(four[2]->pen().color(), familyColour(Method::LocalSgd));
        QCOMPARE(four[3]->pen().color(), methodColour(Method::LocalSgd, 1));
        // The figure strip's lines are the same colours.
        int matched = 0;
        for (QAbstractSeries* a : w.figureStrip()->charts()[2]->chart()->series()) {
            auto* line = qobject_cast<QLineSeries*>(a);
            if (!line) continue;
            for (QLineSeries* l : four) matched += line->pen().color() == l->pen().color() ? 1 : 0;
        }
        QCOMPARE(matched, 3);  // PD and both LocalSGD (RPD has no stash line)
    }

    // The ticked theorem box keeps the ‖∇f‖² sampling it needs through New and a preset.
    void theTheoremBoxKeepsItsSamplingThroughNewAndPresets() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QCOMPARE(w.controller()->config().sampling.gradNormEvery, 0LL);
        w.lossChart()->setTheoremChartShown(true);
        QVERIFY(w.controller()->config().sampling.gradNormEvery > 0);
        QVERIFY(w.loadPreset("default"));  // New
        QVERIFY(QTest::qWaitFor([&] { return w.controller()->config().sampling.gradNormEvery > 0; },
                                2000));
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(!w.controller()->latest()->curves[1].theorem.bound.byUpdate.empty());
        w.lossChart()->setTheoremChartShown(false);
        QVERIFY(w.loadPreset("e1-delays"));
        QTest::qWait(50);
        QCOMPARE(w.controller()->config().sampling.gradNormEvery, 0LL);  // unticked: left alone
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
        // The speeds read naturally: "1 slot/s", "3 slots/s".
        auto* speed = w.playback()->findChild<QComboBox*>();
        QVERIFY(speed);
        QCOMPARE(speed->itemText(0), QString("1 slot/s"));
        QCOMPARE(speed->itemText(1), QString("3 slots/s"));
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

    void importScheduleAddsTheFileAsAMethodAndRunsIt() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const ExperimentConfig before = w.controller()->config();
        QString error;
        const QString file =
            QStringLiteral(PIPELENS_SOURCE_DIR "/examples/schedules/interleaved_s4_m8_v2.csv");
        QVERIFY2(w.importSchedule(file, &error), qPrintable(error));
        const ExperimentConfig& c = w.controller()->config();
        QCOMPARE(c.methods.size(), before.methods.size() + 1);
        const MethodSpec& m = c.methods.back();
        QCOMPARE(m.method, Method::Imported);
        QCOMPARE(QString::fromStdString(m.scheduleFile), QFileInfo(file).absoluteFilePath());
        QVERIFY(!m.asyncUpdate);  // update = sync, as PyTorch
        QCOMPARE(c.stages, 8);    // the file's stages (4 ranks, 2 stages each)
        QVERIFY(w.waitForResults(test::timeout(60000), &error));
        // It ran, and the Gantt chart shows it.
        const SnapshotPtr s = w.controller()->latest();
        const std::size_t added = c.methods.size() - 1;
        QVERIFY(s->result(added).timeline.has_value());
        QCOMPARE(s->result(added).timeline->params.kind, ScheduleKind::Imported);
        QVERIFY(!s->result(added).objectivePerSlot.empty());
        QCOMPARE(w.ganttMethodIndex(), static_cast<int>(added));
        QVERIFY(w.statusText().contains("method"));
    }

    void importingABadScheduleChangesNothing() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        const ExperimentConfig before = w.controller()->config();
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.csv"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("0F0,0X0\n");
        f.close();
        QString error;
        QVERIFY(!w.importSchedule(bad, &error));
        // The core's message: the file, where and what.
        QVERIFY2(error.contains("bad.csv") && error.contains("0X0"), qPrintable(error));
        QVERIFY2(error.contains("rank 0") && error.contains("step 1"), qPrintable(error));
        QVERIFY(w.controller()->config() == before);
        QVERIFY(!w.importSchedule(dir.filePath(QStringLiteral("missing.csv")), &error));
        QVERIFY2(error.contains("missing.csv"), qPrintable(error));
        QVERIFY(w.controller()->config() == before);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"

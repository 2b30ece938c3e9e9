#include "main_window.hpp"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "charts/comparison_gantt.hpp"
#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/memory_chart.hpp"
#include "charts/schedule_comparison_view.hpp"
#include "charts/staleness_heatmap.hpp"
#include "charts/theorem_chart.hpp"
#include "charts/widget_export.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controllers/sweep_controller.hpp"
#include "controls/controls_panel.hpp"
#include "controls/eliding_combo_box.hpp"
#include "controls/eliding_label.hpp"
#include "controls/fitting_scroll_area.hpp"
#include "controls/playback_bar.hpp"
#include "controls/wheel_guard.hpp"
#include "experiment/output/results.hpp"
#include "samples_view.hpp"
#include "sweep_view.hpp"

namespace pipelens::ui {
namespace {

QWidget* titled(const QString& title, QWidget* body, QWidget* extra = nullptr,
                QLabel** titleLabel = nullptr) {
    auto* box = new QWidget;
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* head = new QHBoxLayout;
    auto* label = new QLabel(title);
    head->addWidget(label);
    if (extra) head->addWidget(extra);
    head->addStretch();
    layout->addLayout(head);
    layout->addWidget(body, 1);
    if (titleLabel) *titleLabel = label;
    return box;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setObjectName("PipeLensMainWindow");
    controller_ = new ExperimentController(this);
    // Before any field exists: the guard sets each one's focus policy as it is polished.
    qApp->installEventFilter(new WheelGuard(this));
    buildCentral();
    buildDocks();
    buildMenus();
    // One line each, elided to the window's width with the whole text as tooltip.
    runState_ = new ElidingLabel(this);
    notices_ = new ElidingLabel(this);
    notices_->setStyleSheet("color: #555;");
    warnings_ = new ElidingLabel(this);
    warnings_->setObjectName("warnings");
    warnings_->setStyleSheet("color: #9a5b00;");
    warnings_->hide();
    statusBar()->addWidget(runState_, 1);
    statusBar()->addPermanentWidget(warnings_);
    statusBar()->addPermanentWidget(notices_);

    connect(controller_, &ExperimentController::configChanged, this, [this] {
        setWindowModified(true);
        updateTitle();
        // Another S is another pipeline: microbatch k of the old one is not the one selected.
        if (controller_->config().stages != selectionStages_) {
            selectionStages_ = controller_->config().stages;
            gantt_->selectMicrobatch(-1);
        }
        // A new config (New, a preset, a sweep point) may have dropped the ‖∇f‖² sampling the
        // ticked theorem box needs: ask for it again (queued: not inside this change).
        if (loss_->theoremChartShown() && controller_->config().sampling.gradNormEvery == 0 &&
            !controller_->config().languageModel()) {
            QMetaObject::invokeMethod(
                this, [this] { onTheoremChart(loss_->theoremChartShown()); }, Qt::QueuedConnection);
        }
        if (controller_->config().languageModel()) {
            if (!controller_->planned()) showLmComputing();
        } else {
            showSamplesTab(false);
        }
    });
    connect(controller_, &ExperimentController::runStarted, this,
            [this] { runState_->setFullText(tr("Running…")); });
    connect(controller_, &ExperimentController::planReady, this, &MainWindow::showPlanned);
    connect(controller_, &ExperimentController::resultsReady, this, &MainWindow::showResults);
    connect(controller_, &ExperimentController::partialResults, this, &MainWindow::showPartial);
    connect(controller_, &ExperimentController::runFailed, this,
            [this](quint64, const QString& message) {
                status(message, true);
                // The views that were computing this run say it failed: neither "computing…"
                // forever nor an earlier run's picture.
                loss_->setFailed(message);
                heatmap_->setFailed();
                samples_->setFailed();
            });
    connect(controller_, &ExperimentController::notice, this,
            [this](const QString& n) { notices_->setFullText(n); });
    connect(playback_, &PlaybackBar::cursorChanged, this, &MainWindow::applyCursor);
    // A click on the Gantt or the heatmap moves the playback cursor there (as scrubbing does).
    connect(gantt_, &GanttChart::slotClicked, playback_, &PlaybackBar::setCursor);
    connect(heatmap_, &StalenessHeatmap::updateClicked, this, [this](long long updates) {
        const int slot = slotAfterUpdates(updates);
        if (slot >= 0) playback_->setCursor(slot);
    });
    connect(ganttMethod_, &QComboBox::currentIndexChanged, this, &MainWindow::showGanttMethod);
    connect(loss_, &LossChart::theoremChartToggled, this, &MainWindow::onTheoremChart);

    resize(1500, 950);
    restoreLayout();
    loadPreset("default");
}

MainWindow::~MainWindow() = default;

void MainWindow::buildCentral() {
    gantt_ = new GanttChart;
    gantt_->setToolTip(
        tr("Pipeline Gantt chart: stages by slots. Wheel zooms, drag pans; hover "
           "a cell for its operation, microbatch and weight version."));
    // Its method's name whole up to 26 characters (a name with its correctors may be longer:
    // then elided, whole in the tooltip): the hint beside it is what gives way in a narrow
    // window.
    auto* ganttMethod = new ElidingComboBox(26);
    ganttMethod->setBaseToolTip(tr("The pipeline method whose timeline (and delays) are shown"));
    ganttMethod_ = ganttMethod;
    ganttMethod_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    heatmap_ = new StalenessHeatmap;
    heatmap_->setToolTip(
        tr("Staleness heatmap: blocks by block updates, colour = the delay "
           "of that block's read in that update"));
    loss_ = new LossChart;
    theorem_ = new TheoremChart(this);  // a tab of besideLoss_ while shown
    theorem_->hide();
    samples_ = new SamplesView(this);  // a tab of besideLoss_ for the language model
    samples_->hide();
    figures_ = new FigureStrip;
    playback_ = new PlaybackBar;

    middle_ = new QSplitter(Qt::Horizontal);
    middle_->setObjectName("middleSplitter");
    middle_->addWidget(loss_);
    // The theorem chart, when asked for, is a tab beside the heatmap: three charts side by side
    // do not fit a 1024-pixel window. With one tab the tab bar hides.
    besideLoss_ = new QTabWidget;
    besideLoss_->setObjectName("besideLoss");
    besideLoss_->setTabBarAutoHide(true);
    besideLoss_->setDocumentMode(true);
    afterCorrection_ = new QCheckBox(tr("after correction"));
    afterCorrection_->setObjectName("heatmapAfterCorrection");
    afterCorrection_->setToolTip(
        tr("Show the effective delays: counted in the updates that took effect (a method that "
           "accumulates k gradients per update); unticked, the schedule's delays"));
    afterCorrection_->hide();
    connect(afterCorrection_, &QCheckBox::toggled, this, [this] { showGanttMethod(); });
    besideLoss_->addTab(titled(tr("<b>Staleness</b>"), heatmap_, afterCorrection_, &heatmapTitle_),
                        tr("Staleness"));
    // A method named with its optimizer and correctors can be long: the title wraps rather
    // than widen the window.
    heatmapTitle_->setWordWrap(true);
    // Schedules on equal terms: final value, time to target, bubble, peak memory per method.
    schedules_ = new ScheduleComparisonView;
    schedules_->setObjectName("scheduleComparison");
    besideLoss_->addTab(schedules_, tr("Schedules"));
    middle_->addWidget(besideLoss_);
    middle_->setStretchFactor(0, 3);
    middle_->setStretchFactor(1, 2);
    middle_->setSizes({600, 420});
    vertical_ = new QSplitter(Qt::Vertical);
    vertical_->setObjectName("verticalSplitter");
    // The Pipeline area: one method's Gantt chart or, with "Compare", every pipeline method's
    // timeline on one slot axis.
    compare_ = new ComparisonGantt;
    compare_->setObjectName("comparisonGantt");
    compare_->setToolTip(
        tr("Every pipeline method's timeline on one slot axis. Wheel zooms, drag pans (all "
           "methods together); hover a cell for its operation and microbatch."));
    pipelineStack_ = new QStackedWidget;
    pipelineStack_->addWidget(gantt_);
    pipelineStack_->addWidget(compare_);
    // Its stages stay readable (fitGanttLanes): where they need more height than the window
    // has, the area scrolls.
    auto* pipelineArea = new FittingScrollArea(pipelineStack_, Qt::Vertical);
    pipelineArea->setObjectName("pipelineArea");
    // Memory per stage beside the Gantt chart: it reads the same method's timeline.
    memory_ = new MemoryChart;
    pipelineSplit_ = new QSplitter(Qt::Horizontal);
    pipelineSplit_->setObjectName("pipelineSplitter");
    pipelineSplit_->addWidget(titled(tr("<b>Pipeline</b>"), pipelineArea, ganttHeader()));
    pipelineSplit_->addWidget(memory_);
    // The Gantt chart the larger share; the memory view enough for its two lines in a roomy
    // window (a small one leaves it its least width, lines elided with the whole as tooltip).
    pipelineSplit_->setStretchFactor(0, 3);
    pipelineSplit_->setStretchFactor(1, 2);
    pipelineSplit_->setSizes({700, 440});
    vertical_->addWidget(pipelineSplit_);
    vertical_->addWidget(middle_);
    // A narrow window scrolls the strip sideways rather than squeezing its figures.
    stripArea_ = new FittingScrollArea(figures_, Qt::Horizontal);
    stripArea_->setObjectName("figureStripArea");
    vertical_->addWidget(stripArea_);
    vertical_->setStretchFactor(0, 3);
    vertical_->setStretchFactor(1, 5);
    vertical_->setStretchFactor(2, 3);
    vertical_->setSizes({230, 420, 230});
    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 2);
    layout->addWidget(vertical_, 1);
    layout->addWidget(playback_);
    setCentralWidget(central);
    central->installEventFilter(this);  // arrangeCharts() on each resize
    gantt_->installEventFilter(this);   // fitGanttLanes() on each resize
}

QWidget* MainWindow::ganttHeader() {
    auto* header = new QWidget;
    auto* row = new QHBoxLayout(header);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(ganttMethod_);
    auto* startUp = new QToolButton;
    startUp->setObjectName("ganttStartUp");
    startUp->setText(tr("Start-up"));
    startUp->setToolTip(tr("Show the start-up and the first steady rounds, cells numbered"));
    // Both act on the chart shown: one method's or the comparison.
    connect(startUp, &QToolButton::clicked, this,
            [this] { comparing() ? compare_->showStartUp() : gantt_->showStartUp(); });
    auto* fit = new QToolButton;
    fit->setObjectName("ganttFitAll");
    fit->setText(tr("Fit all"));
    fit->setToolTip(tr("Show the whole run"));
    connect(fit, &QToolButton::clicked, this,
            [this] { comparing() ? compare_->fitAll() : gantt_->fitAll(); });
    compareButton_ = new QToolButton;
    compareButton_->setObjectName("ganttCompare");
    compareButton_->setText(tr("Compare"));
    compareButton_->setCheckable(true);
    compareButton_->setToolTip(
        tr("Show every pipeline method's timeline on one slot axis, each with its bubble share "
           "and peak stashed weight copies"));
    connect(compareButton_, &QToolButton::toggled, this, &MainWindow::setComparing);
    row->addWidget(startUp);
    row->addWidget(fit);
    row->addWidget(compareButton_);
    // Elided in a narrow window (the whole hint is its tooltip), so the row never widens it.
    auto* hint = new ElidingLabel;
    hint->setFullText(tr("wheel: zoom · drag: pan · click a cell: its microbatch"));
    hint->setObjectName("ganttHint");
    hint->setEnabled(false);  // drawn greyed: a hint, not data
    row->addWidget(hint);
    return header;
}

bool MainWindow::comparing() const {
    return pipelineStack_->currentWidget() == compare_;
}

void MainWindow::setComparing(bool on) {
    pipelineStack_->setCurrentWidget(on ? static_cast<QWidget*>(compare_) : gantt_);
    ganttMethod_->setEnabled(!on);  // the comparison shows every method
    // Lanes at least 10 px high: taller than the room, the Pipeline area scrolls.
    constexpr double kCompareLaneHeight = 10.0;
    compare_->setMinimumHeight(on ? compare_->heightForLanes(kCompareLaneHeight) : 0);
    const QSignalBlocker block(compareButton_);
    compareButton_->setChecked(on);
}

void MainWindow::buildDocks() {
    controls_ = new ControlsPanel(controller_);
    // The panel scrolls up and down, never sideways: the area is as wide as its widest row.
    // Refusals show above it, in sight wherever the panel is scrolled.
    auto* controlsBody = new QWidget;
    auto* controlsLayout = new QVBoxLayout(controlsBody);
    controlsLayout->setContentsMargins(0, 0, 0, 0);
    controlsLayout->setSpacing(0);
    controlsLayout->addWidget(controls_->messageArea());
    controlsLayout->addWidget(new FittingScrollArea(controls_, Qt::Vertical), 1);
    auto* controlsDock = new QDockWidget(tr("Experiment"), this);
    controlsDock->setObjectName("controlsDock");
    controlsDock->setWidget(controlsBody);
    controlsDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetClosable |
                              QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, controlsDock);

    lesson_ = new QTextBrowser;
    lesson_->setOpenExternalLinks(true);
    lesson_->setToolTip(tr("What this experiment shows and what to look at"));
    auto* lessonDock = new QDockWidget(tr("Lesson"), this);
    lessonDock->setObjectName("lessonDock");
    lessonDock->setWidget(lesson_);
    addDockWidget(Qt::LeftDockWidgetArea, lessonDock);
    resizeDocks({controlsDock, lessonDock}, {640, 260}, Qt::Vertical);
    resizeDocks({controlsDock}, {360}, Qt::Horizontal);

    sweep_ = new SweepView(controller_);
    sweepDock_ = new QDockWidget(tr("Sweep"), this);
    sweepDock_->setObjectName("sweepDock");
    sweepDock_->setWidget(sweep_);
    // A tab beside the lesson: a third column of docks would not fit a 1024-pixel window.
    addDockWidget(Qt::LeftDockWidgetArea, sweepDock_);
    tabifyDockWidget(lessonDock, sweepDock_);
    // Shown by a sweep preset or Run > Sweep over a parameter; the single run keeps the room.
    sweepDock_->hide();
    dockActions_ = {controlsDock->toggleViewAction(), lessonDock->toggleViewAction(),
                    sweepDock_->toggleViewAction()};
}

void MainWindow::restoreLayout() {
    QSettings settings;
    if (settings.contains("window/geometry")) {
        restoreGeometry(settings.value("window/geometry").toByteArray());
        restoreState(settings.value("window/state").toByteArray());
        vertical_->restoreState(settings.value("window/vertical").toByteArray());
        middle_->restoreState(settings.value("window/middle").toByteArray());
        if (settings.contains("window/pipeline"))
            pipelineSplit_->restoreState(settings.value("window/pipeline").toByteArray());
        showTheoremTab(loss_->theoremChartShown());  // the box is not saved: it decides
    }
    restoreChartsOnly();
    rebuildRecentMenu();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("window/vertical", vertical_->saveState());
    settings.setValue("window/middle", middle_->saveState());
    settings.setValue("window/pipeline", pipelineSplit_->saveState());
    controller_->cancel();
    sweep_->controller()->cancel();
    event->accept();
}

int MainWindow::ganttMethodIndex() const {
    return ganttMethod_->currentIndex() < 0 ? -1 : ganttMethod_->currentData().toInt();
}

void MainWindow::listGanttMethods(const RunSnapshot& snapshot) {
    const QString previous = ganttMethod_->currentText();
    const QSignalBlocker block(ganttMethod_);
    ganttMethod_->clear();
    for (size_t i = 0; i < snapshot.runs().size(); ++i) {
        if (snapshot.result(i).timeline) {
            ganttMethod_->addItem(snapshot.label(i), static_cast<int>(i));
        }
    }
    int keep = ganttMethod_->findText(previous);
    if (showMethodOnce_ >= 0) {
        // An imported schedule: shown once its timeline is here.
        const int imported = ganttMethod_->findData(showMethodOnce_);
        if (imported >= 0) {
            keep = imported;
            showMethodOnce_ = -1;
        }
    }
    ganttMethod_->setCurrentIndex(keep >= 0 ? keep : 0);
}

void MainWindow::showPlanned(const SnapshotPtr& plan) {
    // The schedule views (Gantt, figure strip, playback range) depend only on the schedule: they
    // show the new config now. The curves and the heatmap say they are computing.
    loss_->setComputing(plan);
    theorem_->setSnapshot(plan);
    if (plan->languageModel()) samples_->setComputing();
    showSnapshotViews(plan);
    runState_->setStyleSheet(QString());
    runState_->setFullText(tr("S = %1: computing…").arg(plan->experiment.config.stages));
}

void MainWindow::showSnapshotViews(const SnapshotPtr& snapshot) {
    snapshot_ = snapshot;
    listGanttMethods(*snapshot);
    figures_->setSnapshot(snapshot);
    showGanttMethod();
    compare_->setSnapshot(snapshot);
    schedules_->setSnapshot(snapshot);
    setComparing(comparing());  // its least height for the new lanes
    // A new run's cursor jumps to its end; the Gantt chart stays where it was (a new run opens
    // on its start-up), it follows the cursor only during playback.
    const double first = gantt_->visibleFirst();
    const double last = gantt_->visibleLast();
    const bool playing = playback_->playing();
    playback_->setTotalSlots(snapshot->totalSlots, !playing);
    applyCursor(playback_->cursor());
    if (!playing) gantt_->setVisibleRange(first, last);
    showWarnings(snapshot->experiment.warnings);
    applyPendingView(*snapshot);
}

ViewState MainWindow::currentView() const {
    ViewState v;
    v.ganttMethod = ganttMethod_->currentText().toStdString();
    v.xAxis = loss_->xAxis() == LossChart::XAxis::Updates ? LossXAxis::Updates : LossXAxis::Slots;
    v.logY = loss_->logY();
    v.logX = loss_->logX();
    v.theoremChart = loss_->theoremChartShown();
    v.cursor = playback_->cursor() >= playback_->totalSlots() ? -1 : playback_->cursor();
    if (gantt_->zoomedIn()) v.ganttRange = {{gantt_->visibleFirst(), gantt_->visibleLast()}};
    if (heatmap_->zoomedIn())
        v.heatmapRange = {{heatmap_->visibleFirst(), heatmap_->visibleLast()}};
    return v;
}

void MainWindow::applyViewNow(const ViewState& view) {
    loss_->setXAxis(view.xAxis == LossXAxis::Updates ? LossChart::XAxis::Updates
                                                     : LossChart::XAxis::Slots);
    loss_->setLogY(view.logY);
    loss_->setLogX(view.logX);
    loss_->setTheoremChartShown(view.theoremChart);
}

void MainWindow::applyPendingView(const RunSnapshot& snapshot) {
    if (!pendingView_) return;
    // Only for the opened config: after an edit the view is the user's.
    if (!(snapshot.experiment.config == pendingViewConfig_)) return;
    const ViewState& view = *pendingView_;
    // Again: the loss chart picks its default scales when the quantity it shows changes (the
    // language model's loss is linear); the saved ones win.
    applyViewNow(view);
    const int method = ganttMethod_->findText(QString::fromStdString(view.ganttMethod));
    if (method >= 0 && method != ganttMethod_->currentIndex()) {
        const QSignalBlocker block(ganttMethod_);
        ganttMethod_->setCurrentIndex(method);
        showGanttMethod();
    }
    playback_->setCursor(view.cursor < 0 ? playback_->totalSlots() : view.cursor);
    // After the cursor: a zoomed Gantt chart pans to follow it, and the saved range wins.
    if (view.ganttRange) gantt_->setVisibleRange((*view.ganttRange)[0], (*view.ganttRange)[1]);
    if (view.heatmapRange && !snapshot.planOnly) {
        heatmap_->setVisibleRange((*view.heatmapRange)[0], (*view.heatmapRange)[1]);
    }
    // Kept until the run's own results are shown: they replace the planned views.
    if (!snapshot.planOnly) {
        pendingView_.reset();
        resultsShowSavedView_ = true;
    }
}

void MainWindow::showWarnings(const std::vector<std::string>& warnings) {
    QStringList lines;
    for (const std::string& w : warnings) lines << QStringLiteral("⚠ ") + QString::fromStdString(w);
    warnings_->setFullText(lines.join(QStringLiteral("  ")));
    warnings_->setVisible(!lines.isEmpty());
}

void MainWindow::showResults(const SnapshotPtr& snapshot) {
    QElapsedTimer clock;
    clock.start();
    loss_->setSnapshot(snapshot);
    theorem_->setSnapshot(snapshot);
    samples_->setSnapshot(snapshot);
    showSamplesTab(snapshot->lmProblem() != nullptr);
    resultsShowSavedView_ = false;
    showSnapshotViews(snapshot);
    int diverged = 0;
    for (size_t i = 0; i < snapshot->runs().size(); ++i) {
        if (snapshot->result(i).divergence.diverged) ++diverged;
    }
    const int methods = static_cast<int>(snapshot->runs().size());
    QString text = (methods == 1 ? tr("1 method ran in %1 ms on %2")
                                 : tr("%1 methods ran in %2 ms on %3").arg(methods))
                       .arg(qRound(snapshot->seconds * 1000.0))
                       .arg(QString::fromStdString(snapshot->experiment.backendName));
    if (diverged > 0)
        text += tr(" — %n diverged (its curve stops where it blew up)", nullptr, diverged);
    lastUpdateMs_ = clock.nsecsElapsed() / 1e6;
    status(text + tr(", charts updated in %1 ms").arg(qRound(lastUpdateMs_)));
}

void MainWindow::showGanttMethod() {
    const int index = ganttMethodIndex();
    gantt_->setExportTitle(index >= 0 ? snapshot_->label(static_cast<size_t>(index)) : QString());
    // The chart's axis counts the playback's slots (a shorter method shows "finished" after it).
    gantt_->setPlaybackSlots(snapshot_ ? snapshot_->totalSlots : 0);
    gantt_->setTimeline(index >= 0 ? timelineOf(snapshot_, static_cast<size_t>(index)) : nullptr,
                        index >= 0 ? delaysOf(snapshot_, static_cast<size_t>(index)) : nullptr);
    fitGanttLanes();
    memory_->setSnapshot(snapshot_, index);
    // The heatmap follows the Gantt's method when it has delays, else the first that has.
    heatmapMethod_ = -1;
    if (snapshot_ && snapshot_->planOnly) {
        // The delays are known, but the heatmap is the run's: it follows when the run ends.
        heatmap_->setComputing();
        afterCorrection_->hide();
        heatmapTitle_->setText(tr("<b>Staleness</b> — computing…"));
        applyCursor(playback_->cursor());
        return;
    }
    if (snapshot_) {
        if (index >= 0 && snapshot_->result(static_cast<size_t>(index)).delays) {
            heatmapMethod_ = index;
        } else {
            for (size_t i = 0; i < snapshot_->runs().size() && heatmapMethod_ < 0; ++i) {
                if (snapshot_->result(i).delays) heatmapMethod_ = static_cast<int>(i);
            }
        }
    }
    const auto shown = static_cast<size_t>(std::max(heatmapMethod_, 0));
    const RunResult* shownResult = heatmapMethod_ >= 0 ? &snapshot_->result(shown) : nullptr;
    // Effective delays (after correction) only where a corrector changed which updates land.
    const bool hasEffective = shownResult && shownResult->effectiveDelays;
    const bool effective = hasEffective && afterCorrection_->isChecked();
    afterCorrection_->setVisible(hasEffective);
    const auto* shownTimeline = shownResult ? &shownResult->timeline : nullptr;
    heatmap_->setDelays(heatmapMethod_ < 0 ? nullptr
                        : effective        ? effectiveDelaysOf(snapshot_, shown)
                                           : delaysOf(snapshot_, shown),
                        !effective && shownTimeline && *shownTimeline &&
                            pipeDreamFormulaApplies((*shownTimeline)->params));
    const QString which = !hasEffective ? QString()
                          : effective   ? tr("after correction")
                                        : tr("before correction");
    heatmap_->setExportTitle(heatmapMethod_ < 0 ? QString()
                             : which.isEmpty()  ? snapshot_->label(shown)
                                                : snapshot_->label(shown) + " — " + which);
    QString title = tr("<b>Staleness</b>");
    if (heatmapMethod_ >= 0) {
        title += QStringLiteral(" — ") + snapshot_->label(shown).toHtmlEscaped();
        if (!which.isEmpty()) title += QStringLiteral(" — ") + which;
    } else if (snapshot_) {
        title += tr(" — no delay table (LocalSGD replicas are never stale; RPD draws its delays)");
    }
    heatmapTitle_->setText(title);
    applyCursor(playback_->cursor());
}

int MainWindow::slotAfterUpdates(long long updates) const {
    if (!snapshot_ || heatmapMethod_ < 0) return -1;
    const MethodRun& run = snapshot_->runs()[static_cast<size_t>(heatmapMethod_)];
    if (updates <= 0 || run.updateSlot.empty()) return 0;
    // The cursor after the slot of the update-th update: exactly `updates` updates done.
    const size_t k = std::min(static_cast<size_t>(updates), run.updateSlot.size());
    return run.updateSlot[k - 1] + 1;
}

void MainWindow::showPartial() {
    const SnapshotPtr plan = controller_->livePlan();
    double slotRange = 0.0;
    double updates = 0.0;
    if (plan) {
        slotRange = plan->totalSlots;
        updates = static_cast<double>(plan->experiment.budget.updateBudget);
        for (const MethodRun& o : plan->experiment.methods) {
            if (o.pipeline()) {
                updates = std::max(
                    updates, static_cast<double>(o.schedule.microbatches) * o.schedule.stages);
            }
        }
    }
    loss_->setLive(controller_->liveCurves(), slotRange, updates);
    runState_->setStyleSheet(QString());
    runState_->setFullText(
        tr("running: %1% — the loss curves fill in as the methods compute; the "
           "heatmap follows when the run is done")
            .arg(static_cast<int>(std::floor(controller_->liveFraction() * 100.0))));
}

void MainWindow::applyCursor(int slot) {
    gantt_->setCursorSlot(slot);
    loss_->setCursorSlot(slot);
    theorem_->setCursorSlot(slot);
    figures_->setCursorSlot(slot);  // says "whole run" while the cursor is before the end
    if (snapshot_ && heatmapMethod_ >= 0) {
        heatmap_->setCursorUpdate(
            snapshot_->runs()[static_cast<size_t>(heatmapMethod_)].updatesBefore(slot), slot);
    }
}

bool MainWindow::loadPreset(const QString& id, QString* error) {
    try {
        Preset p = pipelens::ui::loadPreset(id);
        gantt_->selectMicrobatch(-1);  // New or another preset: another experiment
        controller_->setConfig(p.config);
        controls_->resetStepScale();  // the preset's own γ
        if (p.sweep) {
            // The paper's figure is a sweep: run it and show it (the first point runs above).
            sweep_->openSweep(*p.sweep, p.metric, true);
            showSweepView();
        }
        lesson_->setMarkdown(QStringLiteral("## %1\n\n%2").arg(p.title, p.lesson));
        // The lesson in front, unless the preset is a sweep: its chart is what it shows.
        // Deferred, as showSweepView's: a tab raised before the window's layout has placed it
        // would otherwise lose to one raised earlier.
        if (!p.sweep) {
            if (auto* dock = qobject_cast<QDockWidget*>(lesson_->parentWidget())) {
                QTimer::singleShot(0, dock, &QDockWidget::raise);
            }
        }
        presetId_ = id;
        currentFile_.clear();
        setWindowModified(false);
        updateTitle();
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        status(QString::fromStdString(e.what()), true);
        return false;
    }
}

bool MainWindow::openConfig(const QString& path, QString* error) {
    try {
        ExperimentConfig config = ExperimentConfig::fromFile(path.toStdString());
        const std::optional<ViewState> view = std::move(config.view);
        config.view.reset();  // the view is the window's, not the run's
        if (view) applyViewNow(*view);
        gantt_->selectMicrobatch(-1);
        controller_->setConfig(config);
        pendingView_ = view;
        pendingViewConfig_ = controller_->config();
        controls_->resetStepScale();
        currentFile_ = QFileInfo(path).absoluteFilePath();
        presetId_.clear();
        lesson_->setMarkdown(tr("## %1\n\nAn experiment opened from `%2`. The presets in the "
                                "**Presets** menu each come with a lesson.")
                                 .arg(QString::fromStdString(controller_->config().name), path));
        addRecentFile(currentFile_);
        setWindowModified(false);
        updateTitle();
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        status(QString::fromStdString(e.what()), true);
        return false;
    }
}

bool MainWindow::showFinishedRun(ExperimentResult result, double seconds, QString* error) {
    try {
        const std::optional<ViewState> view = std::move(result.config.view);
        result.config.view.reset();
        if (view) applyViewNow(*view);
        const QString name = QString::fromStdString(result.config.name);
        // Set first: the results arrive (and take the saved view) within adoptResult.
        pendingView_ = view;
        pendingViewConfig_ = ExperimentController::validated(result.config);
        controller_->adoptResult(std::move(result), seconds);
        controls_->resetStepScale();
        currentFile_.clear();
        presetId_.clear();
        lesson_->setMarkdown(tr("## %1\n\nA run made by `pipelens-cli`.").arg(name));
        setWindowModified(false);
        updateTitle();
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool MainWindow::saveConfig(const QString& path, QString* error) {
    try {
        ExperimentConfig c = ExperimentController::configFromText(controller_->configAsText());
        c.view = currentView();  // opens as it looks now
        writeFileAtomically(path.toStdString(), c.toJson().dump(2) + "\n");
        currentFile_ = QFileInfo(path).absoluteFilePath();
        addRecentFile(currentFile_);
        setWindowModified(false);
        updateTitle();
        status(tr("Saved %1").arg(path));
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        status(QString::fromStdString(e.what()), true);
        return false;
    }
}

bool MainWindow::waitForResults(int timeoutMs, QString* error) {
    QElapsedTimer clock;
    clock.start();
    while (controller_->running() || !controller_->latest() ||
           controller_->latest()->generation != controller_->generation()) {
        if (clock.elapsed() > timeoutMs) {
            if (error) *error = tr("no results after %1 s").arg(timeoutMs / 1000.0);
            return false;
        }
        QEventLoop loop;
        QTimer::singleShot(20, &loop, &QEventLoop::quit);
        connect(controller_, &ExperimentController::resultsReady, &loop, &QEventLoop::quit);
        QString failure;
        connect(controller_, &ExperimentController::runFailed, &loop,
                [&](quint64, const QString& m) {
                    failure = m;
                    loop.quit();
                });
        loop.exec();
        if (!failure.isEmpty()) {
            if (error) *error = failure;
            return false;
        }
    }
    if (!resultsShowSavedView_) playback_->toEnd();
    return true;
}

void MainWindow::showSweepView() {
    const bool wasShown = sweepDock_->isVisible();
    sweepDock_->show();
    sweepDock_->raise();
    QTimer::singleShot(0, sweepDock_, &QDockWidget::raise);  // again once the layout has it
    if (wasShown) return;
    // The sweep's chart needs more height than the lesson: give its tab the larger share.
    auto* controlsDock = findChild<QDockWidget*>("controlsDock");
    const int height = centralWidget()->height();
    if (controlsDock && height > 0)
        resizeDocks({controlsDock, sweepDock_}, {height * 2 / 5, height * 3 / 5}, Qt::Vertical);
}

bool MainWindow::waitForSweep(int timeoutMs, QString* error) {
    QElapsedTimer clock;
    clock.start();
    while (sweep_->controller()->running()) {
        if (clock.elapsed() > timeoutMs) {
            if (error) *error = tr("the sweep did not end within %1 s").arg(timeoutMs / 1000.0);
            return false;
        }
        QEventLoop loop;
        QTimer::singleShot(50, &loop, &QEventLoop::quit);
        loop.exec();
    }
    if (sweep_->controller()->state() == SweepController::State::Failed) {
        if (error) *error = sweep_->controller()->error();
        return false;
    }
    return true;
}

bool MainWindow::exportWindow(const QString& path, double scale, QString* error) {
    if (path.endsWith(".svg", Qt::CaseInsensitive)) return exportWidgetSvg(this, path, error);
    return exportWidgetPng(this, path, scale, error);
}

void MainWindow::updateTitle() {
    const QString name =
        currentFile_.isEmpty()
            ? (presetId_.isEmpty() ? QString::fromStdString(controller_->config().name)
                                   : presetTitle(presetId_))
            : QFileInfo(currentFile_).fileName();
    setWindowTitle(tr("%1[*] — PipeLens").arg(name));
}

QString MainWindow::statusText() const {
    return runState_->fullText();
}

void MainWindow::status(const QString& message, bool error) {
    runState_->setStyleSheet(error ? "color: #b00020;" : QString());
    runState_->setFullText(message);
}

void MainWindow::showTheoremTab(bool on) {
    const int at = besideLoss_->indexOf(theorem_);
    if (on && at < 0) besideLoss_->addTab(theorem_, tr("Theorem"));
    if (!on && at >= 0) besideLoss_->removeTab(at);
    theorem_->setVisible(on);
    if (on) besideLoss_->setCurrentWidget(theorem_);
}

void MainWindow::showSamplesTab(bool on) {
    const int at = besideLoss_->indexOf(samples_);
    if (on && at < 0) {
        besideLoss_->addTab(samples_, tr("Samples"));
        // The text is what a language model's run is for: in sight when it first appears.
        besideLoss_->setCurrentWidget(samples_);
    }
    if (!on && at >= 0) besideLoss_->removeTab(at);
    // The tab widget shows a page when it is current; shown by hand, it would sit on top of
    // whichever tab is (the loss chart's, on a small screen).
    if (!on) samples_->hide();
}

void MainWindow::showLmComputing() {
    // The schedule comes with the plan, once the worker has read the corpus: until then the
    // schedule views show no earlier run's timeline or figures.
    {
        const QSignalBlocker block(ganttMethod_);
        ganttMethod_->clear();
    }
    gantt_->showPending(tr("Planning the language model's schedule (reading the corpus)…"));
    compare_->setSnapshot(nullptr);
    schedules_->setSnapshot(nullptr);
    figures_->showPending(tr("Planning the language model's schedule…"));
    memory_->showPending(tr("Planning the language model's schedule…"));
    loss_->setComputing(nullptr);
    heatmap_->setComputing();
    heatmapTitle_->setText(tr("<b>Staleness</b> — computing…"));
    samples_->setComputing();
    showSamplesTab(true);
    runState_->setStyleSheet(QString());
    runState_->setFullText(tr("Language model: reading the corpus and planning…"));
}

void MainWindow::onTheoremChart(bool on) {
    showTheoremTab(on);
    if (!on || controller_->config().sampling.gradNormEvery > 0) return;
    // The bound is compared with the running mean of ‖∇f‖²: sample it about 200 times a run.
    const long long updates = snapshot_ ? snapshot_->experiment.budget.updateBudget : 2000;
    const long long every = std::max<long long>(1, updates / 200);
    const QString error =
        controller_->tryModify([every](ExperimentConfig& c) { c.sampling.gradNormEvery = every; });
    if (!error.isEmpty()) status(error, true);
}

}  // namespace pipelens::ui

#pragma once
// The workbench window: controls on the left, the lesson below them (the Sweep view a tab
// beside it), and in the middle the pipeline Gantt chart with the memory per stage beside it,
// the loss curves beside the staleness
// heatmap (and, asked for, the theorem chart in a tab beside it), the strip of figures and the
// playback bar. It fits 1024 x 700: what does not fit scrolls. It wires the
// ExperimentController (the one owner of the config) to the views; the views only read.
#include <QMainWindow>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <optional>

#include "experiment/config/view_state.hpp"
#include "models/run_snapshot.hpp"

class QAction;
class QCheckBox;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTextBrowser;
class QToolButton;

namespace pipelens::ui {

class ComparisonGantt;
class ControlsPanel;
class ElidingLabel;
class ExperimentController;
class FittingScrollArea;
class FigureStrip;
class GanttChart;
class LossChart;
class MemoryChart;
class PlaybackBar;
class ScheduleComparisonView;
class SamplesView;
class StalenessHeatmap;
class SweepView;
class TheoremChart;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ExperimentController* controller() const { return controller_; }
    ControlsPanel* controls() const { return controls_; }
    GanttChart* gantt() const { return gantt_; }
    // The Pipeline area's "Compare" view: every pipeline method's timeline on one slot axis.
    ComparisonGantt* comparisonGantt() const { return compare_; }
    // Whether the Pipeline area shows the comparison (true) or one method's Gantt chart.
    bool comparing() const;
    void setComparing(bool on);
    StalenessHeatmap* heatmap() const { return heatmap_; }
    // "after correction", beside the heatmap's title: shown only where the heatmap's method has
    // effective delays (RunResult::effectiveDelays, a corrector that accumulates); ticked, the
    // heatmap shows them instead of the schedule's delays, and its title says which.
    QCheckBox* afterCorrectionBox() const { return afterCorrection_; }
    // Memory per stage (or device) of the Gantt chart's method, beside the Gantt chart, with
    // the memory budget.
    MemoryChart* memoryChart() const { return memory_; }
    LossChart* lossChart() const { return loss_; }
    TheoremChart* theoremChart() const { return theorem_; }
    FigureStrip* figureStrip() const { return figures_; }
    PlaybackBar* playback() const { return playback_; }
    SweepView* sweepView() const { return sweep_; }
    // Text sampled from each method's final model (a tab beside the heatmap for the language
    // model only).
    SamplesView* samplesView() const { return samples_; }
    QComboBox* ganttMethodField() const { return ganttMethod_; }
    QTextBrowser* lessonView() const { return lesson_; }
    ElidingLabel* warningsLabel() const { return warnings_; }
    // Index (in the snapshot) of the method whose Gantt / heatmap are shown; -1 if none.
    int ganttMethodIndex() const;
    int heatmapMethodIndex() const { return heatmapMethod_; }
    // Milliseconds the window took to take in the last results (all views).
    double lastUpdateMs() const { return lastUpdateMs_; }

    // Loads a built-in preset / a config file; false (and `error`) if it cannot be loaded.
    bool loadPreset(const QString& id, QString* error = nullptr);
    bool openConfig(const QString& path, QString* error = nullptr);
    bool saveConfig(const QString& path, QString* error = nullptr);
    // Shows a run the command-line tool made (its figures, its animations) without running it
    // again: its config is the window's, its saved view applied. False (and `error`) if its
    // config is refused.
    bool showFinishedRun(ExperimentResult result, double seconds, QString* error = nullptr);
    // What a saved experiment keeps of the view: the Gantt chart's method, the loss chart's x
    // axis and log scales, the theorem chart, the playback cursor, the Gantt and heatmap zoom.
    ViewState currentView() const;
    QString currentFile() const { return currentFile_; }

    // Waits for the current config's results (up to `timeoutMs`), moves playback to the end
    // (unless an opened file's saved view put the cursor elsewhere).
    bool waitForResults(int timeoutMs, QString* error = nullptr);
    // Waits for the Sweep view's sweep in flight, if any, to end (up to `timeoutMs`).
    bool waitForSweep(int timeoutMs, QString* error = nullptr);
    void showSweepView();
    // The whole window as PNG at `scale` times its size, or as SVG (by the file suffix).
    bool exportWindow(const QString& path, double scale, QString* error = nullptr);
    // One view as the File > Export menu writes it: `what` is window, gantt, heatmap, loss,
    // theorem, sweep or figures; `format` png (at `scale`), svg or csv (the window: by suffix).
    bool exportView(const QString& what, const QString& format, const QString& path, double scale,
                    QString* error = nullptr);
    // The results folder the CLI writes (summary.json, CSVs, timelines), written as `folder`
    // itself: an empty or new folder, or one PipeLens wrote (anything else is refused, unchanged).
    bool exportAllResults(const QString& folder, QString* error = nullptr);
    // File > Export > Trace for Perfetto without its dialog: every pipeline method's timeline
    // (with the loss once run) as Chrome trace JSON at `path`, written atomically.
    bool exportTrace(const QString& path, QString* error = nullptr);
    // File > Import schedule… without its dialog: adds {"method": "imported", "schedule_file":
    // path, "update": "sync"} to the experiment with S set to the file's stages, and runs it
    // (the Gantt chart shows it once planned). A file or config the engine refuses changes
    // nothing: false, and `error` holds the engine's message.
    bool importSchedule(const QString& path, QString* error = nullptr);
    // The status bar's run line, whole (not elided), e.g. "3 methods ran in 40 ms on cpu".
    QString statusText() const;

    // "Charts only" (View menu, Ctrl+Shift+F): the Experiment, Lesson and Sweep panels folded
    // away, the charts given the whole window; off brings back the panels that were open. The
    // choice is remembered (QSettings).
    bool chartsOnly() const;
    void setChartsOnly(bool on);
    QAction* chartsOnlyAction() const { return chartsOnly_; }
    // True when the central area is too small for charts side by side (a 1024 x 700 window):
    // the loss chart, the heatmap and the figure strip are then tabs of one full-width tab
    // widget under the Gantt chart.
    bool chartsTabbed() const;

  protected:
    void closeEvent(QCloseEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void buildCentral();
    // The Gantt chart's head row: its method, "Start-up" and "Fit all", and a hint on zoom.
    QWidget* ganttHeader();
    void buildDocks();
    void buildMenus();
    void restoreLayout();
    void restoreChartsOnly();
    // Side by side or tabbed, for the central area's size (window_layout.cpp).
    void arrangeCharts();
    // Tabbed: the loss plot at least 256 px high, the Gantt chart the rest (what it needs at
    // most).
    void balanceTabbedSplit();
    // The Gantt chart's least height: its stages at least 16 px high up to S = 16.
    void fitGanttLanes();
    void showResults(const SnapshotPtr& snapshot);
    void showPlanned(const SnapshotPtr& plan);
    void listGanttMethods(const RunSnapshot& snapshot);
    // Gantt, heatmap, figure strip, playback range and warnings from a planned or finished run.
    void showSnapshotViews(const SnapshotPtr& snapshot);
    void showWarnings(const std::vector<std::string>& warnings);
    void showGanttMethod();
    // An opened file's view: axes and scales at once, the rest when its run's views arrive.
    void applyViewNow(const ViewState& view);
    void applyPendingView(const RunSnapshot& snapshot);
    void applyCursor(int slot);
    void showPartial();  // live curves and progress of the run in flight
    // Playback cursor (slots done) at which the heatmap's method has done `updates` updates.
    int slotAfterUpdates(long long updates) const;
    void updateTitle();
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void exportChart(const QString& what, const QString& format);
    void copyConfigText();
    void pasteConfigText();
    void onTheoremChart(bool on);
    void showTheoremTab(bool on);
    void showSamplesTab(bool on);
    // A language model's config changed: its plan needs the corpus and comes from the worker;
    // until then the run's views say they are computing.
    void showLmComputing();
    void status(const QString& message, bool error = false);

    ExperimentController* controller_;
    ControlsPanel* controls_ = nullptr;
    GanttChart* gantt_ = nullptr;
    ComparisonGantt* compare_ = nullptr;           // the Pipeline area's "Compare" page
    ScheduleComparisonView* schedules_ = nullptr;  // the "Schedules" tab: methods on equal terms
    QStackedWidget* pipelineStack_ = nullptr;      // gantt_ or compare_
    QToolButton* compareButton_ = nullptr;
    StalenessHeatmap* heatmap_ = nullptr;
    MemoryChart* memory_ = nullptr;       // beside the Pipeline area
    QSplitter* pipelineSplit_ = nullptr;  // the Pipeline area | memory_
    // The method an import added: the Gantt chart shows it when its schedule arrives.
    int showMethodOnce_ = -1;
    LossChart* loss_ = nullptr;
    TheoremChart* theorem_ = nullptr;  // shown by the loss chart's "theorem chart" box
    SamplesView* samples_ = nullptr;   // a tab of besideLoss_ for the language model
    FigureStrip* figures_ = nullptr;
    PlaybackBar* playback_ = nullptr;
    SweepView* sweep_ = nullptr;
    QDockWidget* sweepDock_ = nullptr;
    QComboBox* ganttMethod_ = nullptr;
    // The opened file's view and config: applied to that config's views until its run's results
    // have been shown (an edit before then leaves the view as the user made it).
    std::optional<ViewState> pendingView_;
    ExperimentConfig pendingViewConfig_;
    bool resultsShowSavedView_ = false;  // the latest results are shown at a file's saved cursor
    QLabel* heatmapTitle_ = nullptr;
    QCheckBox* afterCorrection_ = nullptr;
    QTextBrowser* lesson_ = nullptr;
    QSplitter* vertical_ = nullptr;
    QSplitter* middle_ = nullptr;
    QTabWidget* besideLoss_ = nullptr;        // the heatmap and, asked for, the theorem chart
    FittingScrollArea* stripArea_ = nullptr;  // the figure strip's scroll area
    QAction* chartsOnly_ = nullptr;
    QList<QDockWidget*> foldedDocks_;  // the panels "Charts only" folded away
    ElidingLabel* runState_ = nullptr;
    ElidingLabel* notices_ = nullptr;
    ElidingLabel* warnings_ = nullptr;  // settings that do not do what they say (run_warnings)
    QMenu* recentMenu_ = nullptr;
    QList<QAction*> dockActions_;
    SnapshotPtr snapshot_;
    int heatmapMethod_ = -1;
    int selectionStages_ = 0;  // S of the pipeline the Gantt chart's selection belongs to
    double lastUpdateMs_ = 0.0;
    QString currentFile_;
    QString presetId_;
};

}  // namespace pipelens::ui

// How the window arranges its charts for the room it has (MainWindow's layout half):
// - "Charts only" (View menu, Ctrl+Shift+F) folds the Experiment, Lesson and Sweep panels away
//   and brings back the ones that were open; the choice is kept in QSettings.
// - A roomy central area shows the loss chart beside the staleness heatmap and the figure strip
//   under them. A small one (a 1024 x 700 laptop) turns the loss chart, the heatmap (and the
//   theorem chart or samples when shown) and the figure strip into tabs of one full-width tab
//   widget under the Gantt chart: each chart gets the whole width instead of a third of it.
#include <QAbstractScrollArea>
#include <QAction>
#include <QChart>
#include <QDockWidget>
#include <QEvent>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <algorithm>
#include <cmath>

#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/theorem_chart.hpp"
#include "controls/fitting_scroll_area.hpp"
#include "main_window.hpp"

namespace pipelens::ui {
namespace {

// Below these central sizes the charts are tabs: side by side, the loss chart would get less
// than about 560 px of width, or the strip would leave the loss plot less than 250 px of height.
constexpr int kTabbedBelowWidth = 940;
constexpr int kTabbedBelowHeight = 800;
// About the least width the tabbed arrangement needs.
constexpr int kTabbedLeastWidth = 520;
// Tabbed, the tab widget gets this much height (the loss plot then has at least 250 px); the
// Gantt chart the rest, scrolling when its stages need more.
constexpr int kTabsHeight = 470;
// Tabbed, the loss plot gets at least this height before the Gantt chart gets the rest.
constexpr int kLossPlotHeight = 256;
// The Gantt chart's stages stay at least this high up to this S (beyond, they share the room).
constexpr double kLaneHeight = 16.0;
constexpr int kReadableLanesUpTo = 16;

const char* const kChartsOnlyKey = "window/chartsOnly";

}  // namespace

bool MainWindow::chartsOnly() const {
    return chartsOnly_ && chartsOnly_->isChecked();
}

void MainWindow::setChartsOnly(bool on) {
    if (chartsOnly_->isChecked() != on) {
        chartsOnly_->setChecked(on);  // toggled() comes back here
        return;
    }
    const QList<QDockWidget*> docks =
        findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly);
    if (on) {
        foldedDocks_.clear();
        for (QDockWidget* dock : docks) {
            if (dock->isVisible()) {
                foldedDocks_ << dock;
                dock->hide();
            }
        }
    } else {
        // The panels that were open before; the Experiment panel at least (a window started in
        // charts-only mode folded nothing yet).
        if (foldedDocks_.isEmpty()) {
            for (QDockWidget* dock : docks)
                if (dock->objectName() == "controlsDock" || dock->objectName() == "lessonDock")
                    foldedDocks_ << dock;
        }
        for (QDockWidget* dock : foldedDocks_) dock->show();
        foldedDocks_.clear();
    }
    QSettings().setValue(kChartsOnlyKey, on);
}

void MainWindow::restoreChartsOnly() {
    if (QSettings().value(kChartsOnlyKey, false).toBool()) setChartsOnly(true);
}

bool MainWindow::chartsTabbed() const {
    return besideLoss_->indexOf(loss_) >= 0;
}

void MainWindow::arrangeCharts() {
    const QWidget* central = centralWidget();
    if (!central) return;
    const bool tabbed =
        central->width() < kTabbedBelowWidth || central->height() < kTabbedBelowHeight;
    // On its tab the strip is a grid of as many whole figures a row as the width holds, rows
    // scrolling; under the charts it is one row scrolling sideways.
    figures_->setWrapped(tabbed);
    stripArea_->setScrolls(tabbed ? Qt::Vertical : Qt::Horizontal);
    // Side by side the charts ask for more width than a small window has; the window must not
    // hold on to that minimum (it would refuse to shrink, and the switch to tabs would never
    // come). Side by side the central area asks for no more than the tabs need; tabbed, for
    // what they need.
    vertical_->setMinimumWidth(tabbed ? 0 : kTabbedLeastWidth);
    if (tabbed == chartsTabbed()) return;
    const bool theoremWasCurrent = besideLoss_->currentWidget() == theorem_;
    if (tabbed) {
        // One full-width tab widget under the Gantt chart: the loss chart first (it is what a
        // run is for), the strip last.
        besideLoss_->insertTab(0, loss_, tr("Loss"));
        besideLoss_->addTab(stripArea_, tr("Figures"));
        besideLoss_->setTabBarAutoHide(false);
        const int h = vertical_->height();
        vertical_->setSizes({std::max(120, h - kTabsHeight), std::min(h, kTabsHeight)});
        // Measured once the tabs are laid out: the loss chart's own margins, legend and fields.
        QTimer::singleShot(0, this, &MainWindow::balanceTabbedSplit);
    } else {
        middle_->insertWidget(0, loss_);
        middle_->setStretchFactor(0, 3);
        middle_->setStretchFactor(1, 2);
        vertical_->addWidget(stripArea_);
        vertical_->setStretchFactor(2, 3);
        besideLoss_->setTabBarAutoHide(true);
        const int h = vertical_->height();
        vertical_->setSizes({h * 23 / 88, h * 42 / 88, h * 23 / 88});
        middle_->setSizes({middle_->width() * 3 / 5, middle_->width() * 2 / 5});
    }
    if (theoremWasCurrent)
        besideLoss_->setCurrentWidget(theorem_);
    else if (tabbed)
        besideLoss_->setCurrentWidget(loss_);
    // Halfway through the move the layout may ask for more room than either arrangement needs
    // and grow the window; the size the person (or --size) chose wins.
    if (!isMaximized() && !isFullScreen()) {
        QTimer::singleShot(0, this, [this, want = size()] {
            if (size() != want) resize(want);
        });
    }
}

void MainWindow::balanceTabbedSplit() {
    if (!chartsTabbed() || !loss_->isVisible()) return;
    const int h = vertical_->height() - vertical_->handleWidth();
    const QList<int> sizes = vertical_->sizes();
    if (sizes.size() != 2 || h <= 0) return;
    // The tabs: the loss plot at kLossPlotHeight plus everything the loss chart draws around it.
    const int lossChrome = loss_->height() - static_cast<int>(loss_->chart()->plotArea().height());
    const int tabs = std::min(h, sizes[1] - loss_->height() + lossChrome + kLossPlotHeight + 2);
    // The Pipeline area: no more than its header and its readable stages need.
    const auto* area = findChild<QAbstractScrollArea*>("pipelineArea");
    if (!area) return;
    const int pipelineNeeds =
        sizes[0] - area->height() + gantt_->minimumHeight() + 2 * area->frameWidth();
    const int pipeline = std::min(h - tabs, std::max(pipelineNeeds, 0));
    vertical_->setSizes({pipeline, h - pipeline});
}

void MainWindow::fitGanttLanes() {
    const std::shared_ptr<const Timeline> timeline = gantt_->timeline();
    const int lanes = timeline ? std::min(timeline->params.stages, kReadableLanesUpTo) : 0;
    const double plot = gantt_->plotRect().height();
    if (lanes == 0) {
        gantt_->setMinimumHeight(0);
    } else if (gantt_->isVisible() && plot > 0) {
        // What the chart draws besides its stages (legend, phases, axis) plus the stages at
        // their least: taller than the room, the Pipeline area scrolls.
        const double chrome = gantt_->height() - plot;
        const int least = static_cast<int>(std::ceil(chrome + kLaneHeight * lanes));
        if (least == gantt_->minimumHeight()) return;
        gantt_->setMinimumHeight(least);
        // Other stages: the split between the Gantt chart and the tabs follows.
        QTimer::singleShot(0, this, &MainWindow::balanceTabbedSplit);
    }
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    // After the resize, not inside it: a layout changed in the middle of the window's own
    // layout pass would make the window grow.
    if (watched == centralWidget() && event->type() == QEvent::Resize)
        QMetaObject::invokeMethod(this, &MainWindow::arrangeCharts, Qt::QueuedConnection);
    if (watched == gantt_ && (event->type() == QEvent::Resize || event->type() == QEvent::Show))
        fitGanttLanes();
    return QMainWindow::eventFilter(watched, event);
}

}  // namespace pipelens::ui

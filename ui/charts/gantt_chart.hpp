#pragma once
// The pipeline Gantt chart: stages (rows) by slots (columns). Forwards and backwards in distinct
// colours with microbatch numbers (a split backward's input and weight gradients, I and W, in
// colours of their own), idle cells hatched, LocalSGD averaging barriers, optimizer-step ends of
// the program schedules, startup / steady / drain regions, a cursor at the current slot. Where a
// device holds several stages (imported interleaved or V-shape schedules) the rows are devices
// and each cell names its stage. Zoom (wheel) and pan (drag); when cells
// get narrower than a pixel they are aggregated (a column shows the mix of F/B/idle it covers).
// A click on a cell selects its microbatch: its F and B on every stage are outlined with the
// weight version each read. Zoomed in, the view follows the cursor during playback.
#include <memory>

#include "charts/gantt_selection.hpp"
#include "charts/range_chart.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

namespace pipelens::ui {

// The Gantt chart's opening view, in slots, of a run of `totalSlots` slots with `params`: about
// three pipeline crossings (a microbatch crosses in S forwards and S backwards, so 3·S·(cF + cB)/2
// slots), at least 24, at most the run. The animation's window has the same width.
int ganttStartUpSlots(const ScheduleParams& params, int totalSlots);

class GanttChart : public RangeChart {
    Q_OBJECT
  public:
    explicit GanttChart(QWidget* parent = nullptr);
    ~GanttChart() override;

    // The timeline to draw; `delays` (optional, single-replica runs) gives the weight version
    // read by each forward for the hover readout. Passing nullptr clears the chart.
    void setTimeline(std::shared_ptr<const Timeline> timeline,
                     std::shared_ptr<const DelayTable> delays = nullptr);
    std::shared_ptr<const Timeline> timeline() const;
    // No timeline, and `text` where it would be (a run whose schedule is still being planned,
    // such as the language model's while its corpus loads); setTimeline ends it.
    void showPending(const QString& text);
    // What the chart says while it has no timeline.
    QString emptyText() const;

    // The experiment's length in slots, the playback's range (RunSnapshot::totalSlots): a
    // method that ends sooner (sequential SGD fits fewer slots into the budget than PipeDream)
    // shows the slots after its run as "finished", so the chart's axis and cursor count the
    // same slots as the playback bar. 0 (the default): the method's own run.
    void setPlaybackSlots(int count);
    int playbackSlots() const;
    // The slots the x axis spans: the method's run, or the playback's range if longer.
    int shownSlots() const;

    // The opening view of a new run: slot 0 to startUpSlots(), the start-up and the first
    // steady rounds with their cells numbered (not the whole run squeezed into a stripe).
    // fitAll() shows the whole run.
    void showStartUp();
    // About three pipeline rounds: 3·S slots (times the mean op cost), at least 24, at most the
    // run.
    int startUpSlots() const;

    // Slots [0, cursor) are drawn as done; the cursor line sits at `slot`. -1 shows everything.
    // When zoomed in (part of the run shown) and the cursor leaves the view or nears its right
    // edge, the view pans so the cursor is a tenth of the way in: playback stays in sight.
    void setCursorSlot(int slot);
    int cursorSlot() const;
    // The legend's cursor entry as drawn on screen: "slot t", with "(faded: not yet run)" only
    // while slots after the cursor are faded; empty without a cursor.
    QString cursorLegendText() const;

    // The text shown when hovering the cell at (stage, slot): op, microbatch, weight version
    // read, stash depth on that stage at that slot; empty for an idle cell.
    QString cellDescription(int stage, int slot) const;
    // The label drawn in the cell at (stage, slot) at the chart's size and zoom: the microbatch
    // number and, for LocalSGD, its replica ("17" over "r2" in a row two lines tall, else
    // "17 r2" where the cell is wide enough, else "17"); empty for an idle or too small cell.
    QString cellLabel(int stage, int slot) const;
    // Weight copies held on `stage` during `slot` (stage from 0): microbatches whose F started at
    // or before the slot and whose B has not finished before it.
    int stashDepth(int stage, int slot) const;
    // The microbatch whose F and B are highlighted (a click on one of its cells selects it, a
    // click on an idle cell clears it); -1 for none.
    void selectMicrobatch(int microbatch);
    int selectedMicrobatch() const;
    const MicrobatchSelection& selection() const;
    // The rows: one per stage, or one per device when a device holds several stages
    // (Timeline::stageRank). Their number, the row of `stage` (from 0) and a row's title
    // ("stage 3", "device 2 (stages 2, 6)").
    int laneCount() const;
    int laneOfStage(int stage) const;
    QString laneTitle(int lane) const;
    // The cell (stage from 0, slot) under a widget position; false outside the plot. On a device
    // row the stage is the busy cell's (the row's first stage where it is idle).
    bool cellAtPosition(const QPointF& position, int* stage, int* slot) const;
    void paintChart(QPainter& painter, const QSize& size, bool vectorCells = false) const override;

    QSize sizeHint() const override;

  signals:
    void cursorSlotChanged(int slot);
    // A click (press and release without dragging) in the plot: the slot boundary nearest the
    // pointer, for the playback cursor. cursorSlotChanged also reports programmatic changes, so
    // a window that follows clicks connects this one.
    void slotClicked(int slot);

  protected:
    double extent() const override;
    QRectF plotArea() const override;
    QByteArray csv() const override;
    QString toolTipAt(const QPointF& position) const override;
    void boundaryClicked(long long boundary) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

  private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

}  // namespace pipelens::ui

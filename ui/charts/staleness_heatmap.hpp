#pragma once
// The staleness heatmap: blocks (rows) by block updates (columns), colour = the delay
// k - h(m, j) of update k's read of block j, with a colour bar, the theoretical maximum
// S^2 - S/2 beside the measured maximum and mean, and a hover readout. Columns narrower than a
// pixel are aggregated (the maximum delay they cover is drawn). The delays count block updates
// (the paper's unit, the default), optimizer steps or slots (SPEC section 2.1): setUnit, or the
// chart's context menu; the colour bar's title and the header name the unit.
#include <memory>
#include <vector>

#include "charts/range_chart.hpp"
#include "schedule/delays.hpp"

namespace pipelens::ui {

class StalenessHeatmap : public RangeChart {
    Q_OBJECT
  public:
    explicit StalenessHeatmap(QWidget* parent = nullptr);
    ~StalenessHeatmap() override;

    // `pipeDreamFormula`: whether S² − S/2 is the schedule's own steady-state maximum
    // (pipeDreamFormulaApplies); without it only the measured values are stated.
    void setDelays(std::shared_ptr<const DelayTable> delays, bool pipeDreamFormula = true);
    std::shared_ptr<const DelayTable> delays() const;
    // The unit the colours, the header and the CSV count (block updates by default); kept
    // across setDelays.
    void setUnit(DelayUnit unit);
    DelayUnit unit() const;
    // No delays, and the message says a run is computing them (never a previous run's picture);
    // the next setDelays ends it.
    void setComputing();
    bool computing() const;
    // The run that was computing failed: no delays, and the message says so (until the next
    // setComputing or setDelays).
    void setFailed();
    bool failed() const;

    // Updates [0, cursor) are shown; -1 shows all. `slot` (optional) is the playback cursor in
    // slots, named in the header while only part of the run is shown ("up to slot 22
    // (playback)") rather than judging a part of the run as if it were all of it.
    void setCursorUpdate(long long update, int slot = -1);
    long long cursorUpdate() const;

    // The delay the heatmap shows for update k and block j in unit() (what the colour
    // encodes); -1 for a cell not shown (out of range or at/after the cursor).
    long long valueAt(long long update, int block) const;
    // Measured max and mean over the shown updates' second half, and the formula max.
    double measuredMax() const;
    double measuredMean() const;
    // NaN when the formula is not the schedule's own, or the unit is not block updates.
    double formulaMax() const;
    // The header line(s) as drawn: the measured maximum (with what it covers) and the mean.
    QString statsText() const;
    // The colour bar's title, with its unit: delays count block updates (SPEC §3: the updates
    // made between a block's read and the update that uses it).
    static QString colourBarTitle();
    // The same for any unit: "delay (optimizer steps)", "delay (slots)".
    static QString colourBarTitle(DelayUnit unit);
    // The blocks whose row is labelled, rows `rowHeight` apart, labels `textHeight` tall: from
    // block 1, evenly spaced.
    static std::vector<int> labelledBlocks(int blocks, double rowHeight, double textHeight);
    QString cellDescription(long long update, int block) const;

    // The cell under a widget position: the update whose delay the pixel column shows (the
    // largest of the updates [firstUpdate, lastUpdate] it covers) and the block (from 0).
    bool cellAtPosition(const QPointF& position, long long* update, int* block,
                        long long* firstUpdate = nullptr, long long* lastUpdate = nullptr) const;

    // Vector cells (SVG) only where they are not more than the pixels.
    void paintChart(QPainter& painter, const QSize& size, bool vectorCells = false) const override;

    QSize sizeHint() const override;

  signals:
    void unitChanged(pipelens::DelayUnit unit);
    // A click (no drag) in the plot: the number of block updates done at the pointer, for the
    // playback cursor.
    void updateClicked(long long updatesDone);

  protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    double extent() const override;
    QRectF plotArea() const override;
    QByteArray csv() const override;
    QString toolTipAt(const QPointF& position) const override;
    void boundaryClicked(long long boundary) override;

  private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

}  // namespace pipelens::ui

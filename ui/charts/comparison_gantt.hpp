#pragma once
// The stacked comparison Gantt chart: the pipeline timelines of every method of a run (PD,
// fill-drain, LocalSGD, ...) one above the other on ONE slot axis, so a longer run is visibly
// longer. Each method has a lane group (one lane per stage) headed by its name in its family's
// colour and its bubble share and peak stashed weight copies. Cells are coloured as in the
// Gantt chart (F sky blue, B orange, idle hatched). Zoom (wheel) and pan (drag) move all groups
// together. Methods without a pipeline timeline (RPD, sequential SGD) are named in a note.
#include <QString>
#include <memory>
#include <vector>

#include "charts/range_chart.hpp"
#include "models/run_snapshot.hpp"

namespace pipelens {
struct Timeline;
}

namespace pipelens::ui {

class ComparisonGantt : public RangeChart {
    Q_OBJECT
  public:
    explicit ComparisonGantt(QWidget* parent = nullptr);
    ~ComparisonGantt() override;

    // Every method of `snapshot` that has a timeline gets a lane group, in snapshot order.
    // A snapshot of other lengths opens on the start-up; null clears the chart.
    void setSnapshot(SnapshotPtr snapshot);

    // The lane groups, in snapshot order.
    int groupCount() const;
    // The snapshot index of group `group`'s method, its label, its bubble share (idle
    // stage-slots / (S x its slots), the engine's utilization) and its peak stashed weight copies
    // (the largest over its stages, the engine's Timeline::peakStash) with that stage (from 0).
    int groupMethod(int group) const;
    QString groupLabel(int group) const;
    double groupBubble(int group) const;
    int groupPeakStash(int group) const;
    int groupPeakStage(int group) const;
    // The line written under the group's name, e.g. "bubble 23.4% · peak 8 stashed weight copies
    // (stage 1) · 312 slots".
    QString groupStatsText(int group) const;
    // The methods that have no timeline, e.g. "RPD has no pipeline timeline"; empty if none.
    QString noteText() const;
    // Where lane `stage` of group `group` is drawn at the widget's size (empty if none); every
    // lane spans the same x range: slot x sits at the same x in every group.
    QRectF laneRect(int group, int stage) const;
    // The height at which every lane is `laneHeight` pixels high (0 with nothing to show).
    int heightForLanes(double laneHeight) const;

    // Opens on the start-up of the longest of its runs' start-ups (ganttStartUpSlots); fitAll()
    // shows the longest run whole.
    void showStartUp();
    int startUpSlots() const;

    void paintChart(QPainter& painter, const QSize& size, bool vectorCells = false) const override;
    QSize sizeHint() const override;

  protected:
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

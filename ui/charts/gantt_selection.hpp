#pragma once
// Weight stashing made visible: the microbatch picked in the Gantt chart, its forward and
// backward on every stage with the weight version each read (a backward uses the copy its
// forward stashed, so both read the same version), and how the chart paints it over the cells:
// everything else dimmed, its cells outlined and at least a few pixels wide at any zoom,
// labelled "v<version>" where a cell has room.
#include <QColor>
#include <QFontMetricsF>
#include <QRectF>
#include <QString>
#include <functional>
#include <vector>

#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

class QPainter;

namespace pipelens::ui {

// The cell colours of every Gantt view: F sky blue, B orange, the split backward's input
// gradient I a lighter orange (backward family), its weight gradient W bluish green. `chunk` (the
// stage's place among those its device holds, from 0) shades the colour when a device holds
// several stages (interleaved, V-shape): chunk 0 is the plain colour.
QColor ganttOpColour(OpKind op, int chunk = 0);
// "forward", "backward", "input gradient", "weight gradient".
QString opName(OpKind op);
// "F", "B", "I", "W".
QString opLetter(OpKind op);

// One Gantt lane per stage, or one per DEVICE where a device holds several stages (a timeline's
// stageRank: imported interleaved or V-shape schedules).
struct GanttLanes {
    std::vector<int> laneOfStage;            // per stage, from 0
    std::vector<int> chunkOfStage;           // its place among its lane's stages, from 0
    std::vector<std::vector<int>> stagesOf;  // per lane, ascending
    bool byDevice = false;                   // some lane holds several stages

    int count() const { return static_cast<int>(stagesOf.size()); }
    // "stage 3", or "device 2 (stages 2, 6)" (numbers from 1; "stages 1, 5, … (4)" for many).
    QString title(int lane) const;
};
GanttLanes ganttLanes(const Timeline& timeline);

struct SelectedCell {
    int stage = 0;  // from 0
    int lane = 0;   // the row it is drawn in (the stage, or its device: GanttLanes)
    OpKind op = OpKind::Forward;
    int startSlot = 0;
    int endSlot = 0;
    int version = -1;  // the weight version read; -1 without a delay table
};

struct MicrobatchSelection {
    int microbatch = -1;
    std::vector<SelectedCell> cells;  // in the timeline's order (by slot, then stage)

    bool empty() const { return cells.empty(); }
    // One line: which microbatch, and the versions its stages read (first and last stage).
    QString summary() const;
};

// The cells of `microbatch` in `timeline` (none when it has no such microbatch); versions from
// `delays` when given.
MicrobatchSelection selectMicrobatch(const Timeline& timeline, const DelayTable* delays,
                                     int microbatch);

// Paints `selection` over the plot `plot` (clipped to it): `xOfSlot` maps a slot boundary to x,
// a lane's row is `rowHeight` tall from the plot's top.
void paintSelection(QPainter& p, const MicrobatchSelection& selection, const QRectF& plot,
                    const std::function<double(double)>& xOfSlot, double rowHeight,
                    const QFont& font);

}  // namespace pipelens::ui

#pragma once
// Weight stashing made visible: the microbatch picked in the Gantt chart, its forward and
// backward on every stage with the weight version each read (a backward uses the copy its
// forward stashed, so both read the same version), and how the chart paints it over the cells:
// everything else dimmed, its cells outlined and at least a few pixels wide at any zoom,
// labelled "v<version>" where a cell has room.
#include <QFontMetricsF>
#include <QRectF>
#include <QString>
#include <functional>
#include <vector>

#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

class QPainter;

namespace pipelens::ui {

struct SelectedCell {
    int stage = 0;  // from 0
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
// a stage's row is `rowHeight` tall from the plot's top.
void paintSelection(QPainter& p, const MicrobatchSelection& selection, const QRectF& plot,
                    const std::function<double(double)>& xOfSlot, double rowHeight,
                    const QFont& font);

}  // namespace pipelens::ui

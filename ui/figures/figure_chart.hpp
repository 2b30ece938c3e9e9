#pragma once
// One of the paper's figures (a FigurePanel from core) as a Qt Charts chart, and its export to
// PNG and SVG through the app's atomic image writers. Needs a QApplication.
#include <QString>

#include "experiment/protocols/paper_protocols.hpp"

class QChart;

namespace pipelens::ui {

// A linear axis's range and tick count: [lo, hi] rounded out to a step of 1, 2, 2.5 or 5 times a
// power of ten, in 4 to 10 intervals, the step that leaves the least empty space (on a tie, the
// finer one); count = intervals + 1.
struct LinearTicks {
    double lo = 0.0, hi = 1.0;
    int count = 2;
};
LinearTicks linearTicks(double lo, double hi);

// A chart of the panel's series on its axes (log where the panel says so); the caller owns it.
QChart* buildFigureChart(const FigurePanel& panel);

// Writes `<folder>/<panel.file>.png` and `.svg`; returns false with `error` set on failure.
bool exportFigure(const FigurePanel& panel, const QString& folder, QString* error);

}  // namespace pipelens::ui

#pragma once
// One of the paper's figures (a FigurePanel from core) as a Qt Charts chart, and its export to
// PNG and SVG through the app's atomic image writers. Needs a QApplication.
#include <QString>

#include "experiment/paper_protocols.hpp"

class QChart;

namespace pipelens::ui {

// A chart of the panel's series on its axes (log where the panel says so); the caller owns it.
QChart* buildFigureChart(const FigurePanel& panel);

// Writes `<folder>/<panel.file>.png` and `.svg`; returns false with `error` set on failure.
bool exportFigure(const FigurePanel& panel, const QString& folder, QString* error);

}  // namespace pipelens::ui

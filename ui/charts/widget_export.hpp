#pragma once
// Export of any widget (a chart, the whole window) as PNG at a scale factor or as SVG, and of
// text (CSV) — each written through a temporary file renamed into place, so a failed export
// never leaves a truncated file.
#include <QColor>
#include <QString>

class QImage;
class QWidget;

namespace pipelens::ui {

// The widget as it is on screen, rendered at `scale` times its logical size (2.0: HiDPI).
QImage renderWidget(QWidget* widget, double scale);
bool exportWidgetPng(QWidget* widget, const QString& path, double scale, QString* error = nullptr);
bool exportWidgetSvg(QWidget* widget, const QString& path, QString* error = nullptr);
bool writeTextAtomically(const QString& path, const QByteArray& contents, QString* error = nullptr);

}  // namespace pipelens::ui

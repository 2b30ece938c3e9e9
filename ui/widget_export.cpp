#include "widget_export.hpp"

#include <QColor>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>
#include <iterator>

namespace pipelens::ui {
namespace {

void setError(QString* error, const QString& message) {
    if (error) *error = message;
}

}  // namespace

QColor methodColor(int index) {
    static const QRgb colors[] = {0x0072b2, 0xe69f00, 0x009e73, 0xd55e00,
                                  0xcc79a7, 0x56b4e9, 0x8c6d00, 0x000000};
    return QColor(colors[static_cast<unsigned>(index) % std::size(colors)]);
}

QImage renderWidget(QWidget* widget, double scale) {
    const QSize pixels(qRound(widget->width() * scale), qRound(widget->height() * scale));
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(widget->palette().color(QPalette::Window));
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    return image;
}

bool writeTextAtomically(const QString& path, const QByteArray& contents, QString* error) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    file.write(contents);
    if (!file.commit()) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

bool exportWidgetPng(QWidget* widget, const QString& path, double scale, QString* error) {
    if (!(scale > 0.0) || scale > 8.0) {
        setError(error, QObject::tr("scale = %1 is not allowed: a number in (0, 8]").arg(scale));
        return false;
    }
    if (widget->width() <= 0 || widget->height() <= 0) {
        setError(error, QObject::tr("nothing to export: the view has no area"));
        return false;
    }
    const QImage image = renderWidget(widget, scale);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit()) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

bool exportWidgetSvg(QWidget* widget, const QString& path, QString* error) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    {
        QSvgGenerator svg;
        svg.setOutputDevice(&file);
        svg.setSize(widget->size());
        svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
        svg.setTitle(widget->windowTitle().isEmpty() ? QStringLiteral("PipeLens")
                                                     : widget->windowTitle());
        QPainter painter(&svg);
        widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    }
    if (!file.commit()) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

}  // namespace pipelens::ui

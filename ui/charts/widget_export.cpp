#include "charts/widget_export.hpp"

#include <QAbstractScrollArea>
#include <QColor>
#include <QCoreApplication>
#include <QGraphicsView>
#include <QImage>
#include <QMenuBar>
#include <QPainter>
#include <QSaveFile>
#include <QWidget>
#include <iterator>

#include "charts/chart_support.hpp"

namespace pipelens::ui {
namespace {

void setError(QString* error, const QString& message) {
    if (error) *error = message;
}

// Lays out what changed since the last event loop pass (a legend given new names just now), so
// that the export shows what the window is about to show.
void applyPendingLayouts() {
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

// A scroll area's viewport whose content may lie partly outside it (a scrolled panel, a long
// text): the SVG engine cannot clip, so it would draw the hidden part over its neighbours.
// Charts (graphics views) draw only inside themselves.
bool clipsItsContent(const QWidget* w) {
    const auto* area = qobject_cast<const QAbstractScrollArea*>(w->parentWidget());
    return area && area->viewport() == w && !qobject_cast<const QGraphicsView*>(area);
}

// Paints `w` at `at` and its visible children over it, each by itself so that every chart and
// label stays vector; the menu bar (its style draws nothing into a vector device) and the
// viewports that clip go in as pictures of what the screen shows.
// NOLINTNEXTLINE(misc-no-recursion): as deep as the window's widgets nest
void renderForSvg(QPainter& painter, QWidget* w, const QPoint& at) {
    if (qobject_cast<QMenuBar*>(w) || clipsItsContent(w)) {
        painter.drawPixmap(at, w->grab());
        return;
    }
    w->render(&painter, at, QRegion(),
              w->autoFillBackground() ? QWidget::DrawWindowBackground : QWidget::RenderFlags());
    for (QObject* child : w->children()) {
        auto* c = qobject_cast<QWidget*>(child);
        if (!c || c->isWindow() || !c->isVisible()) continue;
        renderForSvg(painter, c, at + c->pos());
    }
}

}  // namespace

QImage renderWidget(QWidget* widget, double scale) {
    applyPendingLayouts();
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
    if (!chart::checkExportTarget(path, error)) return false;
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
    if (!chart::checkExportTarget(path, error)) return false;
    if (!(scale > 0.0) || scale > 8.0) {
        setError(error,
                 QObject::tr("Scale factor = %1 is not allowed: a number in (0, 8]").arg(scale));
        return false;
    }
    if (widget->width() <= 0 || widget->height() <= 0) {
        setError(error, QObject::tr("nothing to export: the view has no area"));
        return false;
    }
    const QString problem = chart::imageSizeProblem(qRound64(widget->width() * scale),
                                                    qRound64(widget->height() * scale));
    if (!problem.isEmpty()) {
        setError(error, QObject::tr("cannot export %1: %2").arg(path, problem));
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
    if (!chart::checkExportTarget(path, error)) return false;
    applyPendingLayouts();
    const QString title =
        widget->windowTitle().isEmpty() ? QStringLiteral("PipeLens") : widget->windowTitle();
    return chart::exportSvgImage(
        path, widget->size(), title,
        [&](QPainter& painter) {
            painter.fillRect(widget->rect(), widget->palette().color(QPalette::Window));
            renderForSvg(painter, widget, QPoint(0, 0));
        },
        error);
}

}  // namespace pipelens::ui

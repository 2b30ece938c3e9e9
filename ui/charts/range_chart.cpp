#include "charts/range_chart.hpp"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <utility>

namespace pipelens::ui {

RangeChart::RangeChart(double minVisible, QString svgTitle, QWidget* parent)
    : QWidget(parent),
      minVisible_(minVisible),
      svgTitle_(std::move(svgTitle)),
      navigation_(minVisible) {
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(240, 120);
}

void RangeChart::setVisibleRange(double first, double last) {
    const double total = hasContent() ? extent() : 1.0;
    if (range_.set(first, last, total, minVisible_)) {
        emit visibleRangeChanged(range_.first, range_.last);
        update();
    }
}

void RangeChart::fitAll() {
    setVisibleRange(0.0, hasContent() ? extent() : 1.0);
}

void RangeChart::paintForExport(QPainter& painter, const QSize& size, bool vectorCells) const {
    exporting_ = true;
    paintChart(painter, size, vectorCells);
    exporting_ = false;
}

bool RangeChart::exportPng(const QString& path, double scale, QString* error, QSize size) const {
    if (size.isEmpty()) size = this->size();
    return chart::exportPngImage(
        path, size, scale, [&](QPainter& p) { paintForExport(p, size, false); }, error);
}

bool RangeChart::exportSvg(const QString& path, QString* error) const {
    return chart::exportSvgImage(
        path, size(), svgTitle_, [&](QPainter& p) { paintForExport(p, size(), true); }, error);
}

bool RangeChart::exportCsv(const QString& path, QString* error) const {
    return chart::writeTextFileAtomically(path, csv(), error);
}

void RangeChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintChart(painter, size(), false);
}

void RangeChart::wheelEvent(QWheelEvent* event) {
    if (!hasContent() || event->angleDelta().y() == 0) return QWidget::wheelEvent(event);
    chart::XRange r = range_;
    if (navigation_.wheel(r, valueAtX(plotArea(), event->position().x()), event->angleDelta().y(),
                          extent())) {
        setVisibleRange(r.first, r.last);
    }
    event->accept();
}

void RangeChart::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !hasContent()) return QWidget::mousePressEvent(event);
    navigation_.beginDrag(event->position(), range_);
    setCursor(Qt::ClosedHandCursor);
    event->accept();
}

void RangeChart::mouseMoveEvent(QMouseEvent* event) {
    if (!navigation_.dragging()) return QWidget::mouseMoveEvent(event);
    chart::XRange r;
    if (navigation_.dragTo(r, event->position(), plotArea().width(), extent())) {
        setVisibleRange(r.first, r.last);
    }
    event->accept();
}

void RangeChart::mouseReleaseEvent(QMouseEvent* event) {
    if (!navigation_.dragging()) return QWidget::mouseReleaseEvent(event);
    unsetCursor();
    event->accept();
    // A press and release without a drag is a click: the boundary nearest the pointer (the
    // cursor line is drawn where the person clicked).
    if (!navigation_.endDrag(event->position())) return;
    const QRectF plot = plotArea();
    if (!plot.contains(event->position())) return;
    const double x = valueAtX(plot, event->position().x());
    boundaryClicked(std::clamp<long long>(std::llround(x), 0, std::llround(extent())));
}

void RangeChart::keyPressEvent(QKeyEvent* event) {
    if (!hasContent()) return QWidget::keyPressEvent(event);
    chart::XRange r = range_;
    switch (navigation_.key(event->key(), r, extent())) {
        case chart::RangeNavigation::KeyResult::Ignored:
            return QWidget::keyPressEvent(event);
        case chart::RangeNavigation::KeyResult::FitAll:
            fitAll();
            return;
        case chart::RangeNavigation::KeyResult::Changed:
            break;
    }
    setVisibleRange(r.first, r.last);
    event->accept();
}

bool RangeChart::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = hasContent() ? toolTipAt(help->pos()) : QString();
        if (text.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), text, this);
        }
        return true;
    }
    return QWidget::event(event);
}

}  // namespace pipelens::ui

#include "controls/fitting_scroll_area.hpp"

#include <QEvent>
#include <QScrollBar>

namespace pipelens::ui {

FittingScrollArea::FittingScrollArea(QWidget* content, Qt::Orientation scrolls, QWidget* parent)
    : QScrollArea(parent), scrolls_(scrolls) {
    setWidget(content);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    setScrolls(scrolls);
    content->installEventFilter(this);
    // A content without a layout of its own (a label) asks its parent, the viewport.
    viewport()->installEventFilter(this);
}

void FittingScrollArea::setScrolls(Qt::Orientation scrolls) {
    const Qt::ScrollBarPolicy across =
        scrolls == Qt::Vertical ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded;
    const Qt::ScrollBarPolicy along =
        scrolls == Qt::Vertical ? Qt::ScrollBarAsNeeded : Qt::ScrollBarAlwaysOff;
    // Asked again on every resize of the window: only a change re-lays anything out.
    if (scrolls == scrolls_ && horizontalScrollBarPolicy() == across &&
        verticalScrollBarPolicy() == along)
        return;
    scrolls_ = scrolls;
    setHorizontalScrollBarPolicy(across);
    setVerticalScrollBarPolicy(along);
    updateGeometry();
}

QSize FittingScrollArea::minimumSizeHint() const {
    const QSize least = widget() ? widget()->minimumSizeHint() : QSize(0, 0);
    const int frame = 2 * frameWidth();
    // Along the scrolled axis a little room; across it the content's minimum and the scroll
    // bar that may show.
    if (scrolls_ == Qt::Vertical) {
        return {least.width() + verticalScrollBar()->sizeHint().width() + frame, 80};
    }
    return {80, least.height() + horizontalScrollBar()->sizeHint().height() + frame};
}

QSize FittingScrollArea::sizeHint() const {
    const QSize hint = widget() ? widget()->sizeHint() : QSize(0, 0);
    return hint.expandedTo(minimumSizeHint());
}

bool FittingScrollArea::eventFilter(QObject* watched, QEvent* event) {
    // Rows shown or hidden in the content: its minimum changed, so does ours.
    if ((watched == widget() || watched == viewport()) && event->type() == QEvent::LayoutRequest)
        updateGeometry();
    return QScrollArea::eventFilter(watched, event);
}

}  // namespace pipelens::ui

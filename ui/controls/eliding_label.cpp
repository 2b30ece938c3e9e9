#include "controls/eliding_label.hpp"

#include <QFontMetrics>

namespace pipelens::ui {

ElidingLabel::ElidingLabel(QWidget* parent) : QLabel(parent) {
    setTextFormat(Qt::PlainText);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void ElidingLabel::setFullText(const QString& text) {
    fullText_ = text;
    setToolTip(text);
    updateGeometry();
    elide();
}

QSize ElidingLabel::minimumSizeHint() const {
    const QFontMetrics fm(font());
    return {std::min(fm.horizontalAdvance(fullText_), 8 * fm.averageCharWidth()) + 2 * margin(),
            fm.height() + 2 * margin()};
}

QSize ElidingLabel::sizeHint() const {
    const QFontMetrics fm(font());
    return {fm.horizontalAdvance(fullText_) + 2 * margin() + 2, fm.height() + 2 * margin()};
}

void ElidingLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    elide();
}

void ElidingLabel::elide() {
    setText(fontMetrics().elidedText(fullText_, Qt::ElideRight, contentsRect().width()));
}

}  // namespace pipelens::ui

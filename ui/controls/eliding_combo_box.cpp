#include "controls/eliding_combo_box.hpp"

#include <QResizeEvent>
#include <QStyleOptionComboBox>
#include <QStylePainter>
#include <algorithm>

namespace pipelens::ui {

ElidingComboBox::ElidingComboBox(int maxChars, QWidget* parent)
    : QComboBox(parent), maxChars_(maxChars) {
    setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(this, &QComboBox::currentIndexChanged, this, &ElidingComboBox::updateToolTip);
}

int ElidingComboBox::cap() const {
    QStyleOptionComboBox opt;
    initStyleOption(&opt);
    const QSize text(fontMetrics().averageCharWidth() * maxChars_, fontMetrics().height());
    return style()->sizeFromContents(QStyle::CT_ComboBox, &opt, text, this).width();
}

QSize ElidingComboBox::sizeHint() const {
    const QSize hint = QComboBox::sizeHint();
    return {std::min(hint.width(), cap()), hint.height()};
}

QSize ElidingComboBox::minimumSizeHint() const {
    const QSize hint = QComboBox::minimumSizeHint();
    return {std::min(hint.width(), cap()), hint.height()};
}

QString ElidingComboBox::shownText() const {
    QStyleOptionComboBox opt;
    initStyleOption(&opt);
    const QRect field =
        style()->subControlRect(QStyle::CC_ComboBox, &opt, QStyle::SC_ComboBoxEditField, this);
    return fontMetrics().elidedText(currentText(), Qt::ElideRight, field.width() - 2);
}

bool ElidingComboBox::elided() const {
    return shownText() != currentText();
}

void ElidingComboBox::setBaseToolTip(const QString& text) {
    baseToolTip_ = text;
    updateToolTip();
}

void ElidingComboBox::updateToolTip() {
    setToolTip(elided() ? baseToolTip_ + QStringLiteral("\n") + currentText() : baseToolTip_);
}

void ElidingComboBox::resizeEvent(QResizeEvent* event) {
    QComboBox::resizeEvent(event);
    updateToolTip();
}

void ElidingComboBox::paintEvent(QPaintEvent* /*event*/) {
    QStylePainter painter(this);
    QStyleOptionComboBox opt;
    initStyleOption(&opt);
    painter.drawComplexControl(QStyle::CC_ComboBox, opt);
    opt.currentText = shownText();
    painter.drawControl(QStyle::CE_ComboBoxLabel, opt);
}

}  // namespace pipelens::ui

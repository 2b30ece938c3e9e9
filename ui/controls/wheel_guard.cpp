#include "controls/wheel_guard.hpp"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QScrollBar>
#include <QWidget>

namespace pipelens::ui {

WheelGuard::WheelGuard(QObject* parent) : QObject(parent) {}

QWidget* WheelGuard::guardedField(QObject* object) {
    auto* widget = qobject_cast<QWidget*>(object);
    // A spin box's or an editable combo box's line edit gets the event first.
    for (int depth = 0; widget != nullptr && depth < 2; ++depth) {
        if (qobject_cast<QAbstractSpinBox*>(widget) != nullptr ||
            qobject_cast<QComboBox*>(widget) != nullptr ||
            (qobject_cast<QAbstractSlider*>(widget) != nullptr &&
             qobject_cast<QScrollBar*>(widget) == nullptr)) {
            return widget;
        }
        widget = widget->parentWidget();
    }
    return nullptr;
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Polish) {
        // Qt's default for these fields (WheelFocus) lets the wheel take the focus and then the
        // value: a click or Tab must give it.
        if (QWidget* field = guardedField(watched); field == watched) {
            field->setFocusPolicy(Qt::StrongFocus);
        }
        return false;
    }
    if (event->type() != QEvent::Wheel) return false;
    QWidget* field = guardedField(watched);
    if (field == nullptr || field->hasFocus()) return false;
    // The panel the field sits in scrolls instead; with none, the wheel does nothing here.
    for (QWidget* p = field->parentWidget(); p != nullptr; p = p->parentWidget()) {
        if (auto* area = qobject_cast<QAbstractScrollArea*>(p)) {
            QCoreApplication::sendEvent(area->verticalScrollBar(), event);
            break;
        }
    }
    return true;
}

}  // namespace pipelens::ui

#include "controls/field_errors.hpp"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QWidget>
#include <algorithm>
#include <limits>

namespace pipelens::ui {

void FieldErrors::addRow(QFormLayout* form, const QString& label, QWidget* field,
                         const QString& tooltip) {
    field->setToolTip(tooltip);
    // The red frame (a style sheet) makes some fields shorter: keep the height, so that a
    // refusal moves no row.
    field->setMinimumHeight(field->sizeHint().height());
    form->addRow(label, field);
    if (auto* l = qobject_cast<QLabel*>(form->labelForField(field))) l->setToolTip(tooltip);
    addErrorRow(form, field);
}

void FieldErrors::addRow(QFormLayout* form, QWidget* label, QWidget* field,
                         const QString& tooltip) {
    field->setToolTip(tooltip);
    field->setMinimumHeight(field->sizeHint().height());
    form->addRow(label, field);
    addErrorRow(form, field);
}

void FieldErrors::addSpanningRow(QFormLayout* form, QWidget* field, const QString& tooltip) {
    field->setToolTip(tooltip);
    field->setMinimumHeight(field->sizeHint().height());
    form->addRow(field);
    addErrorRow(form, field);
}

void FieldErrors::addErrorRow(QFormLayout* form, QWidget* field) {
    if (area_) {
        rows_.insert(field, {form, nullptr, {}});
        return;
    }
    auto* error = new QLabel(field->parentWidget());
    error->setWordWrap(true);
    error->setStyleSheet("color: #b00020;");
    error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(QString(), error);
    form->setRowVisible(error, false);
    rows_.insert(field, {form, error, {}});
}

void FieldErrors::setMessageArea(QLabel* area) {
    area_ = area;
    for (Row& row : rows_) {
        if (!row.label) continue;
        row.form->removeRow(row.label);  // deletes the label
        row.label = nullptr;
    }
}

void FieldErrors::showInArea(const QString& replaced, const QString& message) {
    if (!message.isEmpty()) {
        area_->setText(message);
        area_->setToolTip(message);
        return;
    }
    if (area_->toolTip() != replaced) return;  // the area shows another message
    QString next;  // another refusal of these fields, if any, else nothing
    for (const Row& row : rows_) {
        if (!row.message.isEmpty()) next = row.message;
    }
    area_->setText(next);
    area_->setToolTip(next);
}

void FieldErrors::show(QWidget* field, const QString& message) {
    const auto it = rows_.find(field);
    if (it == rows_.end()) return;
    const QString replaced = it->message;
    it->message = message;
    if (it->label) {
        it->label->setText(message);
        it->form->setRowVisible(it->label, !message.isEmpty());
    } else if (area_) {
        showInArea(replaced, message);
    }
    // A row of several widgets (S: its slider beside its field) is framed itself, not each
    // child: a border on the slider or the field resizes them and moves the field.
    const bool row = field->metaObject() == &QWidget::staticMetaObject;
    if (row && field->objectName().isEmpty()) field->setObjectName("fieldRow");
    if (row) field->setAttribute(Qt::WA_StyledBackground);
    field->setStyleSheet(
        message.isEmpty() ? QString()
        : row ? QStringLiteral("#%1 { border: 1px solid #b00020; }").arg(field->objectName())
              : QStringLiteral("border: 1px solid #b00020;"));
}

void FieldErrors::clear(QWidget* field) {
    show(field, {});
}

void FieldErrors::clearAll() {
    for (auto it = rows_.begin(); it != rows_.end(); ++it) {
        if (!it.value().message.isEmpty()) show(it.key(), {});
    }
}

QString FieldErrors::message(QWidget* field) const {
    return rows_.value(field).message;
}

QList<QWidget*> FieldErrors::refused() const {
    QList<QWidget*> out;
    for (auto it = rows_.begin(); it != rows_.end(); ++it) {
        if (!it.value().message.isEmpty()) out << it.key();
    }
    return out;
}

QSpinBox* spin(int lo, int hi, const QString& special) {
    auto* s = new QSpinBox;
    s->setRange(lo, hi);
    s->setKeyboardTracking(false);
    if (!special.isEmpty()) s->setSpecialValueText(special);
    return s;
}

QSpinBox* spin(const IntLimit& limit, const QString& special) {
    constexpr long long kIntMin = std::numeric_limits<int>::min();
    constexpr long long kIntMax = std::numeric_limits<int>::max();
    return spin(static_cast<int>(std::clamp(limit.lo, kIntMin, kIntMax)),
                static_cast<int>(std::clamp(limit.hi, kIntMin, kIntMax)), special);
}

QWidget* fileChooserRow(const QString& placeholder, QLabel** name, QPushButton** browse) {
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    *name = new QLabel(placeholder);
    (*name)->setTextInteractionFlags(Qt::TextSelectableByMouse);
    *browse = new QPushButton(QObject::tr("Browse…"));
    layout->addWidget(*name, 1);
    layout->addWidget(*browse);
    return row;
}

}  // namespace pipelens::ui

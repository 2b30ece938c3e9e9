#include "field_errors.hpp"

#include <QFormLayout>
#include <QLabel>
#include <QWidget>

namespace pipelens::ui {

void FieldErrors::addRow(QFormLayout* form, const QString& label, QWidget* field,
                         const QString& tooltip) {
    field->setToolTip(tooltip);
    form->addRow(label, field);
    if (auto* l = qobject_cast<QLabel*>(form->labelForField(field))) l->setToolTip(tooltip);
    auto* error = new QLabel(field->parentWidget());
    error->setWordWrap(true);
    error->setStyleSheet("color: #b00020;");
    error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(QString(), error);
    form->setRowVisible(error, false);
    rows_.insert(field, {form, error});
}

void FieldErrors::show(QWidget* field, const QString& message) {
    const Row row = rows_.value(field);
    if (!row.label) return;
    row.label->setText(message);
    row.form->setRowVisible(row.label, !message.isEmpty());
    field->setStyleSheet(message.isEmpty() ? QString()
                                           : QStringLiteral("border: 1px solid #b00020;"));
}

void FieldErrors::clear(QWidget* field) { show(field, {}); }

void FieldErrors::clearAll() {
    for (auto it = rows_.begin(); it != rows_.end(); ++it) {
        if (!it.value().label->text().isEmpty()) show(it.key(), {});
    }
}

QString FieldErrors::message(QWidget* field) const {
    const Row row = rows_.value(field);
    return row.label ? row.label->text() : QString();
}

QList<QWidget*> FieldErrors::refused() const {
    QList<QWidget*> out;
    for (auto it = rows_.begin(); it != rows_.end(); ++it) {
        if (!it.value().label->text().isEmpty()) out << it.key();
    }
    return out;
}

}  // namespace pipelens::ui

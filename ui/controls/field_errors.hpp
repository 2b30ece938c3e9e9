#pragma once
// Refusing invalid input in place: a field that was refused gets a red frame and, in the row
// right under it (or, given a message area, in that fixed place, so that no other field moves),
// the message saying what is allowed. The message stays until the field is accepted or the config
// changes from elsewhere.
#include <QHash>
#include <QString>

#include "experiment/config/field_limits.hpp"

class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;
class QWidget;

namespace pipelens::ui {

class FieldErrors {
  public:
    // Adds `label: field` to `form` with a hidden error row below it, and the tooltip to both.
    void addRow(QFormLayout* form, const QString& label, QWidget* field, const QString& tooltip);
    // The same with a widget in the label's place (a corrector's check box beside its parameter).
    void addRow(QFormLayout* form, QWidget* label, QWidget* field, const QString& tooltip);
    // `field` alone on a row across both columns (a button as wide as the form).
    void addSpanningRow(QFormLayout* form, QWidget* field, const QString& tooltip);
    // From now on messages show in `area` (a label whose place and height are reserved) instead
    // of rows under the fields; the rows added so far are removed. Several FieldErrors may share
    // one area: it shows the latest message.
    void setMessageArea(QLabel* area);
    void show(QWidget* field, const QString& message);
    void clear(QWidget* field);
    void clearAll();
    QString message(QWidget* field) const;
    // The fields with a message, for tests and the status bar.
    QList<QWidget*> refused() const;

  private:
    struct Row {
        QFormLayout* form = nullptr;
        QLabel* label = nullptr;  // the row under the field; null with a message area
        QString message;
    };
    void showInArea(const QString& replaced, const QString& message);
    // The hidden row under `field` for its message (none with a message area).
    void addErrorRow(QFormLayout* form, QWidget* field);

    QHash<QWidget*, Row> rows_;
    QLabel* area_ = nullptr;
};

// A spin box for [lo, hi] that applies its value when editing ends (Enter, focus out), not at
// every keystroke; `special` (if given) is shown for the lowest value.
QSpinBox* spin(int lo, int hi, const QString& special = {});
// The same for a config field: its range from the config's table (field_limits.hpp), cut to
// what a spin box holds (a seed above 2^31 - 1 is typed into a config file).
QSpinBox* spin(const IntLimit& limit, const QString& special = {});

// A form row that shows a chosen file's name beside a "Browse…" button (the data file, the
// corpus); `name` and `browse` receive the two widgets.
QWidget* fileChooserRow(const QString& placeholder, QLabel** name, QPushButton** browse);

}  // namespace pipelens::ui

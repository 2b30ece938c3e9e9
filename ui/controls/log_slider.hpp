#pragma once
// A positive number on a logarithmic slider with an exact entry field beside it (the step size
// gamma). The slider covers [minimum, maximum] in decades; the field accepts exactly the values
// the config accepts (a RealLimit of field_limits.hpp, which may reach beyond the slider) and
// refuses anything else with the config's own text of what is allowed.
#include <QWidget>

#include "experiment/config/field_limits.hpp"

class QLabel;
class QLineEdit;
class QSlider;

namespace pipelens::ui {

class LogSlider : public QWidget {
    Q_OBJECT
  public:
    LogSlider(double minimum, double maximum, const RealLimit& accepted, QWidget* parent = nullptr);

    double value() const { return value_; }
    // Sets the value without emitting valueEdited (used when the config changes elsewhere).
    void setValue(double value);
    QLineEdit* field() const { return field_; }
    QSlider* slider() const { return slider_; }
    double minimum() const { return minimum_; }
    double maximum() const { return maximum_; }
    const RealLimit& accepted() const { return accepted_; }

    // The message shown for a refused entry (empty when the entry is valid).
    QString errorText() const;
    // Whether the message shows under the slider (the default) or only goes out by errorChanged
    // (for a panel that shows messages in a place of its own).
    void setShowsError(bool on);

  signals:
    // The person changed the value (slider released/moved, or Enter in the field).
    void valueEdited(double value);
    void errorChanged(const QString& message);

  private:
    void fromSlider(int position);
    void fromField();
    int positionOf(double value) const;
    void showError(const QString& message);

    double minimum_;
    double maximum_;
    RealLimit accepted_;
    double value_ = 0.0;
    QSlider* slider_;
    QLineEdit* field_;
    QLabel* error_;
    QString errorText_;
    bool showsError_ = true;
    bool updating_ = false;
};

}  // namespace pipelens::ui

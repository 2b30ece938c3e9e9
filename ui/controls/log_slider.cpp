#include "controls/log_slider.hpp"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <algorithm>
#include <cmath>

#include "controls/number_text.hpp"

namespace pipelens::ui {
namespace {
constexpr int kStepsPerDecade = 100;
}

LogSlider::LogSlider(double minimum, double maximum, const RealLimit& accepted, QWidget* parent)
    : QWidget(parent), minimum_(minimum), maximum_(maximum), accepted_(accepted) {
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setRange(
        0, static_cast<int>(std::lround(std::log10(maximum / minimum) * kStepsPerDecade)));
    slider_->setPageStep(kStepsPerDecade / 4);
    slider_->setSingleStep(5);
    field_ = new QLineEdit(this);
    field_->setMinimumHeight(field_->sizeHint().height());  // the red frame must not shrink it
    field_->setMaximumWidth(90);
    error_ = new QLabel(this);
    error_->setWordWrap(true);
    error_->setStyleSheet("color: #b00020;");
    error_->hide();
    auto* layout = new QGridLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(slider_, 0, 0);
    layout->addWidget(field_, 0, 1);
    layout->addWidget(error_, 1, 0, 1, 2);
    const QString tip =
        tr("Logarithmic slider from %2 to %3: one notch is a factor of 10^(1/%1). "
           "Type an exact value in the field and press Enter (allowed: %4).")
            .arg(kStepsPerDecade)
            .arg(formatNumber(minimum), formatNumber(maximum),
                 QString::fromUtf8(accepted.allowed.data(),
                                   static_cast<qsizetype>(accepted.allowed.size())));
    slider_->setToolTip(tip);
    field_->setToolTip(tip);
    connect(slider_, &QSlider::valueChanged, this, &LogSlider::fromSlider);
    connect(field_, &QLineEdit::editingFinished, this, &LogSlider::fromField);
    setValue(minimum);
}

int LogSlider::positionOf(double value) const {
    return static_cast<int>(std::lround(std::log10(value / minimum_) * kStepsPerDecade));
}

void LogSlider::setValue(double value) {
    updating_ = true;
    value_ = value;
    slider_->setValue(positionOf(std::clamp(value, minimum_, maximum_)));
    field_->setText(formatNumber(value));
    showError({});
    updating_ = false;
}

void LogSlider::fromSlider(int position) {
    if (updating_) return;
    // Round to 3 significant digits so slider values read well ("0.0251", not 0.025118864...).
    double v = minimum_ * std::pow(10.0, static_cast<double>(position) / kStepsPerDecade);
    v = QString::number(v, 'g', 3).toDouble();
    value_ = v;
    updating_ = true;
    field_->setText(formatNumber(v));
    updating_ = false;
    showError({});
    emit valueEdited(v);
}

void LogSlider::fromField() {
    if (updating_) return;
    bool ok = false;
    const double v = field_->text().trimmed().toDouble(&ok);
    if (!ok || !accepted_.allows(v)) {
        showError(tr("\"%1\" is not allowed: %2")
                      .arg(field_->text(),
                           QString::fromUtf8(accepted_.allowed.data(),
                                             static_cast<qsizetype>(accepted_.allowed.size()))));
        return;
    }
    showError({});
    if (v == value_) return;
    value_ = v;
    updating_ = true;
    slider_->setValue(positionOf(v));
    updating_ = false;
    emit valueEdited(v);
}

void LogSlider::showError(const QString& message) {
    const bool changed = message != errorText_;
    errorText_ = message;
    error_->setText(message);
    error_->setVisible(showsError_ && !message.isEmpty());
    field_->setStyleSheet(message.isEmpty() ? QString() : "border: 1px solid #b00020;");
    if (changed) emit errorChanged(message);
}

void LogSlider::setShowsError(bool on) {
    showsError_ = on;
    error_->setVisible(on && !errorText_.isEmpty());
}

QString LogSlider::errorText() const {
    return errorText_;
}

}  // namespace pipelens::ui

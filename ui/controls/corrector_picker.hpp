#pragma once
// The selected method's optimizer and staleness correctors (docs/correctors.md), as rows of the
// method editor's form: the optimizer's kind and its keys (momentum's β; Adam's β1, β2, ε; weight
// decay), then one checkable row per corrector with its parameter (delay-adaptive γ with τ_ref and
// per block and its unit, prediction with its s, DC with λ, look-ahead with β, accumulation with k)
// and "Compare with uncorrected". A corrector the method cannot take (requireCorrectorsFit, the
// config's own rule) is disabled, its tooltip saying why; a parameter is editable only while its
// corrector is on (the config keeps no parameter of a corrector that is off). Every edit goes
// through the editor's `edit` (validated; a refusal is shown at the row, the value kept on screen).
#include <QObject>
#include <QString>
#include <functional>

#include "compute/corrector.hpp"
#include "controls/field_errors.hpp"
#include "experiment/config/config.hpp"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QWidget;

namespace pipelens::ui {

class CorrectorPicker : public QObject {
    Q_OBJECT
  public:
    // Applies `change` to the selected method; shows the refusal at `field` if there is one.
    using Edit =
        std::function<void(QWidget* field, const std::function<void(MethodSpec&)>& change)>;

    // The selected method (null when none).
    using Current = std::function<const MethodSpec*()>;

    CorrectorPicker(QFormLayout* form, QWidget* parent, FieldErrors& errors, Edit edit,
                    Current current);

    // Shows method `m`'s optimizer and correctors; a corrector `m` cannot take is disabled with
    // the reason as its tooltip.
    void show(const MethodSpec& m);

    QComboBox* optimizerField() const { return optimizer_; }
    QLineEdit* momentumField() const { return momentum_; }
    QLineEdit* beta1Field() const { return beta1_; }
    QLineEdit* beta2Field() const { return beta2_; }
    QLineEdit* epsField() const { return eps_; }
    QLineEdit* weightDecayField() const { return weightDecay_; }
    QCheckBox* correctorBox(CorrectorKind kind) const;
    QCheckBox* perBlockBox() const { return perBlock_; }
    QLineEdit* tauRefField() const { return tauRef_; }
    // delay_adaptive's unit of τ: block_updates, optimizer_steps or slots.
    QComboBox* unitField() const { return unit_; }
    QComboBox* predictionStepsField() const { return steps_; }
    QLineEdit* lambdaField() const { return lambda_; }
    QLineEdit* lookaheadBetaField() const { return lookaheadBeta_; }
    QSpinBox* accumulateField() const { return accumulate_; }
    QPushButton* compareButton() const { return compare_; }
    // The form rows (for refusals and FieldErrors::message): the optimizer's keys, and each
    // corrector's row.
    QWidget* adamRow() const { return adamRow_; }
    QWidget* correctorRow(CorrectorKind kind) const;
    QWidget* perBlockRow() const { return perBlockRow_; }

    // Why `m` (the config's methods[index]) cannot take `kind` (requireCorrectorsFit's message
    // with the method's path left out), or "" when it can. perBlock: the per-block variant of
    // delay_adaptive.
    static QString refusal(const MethodSpec& m, CorrectorKind kind, bool perBlock = false);

  signals:
    // "Compare with uncorrected" was clicked.
    void compareRequested();

  private:
    void refresh();
    // A number typed into `field` (`label` names it in a message): edited into the method, or
    // refused at `row` when it is not a number.
    void editNumber(QLineEdit* field, QWidget* row, const QString& label,
                    const std::function<void(MethodSpec&, double)>& set);
    QWidget* row(QWidget* first, QWidget* second = nullptr, QWidget* third = nullptr);

    FieldErrors& errors_;
    Edit edit_;
    Current current_;
    QWidget* parent_;
    QComboBox* optimizer_;
    QLineEdit* momentum_;
    QWidget* adamRow_;
    QLineEdit* beta1_;
    QLineEdit* beta2_;
    QLineEdit* eps_;
    QLineEdit* weightDecay_;
    QCheckBox* boxes_[5] = {};
    QWidget* rows_[5] = {};
    QLineEdit* tauRef_;
    QWidget* perBlockRow_;
    QCheckBox* perBlock_;
    QComboBox* unit_;
    QComboBox* steps_;
    QLineEdit* lambda_;
    QLineEdit* lookaheadBeta_;
    QSpinBox* accumulate_;
    QPushButton* compare_;
    QFormLayout* form_;
    bool updating_ = false;
};

}  // namespace pipelens::ui

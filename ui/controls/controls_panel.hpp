#pragma once
// The left-hand controls: objective and data, the pipeline (S, batch size, budget, seed), the
// methods to compare, the compute device. Every edit goes to the ExperimentController; a value
// the engine refuses stays in its field, framed red, with the engine's message in the message
// area (a fixed place, so that no field moves).
#include <QWidget>
#include <functional>

#include "controls/field_errors.hpp"
#include "experiment/config/config.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QVBoxLayout;

namespace pipelens::ui {

class ExperimentController;
class LmObjectiveFields;
class MethodListEditor;

class ControlsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ControlsPanel(ExperimentController* controller, QWidget* parent = nullptr);

    // Fields, for tests and keyboard focus.
    QComboBox* objectiveField() const { return objective_; }
    QSpinBox* rowsField() const { return rows_; }
    QSpinBox* dimField() const { return dim_; }
    QLineEdit* l2Field() const { return l2_; }
    QSpinBox* stagesField() const { return stages_; }
    QSlider* stagesSlider() const { return stagesSlider_; }
    QSpinBox* batchField() const { return batch_; }
    // The operation costs and link latency in slots (the config's `costs`).
    QSpinBox* forwardCostField() const { return forwardSlots_; }
    QLineEdit* noiseField() const { return noise_; }
    QSpinBox* backwardCostField() const { return backwardSlots_; }
    QSpinBox* weightCostField() const { return weightSlots_; }
    QSpinBox* latencyField() const { return latencySlots_; }
    QComboBox* budgetKindField() const { return budgetKind_; }
    QDoubleSpinBox* budgetField() const { return budget_; }
    QComboBox* compareField() const { return compare_; }
    // budget.rule: fit, truncate or reach; enabled while Compare at is Equal simulated time.
    QComboBox* budgetRuleField() const { return budgetRule_; }
    QLineEdit* seedField() const { return seed_; }
    QComboBox* deviceField() const { return device_; }
    MethodListEditor* methods() const { return methods_; }
    // The language model's fields (shown for that objective only).
    LmObjectiveFields* lmFields() const { return lm_; }
    // "All γ ×": scales every method's γ by a power of two (scaleStepSizes), relative to the
    // config loaded last; resetStepScale shows ×1 again (a new preset or file) without a change.
    QComboBox* stepScaleField() const { return stepScale_; }
    int stepScaleExponent() const { return appliedScale_; }
    void resetStepScale();
    const FieldErrors& errors() const { return errors_; }
    // Where refusals of every field (the methods' too) are shown: a label of reserved height,
    // placed by the window above the panel's scroll area so that it stays in sight.
    QLabel* messageArea() const { return messageArea_; }

    // Refreshes every field from the controller's config (clears refused-value messages).
    void syncFromConfig();

  private:
    // The constructor's steps: the fields of each group, then what each field's edit does.
    void buildMessageArea(QVBoxLayout* layout);
    void buildMethods(QVBoxLayout* layout);
    void buildDataFields(QVBoxLayout* layout);
    void buildPipelineFields(QVBoxLayout* layout);
    void buildComputeFields(QVBoxLayout* layout);
    void connectDataEdits();
    void connectPipelineEdits();
    void connectComputeEdits();
    void apply(QWidget* field, const std::function<void(ExperimentConfig&)>& change);
    void chooseDataFile();

    ExperimentController* controller_ = nullptr;
    FieldErrors errors_;
    QLabel* messageArea_ = nullptr;
    QComboBox* objective_ = nullptr;
    QFormLayout* dataForm_ = nullptr;
    LmObjectiveFields* lm_ = nullptr;
    QComboBox* dataKind_ = nullptr;
    QLabel* dataFile_ = nullptr;
    QPushButton* browse_ = nullptr;
    QSpinBox* rows_ = nullptr;
    QSpinBox* dim_ = nullptr;
    QLineEdit* l2_ = nullptr;
    QSpinBox* dataSeed_ = nullptr;
    QSpinBox* stages_ = nullptr;
    QSlider* stagesSlider_ = nullptr;
    QSpinBox* batch_ = nullptr;
    QLineEdit* noise_ = nullptr;  // objective.gradient_noise (σ)
    QSpinBox* forwardSlots_ = nullptr;
    QSpinBox* backwardSlots_ = nullptr;
    QSpinBox* weightSlots_ = nullptr;
    QSpinBox* latencySlots_ = nullptr;
    QComboBox* budgetKind_ = nullptr;
    QDoubleSpinBox* budget_ = nullptr;
    QComboBox* compare_ = nullptr;
    QComboBox* budgetRule_ = nullptr;
    QLineEdit* seed_ = nullptr;
    QCheckBox* shuffle_ = nullptr;
    QComboBox* device_ = nullptr;
    QComboBox* precision_ = nullptr;
    MethodListEditor* methods_ = nullptr;
    QComboBox* stepScale_ = nullptr;
    int appliedScale_ = 0;  // the power of two applied to the loaded config's γ
    bool updating_ = false;
};

}  // namespace pipelens::ui

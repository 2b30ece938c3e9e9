#pragma once
// The methods to compare: a checkable list (checked = in the experiment, in list order) and an
// editor for the selected method's parameters (step size gamma on a log slider, NOAM, RPD's
// delay mode and delta, LocalSGD's R and H, the flush group M of fill-drain, 1F1B and ZB-H1,
// 2BW's accumulation m, an imported schedule's CSV file and update rule, the optimizer and the
// staleness correctors: CorrectorPicker). Unchecked methods are
// remembered here so they can be switched back on; the config only holds the checked ones.
#include <QWidget>
#include <functional>
#include <vector>

#include "controls/field_errors.hpp"
#include "experiment/config/config.hpp"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QSpinBox;

namespace pipelens::ui {

class CorrectorPicker;
class ExperimentController;
class LogSlider;

class MethodListEditor : public QWidget {
    Q_OBJECT
  public:
    MethodListEditor(ExperimentController* controller, QWidget* parent = nullptr);

    // Rebuilds the list if the config's methods differ from the checked entries.
    void syncFromConfig();

    QListWidget* list() const { return list_; }
    LogSlider* stepSlider() const { return step_; }
    QCheckBox* gridField() const { return grid_; }
    QSpinBox* gridMinField() const { return gridMin_; }
    QSpinBox* noamField() const { return noam_; }
    QComboBox* delayModeField() const { return delayMode_; }
    QSpinBox* deltaField() const { return delta_; }
    QSpinBox* replicasField() const { return replicas_; }
    QSpinBox* localStepsField() const { return localSteps_; }
    QSpinBox* flushGroupField() const { return flushGroup_; }
    QSpinBox* accumulationField() const { return accumulation_; }
    QSpinBox* virtualStagesField() const { return virtualStages_; }
    QLineEdit* scheduleFileField() const { return scheduleFile_; }
    QPushButton* scheduleBrowseButton() const { return browseSchedule_; }
    QComboBox* updateField() const { return update_; }
    // The selected method's optimizer and correctors.
    CorrectorPicker* correctors() const { return picker_; }
    // Whether `field`'s form row is shown for the selected method.
    bool rowShown(QWidget* field) const;
    const FieldErrors& errors() const { return errors_; }
    // Shows this editor's refusals (γ's entry included) in `area` rather than under the fields.
    void setMessageArea(QLabel* area);

    // Adds a method of the given kind, checked. An imported schedule has no file yet, so it is
    // added unchecked until one is chosen (setScheduleFile).
    void addMethod(Method method);
    // Sets the selected imported method's schedule CSV; an unchecked one is checked (run) if the
    // engine accepts the file. What the line edit and "Browse…" do.
    void setScheduleFile(const QString& path);
    // "Compare with uncorrected": puts the selected method's uncorrected twin (the same method
    // without its correctors, models/uncorrected_twin.hpp) right after it, checked, or checks
    // the twin already listed. The selection stays on the corrected method. False (with the
    // reason shown) when the method has no correctors or the config refuses the twin.
    bool compareWithUncorrected();

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    // The form's height at its width as its minimum: a row wrapped onto two lines (the grid's,
    // in a narrow dock) then gets its room instead of overlapping the next row.
    void fitEditorHeight();
    std::vector<MethodSpec> checkedSpecs() const;
    // The γ a grid-tuned method's last run chose (the middle of the grid before it ran); a fixed
    // method's own γ.
    double gridChoice(int row) const;
    void showCurrent();
    // Applies an edit of the current method; shows the engine's message on `field` if refused.
    void editCurrent(QWidget* field, const std::function<void(MethodSpec&)>& change);
    void onItemChanged(QListWidgetItem* item);
    QString commit(const std::vector<MethodSpec>& specs);

    ExperimentController* controller_;
    QListWidget* list_;
    QPushButton* add_;
    QPushButton* remove_;
    QFormLayout* form_;
    QWidget* editor_;
    LogSlider* step_;
    QCheckBox* grid_;
    QSpinBox* gridMin_;
    QSpinBox* gridMax_;
    QSpinBox* noam_;
    QComboBox* delayMode_;
    QSpinBox* delta_;
    QComboBox* order_;
    QSpinBox* replicas_;
    QSpinBox* localSteps_;
    QSpinBox* flushGroup_;
    QSpinBox* accumulation_;
    QSpinBox* virtualStages_;
    QLineEdit* scheduleFile_;
    QPushButton* browseSchedule_;
    QComboBox* update_;
    CorrectorPicker* picker_;
    FieldErrors errors_;
    std::vector<MethodSpec> specs_;  // parallel to the list rows
    bool updating_ = false;
};

}  // namespace pipelens::ui

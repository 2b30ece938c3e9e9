#pragma once
// The Sweep view: pick a parameter (the axis) and its values, run the current experiment at
// each value, and watch the final value of every method fill in against it (SweepChart), with
// the progress and the time left. Cancel keeps the finished points. Clicking a point opens its
// run (the step sizes its rule chose) in the main window's charts, through the experiment
// controller. The view compares what its fields and the experiment describe with the sweep
// it shows, and says so when they differ (out of date) or while it waits for points.
#include <QWidget>
#include <optional>

#include "experiment/sweep/sweep_plot.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace pipelens::ui {

class ExperimentController;
class ScheduleComparisonView;
class SweepChart;
class SweepController;

class SweepView : public QWidget {
    Q_OBJECT
  public:
    explicit SweepView(ExperimentController* experiment, QWidget* parent = nullptr);

    SweepController* controller() const { return sweep_; }
    SweepChart* chart() const { return chart_; }
    // The comparison table, shown for a schedule sweep (axis "schedule") only.
    ScheduleComparisonView* comparisonTable() const { return table_; }
    QComboBox* axisField() const { return axis_; }
    QLineEdit* valuesField() const { return values_; }
    QSpinBox* seedsField() const { return seeds_; }
    QPushButton* runButton() const { return run_; }
    QLabel* stateLabel() const { return state_; }

    // Fills the fields from `spec` and makes its experiment the sweep's base; starts it if asked.
    void openSweep(const SweepSpec& spec, SweepMetric metric, bool start);
    // The sweep the fields describe on the base experiment; nullopt and `error` if not valid.
    std::optional<SweepSpec> pendingSpec(QString* error = nullptr) const;
    // True when the results shown are those of pendingSpec().
    bool upToDate() const;
    SweepMetric selectedMetric() const;

    void run();  // starts pendingSpec() (an invalid one is reported in the state line)
    void cancel();
    // The finished points as summary.csv (one row per point and method), as the CLI writes it.
    bool exportCsv(const QString& path, QString* error = nullptr) const;

  signals:
    // A point's run was handed to the experiment controller.
    void pointOpened(int point, int method);

  private:
    void refresh();
    void openPoint(int point, int method);
    void axisPicked();
    // The experiment the next sweep starts from: the one of the sweep shown while the
    // controller holds one of its experiments (a point opened from it), else the controller's.
    ExperimentConfig baseExperiment() const;
    // The optimizer or corrector axis: the values field's names (comma separated, as the chart
    // shows them) into `s`'s optimizers or correctors and their positions as values.
    void parseNamedValues(SweepSpec& s) const;

    ExperimentController* experiment_;
    SweepController* sweep_;
    SweepChart* chart_;
    ScheduleComparisonView* table_;
    QComboBox* axis_;
    QLineEdit* values_;
    QSpinBox* seeds_;
    QComboBox* rule_;
    QComboBox* metric_;
    QPushButton* run_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* state_;
    std::optional<SweepSpec> base_;  // the sweep opened or run last (its experiment is the base)
};

}  // namespace pipelens::ui

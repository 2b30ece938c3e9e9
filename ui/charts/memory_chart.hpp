#pragma once
// Memory per stage beside the Gantt chart (issue #31): one stacked bar per stage — weight
// versions held at once under the activations held at once (core's stageMemory) — of the Gantt
// chart's method, or one per device where a device holds several stages (interleaved or
// V-shaped imports). A "Memory budget" field (units, 0 = none) draws the bars over it in red,
// says on which stage (device) the method exceeds it, and names every pipeline method of the
// run whose peak exceeds it. The budget is remembered (QSettings "memory/budget").
//
// Units: the linear models count one stage's weights as 1 unit and one microbatch's activations
// on a stage as 1 unit; the language model counts one transformer block's parameters as 1 unit
// (its embedding and head stages are larger) and an activation as 1 unit.
#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "models/run_snapshot.hpp"
#include "schedule/stage_memory.hpp"

class QDoubleSpinBox;

namespace pipelens::ui {

class ElidingLabel;
class MemoryBars;

class MemoryChart : public QWidget {
    Q_OBJECT
  public:
    struct Bar {
        // Numbered from 1, as the Gantt chart's lanes: stage s + 1, or device r + 1.
        QString label;
        QString stages;  // a device's stages, "1, 5"
        double weights = 0.0;
        double activations = 0.0;
        int weightVersions = 0;  // of a stage; a device: the sum over its stages
        int activationCount = 0;
        double total() const { return weights + activations; }
    };

    explicit MemoryChart(QWidget* parent = nullptr);
    ~MemoryChart() override;

    // Method `method` of the snapshot (-1: none), and every pipeline method's peak for the
    // comparison line.
    void setSnapshot(const SnapshotPtr& snapshot, int method);
    // No bars; the text says what the view waits for (the language model's plan).
    void showPending(const QString& text);
    bool pending() const { return !pendingText_.isEmpty(); }

    double budget() const;
    void setBudget(double units);
    QDoubleSpinBox* budgetField() const { return budget_; }

    const std::vector<Bar>& bars() const { return bars_; }
    bool perDevice() const { return perDevice_; }
    // Indices of the bars over the budget (none without a budget).
    std::vector<int> overBudget() const;
    // "exceeds the budget of 6 units on stage 0" (empty within it or without a budget).
    QString verdict() const;
    // The run's pipeline methods whose peak exceeds the budget, by label.
    QStringList methodsOverBudget() const;
    // The lines under the bars: "PD exceeds the budget …" (or fits it) and every method's
    // peak, those over the budget named first ("Over the budget: PD 8 · within: 1F1B 5");
    // summaryText joins them with a newline.
    QString verdictLine() const;
    QString peaksLine() const;
    QString summaryText() const;
    QString emptyText() const;

    // The memory model of method `method` of `snapshot` (the language model's stage sizes).
    static MemoryModel memoryModel(const RunSnapshot& snapshot);

  signals:
    void budgetChanged(double units);

  private:
    void refresh();

    struct MethodPeak {
        QString label;
        double peak = 0.0;
    };

    MemoryBars* barsView_ = nullptr;
    QDoubleSpinBox* budget_ = nullptr;
    ElidingLabel* title_ = nullptr;
    ElidingLabel* verdict_ = nullptr;
    ElidingLabel* peaks_ = nullptr;
    std::vector<Bar> bars_;
    std::vector<MethodPeak> peakOf_;
    bool perDevice_ = false;
    QString methodLabel_;
    QString pendingText_;

    friend class MemoryBars;
};

}  // namespace pipelens::ui

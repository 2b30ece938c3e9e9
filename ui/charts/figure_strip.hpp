#pragma once
// The strip of small figures under the main charts: utilization and bubble fraction per method,
// measured max and mean delay beside the formulas, peak stashed copies per stage, the max delay
// against S (PipeDream, S = 2…32 and on to the current S; S > 32 computed on a worker thread),
// and a table of run lengths against their closed forms. Every
// number comes from the engine (DelayStats, utilization, pipeDreamMaxDelayFormula,
// pipeDreamSlotsFormula, localSgdRoundSlotsFormula).
#include <QString>
#include <QWidget>
#include <memory>
#include <vector>

#include "models/run_snapshot.hpp"

class QChartView;
class QLabel;

namespace pipelens::ui {

class DelayByStagesWorker;

class FigureStrip : public QWidget {
    Q_OBJECT
  public:
    // One number as displayed, with what it is and which method it belongs to.
    struct Value {
        QString figure;  // "utilization", "bubble", "max delay", "formula max delay", ...
        QString method;  // method label, or "S=12" for the delay-vs-S figure
        double shown = 0.0;
    };

    explicit FigureStrip(QWidget* parent = nullptr);
    ~FigureStrip() override;

    void setSnapshot(SnapshotPtr snapshot);
    // No figures, and `text` in the numbers table, while a run's schedule is being planned;
    // setSnapshot ends it.
    void showPending(const QString& text);
    SnapshotPtr snapshot() const { return snapshot_; }
    const std::vector<Value>& values() const { return values_; }
    // The value displayed for (figure, method); NaN if absent.
    double value(const QString& figure, const QString& method) const;

    QList<QChartView*> charts() const { return charts_; }
    QLabel* numbersTable() const { return numbers_; }

    bool exportPng(const QString& path, double scale, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);
    bool exportCsv(const QString& path, QString* error = nullptr) const;

  private:
    void fillUtilization(const RunSnapshot& s);
    void fillDelays(const RunSnapshot& s);
    void fillStash(const RunSnapshot& s);
    void fillDelayVsStages(const RunSnapshot& s);
    // Draws the max-delay-vs-S figure again (the worker has computed more S).
    void refreshDelayVsStages();
    void fillNumbers(const RunSnapshot& s);
    // Each figure at least as wide as its title and its legend's names (none is elided).
    void fitChartsToText();
    void add(const QString& figure, const QString& method, double shown);

    SnapshotPtr snapshot_;
    QList<QChartView*> charts_;
    QLabel* numbers_;
    std::vector<Value> values_;
    // Computes PipeDream's delays for S > 32 off the GUI thread (joined on destruction).
    std::unique_ptr<DelayByStagesWorker> delayWorker_;
};

}  // namespace pipelens::ui

#pragma once
// Schedules on equal terms, as a table: one row per method (a run's methods, or a schedule
// sweep's points) with the columns of schedule_comparison.csv — microbatches per step, the γ
// its rule chose, the final value, the slots to a common target, the bubble, the peak memory
// per stage and the run's length (core's scheduleComparison computes them; this only shows
// them). A caption names the target and what the values are.
#include <QString>
#include <QWidget>

#include "experiment/output/schedule_comparison.hpp"
#include "models/run_snapshot.hpp"

class QLabel;
class QTableWidget;

namespace pipelens::ui {

class ScheduleComparisonView : public QWidget {
    Q_OBJECT
  public:
    explicit ScheduleComparisonView(QWidget* parent = nullptr);

    // The comparison of a run's methods (a planned run: its schedules' columns only).
    void setSnapshot(const SnapshotPtr& snapshot);
    // Any comparison, e.g. a schedule sweep's (scheduleSweepComparison); `planned` leaves the
    // result columns blank.
    void setComparison(const ScheduleComparison& comparison, bool planned = false);
    void clear();

    const ScheduleComparison& comparison() const { return comparison_; }
    QTableWidget* table() const { return table_; }
    QString caption() const;
    // The table as schedule_comparison.csv.
    std::string csv() const { return scheduleComparisonCsv(comparison_); }
    // The column titles as shown (the CSV's columns, for a person).
    static QStringList columnTitles();

    QSize sizeHint() const override { return {560, 220}; }

  private:
    QLabel* caption_;
    QTableWidget* table_;
    ScheduleComparison comparison_;
    bool planned_ = false;
};

}  // namespace pipelens::ui

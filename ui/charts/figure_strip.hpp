#pragma once
// The strip of small figures under the main charts: utilization and bubble fraction per method,
// measured max and mean delay beside the formulas, peak stashed copies per stage, the max delay
// against S (PipeDream, S = 2…32 and on to the current S; S > 32 computed on a worker thread),
// and a table of run lengths against their closed forms (under the truncate budget rule: the
// microbatches that finished, the uncut timeline's N and the slot of the cut). Every
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
    // The playback cursor (slots [0, slot) done; -1: none). The strip always describes the whole
    // run: while the cursor is before the run's end, the titles of the figures that depend on the
    // run say so (a second title line, "whole run").
    void setCursorSlot(int slot);
    bool describesWholeRunNote() const { return wholeRunNote_; }
    // No figures, and `text` in the numbers table, while a run's schedule is being planned;
    // setSnapshot ends it.
    void showPending(const QString& text);
    SnapshotPtr snapshot() const { return snapshot_; }
    const std::vector<Value>& values() const { return values_; }
    // The value displayed for (figure, method); NaN if absent.
    double value(const QString& figure, const QString& method) const;

    // One row of figures (the strip under the charts), or wrapped: as many whole figures a row
    // as the strip's width holds (each column as wide as the widest figure needs), rows at least
    // kGridRowHeight high (on a tab of its own, scrolling up and down: no figure cut at the
    // edge). Wrapped, the strip asks only for the widest figure's width.
    void setWrapped(bool wrapped);
    bool wrapped() const { return wrapped_; }
    int columns() const { return columns_; }  // figures a row now
    static constexpr int kGridRowHeight = 210;
    QSize minimumSizeHint() const override;

    QList<QChartView*> charts() const { return charts_; }
    QLabel* numbersTable() const { return numbers_; }

    bool exportPng(const QString& path, double scale, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);
    bool exportCsv(const QString& path, QString* error = nullptr) const;

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    // Puts the figures in columns_ columns (wrapped: as many as the width holds).
    void placeFigures();
    int widestFigure() const;
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

    // The titles, and whether they carry the whole-run note.
    void applyTitles();

    SnapshotPtr snapshot_;
    bool wrapped_ = false;
    int columns_ = 0;
    QWidget* numbersArea_ = nullptr;
    QStringList titles_;
    int cursorSlot_ = -1;
    bool wholeRunNote_ = false;
    QList<QChartView*> charts_;
    QLabel* numbers_;
    std::vector<Value> values_;
    // Computes PipeDream's delays for S > 32 off the GUI thread (joined on destruction).
    std::unique_ptr<DelayByStagesWorker> delayWorker_;
};

}  // namespace pipelens::ui

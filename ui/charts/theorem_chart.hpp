#pragma once
// The convergence theorem of SPEC section 4 for one RPD run, on a chart of its own: the running
// mean of ‖∇f(w_k)‖² (the theorem's left side) against the bound 2SΔ₀/(γK) + γSLG² + γ²L²δ²G²
// and its three terms, at every sampled K (block updates), on a logarithmic ‖∇f‖² axis. The
// five lines differ in colour and dash, named in a legend that wraps rather than elides; the run
// is chosen among the snapshot's RPD methods.
#include <QWidget>

#include "models/run_snapshot.hpp"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;

namespace pipelens::ui {

class LineLegend;

class TheoremChart : public QWidget {
    Q_OBJECT
  public:
    // The lines, in the order of series().
    enum Line { MeanGradNormSq, Bound, OptimisationTerm, NoiseTerm, StalenessTerm, LineCount };

    explicit TheoremChart(QWidget* parent = nullptr);

    // Shows the selected RPD run of `snapshot` (the one of the same label as before, else the
    // first); a snapshot without RPD, or without ‖∇f‖² samples, shows a note instead.
    void setSnapshot(SnapshotPtr snapshot);
    // Selects the RPD method at `method` (its index in the snapshot); false if it is not one.
    bool selectMethod(int method);
    // Playback: only the samples up to the updates the run has done by `slot` are drawn (the
    // axes keep the whole run); -1 draws everything.
    void setCursorSlot(int slot);
    int cursorSlot() const { return cursor_; }
    // The snapshot index of the run shown, -1 when none.
    int selectedMethod() const;
    // True when the snapshot has RPD runs but no ‖∇f‖² samples (the runs must sample them).
    bool needsGradNormSamples() const { return needsSamples_; }

    QChart* chart() const;
    QChartView* view() const { return view_; }
    QComboBox* runField() const { return run_; }
    // The legend under the chart (it wraps instead of eliding the names).
    LineLegend* legend() const { return legend_; }
    // One series per Line (empty while nothing is shown).
    QList<QLineSeries*> series() const { return series_; }
    QString note() const;

    bool exportPng(const QString& path, double scale, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);
    // line,updates,value: every point of the five lines (the terms' 0 included).
    bool exportCsv(const QString& path, QString* error = nullptr) const;

  private:
    void listRuns();
    void rebuild();
    void refillPoints();

    SnapshotPtr snapshot_;
    bool needsSamples_ = false;
    int cursor_ = -1;
    QComboBox* run_;
    QWidget* plot_;  // the chart and its legend: what is exported
    QChartView* view_;
    LineLegend* legend_;
    QLabel* note_;
    QList<QLineSeries*> series_;
};

}  // namespace pipelens::ui

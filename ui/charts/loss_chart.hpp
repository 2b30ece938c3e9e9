#pragma once
// Loss curves (Qt Charts): f − f* of every method against slots or block updates, overlaid with
// a legend, on linear or logarithmic axes, truncated at the playback cursor. A "smooth" weight
// draws every curve as its exponential moving average (TensorBoard's, debiased) over the raw
// curve, faint. Hovering reads out every curve's value at the x under the pointer, along a
// vertical guide; a rubber band zooms (reset zoom undoes it); finished runs can be pinned (up to
// kMaxPins) and stay drawn, dashed and faded, a dash pattern per pin, under the runs of the next
// settings. Its "theorem chart" box asks for the theorem's own chart (TheoremChart) beside it.
// Series are replaced in bulk (QXYSeries::replace) and decimated to a few thousand points.
#include <QColor>
#include <QPointF>
#include <QWidget>
#include <memory>
#include <vector>

#include "models/run_snapshot.hpp"

class QCheckBox;
class QAbstractAxis;
class QChart;
class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QGraphicsEllipseItem;
class QGraphicsLineItem;
class QLineSeries;
class QToolButton;

namespace pipelens::ui {

class LineLegend;

class LossChart : public QWidget {
    Q_OBJECT
  public:
    enum class XAxis { Slots, Updates };

    explicit LossChart(QWidget* parent = nullptr);

    void setSnapshot(SnapshotPtr snapshot);
    SnapshotPtr snapshot() const { return snapshot_; }
    // A new config is computing: no curve of an earlier run is shown; the title names `plan`'s
    // S and says so, the x range is `plan`'s whole run, and the live curves that follow are
    // named from `plan` exactly as the finished run's will be.
    void setComputing(SnapshotPtr plan);
    bool computing() const { return live_; }
    // The run that was computing failed: no curve, and the title says so with `reason` (a
    // failed run is neither shown as computing nor as an earlier result). The next
    // setComputing or setSnapshot ends it.
    void setFailed(const QString& reason);
    QString failure() const { return failure_; }
    // What the y axis is: "f − f*", or the language model's "loss (nats)".
    QString yAxisTitle() const;
    // The curves of a run in flight, drawn whole (no cursor) until the next setSnapshot. The
    // series are kept when the methods are the same, so the chart does not flicker.
    // `totalSlots` / `totalUpdates` (when known) fix the x range to the whole run.
    void setLive(const std::vector<LiveCurve>& curves, double totalSlots = 0.0,
                 double totalUpdates = 0.0);
    bool showingLive() const { return live_; }
    // Points after `slot` slots are hidden (playback); -1 shows the whole run.
    void setCursorSlot(int slot);
    int cursorSlot() const { return cursor_; }

    void setXAxis(XAxis axis);
    XAxis xAxis() const { return xAxis_; }
    void setLogY(bool on);
    void setLogX(bool on);
    bool logY() const;
    bool logX() const;
    void setTheoremChartShown(bool on);
    bool theoremChartShown() const;

    // Smoothing: the weight w of an exponential moving average over each curve's recorded
    // points (0: off, at most 0.99), drawn at full colour over the raw curve, faint. Kept in
    // QSettings ("lossChart/smoothing"), so the next start shows the same.
    void setSmoothing(double weight);
    double smoothing() const { return smoothing_; }
    QDoubleSpinBox* smoothingBox() const { return smooth_; }
    // The faint raw curves behind the smoothed ones (the run's, then the pins'), in the order
    // of methodSeries() + pinnedSeries(); empty while smoothing is off.
    QList<QLineSeries*> rawSeries() const { return rawSeries_; }
    // What method i's line draws, full resolution: methodData(i) smoothed (or itself when off).
    const std::vector<QPointF>& methodDrawnData(int i) const;

    // What hovering at `viewPos` (viewport coordinates) reads out: for the x under the pointer,
    // every curve's (the run's, then the pinned ones') drawn value at its last recorded point at
    // or before x (none before its first point or past its end or the playback cursor). method,
    // pinned, name, x and y are those of the line whose value is drawn nearest the pointer (the
    // marker's); method is -1 when no curve has a value there (nothing is shown).
    struct ReadoutLine {
        QString name;
        QColor colour;
        bool pinned = false;
        bool hasValue = false;
        double x = 0.0;    // the point read
        double y = 0.0;    // its drawn value (smoothed when smoothing is on)
        double raw = 0.0;  // its recorded value
    };
    struct Readout {
        int method = -1;
        bool pinned = false;
        QString name;
        double x = 0.0;
        double y = 0.0;
        double atX = 0.0;  // the x under the pointer
        QList<ReadoutLine> lines;
        QString text;  // plain: a line for x, then one per curve
    };
    Readout readoutAt(const QPointF& viewPos) const;
    // The floating readout label (shown while hovering the plot) and the vertical guide at x.
    QLabel* readoutLabel() const { return readout_; }
    QGraphicsLineItem* readoutGuide() const { return guide_; }
    // A value as the readout writes it: 4 significant digits, scientific below 1e-3 and from
    // 1e4 on.
    static QString readoutNumber(double v);

    // Zoom: a rubber band on the chart zooms in (right click zooms out); resetZoom shows the
    // whole run again. A zoom is kept through playback, live updates and new runs.
    bool zoomed() const { return zoomed_; }
    void resetZoom();
    QToolButton* resetZoomButton() const { return resetZoom_; }

    // Pins the finished run shown: its curves stay, dashed and faded (a dash pattern per pin),
    // named "pin N: …", listed in the pins selector with its settings, until unpinned. With
    // kMaxPins pinned, the oldest pin goes. False when there is no finished run to pin.
    static constexpr int kMaxPins = 8;
    bool pin();
    void unpin();  // every pin
    // Removes the pin at `index` (0: the oldest); false when there is none.
    bool removePin(int index);
    struct PinInfo {
        int number = 0;  // "pin N", in pinning order (from 1 again once none is left)
        SnapshotPtr snapshot;
        QString settings;
    };
    QList<PinInfo> pins() const;
    int pinCount() const { return static_cast<int>(pins_.size()); }
    // The latest pin's run and settings (null / empty when none).
    SnapshotPtr pinned() const;
    QString pinnedSettings() const;
    // Every pin's lines, oldest pin first, each in method order.
    QList<QLineSeries*> pinnedSeries() const { return pinnedSeries_; }
    QToolButton* pinButton() const { return pin_; }
    // The pins, "pin N: settings" (hidden while none), and the button that removes the one
    // selected there (its menu: unpin all).
    QComboBox* pinSelector() const { return pinList_; }
    QToolButton* unpinButton() const { return unpin_; }

    QChartView* view() const { return view_; }
    // The chart and its legend: what the PNG and SVG exports show.
    QWidget* plot() const { return plot_; }
    LineLegend* legend() const { return legend_; }
    QChart* chart() const;
    // One line per method (in config order). An uncorrected twin's line (the same method
    // without its correctors, models/uncorrected_twin.hpp) is dashed, in its partner's colour.
    QList<QLineSeries*> methodSeries() const { return methodSeries_; }
    // The language model's reference line: a uniform guess's loss log V (dashed, grey), once a
    // run's corpus is known; nullptr otherwise.
    QLineSeries* uniformGuessSeries() const { return uniformGuess_; }
    // The full-resolution data of method i on the current x axis (what the CSV holds).
    const std::vector<QPointF>& methodData(int i) const;
    // Axis label texts as drawn (for the "no row of 0.0" check).
    QStringList yAxisLabels() const;

    bool exportPng(const QString& path, double scale, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);
    bool exportCsv(const QString& path, QString* error = nullptr) const;

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    // Labels that fit one above another on the log y axis at the view's height (2 to 8).
    int logLabelCapacity() const;

  signals:
    // The person asked for (or hid) the theorem's chart.
    void theoremChartToggled(bool on);

  private:
    static constexpr double kLogFloor = 1e-16;  // f − f* at or below this is drawn at the floor
    // A drawn line: its points (from the snapshot, or a copy of a live curve) and legend name.
    struct Curve {
        QString name;
        std::shared_ptr<const CurvePoints> points;
        std::shared_ptr<const CurvePoints> smoothed;  // while smoothing is on
        int method = 0;
        QColor colour;  // the method's family colour (charts/method_colours.hpp)
        // An uncorrected twin (models/uncorrected_twin.hpp): dashed, in its partner's colour.
        bool twin = false;
    };
    struct Pin {
        int number = 0;
        SnapshotPtr snapshot;
        QString settings;
        std::vector<Curve> curves;
    };
    void rebuildData();
    void rebuildSeries();
    void rebuildAxes();
    // The chart's one x and one y axis, replaced only when their scale (log / linear) changes;
    // every series is attached to both.
    // Returns true when an axis was replaced.
    bool ensureAxes();
    void showReadout(const QPointF& viewPos);
    QString curveName(const MethodRun& run, double stepSize) const;
    void updateTitle();
    void refreshPoints();
    const std::vector<QPointF>& pointsOf(const Curve& c) const;
    const std::vector<QPointF>& drawnOf(const Curve& c) const;  // smoothed when on
    void smoothCurve(Curve& c) const;
    void smoothAll();
    void updatePinList();
    void hideReadout();
    QString readoutHtml(const Readout& r) const;
    double cursorX(int method) const;

    // The language model has no f*: the curves are its last-stage forward loss, and the labels
    // say so (from the snapshot or plan shown).
    void showQuantity(const SnapshotPtr& of);
    QString quantityName() const;

    SnapshotPtr snapshot_;
    SnapshotPtr plan_;  // of the run in flight (setComputing)
    QString failure_;   // why the last run gave no result (setFailed)
    bool languageModel_ = false;
    QLabel* heading_ = nullptr;
    QAbstractAxis* xAxisItem_ = nullptr;
    QAbstractAxis* yAxisItem_ = nullptr;
    int cursor_ = -1;
    int builtLabelCapacity_ = 8;  // logLabelCapacity() when the y axis was last built
    bool live_ = false;
    double liveSlots_ = 0.0;
    double liveUpdates_ = 0.0;
    XAxis xAxis_ = XAxis::Slots;
    QWidget* plot_;  // the chart view and its legend
    QChartView* view_;
    LineLegend* legend_;
    QComboBox* xChoice_;
    QCheckBox* logY_;
    QCheckBox* logX_;
    QCheckBox* theorem_;
    QLabel* note_;
    std::vector<Curve> curves_;  // one per method
    QList<QLineSeries*> methodSeries_;
    double smoothing_ = 0.0;
    QDoubleSpinBox* smooth_;
    QList<QLineSeries*> rawSeries_;
    std::vector<Pin> pins_;
    int nextPin_ = 1;
    std::vector<Curve> pinnedCurves_;  // every pin's, flattened as pinnedSeries_
    QList<QLineSeries*> pinnedSeries_;
    QLineSeries* uniformGuess_ = nullptr;
    double uniformGuessLoss_ = 0.0;  // log V of the snapshot's corpus; 0 when none
    bool zoomed_ = false;
    bool settingRanges_ = false;  // the chart sets its own ranges: not a zoom
    QToolButton* pin_;
    QComboBox* pinList_;
    QToolButton* unpin_;
    QToolButton* resetZoom_;
    QLabel* readout_;
    QGraphicsEllipseItem* marker_;
    QGraphicsLineItem* guide_;
};

// TensorBoard's smoothing: s_t = w·s_{t−1} + (1 − w)·x_t from s_0 = 0, drawn debiased as
// s_t / (1 − w^t), t counting the points since the start. A NaN or infinite value is kept as it
// is and starts the average afresh after it (nothing is averaged across it). w ≤ 0: the points.
std::vector<QPointF> smoothEma(const std::vector<QPointF>& points, double weight);

// Keeps at most about `maxPoints` points: per bucket of x the first, min, max and last points,
// so spikes and the curve's envelope survive.
QList<QPointF> decimate(const std::vector<QPointF>& points, size_t count, int maxPoints);

}  // namespace pipelens::ui

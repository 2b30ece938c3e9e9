#pragma once
// The Sweep view's chart: the final value of each method against the swept parameter, one
// marker per finished point with a mean ± sd bar over seeds, on log axes where the numbers span
// decades (core's sweepPlot decides what is drawn; this only paints). Hovering a marker shows
// the value and the γ its rule chose; clicking it asks for that point's run. A banner says when
// the chart waits for points or shows results that are out of date (then dimmed).
#include <QString>
#include <QStringList>
#include <QWidget>
#include <optional>
#include <vector>

#include "experiment/sweep/sweep_plot.hpp"

namespace pipelens::ui {

class SweepChart : public QWidget {
    Q_OBJECT
  public:
    explicit SweepChart(QWidget* parent = nullptr);

    // The plot to draw; `current` false dims it (results of other parameters).
    void setPlot(const SweepPlot& plot, bool current);
    void clear();
    const SweepPlot& plot() const { return plot_; }
    bool current() const { return current_; }
    // A line over the plot ("Waiting for the first point…", "Out of date: …"); empty: none.
    void setBanner(const QString& text);
    QString banner() const { return banner_; }
    // The banner as drawn at `width` (the widget's by default): whole words on as many lines as
    // it needs, never elided.
    QStringList bannerLines(int width = -1) const;

    // The point (index in the sweep) whose run the other views show, ringed on every series
    // and named in the legend by `note` ("ringed: δ = 30, the run the other views show");
    // -1: none.
    void setOpenPoint(int point, const QString& note);
    int openPoint() const { return openPoint_; }
    // The legend's entries as drawn at the widget's size (the series' labels, then the note).
    QStringList legendTexts() const;

    // Where a marker is drawn (widget coordinates); nullopt if it is not drawn.
    std::optional<QPointF> markerPosition(std::size_t series, std::size_t point) const;
    // The marker under `pos` (series, index in its points), if any.
    std::optional<std::pair<std::size_t, std::size_t>> markerAt(const QPointF& pos) const;
    // The tooltip of a marker (what hovering shows).
    QString markerText(std::size_t series, std::size_t point) const;

    bool exportPng(const QString& path, double scale, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);

    QSize sizeHint() const override { return {400, 380}; }
    QSize minimumSizeHint() const override { return {300, 220}; }

  signals:
    // A finished point's marker was clicked: its index in the sweep and the method's index.
    void pointClicked(int point, int method);

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

  private:
    struct Frame {
        QRectF plot;                                // the data area
        double xLo = 0, xHi = 1, yLo = 0, yHi = 1;  // axis ends (log10 on log axes)
        double mapX(double v, bool log) const;
        double mapY(double v, bool log) const;
    };
    Frame frame(const QSize& size) const;
    void paint(QPainter& p, const QSize& size) const;
    void paintAxes(QPainter& p, const Frame& f) const;
    // The x tick label at `v`: its category's name on a categorical axis, else the number.
    QString xLabel(double v) const;
    void paintSeries(QPainter& p, const Frame& f) const;
    // Series s's colour: its method family's (charts/method_colours.hpp).
    QColor seriesColour(std::size_t s) const;
    // The legend flows in rows under the plot (a side legend would take a narrow dock's width).
    struct LegendEntry {
        QRectF box;
        QString text;
    };
    std::vector<LegendEntry> legendLayout(double left, double top, double width) const;
    void paintLegend(QPainter& p, const std::vector<LegendEntry>& entries) const;

    SweepPlot plot_;
    bool hasPlot_ = false;
    bool current_ = true;
    QString banner_;
    int openPoint_ = -1;
    QString openNote_;
    // Whether some series has a finished point `openPoint_` (then it is ringed and noted).
    bool openPointShown() const;
    double bannerHeight(int width) const;
};

}  // namespace pipelens::ui

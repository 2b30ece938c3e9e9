#pragma once
// The base of the hand-drawn charts whose x axis is a zoomable range of a run (GanttChart:
// slots; StalenessHeatmap: block updates). It owns the visible range and the interaction that
// is the same for both: wheel zoom, drag pan, click, keys, tooltips, and PNG / SVG / CSV export.
// A chart supplies its extent, its plot area, its painting, its CSV and its hover text.
#include <QByteArray>
#include <QString>
#include <QWidget>

#include "charts/chart_support.hpp"

class QPainter;

namespace pipelens::ui {

class RangeChart : public QWidget {
    Q_OBJECT
  public:
    // Visible x range (zoom/pan), clamped to the run; fitAll() shows the whole run.
    void setVisibleRange(double first, double last);
    void fitAll();
    double visibleFirst() const { return range_.first; }
    double visibleLast() const { return range_.last; }
    // Whether part of the run is hidden (zoomed in); false with nothing to show.
    bool zoomedIn() const { return hasContent() && (range_.first > 0.0 || range_.last < extent()); }

    // Paints the chart as the widget shows it at `size` (vectorCells: one rectangle per cell,
    // for SVG). Used by the exports and the redraw benchmark.
    virtual void paintChart(QPainter& painter, const QSize& size,
                            bool vectorCells = false) const = 0;

    // Export: PNG at a scale factor (e.g. 2.0 for HiDPI), SVG, and CSV of the data drawn; each
    // written to a temporary file renamed into place.
    // `size`: the picture's size before scaling (default: the widget's).
    bool exportPng(const QString& path, double scale = 1.0, QString* error = nullptr,
                   QSize size = QSize()) const;
    bool exportSvg(const QString& path, QString* error = nullptr) const;
    bool exportCsv(const QString& path, QString* error = nullptr) const;
    // The method the chart shows, named in its PNG and SVG exports (the window shows it in the
    // combo box above the chart, which an export of the chart alone does not hold) and in its
    // CSV's method column.
    void setExportTitle(const QString& title) { exportTitle_ = title; }
    QString exportTitle() const { return exportTitle_; }
    // The plot (cells) rectangle as drawn now, in widget coordinates.
    QRectF plotRect() const { return plotArea(); }

  signals:
    void visibleRangeChanged(double first, double last);

  protected:
    // `minVisible`: the narrowest range zoom allows; `svgTitle`: the exported SVG's title.
    RangeChart(double minVisible, QString svgTitle, QWidget* parent);

    const chart::XRange& visibleRange() const { return range_; }
    // True while paintChart draws for an export: the chart names its method and leaves out
    // what only helps on screen (the playback cursor's note).
    bool exporting() const { return exporting_; }
    // Length of the x axis (slots, updates); 0 when there is nothing to show.
    virtual double extent() const = 0;
    // The plot (cells) area in widget coordinates at the widget's current size.
    virtual QRectF plotArea() const = 0;
    virtual QByteArray csv() const = 0;
    // The hover text at a widget position; empty for none.
    virtual QString toolTipAt(const QPointF& position) const = 0;
    // A click (press and release without a drag) in the plot, at the x boundary nearest the
    // pointer (0 ... extent).
    virtual void boundaryClicked(long long boundary) = 0;

    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;  // tooltips

  private:
    bool hasContent() const { return extent() > 0.0; }
    void paintForExport(QPainter& painter, const QSize& size, bool vectorCells) const;
    double valueAtX(const QRectF& plot, double x) const {
        return range_.first + (x - plot.left()) / plot.width() * range_.span();
    }

    double minVisible_;
    QString svgTitle_;
    QString exportTitle_;
    mutable bool exporting_ = false;
    chart::XRange range_;
    chart::RangeNavigation navigation_;
};

}  // namespace pipelens::ui

#pragma once
// The staleness heatmap: blocks (rows) by block updates (columns), colour = the delay
// k - h(m, j) of update k's read of block j, with a colour bar, the theoretical maximum
// S^2 - S/2 beside the measured maximum and mean, and a hover readout. Columns narrower than a
// pixel are aggregated (the maximum delay they cover is drawn).
#include <QWidget>
#include <memory>

#include "replay/delays.hpp"

class QPainter;

namespace pipelens::ui {

class StalenessHeatmap : public QWidget {
    Q_OBJECT
public:
    explicit StalenessHeatmap(QWidget* parent = nullptr);
    ~StalenessHeatmap() override;

    void setDelays(std::shared_ptr<const DelayTable> delays);
    std::shared_ptr<const DelayTable> delays() const;

    // Updates [0, cursor) are shown; -1 shows all.
    void setCursorUpdate(long long update);
    long long cursorUpdate() const;

    // The delay the heatmap shows for update k and block j (what the colour encodes); -1 for a
    // cell not shown (out of range or at/after the cursor).
    long long valueAt(long long update, int block) const;
    // Measured max and mean over the shown updates' second half, and the formula max.
    double measuredMax() const;
    double measuredMean() const;
    double formulaMax() const;
    QString cellDescription(long long update, int block) const;

    // The cell under a widget position: the update whose delay the pixel column shows (the
    // largest of the updates [firstUpdate, lastUpdate] it covers) and the block (from 0).
    bool cellAtPosition(const QPointF& position, long long* update, int* block,
                        long long* firstUpdate = nullptr, long long* lastUpdate = nullptr) const;

    void setVisibleRange(double firstUpdate, double lastUpdate);
    void fitAll();
    double visibleFirstUpdate() const;
    double visibleLastUpdate() const;
    // Paints the heatmap as the widget shows it at `size` (vectorCells: one rectangle per cell
    // where that is not more than the pixels, for SVG). Used by the exports and the benchmark.
    void paintChart(QPainter& painter, const QSize& size, bool vectorCells = false) const;

    bool exportPng(const QString& path, double scale = 1.0, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);
    bool exportCsv(const QString& path, QString* error = nullptr) const;

    QSize sizeHint() const override;

signals:
    void visibleRangeChanged(double firstUpdate, double lastUpdate);
    // A click (no drag) in the plot: the number of block updates done at the pointer, for the
    // playback cursor.
    void updateClicked(long long updatesDone);

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

}  // namespace pipelens::ui

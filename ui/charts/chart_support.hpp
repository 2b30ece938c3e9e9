#pragma once
// Helpers shared by the hand-drawn charts (GanttChart, StalenessHeatmap): the zoomable x range,
// tick spacing, colours, and atomic PNG / SVG / CSV export. Internal to ui/.
#include <QColor>
#include <QPointF>
#include <QRgb>
#include <QSize>
#include <QString>
#include <functional>

class QPainter;
class QRectF;

namespace pipelens::ui::chart {

// Okabe-Ito colours: distinguishable under the common colour-vision deficiencies.
inline constexpr QRgb kBlue = 0xff0072b2;
inline constexpr QRgb kOrange = 0xffe69f00;
inline constexpr QRgb kPurple = 0xffcc79a7;
inline constexpr QRgb kVermillion = 0xffd55e00;
inline constexpr QRgb kSkyBlue = 0xff56b4e9;
// The Gantt chart's forward and backward cells: colours no method family uses
// (charts/method_colours.hpp), so a cell is never read as a method.
inline constexpr QRgb kGanttForward = kSkyBlue;
inline constexpr QRgb kGanttBackward = kOrange;

// The part of [0, total) shown along x. Spans never exceed `total` nor go below `minSpan`.
struct XRange {
    double first = 0.0;
    double last = 1.0;

    double span() const { return last - first; }
    // Returns true if the range changed.
    bool set(double newFirst, double newLast, double total, double minSpan);
    // Scales the span by `factor` keeping the value at `anchor` where it is.
    bool zoom(double anchor, double factor, double total, double minSpan);
    bool pan(double delta, double total, double minSpan);
};

// Zoom and pan of a chart's visible x range by the wheel, a drag and the keys (+/-, arrows,
// Home), shared by the Gantt chart and the heatmap. Each call updates `range` in place and
// returns whether it changed; the chart then applies it with its own setVisibleRange.
class RangeNavigation {
  public:
    static constexpr double kWheelStep = 0.8;  // one wheel notch or +/- shows 80 % of the span

    explicit RangeNavigation(double minSpan) : minSpan_(minSpan) {}

    // Zooms around `anchor` (the value under the pointer, clamped into the range).
    bool wheel(XRange& range, double anchor, double angleDeltaY, double total) const;
    void beginDrag(const QPointF& at, const XRange& range);
    bool dragging() const { return dragging_; }
    // Pans so the value grabbed at the drag's start stays under the pointer.
    bool dragTo(XRange& range, const QPointF& at, double plotWidth, double total) const;
    // Ends a drag; returns true when press and release were a click (moved less than the
    // platform's drag distance).
    bool endDrag(const QPointF& at);

    enum class KeyResult { Ignored, Changed, FitAll };
    KeyResult key(int qtKey, XRange& range, double total) const;

  private:
    double minSpan_;
    bool dragging_ = false;
    QPointF dragOrigin_;
    XRange dragRange_;
};

// A tick step of 1, 2 or 5 times a power of ten (at least `minStep`) whose ticks are at least
// `minPixels` apart when one unit is `pixelsPerUnit` wide.
double niceTickStep(double pixelsPerUnit, double minPixels, double minStep = 1.0);

// Fills `outer` except `inner` (four bands).
void fillAround(QPainter& painter, const QRectF& outer, const QRectF& inner, const QColor& colour);

// Draws `text` centred in `rect` in a muted colour (the empty state of a chart).
void drawEmptyState(QPainter& painter, const QRectF& rect, const QString& text);

// Hatching "/" as plain lines over `rect`, one every `period` pixels, each cut to the rectangle
// by hand: a pattern brush becomes an SVG <pattern> under a <mask> that renderers other than
// Qt's draw differently (or not at all), and a clip path is not needed for lines cut exactly.
void drawHatch(QPainter& painter, const QRectF& rect, const QColor& ink, double period);

using PaintFunction = std::function<void(QPainter&)>;

// Paints at `logicalSize` * `scale` pixels (the painter sees logical coordinates) and writes the
// PNG through a temporary file that is renamed into place.
bool exportPngImage(const QString& path, const QSize& logicalSize, double scale,
                    const PaintFunction& paint, QString* error);
// The SVG at the screen's resolution (text as large as on screen), each line of text one
// <text> element (joinSvgTextRuns).
bool exportSvgImage(const QString& path, const QSize& logicalSize, const QString& title,
                    const PaintFunction& paint, QString* error);
// The primary screen's logical dots per inch (96 where there is none).
int screenDpi();
bool writeTextFileAtomically(const QString& path, const QByteArray& contents, QString* error);

// Every export checks its target first, before drawing anything: an existing target must be a
// regular file (core's checkFileTarget: a FIFO, device, socket or folder is refused; a symbolic
// link is written through, as QSaveFile does). False with *error naming the path and what it is.
bool checkExportTarget(const QString& path, QString* error);

// The largest PNG an export draws: 16384 pixels per side and 2^28 pixels (1 GiB at 4 bytes per
// pixel) in all. imageSizeProblem says why `width` x `height` is over it (empty when it is not).
inline constexpr qint64 kMaxImageSide = 16384;
inline constexpr qint64 kMaxImagePixels = qint64(1) << 28;
QString imageSizeProblem(qint64 width, qint64 height);

}  // namespace pipelens::ui::chart

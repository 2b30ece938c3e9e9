#include "charts/chart_support.hpp"

#include <QBuffer>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QScreen>
#include <QStyleHints>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

#include "charts/svg_text_runs.hpp"
#include "util/file_target.hpp"

namespace pipelens::ui::chart {

bool XRange::set(double newFirst, double newLast, double total, double minSpan) {
    if (!std::isfinite(newFirst) || !std::isfinite(newLast)) return false;
    if (newLast < newFirst) std::swap(newFirst, newLast);
    total = std::max(total, 1e-9);
    const double span = std::clamp(newLast - newFirst, std::min(minSpan, total), total);
    // Keep the requested centre when the span had to grow.
    double start = (newFirst + newLast) / 2.0 - span / 2.0;
    if (newLast - newFirst == span) start = newFirst;
    start = std::clamp(start, 0.0, total - span);
    const bool changed = start != first || start + span != last;
    first = start;
    last = start + span;
    return changed;
}

bool XRange::zoom(double anchor, double factor, double total, double minSpan) {
    if (!(factor > 0.0)) return false;
    return set(anchor - (anchor - first) * factor, anchor + (last - anchor) * factor, total,
               minSpan);
}

bool XRange::pan(double delta, double total, double minSpan) {
    return set(first + delta, last + delta, total, minSpan);
}

bool RangeNavigation::wheel(XRange& range, double anchor, double angleDeltaY, double total) const {
    const double notches = angleDeltaY / 120.0;
    if (notches == 0.0) return false;
    return range.zoom(std::clamp(anchor, range.first, range.last), std::pow(kWheelStep, notches),
                      total, minSpan_);
}

void RangeNavigation::beginDrag(const QPointF& at, const XRange& range) {
    dragging_ = true;
    dragOrigin_ = at;
    dragRange_ = range;
}

bool RangeNavigation::dragTo(XRange& range, const QPointF& at, double plotWidth,
                             double total) const {
    if (!dragging_ || !(plotWidth > 0.0)) return false;
    range = dragRange_;
    range.pan(-(at.x() - dragOrigin_.x()) / plotWidth * range.span(), total, minSpan_);
    return true;
}

bool RangeNavigation::endDrag(const QPointF& at) {
    dragging_ = false;
    return (at - dragOrigin_).manhattanLength() <
           QGuiApplication::styleHints()->startDragDistance();
}

RangeNavigation::KeyResult RangeNavigation::key(int qtKey, XRange& range, double total) const {
    const double centre = (range.first + range.last) / 2.0;
    switch (qtKey) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            range.zoom(centre, kWheelStep, total, minSpan_);
            break;
        case Qt::Key_Minus:
            range.zoom(centre, 1.0 / kWheelStep, total, minSpan_);
            break;
        case Qt::Key_Left:
            range.pan(-0.1 * range.span(), total, minSpan_);
            break;
        case Qt::Key_Right:
            range.pan(0.1 * range.span(), total, minSpan_);
            break;
        case Qt::Key_Home:
            return KeyResult::FitAll;
        default:
            return KeyResult::Ignored;
    }
    return KeyResult::Changed;
}

double niceTickStep(double pixelsPerUnit, double minPixels, double minStep) {
    if (!(pixelsPerUnit > 0.0)) return minStep;
    const double raw = std::max(minStep, minPixels / pixelsPerUnit);
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * decade >= raw) return m * decade;
    }
    return 10.0 * decade;
}

void fillAround(QPainter& painter, const QRectF& outer, const QRectF& inner, const QColor& colour) {
    painter.fillRect(QRectF(outer.left(), outer.top(), outer.width(), inner.top() - outer.top()),
                     colour);
    painter.fillRect(
        QRectF(outer.left(), inner.bottom(), outer.width(), outer.bottom() - inner.bottom()),
        colour);
    painter.fillRect(QRectF(outer.left(), inner.top(), inner.left() - outer.left(), inner.height()),
                     colour);
    painter.fillRect(
        QRectF(inner.right(), inner.top(), outer.right() - inner.right(), inner.height()), colour);
}

void drawEmptyState(QPainter& painter, const QRectF& rect, const QString& text) {
    painter.save();
    painter.setPen(QColor(110, 110, 110));
    painter.drawText(rect, Qt::AlignCenter | Qt::TextWordWrap, text);
    painter.restore();
}

namespace {

void setError(QString* error, const QString& message) {
    if (error) *error = message;
}

}  // namespace

bool checkExportTarget(const QString& path, QString* error) {
    const std::string target = path.toStdString();
    const std::string kind = nonRegularFileKind(target);
    if (kind.empty()) return true;
    setError(error, QString::fromStdString(nonRegularFileMessage(target, kind)));
    return false;
}

QString imageSizeProblem(qint64 width, qint64 height) {
    if (width <= kMaxImageSide && height <= kMaxImageSide && width * height <= kMaxImagePixels) {
        return {};
    }
    return QStringLiteral(
               "an image of %1 x %2 pixels (%3 pixels) is over the limit of %4 pixels "
               "per side and %5 pixels in all")
        .arg(width)
        .arg(height)
        .arg(width * height)
        .arg(kMaxImageSide)
        .arg(kMaxImagePixels);
}

bool exportPngImage(const QString& path, const QSize& logicalSize, double scale,
                    const PaintFunction& paint, QString* error) {
    if (!checkExportTarget(path, error)) return false;
    if (!(scale > 0.0) || scale > 16.0) {
        setError(error,
                 QStringLiteral("scale = %1 is not allowed: a number in (0, 16]").arg(scale));
        return false;
    }
    const QSize pixels(qRound(logicalSize.width() * scale), qRound(logicalSize.height() * scale));
    if (pixels.isEmpty()) {
        setError(error, QStringLiteral("the chart has no area to export (%1 x %2 pixels)")
                            .arg(pixels.width())
                            .arg(pixels.height()));
        return false;
    }
    if (const QString problem = imageSizeProblem(pixels.width(), pixels.height());
        !problem.isEmpty()) {
        setError(error, QStringLiteral("cannot export %1: %2").arg(path, problem));
        return false;
    }
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        paint(painter);
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        setError(error, QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    if (!image.save(&file, "PNG")) {
        file.cancelWriting();
        setError(error, QStringLiteral("cannot encode PNG for %1").arg(path));
        return false;
    }
    if (!file.commit()) {
        setError(error, QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

bool exportSvgImage(const QString& path, const QSize& logicalSize, const QString& title,
                    const PaintFunction& paint, QString* error) {
    if (!checkExportTarget(path, error)) return false;
    if (logicalSize.isEmpty()) {
        setError(error, QStringLiteral("the chart has no area to export"));
        return false;
    }
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    {
        QSvgGenerator generator;
        generator.setOutputDevice(&buffer);
        generator.setSize(logicalSize);
        generator.setViewBox(QRect(QPoint(0, 0), logicalSize));
        // The screen's resolution: a font of 9 pt is as many SVG units tall as it is pixels on
        // screen, and text is laid out with the metrics the widgets used (the default, 72 dpi,
        // made text a quarter smaller than on screen).
        generator.setResolution(screenDpi());
        generator.setTitle(title);
        generator.setDescription(QStringLiteral("Exported by PipeLens"));
        QPainter painter;
        if (!painter.begin(&generator)) {
            setError(error, QStringLiteral("cannot start an SVG painter for %1").arg(path));
            return false;
        }
        paint(painter);
        painter.end();
    }
    return writeTextFileAtomically(path, joinSvgTextRuns(buffer.data()), error);
}

int screenDpi() {
    const QScreen* screen = QGuiApplication::primaryScreen();
    return screen ? qRound(screen->logicalDotsPerInchY()) : 96;
}

bool writeTextFileAtomically(const QString& path, const QByteArray& contents, QString* error) {
    if (!checkExportTarget(path, error)) return false;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        setError(error, QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    if (file.write(contents) != contents.size() || !file.commit()) {
        setError(error, QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

void drawHatch(QPainter& p, const QRectF& rect, const QColor& ink, double period) {
    if (rect.width() <= 0 || rect.height() <= 0) return;
    // The lines x + y = c, c = left + top + k·period, through the rectangle.
    std::vector<QLineF> lines;
    const double c0 = rect.left() + rect.top();
    const double c1 = rect.right() + rect.bottom();
    for (double c = c0 + period; c < c1; c += period) {
        const double x0 = std::max(rect.left(), c - rect.bottom());
        const double x1 = std::min(rect.right(), c - rect.top());
        if (x1 > x0) lines.emplace_back(QPointF(x0, c - x0), QPointF(x1, c - x1));
    }
    p.save();
    p.setPen(QPen(ink, 1.0, Qt::SolidLine, Qt::FlatCap));
    p.drawLines(lines.data(), static_cast<int>(lines.size()));
    p.restore();
}

}  // namespace pipelens::ui::chart

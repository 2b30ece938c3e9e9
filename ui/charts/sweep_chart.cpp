#include "charts/sweep_chart.hpp"

#include <QFontMetrics>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "charts/chart_support.hpp"
#include "charts/method_colours.hpp"
#include "charts/widget_export.hpp"

namespace pipelens::ui {
namespace {

constexpr double kMarkerRadius = 4.5;
constexpr double kHitRadius = 9.0;

QString number(double v) {
    return QString::number(v, 'g', 4);
}

// Ticks of a log axis whose ends are lo, hi (log10): the decades inside, and 2 and 5 times
// them when fewer than three decades show.
std::vector<double> logTicks(double lo, double hi) {
    std::vector<double> ticks;
    const int first = static_cast<int>(std::ceil(lo - 1e-9));
    const int last = static_cast<int>(std::floor(hi + 1e-9));
    const int every = std::max(1, (last - first + 1) / 8);
    for (int e = first; e <= last; e += every) ticks.push_back(std::pow(10.0, e));
    if (hi - lo < 3.0) {
        for (int e = first - 1; e <= last; ++e) {
            for (double m : {2.0, 5.0}) {
                const double v = m * std::pow(10.0, e);
                if (std::log10(v) >= lo && std::log10(v) <= hi) ticks.push_back(v);
            }
        }
        std::sort(ticks.begin(), ticks.end());
    }
    return ticks;
}

std::vector<double> linearTicks(double lo, double hi, double pixels) {
    const double step = chart::niceTickStep(pixels / std::max(hi - lo, 1e-300), 60.0, 1e-300);
    std::vector<double> ticks;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
        ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    }
    return ticks;
}

}  // namespace

SweepChart::SweepChart(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setToolTip(
        tr("Final value per method against the swept parameter (mean ± sd over seeds). "
           "Hover a marker for its γ; click it to open that point's run."));
}

void SweepChart::setPlot(const SweepPlot& plot, bool current) {
    plot_ = plot;
    hasPlot_ = true;
    current_ = current;
    update();
}

void SweepChart::clear() {
    plot_ = SweepPlot{};
    hasPlot_ = false;
    current_ = true;
    update();
}

void SweepChart::setBanner(const QString& text) {
    if (text == banner_) return;
    banner_ = text;
    update();
}

void SweepChart::setOpenPoint(int point, const QString& note) {
    if (point == openPoint_ && note == openNote_) return;
    openPoint_ = point;
    openNote_ = note;
    update();
}

bool SweepChart::openPointShown() const {
    if (!hasPlot_ || openPoint_ < 0) return false;
    for (const SweepPlotSeries& s : plot_.series) {
        for (const SweepPlotPoint& q : s.points) {
            if (static_cast<int>(q.point) == openPoint_ && q.finite) return true;
        }
    }
    return false;
}

QStringList SweepChart::bannerLines(int width) const {
    if (banner_.isEmpty()) return {};
    const QFontMetrics fm(font());
    // The box spans at most the widget less 10 px each side, its text 6 px inside the box.
    const int room = std::max(40, (width < 0 ? this->width() : width) - 20 - 12);
    QStringList lines;
    QString line;
    for (const QString& word : banner_.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
        if (!line.isEmpty() && fm.horizontalAdvance(longer) > room) {
            lines << line;
            line = word;
        } else {
            line = longer;
        }
    }
    if (!line.isEmpty()) lines << line;
    return lines;
}

double SweepChart::bannerHeight(int width) const {
    const auto lines = static_cast<double>(std::max<qsizetype>(1, bannerLines(width).size()));
    return lines * QFontMetrics(font()).height() + 10.0;
}

QStringList SweepChart::legendTexts() const {
    QStringList texts;
    const Frame f = frame(size());
    const QFontMetrics fm(font());
    for (const LegendEntry& e :
         legendLayout(f.plot.left(), f.plot.bottom() + 2.0 * fm.height() + 16.0, f.plot.width()))
        texts << e.text;
    return texts;
}

double SweepChart::Frame::mapX(double v, bool log) const {
    const double t = ((log ? std::log10(v) : v) - xLo) / (xHi - xLo);
    return plot.left() + t * plot.width();
}

double SweepChart::Frame::mapY(double v, bool log) const {
    const double t = ((log ? std::log10(v) : v) - yLo) / (yHi - yLo);
    return plot.bottom() - t * plot.height();
}

std::vector<SweepChart::LegendEntry> SweepChart::legendLayout(double left, double top,
                                                              double width) const {
    const QFontMetrics fm(font());
    std::vector<LegendEntry> entries;
    double x = left;
    double y = top;
    for (const SweepPlotSeries& s : plot_.series) {
        const QString text = QString::fromStdString(s.label);
        const double w = std::min(width, 30.0 + fm.horizontalAdvance(text));
        if (x > left && x + w > left + width) {
            x = left;
            y += fm.height() + 4;
        }
        entries.push_back({QRectF(x, y, w, fm.height()), text});
        x += w + 14;
    }
    // The ringed point's note, on a line of its own.
    if (openPointShown()) {
        if (!entries.empty()) y += fm.height() + 4;
        entries.push_back(
            {QRectF(left, y, std::min(width, 30.0 + fm.horizontalAdvance(openNote_)), fm.height()),
             openNote_});
    }
    return entries;
}

SweepChart::Frame SweepChart::frame(const QSize& size) const {
    Frame f;
    const double left = 66.0;
    const double width = std::max(40.0, size.width() - left - 16.0);
    const std::vector<LegendEntry> legend = legendLayout(left, 0.0, width);
    const double legendHeight = legend.empty() ? 0.0 : legend.back().box.bottom() + 6.0;
    // Under the plot: tick labels, the axis title, then the legend.
    const double below = 2.0 * QFontMetrics(font()).height() + 16.0 + legendHeight;
    // Above: room for the banner, on as many lines as it takes (the top tick label sits half a
    // line above the plot).
    const double top = bannerHeight(size.width()) + 14.0;
    f.plot = QRectF(left, top, width, std::max(40.0, size.height() - top - below));
    if (plot_.logX) {
        f.xLo = std::log10(plot_.xMin) - 0.08;
        f.xHi = std::log10(plot_.xMax) + 0.08;
    } else {
        // A categorical axis (schedule): half a category either side, so no marker sits on
        // the frame.
        const double pad = !plot_.xLabels.empty()    ? 0.5
                           : plot_.xMax > plot_.xMin ? 0.05 * (plot_.xMax - plot_.xMin)
                                                     : 1.0;
        f.xLo = plot_.xMin - pad;
        f.xHi = plot_.xMax + pad;
    }
    if (plot_.logY) {
        f.yLo = std::floor(std::log10(std::max(plot_.yMin, kSweepLogFloor)) + 1e-9);
        f.yHi = std::ceil(std::log10(std::max(plot_.yMax, kSweepLogFloor)) - 1e-9);
        if (f.yHi <= f.yLo) f.yHi = f.yLo + 1.0;
    } else {
        const double pad = plot_.yMax > plot_.yMin ? 0.06 * (plot_.yMax - plot_.yMin) : 1.0;
        f.yLo = plot_.yMin - pad;
        f.yHi = plot_.yMax + pad;
    }
    return f;
}

QString SweepChart::xLabel(double v) const {
    const auto i = static_cast<long long>(std::llround(v));
    if (!plot_.xLabels.empty() && i >= 0 && static_cast<std::size_t>(i) < plot_.xLabels.size()) {
        return QString::fromStdString(plot_.xLabels[static_cast<std::size_t>(i)]);
    }
    return number(v);
}

void SweepChart::paintAxes(QPainter& p, const Frame& f) const {
    const QFontMetrics fm(p.font());
    std::vector<double> xTicks;
    if (!plot_.xLabels.empty()) {
        // One tick per category, named (the schedule keys).
        for (std::size_t i = 0; i < plot_.xLabels.size(); ++i) {
            xTicks.push_back(static_cast<double>(i));
        }
    } else if (!plot_.logX) {
        xTicks = linearTicks(f.xLo, f.xHi, f.plot.width());
    } else {
        // The swept values themselves are the natural ticks (2, 4, 8, … or 8, 30, 60, …).
        for (const SweepPlotSeries& s : plot_.series) {
            for (const SweepPlotPoint& q : s.points) xTicks.push_back(q.x);
        }
        if (xTicks.empty()) xTicks = {plot_.xMin, plot_.xMax};
        std::sort(xTicks.begin(), xTicks.end());
        xTicks.erase(std::unique(xTicks.begin(), xTicks.end()), xTicks.end());
    }
    const std::vector<double> yTicks =
        plot_.logY ? logTicks(f.yLo, f.yHi) : linearTicks(f.yLo, f.yHi, f.plot.height());
    double lastLabelRight = -1e9;
    for (double v : xTicks) {
        const double x = f.mapX(v, plot_.logX);
        if (x < f.plot.left() - 0.5 || x > f.plot.right() + 0.5) continue;
        p.setPen(QColor(228, 228, 228));
        p.drawLine(QPointF(x, f.plot.top()), QPointF(x, f.plot.bottom()));
        const QString label = xLabel(v);
        const double w = fm.horizontalAdvance(label);
        if (x - w / 2 < lastLabelRight + 6) continue;  // no overlapping labels
        p.setPen(QColor(60, 60, 60));
        p.drawText(QRectF(x - w / 2 - 2, f.plot.bottom() + 4, w + 4, fm.height()), Qt::AlignCenter,
                   label);
        lastLabelRight = x + w / 2;
    }
    double lastLabelTop = 1e9;  // labels go bottom-up: skip one that would overlap the last
    for (double v : yTicks) {
        const double y = f.mapY(v, plot_.logY);
        if (y < f.plot.top() - 0.5 || y > f.plot.bottom() + 0.5) continue;
        p.setPen(QColor(228, 228, 228));
        p.drawLine(QPointF(f.plot.left(), y), QPointF(f.plot.right(), y));
        if (y + fm.height() / 2.0 > lastLabelTop) continue;
        lastLabelTop = y - fm.height() / 2.0;
        p.setPen(QColor(60, 60, 60));
        const QString label = plot_.logY ? QString::number(v, 'g', 2) : number(v);
        p.drawText(QRectF(0, y - fm.height() / 2.0, f.plot.left() - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, label);
    }
    p.setPen(QColor(90, 90, 90));
    p.setBrush(Qt::NoBrush);
    p.drawRect(f.plot);
    p.setPen(QColor(40, 40, 40));
    QString xTitle = QString::fromStdString(plot_.xTitle) + (plot_.logX ? tr(" (log)") : QString());
    p.drawText(
        QRectF(f.plot.left(), f.plot.bottom() + 4 + fm.height(), f.plot.width(), fm.height() + 4),
        Qt::AlignCenter, xTitle);
    p.save();
    const QString yTitle =
        QString::fromStdString(plot_.yTitle) + (plot_.logY ? tr(" (log)") : QString());
    // Centred on the plot, but as long as the title needs (within the widget): never cut.
    const double length = std::min<double>(
        height(), std::max<double>(f.plot.height(), fm.horizontalAdvance(yTitle) + 6));
    const double centre = std::clamp(f.plot.center().y(), length / 2, height() - length / 2);
    p.translate(14, centre);
    p.rotate(-90);
    p.drawText(QRectF(-length / 2, -fm.height() / 2.0 - 2, length, fm.height() + 4),
               Qt::AlignCenter, yTitle);
    p.restore();
}

QColor SweepChart::seriesColour(std::size_t s) const {
    // The family's colour, shaded by the series of that family before it (as in the loss chart).
    const auto family = findMethod(plot_.series[s].method);
    if (!family) return QColor(0x66, 0x66, 0x66);
    int before = 0;
    for (std::size_t k = 0; k < s; ++k) {
        if (findMethod(plot_.series[k].method) == family) ++before;
    }
    return methodColour(*family, before);
}

void SweepChart::paintSeries(QPainter& p, const Frame& f) const {
    p.save();
    // Room for a marker, and the open point's ring, on the plot's edges.
    const double margin = kMarkerRadius + 5.5;
    p.setClipRect(f.plot.adjusted(-margin, -margin, margin, margin));
    for (std::size_t s = 0; s < plot_.series.size(); ++s) {
        const QColor colour = seriesColour(s);
        const SweepPlotSeries& series = plot_.series[s];
        QPainterPath line;
        bool open = false;
        for (const SweepPlotPoint& q : series.points) {
            if (!q.finite) {
                open = false;  // a diverged point breaks the line
                continue;
            }
            const QPointF at(f.mapX(q.x, plot_.logX), f.mapY(q.y, plot_.logY));
            if (open) {
                line.lineTo(at);
            } else {
                line.moveTo(at);
                open = true;
            }
        }
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(colour, 1.8));
        p.drawPath(line);
        for (std::size_t i = 0; i < series.points.size(); ++i) {
            const SweepPlotPoint& q = series.points[i];
            const double x = f.mapX(q.x, plot_.logX);
            if (!q.finite) {
                // Diverged: a cross on the top edge, so the point is not silently missing.
                p.setPen(QPen(colour, 2.0));
                const double y = f.plot.top() + 6;
                p.drawLine(QPointF(x - 4, y - 4), QPointF(x + 4, y + 4));
                p.drawLine(QPointF(x - 4, y + 4), QPointF(x + 4, y - 4));
                continue;
            }
            if (q.sd > 0) {
                const double top = f.mapY(q.high, plot_.logY);
                const double bottom = f.mapY(q.low, plot_.logY);
                p.setPen(QPen(colour, 1.2));
                p.drawLine(QPointF(x, top), QPointF(x, bottom));
                p.drawLine(QPointF(x - 4, top), QPointF(x + 4, top));
                p.drawLine(QPointF(x - 4, bottom), QPointF(x + 4, bottom));
            }
            const QPointF at = *markerPosition(s, i);
            p.setPen(QPen(Qt::white, 1.2));
            p.setBrush(q.allDiverged ? QColor(Qt::white) : colour);
            if (q.allDiverged) p.setPen(QPen(colour, 1.6));  // hollow: no γ of the grid was usable
            p.drawEllipse(at, kMarkerRadius, kMarkerRadius);
            if (static_cast<int>(q.point) == openPoint_) {
                // The run the other views show: a dark ring around its marker.
                p.setPen(QPen(QColor(20, 20, 20), 1.6));
                p.setBrush(Qt::NoBrush);
                p.drawEllipse(at, kMarkerRadius + 3.5, kMarkerRadius + 3.5);
            }
        }
    }
    p.restore();
}

void SweepChart::paintLegend(QPainter& p, const std::vector<LegendEntry>& entries) const {
    const QFontMetrics fm(p.font());
    for (std::size_t s = 0; s < entries.size(); ++s) {
        const QRectF& box = entries[s].box;
        const double y = box.center().y();
        if (s >= plot_.series.size()) {
            // The open point's note: a ring as on the plot.
            p.setPen(QPen(QColor(20, 20, 20), 1.6));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(QPointF(box.left() + 10, y), kMarkerRadius + 3.5, kMarkerRadius + 3.5);
            p.setPen(QColor(30, 30, 30));
            p.drawText(
                QRectF(box.left() + 26, box.top(), box.width() - 26, box.height()),
                Qt::AlignLeft | Qt::AlignVCenter,
                fm.elidedText(entries[s].text, Qt::ElideRight, static_cast<int>(box.width() - 26)));
            continue;
        }
        const QColor colour = seriesColour(s);
        p.setPen(QPen(colour, 2.0));
        p.drawLine(QPointF(box.left(), y), QPointF(box.left() + 20, y));
        p.setBrush(colour);
        p.drawEllipse(QPointF(box.left() + 10, y), 3.5, 3.5);
        p.setPen(QColor(30, 30, 30));
        p.drawText(
            QRectF(box.left() + 26, box.top(), box.width() - 26, box.height()),
            Qt::AlignLeft | Qt::AlignVCenter,
            fm.elidedText(entries[s].text, Qt::ElideRight, static_cast<int>(box.width() - 26)));
    }
}

void SweepChart::paint(QPainter& p, const QSize& size) const {
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(QRectF(QPointF(0, 0), QSizeF(size)), Qt::white);
    const Frame f = frame(size);
    if (hasPlot_) {
        paintAxes(p, f);
        paintSeries(p, f);
        const QFontMetrics fm(p.font());
        paintLegend(p, legendLayout(f.plot.left(), f.plot.bottom() + 2.0 * fm.height() + 16.0,
                                    f.plot.width()));
        if (!current_) p.fillRect(QRectF(QPointF(0, 0), QSizeF(size)), QColor(255, 255, 255, 150));
        if (plot_.pointsDone == 0 && banner_.isEmpty()) {
            chart::drawEmptyState(p, f.plot, tr("No point has finished yet"));
        }
    } else if (banner_.isEmpty()) {
        chart::drawEmptyState(p, f.plot,
                              tr("No sweep yet: pick an axis and its values, then Run sweep"));
    }
    if (!banner_.isEmpty()) {
        // Whole words on as many lines as the width needs: never elided.
        const QFontMetrics fm(p.font());
        const QStringList lines = bannerLines(size.width());
        double widest = 0;
        for (const QString& line : lines)
            widest = std::max<double>(widest, fm.horizontalAdvance(line));
        const double w = std::min<double>(widest + 24, size.width() - 20);
        const double x =
            std::clamp(f.plot.center().x() - w / 2, 10.0, std::max(10.0, size.width() - w - 10.0));
        const QRectF box(x, 4, w, bannerHeight(size.width()));
        p.setPen(current_ ? QColor(0, 114, 178) : QColor(170, 80, 0));
        p.setBrush(current_ ? QColor(232, 243, 251) : QColor(253, 240, 222));
        p.drawRoundedRect(box, 4, 4);
        p.setPen(QColor(30, 30, 30));
        for (int i = 0; i < lines.size(); ++i) {
            p.drawText(
                QRectF(box.left(), box.top() + 5 + i * fm.height(), box.width(), fm.height()),
                Qt::AlignCenter, lines[i]);
        }
    }
}

void SweepChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    paint(p, size());
}

std::optional<QPointF> SweepChart::markerPosition(std::size_t series, std::size_t point) const {
    if (!hasPlot_ || series >= plot_.series.size() || point >= plot_.series[series].points.size()) {
        return std::nullopt;
    }
    const SweepPlotPoint& q = plot_.series[series].points[point];
    if (!q.finite) return std::nullopt;
    const Frame f = frame(size());
    return QPointF(f.mapX(q.x, plot_.logX), f.mapY(q.y, plot_.logY));
}

std::optional<std::pair<std::size_t, std::size_t>> SweepChart::markerAt(const QPointF& pos) const {
    std::optional<std::pair<std::size_t, std::size_t>> best;
    double bestDistance = kHitRadius;
    // Later series are drawn on top: search them first so the visible marker wins a tie.
    for (std::size_t s = plot_.series.size(); s-- > 0;) {
        for (std::size_t i = 0; i < plot_.series[s].points.size(); ++i) {
            const auto at = markerPosition(s, i);
            if (!at) continue;
            const double d = std::hypot(at->x() - pos.x(), at->y() - pos.y());
            if (d < bestDistance) {
                bestDistance = d;
                best = {s, i};
            }
        }
    }
    return best;
}

QString SweepChart::markerText(std::size_t series, std::size_t point) const {
    const SweepPlotSeries& s = plot_.series.at(series);
    const SweepPlotPoint& q = s.points.at(point);
    QString text =
        QStringLiteral("<b>%1</b><br>%2 = %3<br>%4 = %5")
            .arg(QString::fromStdString(s.label).toHtmlEscaped(),
                 QString::fromStdString(plot_.xTitle).toHtmlEscaped(), xLabel(q.x).toHtmlEscaped(),
                 QString::fromStdString(plot_.yTitle).toHtmlEscaped(), number(q.mean));
    if (q.sd > 0) text += QStringLiteral(" ± %1").arg(number(q.sd));
    text += q.tuned ? tr("<br>γ = %1 (chosen from the grid)").arg(number(q.stepSize))
                    : tr("<br>γ = %1 (fixed)").arg(number(q.stepSize));
    if (q.allDiverged) text += tr("<br>every γ of the grid diverged: the smallest is shown");
    if (!current_) text += tr("<br><i>out of date: the parameters changed since</i>");
    text += tr("<br><i>click to open this run</i>");
    return text;
}

void SweepChart::mouseMoveEvent(QMouseEvent* event) {
    const auto hit = markerAt(event->position());
    setCursor(hit ? Qt::PointingHandCursor : Qt::ArrowCursor);
    if (hit) {
        QToolTip::showText(event->globalPosition().toPoint(), markerText(hit->first, hit->second),
                           this);
    } else {
        QToolTip::hideText();
    }
}

void SweepChart::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    const auto hit = markerAt(event->position());
    if (!hit) return;
    const SweepPlotPoint& q = plot_.series[hit->first].points[hit->second];
    emit pointClicked(static_cast<int>(q.point), static_cast<int>(hit->first));
}

bool SweepChart::exportPng(const QString& path, double scale, QString* error) {
    return chart::exportPngImage(
        path, size(), scale, [this](QPainter& p) { paint(p, size()); }, error);
}

bool SweepChart::exportSvg(const QString& path, QString* error) {
    return chart::exportSvgImage(
        path, size(), tr("PipeLens sweep: %1").arg(QString::fromStdString(plot_.xTitle)),
        [this](QPainter& p) { paint(p, size()); }, error);
}

}  // namespace pipelens::ui

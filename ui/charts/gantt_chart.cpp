#include "charts/gantt_chart.hpp"

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "charts/chart_support.hpp"
#include "schedule/phases.hpp"
#include "schedule/schedule_tables.hpp"
#include "schedule/timeline_index.hpp"

namespace pipelens::ui {

namespace {

constexpr double kMinVisibleSlots = 4.0;
const QString kEmptyText = QStringLiteral("Run an experiment to see its pipeline");

QString phaseName(PhaseKind kind) {
    switch (kind) {
        case PhaseKind::Startup:
            return QStringLiteral("startup");
        case PhaseKind::Steady:
            return QStringLiteral("steady");
        case PhaseKind::Drain:
            return QStringLiteral("drain");
    }
    return {};
}

QColor phaseShade(PhaseKind kind) {
    switch (kind) {
        case PhaseKind::Startup:
            return QColor(226, 234, 246);
        case PhaseKind::Steady:
            return QColor(255, 255, 255);
        case PhaseKind::Drain:
            return QColor(247, 236, 222);
    }
    return Qt::white;
}

QRgb premultipliedMix(double forwardShare, double backwardShare) {
    const double alpha = std::clamp(forwardShare + backwardShare, 0.0, 1.0);
    auto channel = [&](int f, int b) {
        return std::clamp(static_cast<int>(std::lround(forwardShare * f + backwardShare * b)), 0,
                          static_cast<int>(std::lround(alpha * 255.0)));
    };
    return qRgba(channel(qRed(chart::kGanttForward), qRed(chart::kGanttBackward)),
                 channel(qGreen(chart::kGanttForward), qGreen(chart::kGanttBackward)),
                 channel(qBlue(chart::kGanttForward), qBlue(chart::kGanttBackward)),
                 static_cast<int>(std::lround(alpha * 255.0)));
}

QRgb premultiplied(QRgb colour, double alpha) {
    alpha = std::clamp(alpha, 0.0, 1.0);
    return qRgba(static_cast<int>(std::lround(qRed(colour) * alpha)),
                 static_cast<int>(std::lround(qGreen(colour) * alpha)),
                 static_cast<int>(std::lround(qBlue(colour) * alpha)),
                 static_cast<int>(std::lround(255.0 * alpha)));
}

// The replica (1 … R) a LocalSGD microbatch trains: microbatch m belongs to replica m mod R
// (SPEC §2); 0 for other schedules and for one replica (sequential SGD), where there is
// nothing to tell apart.
int replicaOf(const ScheduleParams& p, int microbatch) {
    if (p.kind != ScheduleKind::LocalSgd || p.replicas <= 1) return 0;
    return microbatch % p.replicas + 1;
}

// Slots after the method's run, while the experiment goes on (a shorter method's "finished").
constexpr QRgb kFinishedShade = 0xffe4e4e4;  // qRgb(228, 228, 228)

// Where the parts of the chart go, in logical pixels.
struct Layout {
    QRectF legend;
    QRectF phaseStrip;
    QRectF plot;
    QRectF xAxis;
};

}  // namespace

struct GanttChart::Impl {
    explicit Impl(const chart::XRange& visible) : range(visible) {}

    std::shared_ptr<const Timeline> timeline;
    std::shared_ptr<const DelayTable> delays;
    int stages = 0;
    int slotCount = 0;
    // The experiment's slots (the playback's range): at least slotCount; slots from slotCount
    // on are after this method's run ("finished").
    int playbackSlots = 0;
    int extentSlots() const { return std::max(slotCount, playbackSlots); }
    // Any slot range's mix of F, B and idle in O(1), so a paint costs O(pixels) at every zoom
    // level; also the cell under the pointer and the stash depth.
    TimelineIndex index;
    std::vector<Phase> phases;
    int cursor = -1;
    // Set for an export: the method shown leads the legend, and the cursor's note is left out.
    bool exporting = false;
    QString methodName;
    MicrobatchSelection selection;
    QPointF lastRelease;         // where the last click ended (the cell it selects)
    const chart::XRange& range;  // the chart's visible range
    // The cell image and its per-(stage, column) colour buffers, reused between frames.
    mutable QImage scratch;
    mutable std::vector<QRgb> colours;
    mutable std::vector<std::uint8_t> shares;

    bool empty() const { return !timeline || index.empty(); }
    QString emptyText = kEmptyText;

    void rebuild();
    Layout layout(const QSizeF& size, const QFontMetricsF& fm) const;
    double xOf(const Layout& l, double slot) const {
        return l.plot.left() + (slot - range.first) / range.span() * l.plot.width();
    }
    double slotAtX(const Layout& l, double x) const {
        return range.first + (x - l.plot.left()) / l.plot.width() * range.span();
    }
    // Calls fn(cell) once for every cell that overlaps the visible slots.
    template <typename Fn>
    void forEachVisibleCell(Fn fn) const;
    void paint(QPainter& p, const QSizeF& size, const QFont& font, bool vectorCells) const;
    void paintPhases(QPainter& p, const Layout& l, const QFontMetricsF& fm, bool inPlot) const;
    QString cursorText() const {
        if (cursor < 0) return {};
        return cursor < extentSlots() ? QStringLiteral("slot %1 (faded: not yet run)").arg(cursor)
                                      : QStringLiteral("slot %1").arg(cursor);
    }
    void paintCellsImage(QPainter& p, const Layout& l) const;
    // paintCellsImage's steps.
    struct CellColumn {
        int lo = 0;  // the slots [lo, hi) one pixel column stands for
        int hi = 0;
        bool fade = false;      // past the cursor
        bool finished = false;  // after the method's run: its shade, no hatching
        QRgb shade = 0;         // the idle colour: the phase's shade
    };
    std::vector<CellColumn> cellColumns(std::size_t columns) const;
    void fillColourPlanes(const std::vector<CellColumn>& columns, bool split) const;
    void writeScanlines(double dpr, double rowDevice) const;
    bool paintCellsVector(QPainter& p, const Layout& l) const;
    void paintCellLabels(QPainter& p, const Layout& l, const QFont& font) const;
    // The cell labels' font, a little smaller than the chart's.
    static QFont labelFont(const QFont& font);
    // The label cell `c` gets at layout `l` with the label font's metrics `fm`; empty when the
    // cells are too small.
    QString labelOf(const Layout& l, const QFontMetricsF& fm, const TimelineCell& c) const;
    // The label of cell `c`: its microbatch and, on LocalSGD, its replica ("17" over "r2" when
    // `twoLines`, else "17 r2"), the longest form `fits` accepts line by line; empty if none.
    template <typename Fits>
    QString cellLabel(const TimelineCell& c, Fits fits, bool twoLines) const {
        QString number = QString::number(c.microbatch);
        if (!fits(number)) return {};
        const int replica = timeline ? replicaOf(timeline->params, c.microbatch) : 0;
        if (replica == 0) return number;
        const QString name = QStringLiteral("r%1").arg(replica);
        if (twoLines) return fits(name) ? number + QLatin1Char('\n') + name : number;
        const QString oneLine = number + QLatin1Char(' ') + name;
        return fits(oneLine) ? oneLine : number;
    }
    void paintAxes(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
    void paintLegend(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
};

void GanttChart::Impl::rebuild() {
    index.reset(timeline);
    phases = timeline ? schedulePhases(*timeline) : std::vector<Phase>{};
    scratch = QImage();
    stages = index.stages();
    slotCount = index.slotCount();
}

template <typename Fn>
void GanttChart::Impl::forEachVisibleCell(Fn fn) const {
    const int first = std::clamp(static_cast<int>(std::floor(range.first)), 0, slotCount);
    const int last = std::clamp(static_cast<int>(std::ceil(range.last)), 0, slotCount);
    index.forEachCellIn(first, last, fn);
}

Layout GanttChart::Impl::layout(const QSizeF& size, const QFontMetricsF& fm) const {
    const double line = fm.height();
    // Whole logical pixels, so the cell image maps 1:1 onto device pixels.
    const double left =
        std::ceil(fm.horizontalAdvance(QStringLiteral("stage %1").arg(std::max(stages, 10))) + 14);
    const double top = 6;
    Layout l;
    l.legend =
        QRectF(left, top, std::max(0.0, std::floor(size.width() - left - 12)), std::ceil(line + 4));
    l.phaseStrip = QRectF(left, l.legend.bottom() + 2, l.legend.width(), std::ceil(line + 2));
    const double bottom = std::ceil(2 * line + 10);
    l.plot = QRectF(left, l.phaseStrip.bottom(), l.legend.width(),
                    std::max(1.0, std::floor(size.height() - l.phaseStrip.bottom() - bottom)));
    l.xAxis = QRectF(left, l.plot.bottom(), l.plot.width(), bottom);
    return l;
}

void GanttChart::Impl::paint(QPainter& p, const QSizeF& size, const QFont& font,
                             bool vectorCells) const {
    p.save();
    p.setFont(font);
    if (empty()) {
        p.fillRect(QRectF(QPointF(0, 0), size), Qt::white);
        chart::drawEmptyState(p, QRectF(QPointF(0, 0), size), emptyText);
        p.restore();
        return;
    }
    const QFontMetricsF fm(font);
    const Layout l = layout(size, fm);
    // White around the plot only: the cell image covers the plot (fills cost per pixel).
    chart::fillAround(p, QRectF(QPointF(0, 0), size), l.plot, Qt::white);
    if (vectorCells) p.fillRect(l.plot, Qt::white);
    paintPhases(p, l, fm, vectorCells);
    // The image bakes region shading, idle hatching and fading in; vectors draw them as layers.
    bool layered = false;
    if (vectorCells) {
        // Idle is whatever no cell covers: hatch the whole run, cells are drawn over it; the
        // slots after a shorter run are "finished", unhatched.
        QRectF run = l.plot;
        if (extentSlots() > slotCount && slotCount < range.last) {
            const double x0 = std::max(l.plot.left(), xOf(l, slotCount));
            run.setRight(x0);
            p.fillRect(QRectF(QPointF(x0, l.plot.top()), l.plot.bottomRight()),
                       QColor(kFinishedShade));
        }
        chart::drawHatch(p, run, QColor(160, 160, 160), 8.0);
        layered = paintCellsVector(p, l);
    } else {
        paintCellsImage(p, l);
    }

    p.save();
    p.setClipRect(l.plot);
    const double slotWidth = l.plot.width() / range.span();
    const double rowHeight = l.plot.height() / stages;
    // Cell boundaries once slots are wide enough to tell apart.
    if (slotWidth >= 5.0) {
        p.setPen(QPen(QColor(255, 255, 255, 200), 1.0));
        for (int t = static_cast<int>(std::ceil(range.first)); t <= std::ceil(range.last); ++t)
            p.drawLine(QPointF(xOf(l, t), l.plot.top()), QPointF(xOf(l, t), l.plot.bottom()));
    }
    if (rowHeight >= 8.0) {
        p.setPen(QPen(Qt::white, 1.0));
        for (int s = 1; s < stages; ++s) {
            const double y = l.plot.top() + s * rowHeight;
            p.drawLine(QPointF(l.plot.left(), y), QPointF(l.plot.right(), y));
        }
    }
    paintCellLabels(p, l, font);
    // LocalSGD: replicas are averaged at the end of these slots.
    const auto& averaging = timeline->averagingSlots;
    const auto visibleAveraging = std::count_if(averaging.begin(), averaging.end(), [&](int t) {
        return t + 1 >= range.first && t + 1 <= range.last;
    });
    p.setPen(QPen(QColor(chart::kPurple), visibleAveraging * 4 > l.plot.width() ? 1.0 : 2.0));
    for (int t : averaging) {
        if (t + 1 < range.first || t + 1 > range.last) continue;
        const double x = xOf(l, t + 1);
        p.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.plot.bottom()));
    }
    // Slots from the cursor on have not run yet: fade them.
    if (layered && cursor >= 0 && cursor < range.last) {
        const double x = std::max(l.plot.left(), xOf(l, cursor));
        p.fillRect(QRectF(QPointF(x, l.plot.top()), l.plot.bottomRight()),
                   QColor(255, 255, 255, 170));
    }
    paintSelection(
        p, selection, l.plot, [&](double slot) { return xOf(l, slot); }, rowHeight, font);
    p.restore();
    if (cursor >= 0 && cursor >= range.first && cursor <= range.last) {
        const double x = xOf(l, cursor);
        p.setPen(QPen(QColor(chart::kVermillion), 2.0));
        p.drawLine(QPointF(x, l.phaseStrip.top()), QPointF(x, l.plot.bottom()));
    }
    p.setPen(QColor(120, 120, 120));
    p.setBrush(Qt::NoBrush);
    p.drawRect(l.plot);
    paintAxes(p, l, fm);
    paintLegend(p, l, fm);
    p.restore();
}

// The phase bands: labelled in the strip above the plot and, when `inPlot`, shading the plot.
void GanttChart::Impl::paintPhases(QPainter& p, const Layout& l, const QFontMetricsF& fm,
                                   bool inPlot) const {
    p.save();
    p.setClipRect(inPlot ? l.phaseStrip.united(l.plot) : l.phaseStrip);
    for (const Phase& r : phases) {
        if (r.last <= range.first || r.first >= range.last) continue;
        const double x0 = std::max(l.plot.left(), xOf(l, r.first));
        const double x1 = std::min(l.plot.right(), xOf(l, r.last));
        const QRectF band(x0, l.phaseStrip.top(), x1 - x0, l.plot.bottom() - l.phaseStrip.top());
        p.fillRect(band, phaseShade(r.kind));
        const QString name = phaseName(r.kind);
        if (fm.horizontalAdvance(name) + 6 <= x1 - x0) {
            p.setPen(QColor(70, 70, 70));
            p.drawText(QRectF(x0, l.phaseStrip.top(), x1 - x0, l.phaseStrip.height()),
                       Qt::AlignCenter, name);
        }
        // A thin boundary between phases, so they stay apparent under the cells.
        p.setPen(QPen(QColor(150, 150, 150), 1.0, Qt::DotLine));
        if (r.first > range.first)
            p.drawLine(QPointF(x0, l.phaseStrip.top()), QPointF(x0, l.phaseStrip.bottom()));
    }
    // After the method's run, up to the experiment's end: "finished".
    if (extentSlots() > slotCount && slotCount < range.last) {
        const double x0 = std::max(l.plot.left(), xOf(l, slotCount));
        const double x1 = std::min(l.plot.right(), xOf(l, extentSlots()));
        p.fillRect(QRectF(x0, l.phaseStrip.top(), x1 - x0, l.plot.bottom() - l.phaseStrip.top()),
                   QColor(kFinishedShade));
        const QString name = QStringLiteral("finished");
        if (fm.horizontalAdvance(name) + 6 <= x1 - x0) {
            p.setPen(QColor(70, 70, 70));
            p.drawText(QRectF(x0, l.phaseStrip.top(), x1 - x0, l.phaseStrip.height()),
                       Qt::AlignCenter, name);
        }
        p.setPen(QPen(QColor(150, 150, 150), 1.0, Qt::DotLine));
        if (slotCount > range.first)
            p.drawLine(QPointF(x0, l.phaseStrip.top()), QPointF(x0, l.phaseStrip.bottom()));
    }
    p.restore();
}

namespace {

// line[c] = level < share[c] ? top[c] : bottom[c], branch-free so that it vectorises.
void selectRow(QRgb* line, const QRgb* top, const QRgb* bottom, const std::uint8_t* share,
               int level, std::size_t n) {
    for (std::size_t c = 0; c < n; ++c) {
        const auto mask = static_cast<QRgb>(-static_cast<std::int32_t>(level < share[c]));
        line[c] = (top[c] & mask) | (bottom[c] & ~mask);
    }
}

// Premultiplied `fg` over opaque `bg`.
QRgb over(QRgb fg, QRgb bg) {
    const int keep = 255 - qAlpha(fg);
    auto mix = [&](int f, int b) { return f + (b * keep + 127) / 255; };
    return qRgb(mix(qRed(fg), qRed(bg)), mix(qGreen(fg), qGreen(bg)), mix(qBlue(fg), qBlue(bg)));
}

// The hatch lines over idle cells.
constexpr QRgb kHatchInk = 0xffa0a0a0;  // qRgb(160, 160, 160)

// Not yet run: two thirds of the way to white.
QRgb faded(QRgb c) {
    auto mix = [](int v) { return v + ((255 - v) * 170 + 127) / 255; };
    return qRgb(mix(qRed(c)), mix(qGreen(c)), mix(qBlue(c)));
}

const std::array<QRgb, 256>& premultipliedRamp(QRgb colour) {
    static std::array<QRgb, 256> blue{};
    static std::array<QRgb, 256> orange{};
    static const bool ready = [] {
        for (int a = 0; a < 256; ++a) {
            blue[static_cast<std::size_t>(a)] = premultiplied(chart::kGanttForward, a / 255.0);
            orange[static_cast<std::size_t>(a)] = premultiplied(chart::kGanttBackward, a / 255.0);
        }
        return true;
    }();
    (void)ready;
    return colour == chart::kGanttForward ? blue : orange;
}

}  // namespace

// The cells as one opaque image of exactly the plot's device pixels (so the blit is a copy):
// each pixel column shows the F/B/idle mix of the slots it covers, read off the prefix counts.
// Rows tall enough split the mix (forward share on top, backward below); the idle share shows
// the phase shading with hatching; columns past the cursor are faded. O(pixels) per frame.
void GanttChart::Impl::paintCellsImage(QPainter& p, const Layout& l) const {
    const double dpr = std::max(1.0, p.device() ? p.device()->devicePixelRatioF() : 1.0);
    const int columns = std::max(1, static_cast<int>(std::lround(l.plot.width() * dpr)));
    const int rows = std::max(1, static_cast<int>(std::lround(l.plot.height() * dpr)));
    if (scratch.size() != QSize(columns, rows))
        scratch = QImage(columns, rows, QImage::Format_RGB32);
    const double rowDevice = static_cast<double>(rows) / stages;
    fillColourPlanes(cellColumns(static_cast<std::size_t>(columns)), rowDevice >= 4.0);
    writeScanlines(dpr, rowDevice);
    p.save();
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(l.plot, scratch);
    p.restore();
}

// Per pixel column: the slot range [lo, hi) it stands for, whether it is past the cursor, and
// its idle colour (the phase's shade).
std::vector<GanttChart::Impl::CellColumn> GanttChart::Impl::cellColumns(std::size_t W) const {
    const double perColumn = range.span() / static_cast<double>(W);
    std::vector<CellColumn> spec(W);
    for (std::size_t c = 0; c < W; ++c) {
        const double a = range.first + perColumn * static_cast<double>(c);
        const double b = a + perColumn;
        long long lo;
        long long hi;
        if (perColumn < 1.0) {
            lo = static_cast<long long>(std::floor((a + b) / 2.0));
            hi = lo + 1;
        } else {
            lo = static_cast<long long>(std::floor(a + 0.5));
            hi = std::max(lo + 1, static_cast<long long>(std::floor(b + 0.5)));
        }
        spec[c].lo = static_cast<int>(std::clamp<long long>(lo, 0, slotCount));
        spec[c].hi = static_cast<int>(std::clamp<long long>(hi, 0, slotCount));
        spec[c].fade = cursor >= 0 && (a + b) / 2.0 >= cursor;
        spec[c].finished = (a + b) / 2.0 >= slotCount;
        spec[c].shade =
            spec[c].finished ? kFinishedShade : phaseShade(phaseAt(phases, (a + b) / 2.0)).rgb();
    }
    return spec;
}

// The colour planes, each S x W, stage-major: the top/bottom part of a row, off/on a hatch
// line; and per cell the forward share of its busy part (255: not split).
void GanttChart::Impl::fillColourPlanes(const std::vector<CellColumn>& spec, bool split) const {
    const auto S = static_cast<std::size_t>(stages);
    const std::size_t W = spec.size();
    colours.resize(4 * S * W);
    shares.resize(S * W);
    QRgb* topOff = colours.data();
    QRgb* topOn = topOff + S * W;
    QRgb* bottomOff = topOn + S * W;
    QRgb* bottomOn = bottomOff + S * W;
    const auto& blue = premultipliedRamp(chart::kGanttForward);
    const auto& orange = premultipliedRamp(chart::kGanttBackward);
    // Blocks of 16 columns: the planes (stage-major) are written a cache line at a time while
    // the block's prefix rows (slot-major) stay in cache.
    constexpr std::size_t kBlock = 16;
    for (std::size_t c0 = 0; c0 < W; c0 += kBlock) {
        const std::size_t c1 = std::min(W, c0 + kBlock);
        for (std::size_t s = 0; s < S; ++s) {
            for (std::size_t c = c0; c < c1; ++c) {
                const CellColumn& col = spec[c];
                const std::size_t i = s * W + c;
                const int f =
                    col.hi > col.lo ? index.forwardBusy(static_cast<int>(s), col.lo, col.hi) : 0;
                const int bw =
                    col.hi > col.lo ? index.backwardBusy(static_cast<int>(s), col.lo, col.hi) : 0;
                const int busy = f + bw;
                if (busy == 0) {
                    const QRgb idleOff = col.fade ? faded(col.shade) : col.shade;
                    const QRgb ink = col.finished ? col.shade : kHatchInk;
                    const QRgb idleOn = col.fade ? faded(ink) : ink;
                    topOff[i] = bottomOff[i] = idleOff;
                    topOn[i] = bottomOn[i] = idleOn;
                    shares[i] = 0;
                    continue;
                }
                const int n = col.hi - col.lo;
                // Non-negative: + 0.5 and truncation round half up (kept: the images are
                // pinned byte for byte).
                // NOLINTBEGIN(bugprone-incorrect-roundings)
                const auto alpha = static_cast<std::size_t>(
                    static_cast<float>(busy) * 255.0f / static_cast<float>(n) + 0.5f);
                // NOLINTEND(bugprone-incorrect-roundings)
                QRgb top;
                QRgb bottom;
                if (split) {
                    top = blue[alpha];
                    bottom = orange[alpha];
                    // NOLINTBEGIN(bugprone-incorrect-roundings)
                    shares[i] = static_cast<std::uint8_t>(
                        static_cast<float>(f) * 255.0f / static_cast<float>(busy) + 0.5f);
                    // NOLINTEND(bugprone-incorrect-roundings)
                } else {
                    top = bottom =
                        premultipliedMix(static_cast<double>(f) / n, static_cast<double>(bw) / n);
                    shares[i] = 255;
                }
                if (alpha == 255) {
                    topOff[i] = topOn[i] = col.fade ? faded(top) : top;
                    bottomOff[i] = bottomOn[i] = col.fade ? faded(bottom) : bottom;
                    continue;
                }
                auto compose = [&](QRgb fg, QRgb bg) {
                    return col.fade ? faded(over(fg, bg)) : over(fg, bg);
                };
                topOff[i] = compose(top, col.shade);
                topOn[i] = compose(top, kHatchInk);
                bottomOff[i] = compose(bottom, col.shade);
                bottomOn[i] = compose(bottom, kHatchInk);
            }
        }
    }
}

// The planes into `scratch`, one pixel row at a time, with hatch lines "/" every `period`
// device pixels, `thickness` wide, on the idle and partly idle cells.
void GanttChart::Impl::writeScanlines(double dpr, double rowDevice) const {
    const auto S = static_cast<std::size_t>(stages);
    const int columns = scratch.width();
    const int rows = scratch.height();
    const auto W = static_cast<std::size_t>(columns);
    const QRgb* topOff = colours.data();
    const QRgb* topOn = topOff + S * W;
    const QRgb* bottomOff = topOn + S * W;
    const QRgb* bottomOn = bottomOff + S * W;
    const int period = std::max(4, static_cast<int>(std::lround(8 * dpr)));
    const int thickness = std::max(1, static_cast<int>(std::lround(dpr)));
    auto* bits = reinterpret_cast<QRgb*>(scratch.bits());
    const auto stride = static_cast<std::size_t>(scratch.bytesPerLine() / 4);
    int y = 0;
    for (std::size_t s = 0; s < S; ++s) {
        const std::size_t row = s * W;
        const int rowEnd =
            s + 1 == S ? rows
                       : static_cast<int>(std::lround(static_cast<double>(s + 1) * rowDevice));
        const int rowBegin = y;
        for (; y < rowEnd; ++y) {
            QRgb* line = bits + static_cast<std::size_t>(y) * stride;
            // Height of this pixel row inside the stage row, 0..255 (at its middle).
            const int level = ((2 * (y - rowBegin) + 1) * 255) / (2 * (rowEnd - rowBegin));
            selectRow(line, topOff + row, bottomOff + row, shares.data() + row, level, W);
            // Pixels on a hatch line: (x + y) mod period < thickness.
            const int phase = (period - y % period) % period;
            for (int start = phase - period; start < columns; start += period) {
                for (int c = std::max(0, start); c < std::min(columns, start + thickness); ++c) {
                    const std::size_t i = row + static_cast<std::size_t>(c);
                    line[c] = level < shares[i] ? topOn[i] : bottomOn[i];
                }
            }
        }
    }
}

// Vector cells (for SVG): one rectangle per visible cell. Returns false when it drew the image
// instead (far more cells than pixels: the image is both smaller and truer).
bool GanttChart::Impl::paintCellsVector(QPainter& p, const Layout& l) const {
    if (range.span() > l.plot.width()) {
        paintCellsImage(p, l);
        return false;
    }
    const double rowHeight = l.plot.height() / stages;
    p.save();
    p.setClipRect(l.plot);
    p.setPen(Qt::NoPen);
    forEachVisibleCell([&](const TimelineCell& c) {
        const double x0 = xOf(l, c.startSlot);
        const double x1 = xOf(l, c.endSlot + 1);
        p.fillRect(QRectF(x0, l.plot.top() + c.stage * rowHeight, x1 - x0, rowHeight),
                   QColor(c.op == OpKind::Forward ? chart::kGanttForward : chart::kGanttBackward));
    });
    p.restore();
    return true;
}

QFont GanttChart::Impl::labelFont(const QFont& font) {
    QFont small = font;
    small.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
    return small;
}

QString GanttChart::Impl::labelOf(const Layout& l, const QFontMetricsF& fm,
                                  const TimelineCell& c) const {
    const double rowHeight = l.plot.height() / stages;
    const double slotWidth = l.plot.width() / range.span();
    const double digitWidth = fm.horizontalAdvance(QLatin1Char('0'));
    if (rowHeight < fm.height() * 0.9 || slotWidth < digitWidth + 4) return {};
    const double width = xOf(l, c.endSlot + 1) - xOf(l, c.startSlot);
    return cellLabel(
        c, [&](const QString& t) { return fm.horizontalAdvance(t) + 3 <= width; },
        rowHeight >= 2 * fm.height());
}

// Microbatch numbers in cells that have room for them (a label needs about 10 x 10 pixels, so
// there are at most a few thousand); LocalSGD cells add their replica, "r2", below the number
// when the row has room for two lines, else after it when the cell is wide enough.
void GanttChart::Impl::paintCellLabels(QPainter& p, const Layout& l, const QFont& font) const {
    const QFont small = labelFont(font);
    const QFontMetricsF fm(small);
    const double rowHeight = l.plot.height() / stages;
    const double slotWidth = l.plot.width() / range.span();
    if (rowHeight < fm.height() * 0.9 || slotWidth < fm.horizontalAdvance(QLatin1Char('0')) + 4)
        return;
    p.save();
    p.setFont(small);
    forEachVisibleCell([&](const TimelineCell& c) {
        const QString text = labelOf(l, fm, c);
        if (text.isEmpty()) return;
        const double x0 = xOf(l, c.startSlot);
        const double x1 = xOf(l, c.endSlot + 1);
        if (cursor >= 0 && c.startSlot >= cursor)
            p.setPen(QColor(90, 90, 90));  // on the faded, not yet run cells
        else
            p.setPen(Qt::black);  // both fills are light enough for black
        p.drawText(QRectF(x0, l.plot.top() + c.stage * rowHeight, x1 - x0, rowHeight),
                   Qt::AlignCenter, text);
    });
    p.restore();
}

void GanttChart::Impl::paintAxes(QPainter& p, const Layout& l, const QFontMetricsF& fm) const {
    p.save();
    p.setPen(QColor(60, 60, 60));
    // Slot ticks at slot centres; slots are numbered from 0 as in the timeline CSV.
    const double slotWidth = l.plot.width() / range.span();
    const double labelWidth = fm.horizontalAdvance(QString::number(extentSlots())) + 18;
    const double step = chart::niceTickStep(slotWidth, labelWidth);
    const double firstTick = std::ceil((range.first - 0.5) / step) * step;
    for (double t = firstTick; t < range.last && t < extentSlots(); t += step) {
        const double x = xOf(l, t + 0.5);
        if (x < l.plot.left() - 0.5 || x > l.plot.right() + 0.5) continue;
        p.drawLine(QPointF(x, l.plot.bottom()), QPointF(x, l.plot.bottom() + 4));
        const QString text = QString::number(static_cast<long long>(t));
        p.drawText(QRectF(x - labelWidth / 2, l.plot.bottom() + 4, labelWidth, fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop, text);
    }
    p.drawText(
        QRectF(l.xAxis.left(), l.plot.bottom() + 4 + fm.height(), l.xAxis.width(), fm.height() + 2),
        Qt::AlignHCenter | Qt::AlignTop, QStringLiteral("slot"));
    // Stage labels: stage 1, then every step-th stage (evenly spaced, a step that keeps them
    // apart), never two closer than a label's height.
    const double rowHeight = l.plot.height() / stages;
    int stageStep = 1;
    while (stageStep * rowHeight < fm.height() + 2 && stageStep < stages) stageStep *= 2;
    double lastY = -1e9;
    for (int s = 1; s <= stages; ++s) {
        if ((s - 1) % stageStep != 0) continue;
        const double y = l.plot.top() + (s - 0.5) * rowHeight;
        if (y - lastY < fm.height()) continue;
        lastY = y;
        p.drawText(QRectF(0, y - fm.height() / 2, l.plot.left() - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("stage %1").arg(s));
    }
    p.restore();
}

void GanttChart::Impl::paintLegend(QPainter& p, const Layout& l, const QFontMetricsF& fm) const {
    p.save();
    const double box = std::min(12.0, fm.height() - 2);
    const double y = l.legend.top() + (l.legend.height() - box) / 2;
    double x = l.legend.left();
    auto label = [&](const QString& text) {
        p.setPen(QColor(40, 40, 40));
        const double w = fm.horizontalAdvance(text);
        p.drawText(QRectF(x, l.legend.top(), w + 2, l.legend.height()), Qt::AlignVCenter, text);
        x += w + 14;
    };
    auto swatch = [&](const QBrush& brush) {
        p.setPen(QColor(120, 120, 120));
        p.setBrush(brush);
        p.drawRect(QRectF(x, y, box, box));
        x += box + 4;
    };
    auto hatchedSwatch = [&]() {
        p.fillRect(QRectF(x, y, box, box), Qt::white);
        chart::drawHatch(p, QRectF(x, y, box, box), QColor(140, 140, 140), 4.0);
        swatch(Qt::NoBrush);
    };
    auto lineSwatch = [&](QRgb colour) {
        p.setPen(QPen(QColor(colour), 2.0));
        p.drawLine(QPointF(x + box / 2, y - 1), QPointF(x + box / 2, y + box + 1));
        x += box + 2;
    };
    if (exporting && !methodName.isEmpty()) {
        QFont bold = p.font();
        bold.setBold(true);
        p.save();
        p.setFont(bold);
        const QFontMetricsF boldMetrics(bold);
        p.setPen(QColor(20, 20, 20));
        const double w = boldMetrics.horizontalAdvance(methodName);
        p.drawText(QRectF(x, l.legend.top(), w + 2, l.legend.height()), Qt::AlignVCenter,
                   methodName);
        p.restore();
        x += w + 14;
    }
    swatch(QColor(chart::kGanttForward));
    label(QStringLiteral("F forward"));
    swatch(QColor(chart::kGanttBackward));
    label(QStringLiteral("B backward"));
    hatchedSwatch();
    label(QStringLiteral("idle"));
    // LocalSGD's averagings (none for one replica: sequential SGD never averages).
    if ((timeline->params.kind == ScheduleKind::LocalSgd && timeline->params.replicas > 1) ||
        !timeline->averagingSlots.empty()) {
        lineSwatch(chart::kPurple);
        label(QStringLiteral("averaging"));
    }
    if (cursor >= 0) {
        lineSwatch(chart::kVermillion);
        label(exporting ? QStringLiteral("slot %1").arg(cursor) : cursorText());
    }
    const double slotsPerPixel = range.span() / l.plot.width();
    if (!selection.empty()) {
        const QString note =
            fm.elidedText(selection.summary(), Qt::ElideRight, std::max(0.0, l.legend.right() - x));
        p.setPen(QColor(20, 20, 20));
        p.drawText(QRectF(x, l.legend.top(), l.legend.right() - x, l.legend.height()),
                   Qt::AlignVCenter | Qt::AlignLeft, note);
    } else if (slotsPerPixel > 1.0) {
        const bool split = l.plot.height() / stages >= 4.0;
        const QString note = QStringLiteral("1 px \u2248 %1 slots: %2")
                                 .arg(slotsPerPixel, 0, 'f', slotsPerPixel < 10 ? 1 : 0)
                                 .arg(split ? QStringLiteral("F share on top, B below")
                                            : QStringLiteral("F and B colours mixed"));
        const double w = fm.horizontalAdvance(note);
        if (x + w <= l.legend.right()) {
            p.setPen(QColor(100, 100, 100));
            p.drawText(QRectF(l.legend.right() - w, l.legend.top(), w, l.legend.height()),
                       Qt::AlignVCenter, note);
        }
    }
    p.restore();
}

// ---------------------------------------------------------------------------------------------

GanttChart::GanttChart(QWidget* parent)
    : RangeChart(kMinVisibleSlots, QStringLiteral("PipeLens pipeline timeline"), parent),
      d_(std::make_unique<Impl>(visibleRange())) {}

GanttChart::~GanttChart() = default;

void GanttChart::showPending(const QString& text) {
    setTimeline(nullptr);
    d_->emptyText = text;
    update();
}

QString GanttChart::emptyText() const {
    return d_->emptyText;
}

void GanttChart::setTimeline(std::shared_ptr<const Timeline> timeline,
                             std::shared_ptr<const DelayTable> delays) {
    const int oldSlots = d_->slotCount;
    if (delays && timeline &&
        (delays->stages() != timeline->params.stages ||
         delays->microbatches() != timeline->params.microbatches)) {
        qWarning(
            "GanttChart: the delay table (%d stages, %d microbatches) does not belong to the "
            "timeline (%d stages, %d microbatches); versions are not shown",
            delays->stages(), delays->microbatches(), timeline->params.stages,
            timeline->params.microbatches);
        delays = nullptr;
    }
    d_->timeline = std::move(timeline);
    d_->delays = d_->timeline ? std::move(delays) : nullptr;
    d_->emptyText = kEmptyText;
    d_->rebuild();
    d_->selection = d_->timeline && d_->selection.microbatch >= 0
                        ? pipelens::ui::selectMicrobatch(*d_->timeline, d_->delays.get(),
                                                         d_->selection.microbatch)
                        : MicrobatchSelection{};
    if (d_->cursor > d_->extentSlots()) {
        d_->cursor = d_->empty() ? -1 : d_->extentSlots();
        emit cursorSlotChanged(d_->cursor);
    }
    if (d_->empty()) {
        update();
        return;
    }
    // A new run of the same length keeps the zoom; anything else opens on its start-up.
    if (oldSlots != d_->slotCount) showStartUp();
    update();
}

std::shared_ptr<const Timeline> GanttChart::timeline() const {
    return d_->timeline;
}

int ganttStartUpSlots(const ScheduleParams& params, int totalSlots) {
    // A microbatch crosses the pipeline in S forwards and S backwards: three such crossings
    // show the start-up and the first steady rounds.
    const int crossing =
        params.stages * (params.costs.forwardSlots + params.costs.backwardSlots) / 2;
    return std::max(0, std::min(totalSlots, std::max(24, 3 * crossing)));
}

int GanttChart::startUpSlots() const {
    if (d_->empty()) return 0;
    return ganttStartUpSlots(d_->timeline->params, d_->slotCount);
}

void GanttChart::showStartUp() {
    if (d_->empty()) return fitAll();
    setVisibleRange(0.0, startUpSlots());
}

void GanttChart::setCursorSlot(int slot) {
    const int clamped = slot < 0 ? -1 : (d_->empty() ? slot : std::min(slot, d_->extentSlots()));
    if (clamped == d_->cursor) return;
    d_->cursor = clamped;
    // Zoomed in: keep the cursor in sight, a tenth of the way in from the left.
    const double span = visibleLast() - visibleFirst();
    if (!d_->empty() && clamped >= 0 && span < d_->extentSlots() &&
        (clamped < visibleFirst() || clamped > visibleFirst() + 0.9 * span)) {
        const double first =
            std::clamp(clamped - 0.1 * span, 0.0, std::max(0.0, d_->extentSlots() - span));
        setVisibleRange(first, first + span);
    }
    emit cursorSlotChanged(clamped);
    update();
}

void GanttChart::selectMicrobatch(int microbatch) {
    d_->selection =
        d_->timeline && microbatch >= 0
            ? pipelens::ui::selectMicrobatch(*d_->timeline, d_->delays.get(), microbatch)
            : MicrobatchSelection{};
    update();
}

int GanttChart::selectedMicrobatch() const {
    return d_->selection.microbatch;
}

const MicrobatchSelection& GanttChart::selection() const {
    return d_->selection;
}

void GanttChart::mouseReleaseEvent(QMouseEvent* event) {
    d_->lastRelease = event->position();
    RangeChart::mouseReleaseEvent(event);
}

QString GanttChart::cursorLegendText() const {
    return d_->cursorText();
}

int GanttChart::cursorSlot() const {
    return d_->cursor;
}

QString GanttChart::cellDescription(int stage, int slot) const {
    const TimelineCell* c = d_->index.cellAt(stage, slot);
    if (!c) return {};
    const bool forward = c->op == OpKind::Forward;
    // "slot 607" for a one-slot operation, "slots 607–609" for a longer one.
    const QString span = c->startSlot == c->endSlot
                             ? QStringLiteral("slot %1").arg(c->startSlot)
                             : QStringLiteral("slots %1\u2013%2").arg(c->startSlot).arg(c->endSlot);
    QString text = QStringLiteral("%1(m=%2) on stage %3, %4")
                       .arg(forward ? QLatin1Char('F') : QLatin1Char('B'))
                       .arg(c->microbatch)
                       .arg(c->stage + 1)
                       .arg(span);
    if (d_->delays) {
        // B uses the copy its F stashed, so both read the same version.
        const int version = d_->delays->versionRead(c->microbatch, c->stage);
        text += forward ? QStringLiteral(", reads weight version %1").arg(version)
                        : QStringLiteral(", uses stashed weight version %1").arg(version);
    }
    text += QStringLiteral(", stash depth %1").arg(d_->index.stashDepth(c->stage, slot));
    const ScheduleParams& p = d_->timeline->params;
    if (replicaOf(p, c->microbatch) > 0) {
        text += QStringLiteral(", replica %1, round %2")
                    .arg(replicaOf(p, c->microbatch))
                    .arg(c->microbatch / std::max(1, p.replicas * p.localSteps) + 1);
    }
    return text;
}

QString GanttChart::cellLabel(int stage, int slot) const {
    const TimelineCell* c = d_->index.cellAt(stage, slot);
    if (!c) return {};
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    return d_->labelOf(l, QFontMetricsF(Impl::labelFont(font())), *c);
}

int GanttChart::stashDepth(int stage, int slot) const {
    return d_->index.stashDepth(stage, slot);
}

bool GanttChart::cellAtPosition(const QPointF& position, int* stage, int* slot) const {
    if (d_->empty()) return false;
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    if (!l.plot.contains(position)) return false;
    const int s = static_cast<int>((position.y() - l.plot.top()) / l.plot.height() * d_->stages);
    const int t = static_cast<int>(std::floor(d_->slotAtX(l, position.x())));
    if (s < 0 || s >= d_->stages || t < 0 || t >= d_->slotCount) return false;
    if (stage) *stage = s;
    if (slot) *slot = t;
    return true;
}

void GanttChart::paintChart(QPainter& painter, const QSize& size, bool vectorCells) const {
    d_->exporting = exporting();
    d_->methodName = exportTitle();
    d_->paint(painter, size, font(), vectorCells);
}

QByteArray GanttChart::csv() const {
    if (!d_->timeline) return QByteArray(ganttTableCsv(Timeline{}, nullptr, {}).c_str());
    return QByteArray::fromStdString(
        ganttTableCsv(*d_->timeline, d_->delays.get(), exportTitle().toStdString()));
}

QSize GanttChart::sizeHint() const {
    const int rows = d_->empty() ? 8 : std::clamp(d_->stages, 2, 32);
    const int rowHeight = QFontMetrics(font()).height() + 4;
    return {900, std::max(220, rows * rowHeight + 5 * QFontMetrics(font()).height())};
}

double GanttChart::extent() const {
    return d_->empty() ? 0.0 : d_->extentSlots();
}

void GanttChart::setPlaybackSlots(int count) {
    if (count == d_->playbackSlots) return;
    d_->playbackSlots = std::max(0, count);
    if (!d_->empty() && visibleLast() > d_->extentSlots()) fitAll();
    update();
}

int GanttChart::playbackSlots() const {
    return d_->playbackSlots;
}

int GanttChart::shownSlots() const {
    return d_->empty() ? 0 : d_->extentSlots();
}

QRectF GanttChart::plotArea() const {
    return d_->layout(size(), QFontMetricsF(font())).plot;
}

QString GanttChart::toolTipAt(const QPointF& position) const {
    int stage = 0;
    int slot = 0;
    return cellAtPosition(position, &stage, &slot) ? cellDescription(stage, slot) : QString();
}

void GanttChart::boundaryClicked(long long boundary) {
    // The click selects the microbatch under it (an idle cell clears the selection) and moves
    // the playback cursor.
    int stage = 0;
    int slot = 0;
    const TimelineCell* cell =
        cellAtPosition(d_->lastRelease, &stage, &slot) ? d_->index.cellAt(stage, slot) : nullptr;
    selectMicrobatch(cell ? cell->microbatch : -1);
    emit slotClicked(static_cast<int>(boundary));
}

}  // namespace pipelens::ui

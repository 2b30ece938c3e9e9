#include "charts/staleness_heatmap.hpp"

#include <QActionGroup>
#include <QContextMenuEvent>
#include <QFontMetricsF>
#include <QMenu>
#include <QPainter>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "charts/chart_support.hpp"
#include "charts/colour_map.hpp"
#include "schedule/delay_ranges.hpp"
#include "schedule/delay_units.hpp"
#include "schedule/schedule_tables.hpp"

namespace pipelens::ui {

namespace {

constexpr double kMinVisibleUpdates = 4.0;
// A frame computes at most this many delays directly; beyond it, pixel columns snap to bins.
constexpr long long kMaxDirectCells = 4'000'000;
const QString kEmptyText = QStringLiteral("Run an experiment to see its pipeline");
const QString kComputingText = QStringLiteral("computing… the delays appear when the run ends");
const QString kFailedText = QStringLiteral("No delays: the run failed (the status bar says why)");
constexpr QRgb kNotRun = 0xffeeeeee;  // updates past the cursor

struct Layout {
    QRectF statsLine;  // one line, or more when the stats do not fit in one
    bool statsWrapped = false;
    // Wrapped: lines of the max, of the steady-state note and of the rest, each word-wrapped
    // (never elided: a narrow window shows them whole on more lines).
    int maxLines = 1;
    int noteLines = 0;
    int restLines = 1;
    double width = 0.0;  // the whole widget's
    QRectF plot;
    QRectF colourBar;
    QRectF xAxis;
};

}  // namespace

struct StalenessHeatmap::Impl {
    explicit Impl(const chart::XRange& visible) : range(visible) {}

    std::shared_ptr<const DelayTable> delays;
    int blocks = 0;
    long long updates = 0;
    // The delays' range maxima and sums, without storing the K x S delays.
    DelayRanges ranges;
    std::int32_t largest = 0;
    double shownMax = 0.0;
    double shownMean = 0.0;
    long long cursor = -1;
    int cursorSlot = -1;     // the playback cursor in slots, when the window gave it
    bool exporting = false;  // for an export: the method's name goes into the axis title
    QString methodName;
    bool computing = false;        // a run is in flight: its delays are on their way
    bool failed = false;           // the run that was computing failed
    bool pipeDreamFormula = true;  // S² − S/2 is this schedule's steady-state maximum
    DelayUnit unit = DelayUnit::BlockUpdates;
    const chart::XRange& range;  // the chart's visible range
    mutable QImage scratch;      // the cell image, reused between frames
    mutable std::vector<QRgb> plane;

    bool empty() const { return !delays || updates <= 0 || blocks <= 0; }
    // The formula S² − S/2 counts block updates of PipeDream's own schedule.
    bool showsFormula() const { return pipeDreamFormula && unit == DelayUnit::BlockUpdates; }
    long long shownUpdates() const { return cursor < 0 ? updates : std::min(cursor, updates); }
    std::int32_t leaf(long long k, int block) const { return ranges.delay(k, block); }
    // Whether a frame showing the current range snaps pixel columns to whole bins.
    bool snapsToBins(int columns) const;

    void rebuild();
    void updateStats();
    Layout layout(const QSizeF& size, const QFontMetricsF& fm) const;
    // An export names the method before the axis title; a name too long for that line (one
    // with its optimizer and correctors) goes on lines of its own under it, word-wrapped
    // rather than cut: their count (0 when it shares the title's line or there is none).
    int nameLines(const QFontMetricsF& fm, double width) const;
    double xOf(const Layout& l, double k) const {
        return l.plot.left() + (k - range.first) / range.span() * l.plot.width();
    }
    double updateAtX(const Layout& l, double x) const {
        return range.first + (x - l.plot.left()) / l.plot.width() * range.span();
    }
    QRgb colourOf(long long value) const {
        const double top = std::max<double>(1.0, largest);
        const double x = std::clamp(static_cast<double>(value) / top * 255.0 + 0.5, 0.0, 255.0);
        return viridis(static_cast<int>(x));
    }
    // The update range a device pixel column stands for, as [lo, hi) (empty past the cursor).
    void columnRange(int column, int columns, bool snap, long long* lo, long long* hi) const;
    // The stats header: the maximum beside its formula, then the mean and the context (S,
    // updates), which go on a second line when the widget is too narrow for one.
    QString statsMax() const;
    QString statsRest() const;
    QString statsNote() const;  // what the measured max covers, when it is not the formula
    QString statsText() const;
    void paint(QPainter& p, const QSizeF& size, const QFont& font, bool vectorCells) const;
    void paintCellsImage(QPainter& p, const Layout& l) const;
    void paintCellsVector(QPainter& p, const Layout& l) const;
    void paintCellLabels(QPainter& p, const Layout& l, const QFont& font) const;
    void paintAxes(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
    void paintColourBar(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
};

void StalenessHeatmap::Impl::rebuild() {
    ranges.reset(delays, DelayRanges::kDefaultMaxBinCells, unit);
    blocks = ranges.blocks();
    updates = ranges.updates();
    largest = ranges.largest();
}

bool StalenessHeatmap::Impl::snapsToBins(int columns) const {
    if (ranges.binShift() == 0) return false;
    // Columns split the visible updates, so unsnapped they compute at most every visible delay
    // once (partial bins) and the rest from the tree.
    const double visible = std::min<double>(range.span(), static_cast<double>(shownUpdates()));
    return visible * blocks > kMaxDirectCells && range.span() / columns >= 1.0;
}

void StalenessHeatmap::Impl::updateStats() {
    const DelayRanges::Stats stats = ranges.secondHalfStats(shownUpdates());
    shownMax = stats.max;
    shownMean = stats.mean;
}

QString StalenessHeatmap::Impl::statsMax() const {
    QString measured = QStringLiteral("max delay measured %1").arg(shownMax, 0, 'f', 0);
    if (unit != DelayUnit::BlockUpdates)
        return measured + QStringLiteral(" ") + QString::fromUtf8(delayUnitWords(unit));
    if (!pipeDreamFormula) return measured;  // not PipeDream's schedule: no formula of its own
    const long long formula = pipeDreamMaxDelayFormula(blocks);
    const QString expression = blocks % 2 == 0 ? QStringLiteral("S\u00b2\u2212S/2")
                                               : QStringLiteral("S\u00b2\u2212S/2\u2212\u00bd");
    const bool steady = steadyState(std::llround(shownMax), formula) == SteadyState::Reached;
    return measured +
           QStringLiteral(" (%1%2 = %3)")
               .arg(steady ? QStringLiteral("formula ") : QStringLiteral("steady-state "))
               .arg(expression)
               .arg(formula);
}

QString StalenessHeatmap::Impl::statsNote() const {
    // During playback the numbers cover the updates so far, not the run.
    if (cursor >= 0 && cursor < updates) {
        return cursorSlot >= 0 ? QStringLiteral("up to slot %1 (playback)").arg(cursorSlot)
                               : QStringLiteral("up to update %1 (playback)").arg(cursor);
    }
    if (!showsFormula()) return {};
    // The measured maximum is over the second half of the updates: only a long enough run has
    // left the start-up behind by then.
    switch (steadyState(std::llround(shownMax), pipeDreamMaxDelayFormula(blocks))) {
        case SteadyState::Reached:
            return {};
        case SteadyState::StartUpStripe:
            return QStringLiteral(
                "the run is too short for steady state: this max is the "
                "start-up stripe, which exceeds the formula");
        case SteadyState::NotReached:
            break;
    }
    return QStringLiteral("the run is too short to reach steady state");
}

QString StalenessHeatmap::Impl::statsText() const {
    const QString note = statsNote();
    return statsMax() + (note.isEmpty() ? QString() : QStringLiteral(" \u2014 ") + note) +
           QStringLiteral(", ") + statsRest();
}

QString StalenessHeatmap::Impl::statsRest() const {
    return QStringLiteral("mean %1  \u2014  S = %2, second half of %3 block updates")
        .arg(shownMean, 0, 'f', 2)
        .arg(blocks)
        .arg(shownUpdates());
}

int StalenessHeatmap::Impl::nameLines(const QFontMetricsF& fm, double width) const {
    if (!exporting || methodName.isEmpty()) return 0;
    const double available = std::max(1.0, width - 4);
    if (fm.horizontalAdvance(methodName + QStringLiteral(": block update k")) <= available)
        return 0;
    const QRectF box = fm.boundingRect(QRectF(0, 0, available, 1e6), Qt::TextWordWrap, methodName);
    return std::max(1, static_cast<int>(std::ceil(box.height() / fm.height() - 0.01)));
}

Layout StalenessHeatmap::Impl::layout(const QSizeF& size, const QFontMetricsF& fm) const {
    const double line = fm.height();
    const double left =
        fm.horizontalAdvance(QStringLiteral("block %1").arg(std::max(blocks, 10))) + 14;
    const double barLabels =
        fm.horizontalAdvance(QString::number(std::max<long long>(largest, 100))) + 8;
    // The bar, its tick labels and its title (written upwards, one line wide).
    const double right = 10 + 14 + 4 + barLabels + std::ceil(line) + 4;
    const double bottom = (2 + nameLines(fm, size.width())) * line + 10;
    // Whole logical pixels, so the cell image maps 1:1 onto device pixels.
    Layout l;
    l.width = size.width();
    const double statsWidth = std::max(0.0, std::floor(size.width() - left - 8));
    l.statsWrapped = fm.horizontalAdvance(statsText()) > statsWidth;
    auto linesOf = [&](const QString& text) {
        if (text.isEmpty() || statsWidth <= 0) return 0;
        const QRectF box = fm.boundingRect(QRectF(0, 0, statsWidth, 1e6), Qt::TextWordWrap, text);
        return std::max(1, static_cast<int>(std::ceil(box.height() / line - 0.01)));
    };
    if (l.statsWrapped) {
        l.maxLines = std::max(1, linesOf(statsMax()));
        l.noteLines = linesOf(statsNote());
        l.restLines = std::max(1, linesOf(statsRest()));
    }
    const int statsLines = l.statsWrapped ? l.maxLines + l.noteLines + l.restLines : 1;
    l.statsLine = QRectF(std::ceil(left), 4, statsWidth, std::ceil(statsLines * line + 6));
    l.plot = QRectF(std::ceil(left), l.statsLine.bottom() + 4,
                    std::max(1.0, std::floor(size.width() - std::ceil(left) - right)),
                    std::max(1.0, std::floor(size.height() - l.statsLine.bottom() - 4 - bottom)));
    l.colourBar = QRectF(l.plot.right() + 10, l.plot.top(), 14, l.plot.height());
    l.xAxis = QRectF(left, l.plot.bottom(), l.plot.width(), bottom);
    return l;
}

void StalenessHeatmap::Impl::columnRange(int column, int columns, bool snap, long long* lo,
                                         long long* hi) const {
    const double perColumn = range.span() / columns;
    const double a = range.first + perColumn * column;
    const double b = a + perColumn;
    if (snap) {
        // Whole bins, split between columns by rounding their edges: every bin in one column.
        const int shift = ranges.binShift();
        const double binSize = static_cast<double>(1LL << shift);
        const long long first = std::llround(a / binSize);
        const long long last = std::max(first + 1, std::llround(b / binSize));
        *lo = first << shift;
        *hi = last << shift;
    } else if (perColumn < 1.0) {
        *lo = static_cast<long long>(std::floor((a + b) / 2.0));
        *hi = *lo + 1;
    } else {
        *lo = std::llround(a);
        *hi = std::max(*lo + 1, std::llround(b));
    }
    const long long shown = shownUpdates();
    *lo = std::clamp(*lo, 0LL, shown);
    *hi = std::clamp(*hi, 0LL, shown);
}

void StalenessHeatmap::Impl::paint(QPainter& p, const QSizeF& size, const QFont& font,
                                   bool vectorCells) const {
    p.save();
    p.setFont(font);
    if (empty()) {
        p.fillRect(QRectF(QPointF(0, 0), size), Qt::white);
        chart::drawEmptyState(p, QRectF(QPointF(0, 0), size),
                              failed      ? kFailedText
                              : computing ? kComputingText
                                          : kEmptyText);
        p.restore();
        return;
    }
    const QFontMetricsF fm(font);
    const Layout l = layout(size, fm);
    // White around the plot only: the cell image covers the plot (fills cost per pixel).
    chart::fillAround(p, QRectF(QPointF(0, 0), size), l.plot, Qt::white);
    p.setPen(QColor(30, 30, 30));
    if (!l.statsWrapped) {
        p.drawText(l.statsLine, Qt::AlignLeft | Qt::AlignVCenter, statsText());
    } else {
        // The max, the steady-state note and the rest, each word-wrapped on as many lines as
        // it needs (the layout made room for them).
        const double w = l.statsLine.width();
        const QRectF first(l.statsLine.left(), l.statsLine.top() + 3, w, l.maxLines * fm.height());
        const QRectF note(l.statsLine.left(), first.bottom(), w, l.noteLines * fm.height());
        const QRectF second(l.statsLine.left(), note.bottom(), w, l.restLines * fm.height());
        p.drawText(first, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, statsMax());
        if (l.noteLines > 0)
            p.drawText(note, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, statsNote());
        p.drawText(second, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, statsRest());
    }
    if (vectorCells) p.fillRect(l.plot, QColor(kNotRun));
    if (vectorCells)
        paintCellsVector(p, l);
    else
        paintCellsImage(p, l);
    p.save();
    p.setClipRect(l.plot);
    const double rowHeight = l.plot.height() / blocks;
    if (rowHeight >= 10.0) {
        p.setPen(QPen(Qt::white, 1.0));
        for (int j = 1; j < blocks; ++j) {
            const double y = l.plot.top() + j * rowHeight;
            p.drawLine(QPointF(l.plot.left(), y), QPointF(l.plot.right(), y));
        }
    }
    paintCellLabels(p, l, font);
    p.restore();
    if (cursor >= 0 && cursor >= range.first && cursor <= range.last) {
        const double x = xOf(l, static_cast<double>(shownUpdates()));
        p.setPen(QPen(QColor(chart::kVermillion), 2.0));
        p.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.plot.bottom()));
    }
    p.setPen(QColor(120, 120, 120));
    p.setBrush(Qt::NoBrush);
    p.drawRect(l.plot);
    paintAxes(p, l, fm);
    paintColourBar(p, l, fm);
    p.restore();
}

// One image pixel per device column and block: the exact delay when the column lies inside one
// update, else the largest delay of the updates it covers. The work is O(pixels x log) from the
// bin tree, plus at most kMaxDirectCells delays computed directly.
void StalenessHeatmap::Impl::paintCellsImage(QPainter& p, const Layout& l) const {
    const double dpr = std::max(1.0, p.device() ? p.device()->devicePixelRatioF() : 1.0);
    const int columns = std::max(1, static_cast<int>(std::lround(l.plot.width() * dpr)));
    const int rows = std::max(1, static_cast<int>(std::lround(l.plot.height() * dpr)));
    // Opaque and exactly the plot's device pixels, so the blit is a copy.
    if (scratch.size() != QSize(columns, rows))
        scratch = QImage(columns, rows, QImage::Format_RGB32);
    const auto S = static_cast<std::size_t>(blocks);
    const auto W = static_cast<std::size_t>(columns);
    plane.resize(S * W);  // colour per (block, column), block-major
    const bool snap = snapsToBins(columns);
    std::vector<std::int32_t> acc(S);
    long long prevLo = -1;
    long long prevHi = -1;
    for (std::size_t c = 0; c < W; ++c) {
        long long lo = 0;
        long long hi = 0;
        columnRange(static_cast<int>(c), columns, snap, &lo, &hi);
        if (hi <= lo) {
            for (std::size_t j = 0; j < S; ++j) plane[j * W + c] = kNotRun;
            continue;
        }
        // Zoomed in, neighbouring columns often show the same update: reuse it.
        if (lo != prevLo || hi != prevHi) {
            std::fill(acc.begin(), acc.end(), DelayRanges::kNoValue);
            ranges.rangeMax(lo, hi, acc.data());
            prevLo = lo;
            prevHi = hi;
        }
        for (std::size_t j = 0; j < S; ++j) plane[j * W + c] = colourOf(acc[j]);
    }
    auto* bits = reinterpret_cast<QRgb*>(scratch.bits());
    const auto stride = static_cast<std::size_t>(scratch.bytesPerLine() / 4);
    const double rowDevice = static_cast<double>(rows) / blocks;
    int y = 0;
    for (std::size_t j = 0; j < S; ++j) {
        const int rowEnd =
            j + 1 == S ? rows
                       : static_cast<int>(std::lround(static_cast<double>(j + 1) * rowDevice));
        for (; y < rowEnd; ++y)
            std::copy_n(plane.data() + j * W, W, bits + static_cast<std::size_t>(y) * stride);
    }
    p.save();
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(l.plot, scratch);
    p.restore();
}

void StalenessHeatmap::Impl::paintCellsVector(QPainter& p, const Layout& l) const {
    const long long lo = std::max(0LL, static_cast<long long>(std::floor(range.first)));
    const long long hi = std::min(shownUpdates(), static_cast<long long>(std::ceil(range.last)));
    // More cells than pixels: the image is smaller and shows the same.
    if ((hi - lo) * blocks > 20000 || (hi - lo) > l.plot.width()) {
        paintCellsImage(p, l);
        return;
    }
    p.save();
    p.setClipRect(l.plot);
    const double rowHeight = l.plot.height() / blocks;
    for (int j = 0; j < blocks; ++j) {
        for (long long k = lo; k < hi; ++k) {
            const double x0 = xOf(l, static_cast<double>(k));
            const double x1 = xOf(l, static_cast<double>(k + 1));
            p.fillRect(QRectF(x0, l.plot.top() + j * rowHeight, x1 - x0, rowHeight),
                       QColor(colourOf(leaf(k, j))));
        }
    }
    p.restore();
}

void StalenessHeatmap::Impl::paintCellLabels(QPainter& p, const Layout& l,
                                             const QFont& font) const {
    QFont small = font;
    small.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
    const QFontMetricsF fm(small);
    const double rowHeight = l.plot.height() / blocks;
    const double cellWidth = l.plot.width() / range.span();
    const double textWidth = fm.horizontalAdvance(QString::number(std::max<long long>(largest, 1)));
    if (rowHeight < fm.height() * 0.9 || cellWidth < textWidth + 4) return;
    p.save();
    p.setFont(small);
    const long long lo = std::max(0LL, static_cast<long long>(std::floor(range.first)));
    const long long hi = std::min(shownUpdates(), static_cast<long long>(std::ceil(range.last)));
    for (int j = 0; j < blocks; ++j) {
        for (long long k = lo; k < hi; ++k) {
            const std::int32_t v = leaf(k, j);
            const QColor colour(colourOf(v));
            p.setPen(colour.lightnessF() > 0.5 ? Qt::black : Qt::white);
            const double x0 = xOf(l, static_cast<double>(k));
            p.drawText(QRectF(x0, l.plot.top() + j * rowHeight, cellWidth, rowHeight),
                       Qt::AlignCenter, QString::number(v));
        }
    }
    p.restore();
}

void StalenessHeatmap::Impl::paintAxes(QPainter& p, const Layout& l,
                                       const QFontMetricsF& fm) const {
    p.save();
    p.setPen(QColor(60, 60, 60));
    const double cellWidth = l.plot.width() / range.span();
    const double labelWidth = fm.horizontalAdvance(QString::number(updates)) + 18;
    const double step = chart::niceTickStep(cellWidth, labelWidth);
    const double firstTick = std::ceil((range.first - 0.5) / step) * step;
    for (double k = firstTick; k < range.last && k < static_cast<double>(updates); k += step) {
        const double x = xOf(l, k + 0.5);
        if (x < l.plot.left() - 0.5 || x > l.plot.right() + 0.5) continue;
        p.drawLine(QPointF(x, l.plot.bottom()), QPointF(x, l.plot.bottom() + 4));
        p.drawText(QRectF(x - labelWidth / 2, l.plot.bottom() + 4, labelWidth, fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop, QString::number(static_cast<long long>(k)));
    }
    {
        // The title, centred under the plot but kept inside the widget: the longest wording
        // that fits, elided as a last resort.
        const double widgetWidth = l.width;
        const double available = std::max(0.0, widgetWidth - 4);
        QStringList wordings;
        if (cellWidth < 1.0) {
            const QString perPixel = QString::number(1.0 / cellWidth, 'f', 0);
            wordings
                << QStringLiteral("block update k  (1 px \u2248 %1 updates: their largest delay)")
                       .arg(perPixel)
                << QStringLiteral("block update k  (1 px \u2248 %1 updates, max)").arg(perPixel)
                << QStringLiteral("update k (1 px \u2248 %1)").arg(perPixel);
        }
        wordings << QStringLiteral("block update k");
        // An export names the method (the window shows it in the title above the chart): before
        // the title, or on lines of its own under it when it is too long for that.
        const int ownLines = nameLines(fm, widgetWidth);
        if (exporting && !methodName.isEmpty() && ownLines == 0) {
            for (QString& w : wordings) w = methodName + QStringLiteral(": ") + w;
        }
        QString title = wordings.back();
        for (const QString& w : wordings) {
            if (fm.horizontalAdvance(w) <= available) {
                title = w;
                break;
            }
        }
        title = fm.elidedText(title, Qt::ElideRight, available);
        const double width = fm.horizontalAdvance(title) + 2;
        const double centre = l.plot.center().x();
        const double x = std::clamp(centre - width / 2, 2.0, std::max(2.0, widgetWidth - width));
        p.drawText(QRectF(x, l.plot.bottom() + 4 + fm.height(), width, fm.height() + 2),
                   Qt::AlignLeft | Qt::AlignTop, title);
        if (ownLines > 0) {
            p.drawText(QRectF(2, l.plot.bottom() + 6 + 2 * fm.height(), available,
                              ownLines * fm.height() + 2),
                       Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, methodName);
        }
    }
    const double rowHeight = l.plot.height() / blocks;
    for (const int j : labelledBlocks(blocks, rowHeight, fm.height())) {
        const double y = l.plot.top() + (j - 0.5) * rowHeight;
        p.drawText(QRectF(0, y - fm.height() / 2, l.plot.left() - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("block %1").arg(j));
    }
    p.restore();
}

void StalenessHeatmap::Impl::paintColourBar(QPainter& p, const Layout& l,
                                            const QFontMetricsF& fm) const {
    p.save();
    const QRectF bar = l.colourBar;
    QImage ramp(1, 256, QImage::Format_RGB32);
    for (int i = 0; i < 256; ++i) reinterpret_cast<QRgb*>(ramp.scanLine(255 - i))[0] = viridis(i);
    p.setRenderHint(QPainter::SmoothPixmapTransform, true);
    p.drawImage(bar, ramp);
    p.setPen(QColor(120, 120, 120));
    p.setBrush(Qt::NoBrush);
    p.drawRect(bar);
    const double top = std::max<double>(1.0, largest);
    auto yOf = [&](double v) { return bar.bottom() - v / top * bar.height(); };
    const double step = chart::niceTickStep(bar.height() / top, 2.5 * fm.height());
    p.setPen(QColor(60, 60, 60));
    for (double v = 0; v <= top + 1e-9; v += step) {
        const double y = yOf(v);
        p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 3, y));
        p.drawText(QRectF(bar.right() + 5, y - fm.height() / 2, 200, fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, QString::number(static_cast<long long>(v)));
    }
    // The title, upwards along the bar, beyond its widest tick label.
    const double labelsWidth =
        fm.horizontalAdvance(QString::number(std::max<long long>(largest, 100))) + 8;
    // The whole title, or "delay" where the bar is too short for it (never an elided word).
    QString title = colourBarTitle(unit);
    if (fm.horizontalAdvance(title) > bar.height()) title = QStringLiteral("delay");
    if (fm.horizontalAdvance(title) > bar.height()) title.clear();
    p.save();
    p.translate(bar.right() + 4 + labelsWidth, bar.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-bar.height() / 2, 0, bar.height(), fm.height() + 2),
               Qt::AlignHCenter | Qt::AlignTop, title);
    p.restore();
    // The steady-state maximum S^2 - S/2, for comparison with the colours (in block updates).
    const auto formula = static_cast<double>(pipeDreamMaxDelayFormula(blocks));
    if (unit == DelayUnit::BlockUpdates && formula <= top) {
        const double y = yOf(formula);
        p.setPen(QPen(QColor(chart::kVermillion), 2.0));
        p.drawLine(QPointF(bar.left() - 4, y), QPointF(bar.right(), y));
    }
    p.restore();
}

// ---------------------------------------------------------------------------------------------

QString StalenessHeatmap::colourBarTitle() {
    return colourBarTitle(DelayUnit::BlockUpdates);
}

QString StalenessHeatmap::colourBarTitle(DelayUnit unit) {
    return QStringLiteral("delay (%1)").arg(QString::fromUtf8(delayUnitWords(unit)));
}

void StalenessHeatmap::setUnit(DelayUnit unit) {
    if (unit == d_->unit) return;
    d_->unit = unit;
    d_->rebuild();
    d_->updateStats();
    update();
    emit unitChanged(unit);
}

DelayUnit StalenessHeatmap::unit() const {
    return d_->unit;
}

void StalenessHeatmap::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    auto* group = new QActionGroup(&menu);
    for (const DelayUnit u :
         {DelayUnit::BlockUpdates, DelayUnit::OptimizerSteps, DelayUnit::Slots}) {
        QAction* a = menu.addAction(
            QStringLiteral("Delays in %1").arg(QString::fromUtf8(delayUnitWords(u))));
        a->setCheckable(true);
        a->setChecked(u == d_->unit);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [this, u] { setUnit(u); });
    }
    menu.exec(event->globalPos());
}

StalenessHeatmap::StalenessHeatmap(QWidget* parent)
    : RangeChart(kMinVisibleUpdates, QStringLiteral("PipeLens staleness heatmap"), parent),
      d_(std::make_unique<Impl>(visibleRange())) {}

StalenessHeatmap::~StalenessHeatmap() = default;

void StalenessHeatmap::setComputing() {
    setDelays(nullptr);
    d_->computing = true;
    update();
}

bool StalenessHeatmap::computing() const {
    return d_->computing;
}

void StalenessHeatmap::setFailed() {
    setDelays(nullptr);
    d_->failed = true;
    update();
}

bool StalenessHeatmap::failed() const {
    return d_->failed;
}

void StalenessHeatmap::setDelays(std::shared_ptr<const DelayTable> delays, bool pipeDreamFormula) {
    d_->computing = false;
    d_->failed = false;
    d_->pipeDreamFormula = pipeDreamFormula;
    const long long oldUpdates = d_->updates;
    d_->delays = std::move(delays);
    d_->rebuild();
    d_->updateStats();
    if (!d_->empty() && oldUpdates != d_->updates) fitAll();
    update();
}

std::shared_ptr<const DelayTable> StalenessHeatmap::delays() const {
    return d_->delays;
}

std::vector<int> StalenessHeatmap::labelledBlocks(int blocks, double rowHeight, double textHeight) {
    // Every step-th block from block 1, the step a power of two that leaves a text line and a
    // little air between labels: evenly spaced, whatever S.
    int step = 1;
    while (step * rowHeight < textHeight + 2 && step < blocks) step *= 2;
    std::vector<int> out;
    for (int j = 1; j <= blocks; j += step) out.push_back(j);
    return out;
}

void StalenessHeatmap::setCursorUpdate(long long update, int slot) {
    const long long value = update < 0 ? -1 : update;
    const int shownSlot = value < 0 ? -1 : slot;
    if (value == d_->cursor && shownSlot == d_->cursorSlot) return;
    d_->cursorSlot = shownSlot;
    d_->cursor = value;
    d_->updateStats();
    this->update();
}

long long StalenessHeatmap::cursorUpdate() const {
    return d_->cursor;
}

long long StalenessHeatmap::valueAt(long long update, int block) const {
    if (d_->empty() || block < 0 || block >= d_->blocks || update < 0 ||
        update >= d_->shownUpdates())
        return -1;
    return d_->leaf(update, block);
}

double StalenessHeatmap::measuredMax() const {
    return d_->shownMax;
}
double StalenessHeatmap::measuredMean() const {
    return d_->shownMean;
}

double StalenessHeatmap::formulaMax() const {
    if (!d_->empty() && !d_->showsFormula()) return std::numeric_limits<double>::quiet_NaN();
    return d_->empty() ? 0.0 : static_cast<double>(pipeDreamMaxDelayFormula(d_->blocks));
}

QString StalenessHeatmap::statsText() const {
    return d_->empty() ? QString() : d_->statsText();
}

QString StalenessHeatmap::cellDescription(long long update, int block) const {
    if (valueAt(update, block) < 0) return {};
    const BlockUpdateInfo& info = d_->delays->update(update);
    const long long h = d_->delays->forwardIndex(info.microbatch, block);
    if (d_->unit != DelayUnit::BlockUpdates) {
        return QStringLiteral(
                   "update k=%1: B(m=%2) on stage %3 (slot %4) read block %5 in slot %6 with "
                   "delay %7 %8 (%9 block updates)")
            .arg(update)
            .arg(info.microbatch)
            .arg(info.stage + 1)
            .arg(info.slot)
            .arg(block + 1)
            .arg(d_->delays->readSlot(info.microbatch, block))
            .arg(valueAt(update, block))
            .arg(QString::fromUtf8(delayUnitWords(d_->unit)))
            .arg(update - h);
    }
    return QStringLiteral(
               "update k=%1: B(m=%2) on stage %3 read block %4 with delay %5 "
               "(version from update h(m, j) = %6)")
        .arg(update)
        .arg(info.microbatch)
        .arg(info.stage + 1)
        .arg(block + 1)
        .arg(update - h)
        .arg(h);
}

bool StalenessHeatmap::cellAtPosition(const QPointF& position, long long* update, int* block,
                                      long long* firstUpdate, long long* lastUpdate) const {
    if (d_->empty()) return false;
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    if (!l.plot.contains(position)) return false;
    const int j = static_cast<int>((position.y() - l.plot.top()) / l.plot.height() * d_->blocks);
    const double dpr = devicePixelRatioF();
    const int columns = std::max(1, static_cast<int>(std::ceil(l.plot.width() * dpr)));
    const int column = static_cast<int>((position.x() - l.plot.left()) * dpr);
    long long lo = 0;
    long long hi = 0;
    d_->columnRange(std::clamp(column, 0, columns - 1), columns, d_->snapsToBins(columns), &lo,
                    &hi);
    if (j < 0 || j >= d_->blocks || hi <= lo) return false;
    // The column shows the largest delay it covers: describe that update.
    if (update) *update = d_->ranges.argMax(lo, hi, j);
    if (block) *block = j;
    if (firstUpdate) *firstUpdate = lo;
    if (lastUpdate) *lastUpdate = hi - 1;
    return true;
}

void StalenessHeatmap::paintChart(QPainter& painter, const QSize& size, bool vectorCells) const {
    d_->exporting = exporting();
    d_->methodName = exportTitle();
    d_->paint(painter, size, font(), vectorCells);
}

QByteArray StalenessHeatmap::csv() const {
    // The updates shown (up to the cursor), as the results folder writes them.
    if (d_->unit != DelayUnit::BlockUpdates) {
        // Every unit's columns, named by their unit (the results folder's delay_units_<i>.csv).
        if (d_->empty()) return QByteArray(delayUnitsCsv(DelayTable{}, {}).c_str());
        return QByteArray::fromStdString(
            delayUnitsCsv(*d_->delays, exportTitle().toStdString(), d_->shownUpdates()));
    }
    if (d_->empty()) return QByteArray(delayTableCsv(DelayTable{}, {}).c_str());
    return QByteArray::fromStdString(
        delayTableCsv(*d_->delays, exportTitle().toStdString(), d_->shownUpdates()));
}

QSize StalenessHeatmap::sizeHint() const {
    const int rows = d_->empty() ? 8 : std::clamp(d_->blocks, 2, 32);
    const int rowHeight = QFontMetrics(font()).height() + 2;
    return {900, std::max(200, rows * rowHeight + 5 * QFontMetrics(font()).height())};
}

double StalenessHeatmap::extent() const {
    return d_->empty() ? 0.0 : static_cast<double>(d_->updates);
}

QRectF StalenessHeatmap::plotArea() const {
    return d_->layout(size(), QFontMetricsF(font())).plot;
}

QString StalenessHeatmap::toolTipAt(const QPointF& position) const {
    long long k = 0;
    long long first = 0;
    long long last = 0;
    int j = 0;
    if (!cellAtPosition(position, &k, &j, &first, &last)) return {};
    QString text = cellDescription(k, j);
    // An aggregated column shows the largest delay of the updates it covers.
    if (last > first && !text.isEmpty())
        return QStringLiteral("largest of updates %1\u2013%2: ").arg(first).arg(last) + text;
    return text;
}

void StalenessHeatmap::boundaryClicked(long long boundary) {
    emit updateClicked(boundary);
}

}  // namespace pipelens::ui

#include "staleness_heatmap.hpp"

#include <QFontMetricsF>
#include <QGuiApplication>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QStringList>
#include <QStyleHints>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "chart_support.hpp"

namespace pipelens::ui {

namespace {

constexpr double kMinVisibleUpdates = 4.0;
constexpr std::int32_t kNoValue = std::numeric_limits<std::int32_t>::min();
// Bins of the aggregation tree are sized so that it holds at most this many numbers.
constexpr long long kMaxBinCells = 1'000'000;
// A frame computes at most this many delays directly; beyond it, pixel columns snap to bins.
constexpr long long kMaxDirectCells = 4'000'000;
const QString kEmptyText = QStringLiteral("Run an experiment to see its pipeline");
constexpr QRgb kNotRun = 0xffeeeeee;  // updates past the cursor

// A viridis-like perceptual ramp (dark blue-purple -> teal -> yellow), monotone in lightness,
// interpolated linearly between a few control points.
std::array<QRgb, 256> makeColourMap() {
    struct Stop {
        double at;
        int r, g, b;
    };
    constexpr Stop stops[] = {{0.00, 68, 1, 84},
                              {0.25, 59, 82, 139},
                              {0.50, 33, 145, 140},
                              {0.75, 94, 201, 98},
                              {1.00, 253, 231, 37}};
    std::array<QRgb, 256> map{};
    for (int i = 0; i < 256; ++i) {
        const double x = i / 255.0;
        std::size_t k = 0;
        while (k + 2 < std::size(stops) && x > stops[k + 1].at) ++k;
        const Stop& a = stops[k];
        const Stop& b = stops[k + 1];
        const double u = (x - a.at) / (b.at - a.at);
        auto mix = [&](int p, int q) { return static_cast<int>(std::lround(p + (q - p) * u)); };
        map[static_cast<std::size_t>(i)] = qRgb(mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
    }
    return map;
}

const std::array<QRgb, 256>& colourMap() {
    static const std::array<QRgb, 256> map = makeColourMap();
    return map;
}

// The steady-state maximum delay of PD (SPEC section 3, as DelayStats::formulaMax):
// S^2 - S/2 for even S, S^2 - S/2 - 1/2 for odd S.
double formulaMaxFor(int stages) {
    const double s = stages;
    return s * s - s / 2.0 - (stages % 2 == 1 ? 0.5 : 0.0);
}

// Bottom-up max segment trees over `n` leaves stored at [n, 2n), each node a row of `width`
// numbers (width 1: a plain tree; width S: one maximum per block, maxed row by row).
void buildTree(std::int32_t* tree, long long n, int width) {
    for (long long i = n - 1; i >= 1; --i) {
        std::int32_t* out = tree + i * width;
        const std::int32_t* a = tree + 2 * i * width;
        const std::int32_t* b = a + width;
        for (int j = 0; j < width; ++j) out[j] = std::max(a[j], b[j]);
    }
}

// acc[j] = max(acc[j], max over leaves [lo, hi) of column j).
void treeRangeMax(const std::int32_t* tree, long long n, int width, long long lo, long long hi,
                  std::int32_t* acc) {
    auto take = [&](long long node) {
        const std::int32_t* row = tree + node * width;
        for (int j = 0; j < width; ++j) acc[j] = std::max(acc[j], row[j]);
    };
    for (lo += n, hi += n; lo < hi; lo >>= 1, hi >>= 1) {
        if (lo & 1) take(lo++);
        if (hi & 1) take(--hi);
    }
}

// acc[j] = max(acc[j], k - h[j]) for j < n: the inner loop of every delay maximum (S x K of
// them when a run is loaded), so it gets a wider-vector clone where the CPU has one.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void maxOfDifferences(std::int32_t* acc, std::int32_t k, const std::int32_t* h, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) acc[j] = std::max(acc[j], k - h[j]);
}

struct Layout {
    QRectF statsLine;  // one line, or two when the stats do not fit in one
    bool statsWrapped = false;
    double width = 0.0;  // the whole widget's
    QRectF plot;
    QRectF colourBar;
    QRectF xAxis;
};

}  // namespace

struct StalenessHeatmap::Impl {
    std::shared_ptr<const DelayTable> delays;
    int blocks = 0;
    long long updates = 0;
    // delay(k, j) = k - h(m_k, j) is computed on demand from h and the microbatch of each update:
    // the K x S delays are never stored (S = 128 over 20,000 slots makes 160 million of them).
    std::vector<std::int32_t> forward;  // h(m, j) at m * S + j
    std::vector<long long> forwardSum;  // sum over j of h(m, j)
    // Bins of 2^binShift consecutive updates; per bin and block the largest delay, in a max
    // segment tree over bins whose nodes hold the S blocks side by side (at most kMaxBinCells
    // leaves: 8 MB), and prefix sums over bins of all delays, for the mean of any prefix.
    int binShift = 0;
    long long bins = 0;
    std::vector<std::int32_t> binTree;
    std::vector<long long> binSumPrefix;
    std::int32_t largest = 0;
    double shownMax = 0.0;
    double shownMean = 0.0;
    long long cursor = -1;
    chart::XRange range;
    chart::RangeNavigation navigation{kMinVisibleUpdates};
    mutable QImage scratch;  // the cell image, reused between frames
    mutable std::vector<QRgb> plane;

    bool empty() const { return !delays || updates <= 0 || blocks <= 0; }
    long long shownUpdates() const { return cursor < 0 ? updates : std::min(cursor, updates); }
    int microbatchOf(long long k) const { return delays->update(k).microbatch; }
    std::int32_t leaf(long long k, int block) const {
        const auto m = static_cast<std::size_t>(microbatchOf(k));
        return static_cast<std::int32_t>(k) -
               forward[m * static_cast<std::size_t>(blocks) + static_cast<std::size_t>(block)];
    }
    // Sum over blocks of the delays of updates [lo, hi).
    long long delaySum(long long lo, long long hi) const;
    // acc[j] = max(acc[j], largest delay of block j over updates [lo, hi)), exactly: partial bins
    // at the ends directly, whole bins from the tree.
    void rangeMaxAllBlocks(long long lo, long long hi, std::int32_t* acc) const;
    void directMax(long long lo, long long hi, std::int32_t* acc) const;
    // Whether a frame showing the current range snaps pixel columns to whole bins.
    bool snapsToBins(int columns) const;

    void rebuild();
    void updateStats();
    Layout layout(const QSizeF& size, const QFontMetricsF& fm) const;
    double xOf(const Layout& l, double k) const {
        return l.plot.left() + (k - range.first) / range.span() * l.plot.width();
    }
    double updateAtX(const Layout& l, double x) const {
        return range.first + (x - l.plot.left()) / l.plot.width() * range.span();
    }
    QRgb colourOf(long long value) const {
        const double top = std::max<double>(1.0, largest);
        const double x = std::clamp(static_cast<double>(value) / top * 255.0 + 0.5, 0.0, 255.0);
        return colourMap()[static_cast<std::size_t>(x)];
    }
    // The update range a device pixel column stands for, as [lo, hi) (empty past the cursor).
    void columnRange(int column, int columns, bool snap, long long* lo, long long* hi) const;
    // The stats header: the maximum beside its formula, then the mean and the context (S,
    // updates), which go on a second line when the widget is too narrow for one.
    QString statsMax() const;
    QString statsRest() const;
    QString statsText() const { return statsMax() + QStringLiteral(", ") + statsRest(); }
    void paint(QPainter& p, const QSizeF& size, const QFont& font, bool vectorCells) const;
    void paintCellsImage(QPainter& p, const Layout& l) const;
    void paintCellsVector(QPainter& p, const Layout& l) const;
    void paintCellLabels(QPainter& p, const Layout& l, const QFont& font) const;
    void paintAxes(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
    void paintColourBar(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
};

void StalenessHeatmap::Impl::rebuild() {
    forward.clear();
    forwardSum.clear();
    binTree.clear();
    binSumPrefix.clear();
    largest = 0;
    binShift = 0;
    bins = 0;
    blocks = delays ? delays->stages() : 0;
    updates = delays ? delays->updates() : 0;
    if (empty()) return;
    const auto S = static_cast<std::size_t>(blocks);
    const int microbatches = delays->microbatches();
    forward.resize(static_cast<std::size_t>(microbatches) * S);
    forwardSum.resize(static_cast<std::size_t>(microbatches));
    for (int m = 0; m < microbatches; ++m) {
        long long sum = 0;
        for (int j = 0; j < blocks; ++j) {
            const long long h = delays->forwardIndex(m, j);
            forward[static_cast<std::size_t>(m) * S + static_cast<std::size_t>(j)] =
                static_cast<std::int32_t>(h);
            sum += h;
        }
        forwardSum[static_cast<std::size_t>(m)] = sum;
    }
    while (((updates + (1LL << binShift) - 1) >> binShift) * blocks > kMaxBinCells) ++binShift;
    bins = (updates + (1LL << binShift) - 1) >> binShift;
    binTree.assign(2 * static_cast<std::size_t>(bins) * S, kNoValue);
    binSumPrefix.assign(static_cast<std::size_t>(bins) + 1, 0);
    for (long long bin = 0; bin < bins; ++bin) {
        const long long lo = bin << binShift;
        const long long hi = std::min(updates, lo + (1LL << binShift));
        directMax(lo, hi, binTree.data() + static_cast<std::size_t>(bins + bin) * S);
        binSumPrefix[static_cast<std::size_t>(bin) + 1] =
            binSumPrefix[static_cast<std::size_t>(bin)] + delaySum(lo, hi);
    }
    buildTree(binTree.data(), bins, blocks);
    // Node 1 (the root, or the only leaf) holds every block's largest delay.
    largest = *std::max_element(binTree.begin() + static_cast<std::ptrdiff_t>(S),
                                binTree.begin() + static_cast<std::ptrdiff_t>(2 * S));
}

long long StalenessHeatmap::Impl::delaySum(long long lo, long long hi) const {
    long long sum = 0;
    for (long long k = lo; k < hi; ++k)
        sum += blocks * k - forwardSum[static_cast<std::size_t>(microbatchOf(k))];
    return sum;
}

void StalenessHeatmap::Impl::directMax(long long lo, long long hi, std::int32_t* acc) const {
    const auto S = static_cast<std::size_t>(blocks);
    for (long long k = lo; k < hi; ++k) {
        const std::int32_t* h = forward.data() + static_cast<std::size_t>(microbatchOf(k)) * S;
        maxOfDifferences(acc, static_cast<std::int32_t>(k), h, S);
    }
}

void StalenessHeatmap::Impl::rangeMaxAllBlocks(long long lo, long long hi,
                                               std::int32_t* acc) const {
    if (hi <= lo) return;
    const long long binSize = 1LL << binShift;
    const long long firstWhole = (lo + binSize - 1) >> binShift;
    const long long endWhole = hi >> binShift;
    if (firstWhole >= endWhole) {
        directMax(lo, hi, acc);
        return;
    }
    directMax(lo, firstWhole << binShift, acc);
    treeRangeMax(binTree.data(), bins, blocks, firstWhole, endWhole, acc);
    directMax(endWhole << binShift, hi, acc);
}

bool StalenessHeatmap::Impl::snapsToBins(int columns) const {
    if (binShift == 0) return false;
    // Columns split the visible updates, so unsnapped they compute at most every visible delay
    // once (partial bins) and the rest from the tree.
    const double visible = std::min<double>(range.span(), static_cast<double>(shownUpdates()));
    return visible * blocks > kMaxDirectCells && range.span() / columns >= 1.0;
}

// SPEC section 3: statistics over the second half of the (shown) block updates.
void StalenessHeatmap::Impl::updateStats() {
    shownMax = 0.0;
    shownMean = 0.0;
    if (empty()) return;
    const long long shown = shownUpdates();
    const auto first = static_cast<long long>(std::ceil(0.5 * static_cast<double>(shown)));
    if (shown <= first) return;
    std::vector<std::int32_t> acc(static_cast<std::size_t>(blocks), kNoValue);
    rangeMaxAllBlocks(first, shown, acc.data());
    shownMax = *std::max_element(acc.begin(), acc.end());
    // Sum of all delays of updates [0, x): whole bins from the prefix sums, the rest directly.
    auto sumBefore = [&](long long x) {
        const long long whole = x >> binShift;
        return binSumPrefix[static_cast<std::size_t>(whole)] + delaySum(whole << binShift, x);
    };
    const long long sum = sumBefore(shown) - sumBefore(first);
    shownMean = static_cast<double>(sum) / (static_cast<double>(shown - first) * blocks);
}

QString StalenessHeatmap::Impl::statsMax() const {
    const double formula = formulaMaxFor(blocks);
    const QString expression = blocks % 2 == 0 ? QStringLiteral("S\u00b2\u2212S/2")
                                               : QStringLiteral("S\u00b2\u2212S/2\u2212\u00bd");
    return QStringLiteral("max delay measured %1 (formula %2 = %3)")
        .arg(shownMax, 0, 'f', 0)
        .arg(expression)
        .arg(formula, 0, 'f', 0);
}

QString StalenessHeatmap::Impl::statsRest() const {
    return QStringLiteral("mean %1  \u2014  S = %2, second half of %3 block updates")
        .arg(shownMean, 0, 'f', 2)
        .arg(blocks)
        .arg(shownUpdates());
}

Layout StalenessHeatmap::Impl::layout(const QSizeF& size, const QFontMetricsF& fm) const {
    const double line = fm.height();
    const double left =
        fm.horizontalAdvance(QStringLiteral("block %1").arg(std::max(blocks, 10))) + 14;
    const double barLabels =
        fm.horizontalAdvance(QString::number(std::max<long long>(largest, 100))) + 8;
    const double right = 10 + 14 + 4 + barLabels;
    const double bottom = 2 * line + 10;
    // Whole logical pixels, so the cell image maps 1:1 onto device pixels.
    Layout l;
    l.width = size.width();
    const double statsWidth = std::max(0.0, std::floor(size.width() - left - 8));
    l.statsWrapped = fm.horizontalAdvance(statsText()) > statsWidth;
    l.statsLine = QRectF(std::ceil(left), 4, statsWidth,
                         std::ceil((l.statsWrapped ? 2 : 1) * line + 6));
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
        const double binSize = static_cast<double>(1LL << binShift);
        const long long first = std::llround(a / binSize);
        const long long last = std::max(first + 1, std::llround(b / binSize));
        *lo = first << binShift;
        *hi = last << binShift;
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
        chart::drawEmptyState(p, QRectF(QPointF(0, 0), size), kEmptyText);
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
        // Two lines, each elided at the right if even that is too narrow.
        const double w = l.statsLine.width();
        const QRectF first(l.statsLine.left(), l.statsLine.top() + 3, w, fm.height());
        const QRectF second(l.statsLine.left(), first.bottom(), w, fm.height());
        p.drawText(first, Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(statsMax(), Qt::ElideRight, w));
        p.drawText(second, Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(statsRest(), Qt::ElideRight, w));
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
            std::fill(acc.begin(), acc.end(), kNoValue);
            rangeMaxAllBlocks(lo, hi, acc.data());
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
    }
    const double rowHeight = l.plot.height() / blocks;
    int blockStep = 1;
    while (blockStep * rowHeight < fm.height() + 2 && blockStep < blocks) blockStep *= 2;
    double lastY = -1e9;
    for (int j = 1; j <= blocks; ++j) {
        if (j != 1 && j % blockStep != 0) continue;
        const double y = l.plot.top() + (j - 0.5) * rowHeight;
        if (y - lastY < fm.height()) continue;
        lastY = y;
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
    for (int i = 0; i < 256; ++i)
        reinterpret_cast<QRgb*>(ramp.scanLine(255 - i))[0] =
            colourMap()[static_cast<std::size_t>(i)];
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
    // The steady-state maximum S^2 - S/2, for comparison with the colours.
    const double formula = formulaMaxFor(blocks);
    if (formula <= top) {
        const double y = yOf(formula);
        p.setPen(QPen(QColor(chart::kVermillion), 2.0));
        p.drawLine(QPointF(bar.left() - 4, y), QPointF(bar.right(), y));
    }
    p.restore();
}

// ---------------------------------------------------------------------------------------------

StalenessHeatmap::StalenessHeatmap(QWidget* parent)
    : QWidget(parent), d_(std::make_unique<Impl>()) {
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(240, 120);
}

StalenessHeatmap::~StalenessHeatmap() = default;

void StalenessHeatmap::setDelays(std::shared_ptr<const DelayTable> delays) {
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

void StalenessHeatmap::setCursorUpdate(long long update) {
    const long long value = update < 0 ? -1 : update;
    if (value == d_->cursor) return;
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
    return d_->empty() ? 0.0 : formulaMaxFor(d_->blocks);
}

QString StalenessHeatmap::cellDescription(long long update, int block) const {
    if (valueAt(update, block) < 0) return {};
    const BlockUpdateInfo& info = d_->delays->update(update);
    const long long h = d_->delays->forwardIndex(info.microbatch, block);
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
    long long best = lo;
    for (long long k = lo + 1; k < hi; ++k) {
        if (d_->leaf(k, j) > d_->leaf(best, j)) best = k;
    }
    if (update) *update = best;
    if (block) *block = j;
    if (firstUpdate) *firstUpdate = lo;
    if (lastUpdate) *lastUpdate = hi - 1;
    return true;
}

void StalenessHeatmap::setVisibleRange(double firstUpdate, double lastUpdate) {
    const double total = d_->empty() ? 1.0 : static_cast<double>(d_->updates);
    if (d_->range.set(firstUpdate, lastUpdate, total, kMinVisibleUpdates)) {
        emit visibleRangeChanged(d_->range.first, d_->range.last);
        update();
    }
}

void StalenessHeatmap::fitAll() {
    setVisibleRange(0.0, d_->empty() ? 1.0 : static_cast<double>(d_->updates));
}

double StalenessHeatmap::visibleFirstUpdate() const {
    return d_->range.first;
}
double StalenessHeatmap::visibleLastUpdate() const {
    return d_->range.last;
}

void StalenessHeatmap::paintChart(QPainter& painter, const QSize& size, bool vectorCells) const {
    d_->paint(painter, size, font(), vectorCells);
}

bool StalenessHeatmap::exportPng(const QString& path, double scale, QString* error) {
    return chart::exportPngImage(
        path, size(), scale, [&](QPainter& p) { paintChart(p, size(), false); }, error);
}

bool StalenessHeatmap::exportSvg(const QString& path, QString* error) {
    return chart::exportSvgImage(
        path, size(), QStringLiteral("PipeLens staleness heatmap"),
        [&](QPainter& p) { paintChart(p, size(), true); }, error);
}

bool StalenessHeatmap::exportCsv(const QString& path, QString* error) const {
    QByteArray out("block_update,updated_stage,microbatch");
    for (int j = 0; j < d_->blocks; ++j) out += ",delay_block" + QByteArray::number(j);
    out += '\n';
    if (!d_->empty()) {
        const long long shown = d_->shownUpdates();
        for (long long k = 0; k < shown; ++k) {
            const BlockUpdateInfo& info = d_->delays->update(k);
            out += QByteArray::number(k) + ',' + QByteArray::number(info.stage) + ',' +
                   QByteArray::number(info.microbatch);
            for (int j = 0; j < d_->blocks; ++j) out += ',' + QByteArray::number(d_->leaf(k, j));
            out += '\n';
        }
    }
    return chart::writeTextFileAtomically(path, out, error);
}

QSize StalenessHeatmap::sizeHint() const {
    const int rows = d_->empty() ? 8 : std::clamp(d_->blocks, 2, 32);
    const int rowHeight = QFontMetrics(font()).height() + 2;
    return {900, std::max(200, rows * rowHeight + 5 * QFontMetrics(font()).height())};
}

void StalenessHeatmap::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintChart(painter, size(), false);
}

void StalenessHeatmap::wheelEvent(QWheelEvent* event) {
    if (d_->empty() || event->angleDelta().y() == 0) return QWidget::wheelEvent(event);
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    chart::XRange r = d_->range;
    if (d_->navigation.wheel(r, d_->updateAtX(l, event->position().x()), event->angleDelta().y(),
                             static_cast<double>(d_->updates))) {
        setVisibleRange(r.first, r.last);
    }
    event->accept();
}

void StalenessHeatmap::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || d_->empty()) return QWidget::mousePressEvent(event);
    d_->navigation.beginDrag(event->position(), d_->range);
    setCursor(Qt::ClosedHandCursor);
    event->accept();
}

void StalenessHeatmap::mouseMoveEvent(QMouseEvent* event) {
    if (!d_->navigation.dragging()) return QWidget::mouseMoveEvent(event);
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    chart::XRange r;
    if (d_->navigation.dragTo(r, event->position(), l.plot.width(),
                              static_cast<double>(d_->updates))) {
        setVisibleRange(r.first, r.last);
    }
    event->accept();
}

void StalenessHeatmap::mouseReleaseEvent(QMouseEvent* event) {
    if (!d_->navigation.dragging()) return QWidget::mouseReleaseEvent(event);
    unsetCursor();
    event->accept();
    // A click without a drag: the update boundary nearest the pointer (updates done there).
    if (!d_->navigation.endDrag(event->position())) return;
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    if (!l.plot.contains(event->position())) return;
    const double k = d_->updateAtX(l, event->position().x());
    emit updateClicked(std::clamp<long long>(std::llround(k), 0, d_->updates));
}

void StalenessHeatmap::keyPressEvent(QKeyEvent* event) {
    if (d_->empty()) return QWidget::keyPressEvent(event);
    chart::XRange r = d_->range;
    switch (d_->navigation.key(event->key(), r, static_cast<double>(d_->updates))) {
        case chart::RangeNavigation::KeyResult::Ignored: return QWidget::keyPressEvent(event);
        case chart::RangeNavigation::KeyResult::FitAll: fitAll(); return;
        case chart::RangeNavigation::KeyResult::Changed: break;
    }
    setVisibleRange(r.first, r.last);
    event->accept();
}

bool StalenessHeatmap::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        long long k = 0;
        long long last = 0;
        int j = 0;
        long long first = 0;
        QString text;
        if (cellAtPosition(help->pos(), &k, &j, &first, &last)) {
            text = cellDescription(k, j);
            // An aggregated column shows the largest delay of the updates it covers.
            if (last > first)
                text =
                    QStringLiteral("largest of updates %1\u2013%2: ").arg(first).arg(last) + text;
        }
        if (text.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), text, this);
        }
        return true;
    }
    return QWidget::event(event);
}

}  // namespace pipelens::ui

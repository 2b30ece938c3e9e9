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

// `forward` and `backward` (opaque) weighted by their shares of a pixel column, premultiplied.
QRgb premultipliedMix(QRgb forward, QRgb backward, double forwardShare, double backwardShare) {
    const double alpha = std::clamp(forwardShare + backwardShare, 0.0, 1.0);
    auto channel = [&](int f, int b) {
        return std::clamp(static_cast<int>(std::lround(forwardShare * f + backwardShare * b)), 0,
                          static_cast<int>(std::lround(alpha * 255.0)));
    };
    return qRgba(channel(qRed(forward), qRed(backward)), channel(qGreen(forward), qGreen(backward)),
                 channel(qBlue(forward), qBlue(backward)),
                 static_cast<int>(std::lround(alpha * 255.0)));
}

QRgb premultipliedMix(double forwardShare, double backwardShare) {
    return premultipliedMix(chart::kGanttForward, chart::kGanttBackward, forwardShare,
                            backwardShare);
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

// An optimizer step's end (program schedules).
const QColor kStepLine(50, 50, 50);

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
    // The chart's rows: one per stage, or one per device where a device holds several stages.
    GanttLanes lanes;
    int stages = 0;  // rows (lanes.count())
    // Split backwards or device lanes: cells one slot wide or wider take their own op's colour
    // (I, W, a chunk's shade), and aggregated columns mix B, I and W by their prefix counts.
    bool rich = false;
    bool split = false;  // the timeline has I or W cells
    // Per stage, slot-major as TimelineIndex: I (W) slots of slots [0, t); empty unless split.
    std::vector<std::int32_t> inputPrefix;
    std::vector<std::int32_t> weightPrefix;
    int laneOf(int stage) const {
        return stage >= 0 && stage < static_cast<int>(lanes.laneOfStage.size())
                   ? lanes.laneOfStage[static_cast<std::size_t>(stage)]
                   : stage;
    }
    int chunkOf(int stage) const {
        return stage >= 0 && stage < static_cast<int>(lanes.chunkOfStage.size())
                   ? lanes.chunkOfStage[static_cast<std::size_t>(stage)]
                   : 0;
    }
    // Forward / backward-family / I / W slots of lane `lane` in slots [lo, hi).
    struct Busy {
        int forward = 0;
        int backward = 0;  // B, I and W together
        int input = 0;
        int weight = 0;
    };
    Busy laneBusy(int lane, int lo, int hi) const;
    // The opaque colour of `b`'s backward-family slots: B, I and W weighted by their counts.
    static QRgb backwardFamilyMix(const Busy& b) {
        const int full = std::max(0, b.backward - b.input - b.weight);
        const int n = std::max(1, b.backward);
        const std::array<QRgb, 3> colours{ganttOpColour(OpKind::Backward).rgb(),
                                          ganttOpColour(OpKind::InputGrad).rgb(),
                                          ganttOpColour(OpKind::WeightGrad).rgb()};
        const std::array<int, 3> weights{full, b.input, b.weight};
        auto channel = [&](int (*part)(QRgb)) {
            int sum = 0;
            for (std::size_t k = 0; k < 3; ++k) sum += part(colours[k]) * weights[k];
            return std::clamp((sum + n / 2) / n, 0, 255);
        };
        return qRgb(channel(qRed), channel(qGreen), channel(qBlue));
    }
    // The cell on lane `lane` during `slot` (any of its stages); null when idle.
    const TimelineCell* laneCellAt(int lane, int slot) const;
    // The stage a position on lane `lane` at `slot` stands for: the busy cell's, else the lane's
    // first stage.
    int stageAt(int lane, int slot) const;
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
        if (rich) {
            // Split backwards name their half ("I3", "W3"); on a device lane every cell names
            // its stage too ("F3·s5"), shortened to what fits.
            const bool half = c.op == OpKind::InputGrad || c.op == OpKind::WeightGrad;
            QString named = half || lanes.byDevice ? opLetter(c.op) + number : number;
            if (lanes.byDevice) {
                const QString where = QStringLiteral("s%1").arg(c.stage + 1);
                QString full = named + QChar(0x00b7) + where;
                if (fits(full)) return full;
                if (twoLines && fits(named) && fits(where))
                    return named + QLatin1Char('\n') + where;
            }
            if (fits(named)) return named;
            return fits(number) ? number : QString();
        }
        if (!fits(number)) return {};
        const int replica = timeline ? replicaOf(timeline->params, c.microbatch) : 0;
        if (replica == 0) return number;
        const QString name = QStringLiteral("r%1").arg(replica);
        if (twoLines) return fits(name) ? number + QLatin1Char('\n') + name : number;
        const QString oneLine = number + QLatin1Char(' ') + name;
        return fits(oneLine) ? oneLine : number;
    }
    void paintAxes(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
    // Program schedules: a thin line after the last slot of every optimizer step (as a flush).
    void paintStepEnds(QPainter& p, const Layout& l) const;
    // The optimizer step (from 1) slot `slot` belongs to; 0 without steps.
    int stepOf(int slot) const {
        const auto& ends = timeline->stepEndSlots;
        if (ends.empty()) return 0;
        return static_cast<int>(std::lower_bound(ends.begin(), ends.end(), slot) - ends.begin()) +
               1;
    }
    void paintLegend(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
    // The legend's entries: full or short texts (the schedule family's, where one row is narrow).
    std::array<QString, 6> legendTexts(bool compact) const;
    QString legendCursorText(bool compact) const {
        return exporting || compact ? QStringLiteral("slot %1").arg(cursor) : cursorText();
    }
    // The width of the legend's entries (method name, swatches, texts) in one row.
    double legendNeed(const QFontMetricsF& fm, bool compact) const;
    // How the legend fits `width`: the full texts on one row, else the short ones, else two rows
    // (of the full texts where they fit in two); always one row without the schedule family.
    struct LegendForm {
        int rows = 1;
        bool compact = false;
    };
    LegendForm legendForm(const QFontMetricsF& fm, double width) const {
        if (!rich || legendNeed(fm, false) <= width) return {1, false};
        if (legendNeed(fm, true) <= width) return {1, true};
        return {2, legendNeed(fm, false) > 1.8 * width};
    }
};

void GanttChart::Impl::rebuild() {
    index.reset(timeline);
    phases = timeline ? schedulePhases(*timeline) : std::vector<Phase>{};
    scratch = QImage();
    slotCount = index.slotCount();
    lanes = timeline && !index.empty() ? ganttLanes(*timeline) : GanttLanes{};
    stages = index.empty() ? 0 : lanes.count();
    inputPrefix.clear();
    weightPrefix.clear();
    split = false;
    if (index.empty()) {
        rich = false;
        return;
    }
    split = std::any_of(timeline->cells.begin(), timeline->cells.end(), [](const TimelineCell& c) {
        return c.op == OpKind::InputGrad || c.op == OpKind::WeightGrad;
    });
    rich = split || lanes.byDevice;
    if (!split) return;
    const auto S = static_cast<std::size_t>(index.stages());
    const auto rows = static_cast<std::size_t>(slotCount) + 1;
    inputPrefix.assign(rows * S, 0);
    weightPrefix.assign(rows * S, 0);
    for (const TimelineCell& c : timeline->cells) {
        if (c.stage < 0 || c.stage >= index.stages()) continue;
        if (c.op != OpKind::InputGrad && c.op != OpKind::WeightGrad) continue;
        auto& counts = c.op == OpKind::InputGrad ? inputPrefix : weightPrefix;
        for (int t = std::max(0, c.startSlot); t <= std::min(c.endSlot, slotCount - 1); ++t)
            counts[static_cast<std::size_t>(t + 1) * S + static_cast<std::size_t>(c.stage)] = 1;
    }
    for (std::size_t i = S; i < inputPrefix.size(); ++i) {
        inputPrefix[i] += inputPrefix[i - S];
        weightPrefix[i] += weightPrefix[i - S];
    }
}

GanttChart::Impl::Busy GanttChart::Impl::laneBusy(int lane, int lo, int hi) const {
    Busy b;
    if (hi <= lo) return b;
    const auto S = static_cast<std::size_t>(index.stages());
    for (int s : lanes.stagesOf[static_cast<std::size_t>(lane)]) {
        b.forward += index.forwardBusy(s, lo, hi);
        b.backward += index.backwardBusy(s, lo, hi);
        if (!split) continue;
        const std::size_t a = static_cast<std::size_t>(lo) * S + static_cast<std::size_t>(s);
        const std::size_t z = static_cast<std::size_t>(hi) * S + static_cast<std::size_t>(s);
        b.input += inputPrefix[z] - inputPrefix[a];
        b.weight += weightPrefix[z] - weightPrefix[a];
    }
    return b;
}

const TimelineCell* GanttChart::Impl::laneCellAt(int lane, int slot) const {
    if (lane < 0 || lane >= stages) return nullptr;
    for (int s : lanes.stagesOf[static_cast<std::size_t>(lane)]) {
        if (const TimelineCell* c = index.cellAt(s, slot)) return c;
    }
    return nullptr;
}

int GanttChart::Impl::stageAt(int lane, int slot) const {
    if (const TimelineCell* c = laneCellAt(lane, slot)) return c->stage;
    return lanes.stagesOf[static_cast<std::size_t>(lane)].front();
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
    double title = fm.horizontalAdvance(QStringLiteral("stage %1").arg(std::max(stages, 10)));
    if (lanes.byDevice) {
        for (int lane = 0; lane < stages; ++lane)
            title = std::max(title, fm.horizontalAdvance(lanes.title(lane)));
    }
    const double left = std::ceil(title + 14);
    const double top = 6;
    Layout l;
    // Device lanes: their titles are wide, so the legend starts at the chart's left edge; the
    // schedule family's longer legend takes a second row where one is too narrow.
    const double legendLeft = lanes.byDevice ? 6.0 : left;
    const double legendWidth = std::max(0.0, std::floor(size.width() - legendLeft - 12));
    l.legend = QRectF(legendLeft, top, legendWidth,
                      legendForm(fm, legendWidth).rows * std::ceil(line + 4));
    l.phaseStrip = QRectF(left, l.legend.bottom() + 2,
                          std::max(0.0, std::floor(size.width() - left - 12)), std::ceil(line + 2));
    const double bottom = std::ceil(2 * line + 10);
    l.plot = QRectF(left, l.phaseStrip.bottom(), l.phaseStrip.width(),
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
    paintStepEnds(p, l);
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
                Busy b;
                if (rich) {
                    b = laneBusy(static_cast<int>(s), col.lo, col.hi);
                } else if (col.hi > col.lo) {
                    b.forward = index.forwardBusy(static_cast<int>(s), col.lo, col.hi);
                    b.backward = index.backwardBusy(static_cast<int>(s), col.lo, col.hi);
                }
                const int f = b.forward;
                const int bw = b.backward;
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
                const TimelineCell* one =
                    rich && n == 1 ? laneCellAt(static_cast<int>(s), col.lo) : nullptr;
                if (one) {
                    // One slot: the cell's own colour (I, W, its chunk's shade).
                    top = bottom = ganttOpColour(one->op, chunkOf(one->stage)).rgb();
                    shares[i] = 255;
                } else if (rich) {
                    // B, I and W mixed by their slots; F on top where rows are tall enough.
                    const QRgb back = backwardFamilyMix(b);
                    if (split) {
                        top = blue[alpha];
                        bottom = premultiplied(back, static_cast<double>(alpha) / 255.0);
                        // NOLINTBEGIN(bugprone-incorrect-roundings)
                        shares[i] = static_cast<std::uint8_t>(
                            static_cast<float>(f) * 255.0f / static_cast<float>(busy) + 0.5f);
                        // NOLINTEND(bugprone-incorrect-roundings)
                    } else {
                        top = bottom =
                            premultipliedMix(chart::kGanttForward, back, static_cast<double>(f) / n,
                                             static_cast<double>(bw) / n);
                        shares[i] = 255;
                    }
                } else if (split) {
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
        p.fillRect(QRectF(x0, l.plot.top() + laneOf(c.stage) * rowHeight, x1 - x0, rowHeight),
                   ganttOpColour(c.op, chunkOf(c.stage)));
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
        p.drawText(QRectF(x0, l.plot.top() + laneOf(c.stage) * rowHeight, x1 - x0, rowHeight),
                   Qt::AlignCenter, text);
    });
    p.restore();
}

void GanttChart::Impl::paintStepEnds(QPainter& p, const Layout& l) const {
    const auto& ends = timeline->stepEndSlots;
    const auto first =
        std::lower_bound(ends.begin(), ends.end(), static_cast<int>(std::floor(range.first)) - 1);
    const auto last = std::upper_bound(first, ends.end(), static_cast<int>(std::ceil(range.last)));
    // Too dense to tell apart (zoomed far out): left out rather than greying the plot.
    if (first == last || static_cast<double>(last - first) * 4.0 > l.plot.width()) return;
    p.save();
    p.setPen(QPen(kStepLine, 1.0, Qt::DashLine));
    for (auto it = first; it != last; ++it) {
        const double x = xOf(l, *it + 1);
        if (x < l.plot.left() || x > l.plot.right()) continue;
        p.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.plot.bottom()));
    }
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
                   Qt::AlignRight | Qt::AlignVCenter, lanes.title(s - 1));
    }
    p.restore();
}

std::array<QString, 6> GanttChart::Impl::legendTexts(bool compact) const {
    if (compact) {
        return {QStringLiteral("F"), QStringLiteral("B"),     QStringLiteral("I"),
                QStringLiteral("W"), QStringLiteral("stage"), QStringLiteral("step")};
    }
    return {QStringLiteral("F forward"),
            QStringLiteral("B backward"),
            QStringLiteral("I input grad"),
            QStringLiteral("W weight grad"),
            QStringLiteral("shade: stage on the device"),
            QStringLiteral("optimizer step")};
}

double GanttChart::Impl::legendNeed(const QFontMetricsF& fm, bool compact) const {
    if (!timeline) return 0.0;
    const double box = std::min(12.0, fm.height() - 2);
    const std::array<QString, 6> texts = legendTexts(compact);
    double need = 0.0;
    auto entry = [&](const QString& text) { need += box + 4 + fm.horizontalAdvance(text) + 14; };
    auto line = [&](const QString& text) { need += box + 2 + fm.horizontalAdvance(text) + 14; };
    // An export's method name, in bold: about a tenth wider than plain.
    if (exporting && !methodName.isEmpty()) need += fm.horizontalAdvance(methodName) * 1.08 + 14;
    entry(texts[0]);
    entry(texts[1]);
    if (split) {
        entry(texts[2]);
        entry(texts[3]);
    }
    if (lanes.byDevice) entry(texts[4]);
    entry(QStringLiteral("idle"));
    if (!timeline->stepEndSlots.empty()) line(texts[5]);
    if (cursor >= 0) line(legendCursorText(compact));
    if (lanes.byDevice) {  // the chunk swatches are half boxes
        int chunks = 0;
        for (const auto& held : lanes.stagesOf)
            chunks = std::min(4, std::max(chunks, static_cast<int>(held.size())));
        need += chunks * (box / 2 + 1) - box;
    }
    return need;
}

void GanttChart::Impl::paintLegend(QPainter& p, const Layout& l, const QFontMetricsF& fm) const {
    p.save();
    const double box = std::min(12.0, fm.height() - 2);
    const double rowHeight = std::ceil(fm.height() + 4);
    const LegendForm form = legendForm(fm, l.legend.width());
    const bool twoRows = form.rows == 2;
    double rowTop = l.legend.top();
    double y = rowTop + (rowHeight - box) / 2;
    double x = l.legend.left();
    auto label = [&](const QString& text) {
        p.setPen(QColor(40, 40, 40));
        const double w = fm.horizontalAdvance(text);
        p.drawText(QRectF(x, rowTop, w + 2, rowHeight), Qt::AlignVCenter, text);
        x += w + 14;
    };
    // On two rows: an entry `text` that would cross the right edge starts the second row.
    auto room = [&](const QString& text) {
        const double w = box + 4 + fm.horizontalAdvance(text);
        if (!twoRows || x + w <= l.legend.right() || rowTop > l.legend.top()) return;
        rowTop += rowHeight;
        y += rowHeight;
        x = l.legend.left();
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
        p.drawText(QRectF(x, rowTop, w + 2, rowHeight), Qt::AlignVCenter, methodName);
        p.restore();
        x += w + 14;
    }
    int chunks = 0;  // the most stages one device holds
    for (const auto& held : lanes.stagesOf)
        chunks = std::min(4, std::max(chunks, static_cast<int>(held.size())));
    const bool averages =
        (timeline->params.kind == ScheduleKind::LocalSgd && timeline->params.replicas > 1) ||
        !timeline->averagingSlots.empty();
    const bool steps = !timeline->stepEndSlots.empty();
    // The schedule family adds entries: where the full texts do not fit, the short ones.
    const std::array<QString, 6> texts = legendTexts(form.compact);
    const QString cursorLabel = legendCursorText(form.compact);
    room(texts[0]);
    swatch(QColor(chart::kGanttForward));
    label(texts[0]);
    room(texts[1]);
    swatch(QColor(chart::kGanttBackward));
    label(texts[1]);
    if (split) {
        room(texts[2]);
        swatch(ganttOpColour(OpKind::InputGrad));
        label(texts[2]);
        room(texts[3]);
        swatch(ganttOpColour(OpKind::WeightGrad));
        label(texts[3]);
    }
    if (lanes.byDevice) {
        room(texts[4]);
        // The chunks' shades, on a forward: a device's first stage plain, its second darker, ...
        for (int k = 0; k < chunks; ++k) {
            p.setPen(QColor(120, 120, 120));
            p.setBrush(ganttOpColour(OpKind::Forward, k));
            p.drawRect(QRectF(x, y, box / 2 + 1, box));
            x += box / 2 + 1;
        }
        x += 4;
        label(texts[4]);
    }
    room(QStringLiteral("idle"));
    hatchedSwatch();
    label(QStringLiteral("idle"));
    // LocalSGD's averagings (none for one replica: sequential SGD never averages).
    if (averages) {
        lineSwatch(chart::kPurple);
        label(QStringLiteral("averaging"));
    }
    if (steps) {
        room(texts[5]);
        p.setPen(QPen(kStepLine, 1.0, Qt::DashLine));
        p.drawLine(QPointF(x + box / 2, y - 1), QPointF(x + box / 2, y + box + 1));
        x += box + 2;
        label(texts[5]);
    }
    if (cursor >= 0) {
        room(cursorLabel);
        lineSwatch(chart::kVermillion);
        label(cursorLabel);
    }
    const double slotsPerPixel = range.span() / l.plot.width();
    if (!selection.empty()) {
        const QString note =
            fm.elidedText(selection.summary(), Qt::ElideRight, std::max(0.0, l.legend.right() - x));
        p.setPen(QColor(20, 20, 20));
        p.drawText(QRectF(x, rowTop, l.legend.right() - x, rowHeight),
                   Qt::AlignVCenter | Qt::AlignLeft, note);
    } else if (slotsPerPixel > 1.0) {
        const bool halves = l.plot.height() / stages >= 4.0;
        const QString note = QStringLiteral("1 px \u2248 %1 slots: %2")
                                 .arg(slotsPerPixel, 0, 'f', slotsPerPixel < 10 ? 1 : 0)
                                 .arg(halves ? QStringLiteral("F share on top, B below")
                                             : QStringLiteral("F and B colours mixed"));
        const double w = fm.horizontalAdvance(note);
        if (x + w <= l.legend.right()) {
            p.setPen(QColor(100, 100, 100));
            p.drawText(QRectF(l.legend.right() - w, rowTop, w, rowHeight), Qt::AlignVCenter, note);
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
                       .arg(opLetter(c->op))
                       .arg(c->microbatch)
                       .arg(c->stage + 1)
                       .arg(span);
    if (c->op == OpKind::InputGrad || c->op == OpKind::WeightGrad)
        text.insert(text.indexOf(QLatin1Char(' ')), QStringLiteral(" (%1)").arg(opName(c->op)));
    if (d_->lanes.byDevice) text += QStringLiteral(", device %1").arg(d_->laneOf(c->stage) + 1);
    if (isProgramKind(d_->timeline->params.kind)) {
        // The engine's own memory figures: the TimelineIndex stash depth counts F against B and
        // would miscount split backwards.
        if (const int step = d_->stepOf(c->startSlot); step > 0)
            text += QStringLiteral(", optimizer step %1").arg(step);
        return text;
    }
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

int GanttChart::laneCount() const {
    return d_->stages;
}

int GanttChart::laneOfStage(int stage) const {
    return d_->laneOf(stage);
}

QString GanttChart::laneTitle(int lane) const {
    return d_->lanes.title(lane);
}

bool GanttChart::cellAtPosition(const QPointF& position, int* stage, int* slot) const {
    if (d_->empty()) return false;
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    if (!l.plot.contains(position)) return false;
    const int lane = static_cast<int>((position.y() - l.plot.top()) / l.plot.height() * d_->stages);
    const int t = static_cast<int>(std::floor(d_->slotAtX(l, position.x())));
    if (lane < 0 || lane >= d_->stages || t < 0 || t >= d_->slotCount) return false;
    if (stage) *stage = d_->stageAt(lane, t);
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

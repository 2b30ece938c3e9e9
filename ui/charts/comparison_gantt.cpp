#include "charts/comparison_gantt.hpp"

#include <QFontMetricsF>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <utility>

#include "charts/chart_support.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/gantt_selection.hpp"
#include "charts/method_colours.hpp"
#include "schedule/timeline_index.hpp"
#include "util/csv_writer.hpp"

namespace pipelens::ui {

namespace {

constexpr double kMinVisibleSlots = 4.0;
constexpr double kGroupGap = 8.0;
const QString kEmptyText = QStringLiteral("Run an experiment to compare its pipelines");
const QColor kPastRun(236, 236, 236);  // a lane after its run ended
const QColor kHatch(160, 160, 160);

// One method's lane group.
struct Group {
    int method = 0;
    QString label;
    QColor colour;
    TimelineIndex index;
    double bubble = 0.0;
    int peak = 0;
    int peakStage = 0;
    bool split = false;     // has I / W cells (a split backward)
    bool versions = false;  // a program schedule: `peak` counts weight versions, not stashes
};

// Where the parts go, in logical pixels: the legend row, then per group a header line and its
// lanes, then the slot axis and the note.
struct Layout {
    QRectF legend;
    double left = 0.0;
    double width = 0.0;
    double rowHeight = 0.0;
    std::vector<QRectF> headers;
    std::vector<QRectF> lanes;  // each group's S lanes together
    QRectF plot;                // from the first group's lanes to the last's
    double axisTop = 0.0;
    QRectF note;
};

}  // namespace

struct ComparisonGantt::Impl {
    explicit Impl(const chart::XRange& visible) : range(visible) {}

    SnapshotPtr snapshot;
    std::vector<Group> groups;
    QStringList withoutTimeline;
    int slotCount = 0;  // the longest run
    const chart::XRange& range;

    bool empty() const { return groups.empty() || slotCount <= 0; }
    int totalLanes() const {
        int n = 0;
        for (const Group& g : groups) n += g.index.stages();
        return n;
    }
    QString note() const {
        if (withoutTimeline.isEmpty()) return {};
        return QStringLiteral("%1 %2 no pipeline timeline")
            .arg(withoutTimeline.join(QStringLiteral(", ")),
                 withoutTimeline.size() == 1 ? QStringLiteral("has") : QStringLiteral("have"));
    }
    Layout layout(const QSizeF& size, const QFontMetricsF& fm) const;
    // The height of all but the lanes: legend, group headers and gaps, axis, note.
    double chromeHeight(const QFontMetricsF& fm) const {
        const double line = std::ceil(fm.height());
        const auto n = static_cast<double>(groups.size());
        return 6 + (line + 4) + 2 + n * (line + 4) + std::max(0.0, n - 1) * kGroupGap +
               (2 * line + 10) + (withoutTimeline.isEmpty() ? 0.0 : line + 4);
    }
    double xOf(const Layout& l, double slot) const {
        return l.left + (slot - range.first) / range.span() * l.width;
    }
    void paint(QPainter& p, const QSizeF& size, const QFont& font) const;
    void paintHeader(QPainter& p, const Group& g, const QRectF& r, const QFont& font) const;
    void paintLanes(QPainter& p, const Layout& l, const Group& g, const QRectF& r,
                    const QFont& font) const;
    void paintCells(QPainter& p, const Layout& l, const Group& g, const QRectF& r) const;
    void paintAxis(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
    void paintLegend(QPainter& p, const Layout& l, const QFontMetricsF& fm) const;
};

namespace {

QString statsText(const Group& g) {
    return QStringLiteral("bubble %1% \u00b7 peak %2 %3 (stage %4) \u00b7 %5 slots")
        .arg(g.bubble * 100.0, 0, 'f', 1)
        .arg(g.peak)
        .arg(g.versions ? (g.peak == 1 ? QStringLiteral("weight version")
                                       : QStringLiteral("weight versions"))
                        : QStringLiteral("stashed weight copies"))
        .arg(g.peakStage + 1)
        .arg(g.index.slotCount());
}

}  // namespace

Layout ComparisonGantt::Impl::layout(const QSizeF& size, const QFontMetricsF& fm) const {
    const double line = std::ceil(fm.height());
    int maxStages = 10;
    for (const Group& g : groups) maxStages = std::max(maxStages, g.index.stages());
    Layout l;
    l.left = std::ceil(fm.horizontalAdvance(QStringLiteral("stage %1").arg(maxStages)) + 14);
    l.width = std::max(1.0, std::floor(size.width() - l.left - 12));
    l.legend = QRectF(l.left, 6, l.width, line + 4);
    const double header = line + 4;
    const double axis = 2 * line + 10;
    const double noteHeight = withoutTimeline.isEmpty() ? 0.0 : line + 4;
    l.rowHeight = std::max(1.0, (size.height() - chromeHeight(fm)) / std::max(1, totalLanes()));
    double y = l.legend.bottom() + 2;
    for (const Group& g : groups) {
        l.headers.emplace_back(0, y, size.width(), header);
        y += header;
        const double h = std::floor(g.index.stages() * l.rowHeight);
        l.lanes.emplace_back(l.left, y, l.width, h);
        y += h + kGroupGap;
    }
    y -= kGroupGap;
    l.plot = l.lanes.empty() ? QRectF()
                             : QRectF(l.left, l.lanes.front().top(), l.width,
                                      l.lanes.back().bottom() - l.lanes.front().top());
    l.axisTop = y;
    l.note = QRectF(l.left, y + axis, l.width, noteHeight);
    return l;
}

void ComparisonGantt::Impl::paint(QPainter& p, const QSizeF& size, const QFont& font) const {
    p.save();
    p.setFont(font);
    p.fillRect(QRectF(QPointF(0, 0), size), Qt::white);
    if (empty()) {
        chart::drawEmptyState(p, QRectF(QPointF(0, 0), size),
                              withoutTimeline.isEmpty() ? kEmptyText : note());
        p.restore();
        return;
    }
    const QFontMetricsF fm(font);
    const Layout l = layout(size, fm);
    for (std::size_t i = 0; i < groups.size(); ++i) {
        paintHeader(p, groups[i], l.headers[i], font);
        paintLanes(p, l, groups[i], l.lanes[i], font);
    }
    paintAxis(p, l, fm);
    paintLegend(p, l, fm);
    if (!withoutTimeline.isEmpty()) {
        p.setPen(QColor(70, 70, 70));
        p.drawText(l.note, Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(note(), Qt::ElideRight, l.note.width()));
    }
    p.restore();
}

// The method's name in its colour, bold, then its numbers.
void ComparisonGantt::Impl::paintHeader(QPainter& p, const Group& g, const QRectF& r,
                                        const QFont& font) const {
    p.save();
    QFont bold = font;
    bold.setBold(true);
    const QFontMetricsF boldMetrics(bold);
    const double x = 6;
    const double nameWidth = boldMetrics.horizontalAdvance(g.label);
    p.setFont(bold);
    p.setPen(g.colour);
    p.drawText(QRectF(x, r.top(), nameWidth + 2, r.height()), Qt::AlignLeft | Qt::AlignVCenter,
               g.label);
    p.setFont(font);
    p.setPen(QColor(50, 50, 50));
    const QRectF rest(x + nameWidth + 12, r.top(), r.right() - x - nameWidth - 18, r.height());
    p.drawText(rest, Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetricsF(font).elidedText(statsText(g), Qt::ElideRight, rest.width()));
    p.restore();
}

void ComparisonGantt::Impl::paintLanes(QPainter& p, const Layout& l, const Group& g,
                                       const QRectF& r, const QFont& font) const {
    p.save();
    p.setClipRect(r);
    const int stages = g.index.stages();
    const double rowHeight = r.height() / stages;
    // Idle is hatched within the run; after its end the lanes are plain grey.
    const double end = std::clamp(xOf(l, g.index.slotCount()), r.left(), r.right());
    p.fillRect(QRectF(r.left(), r.top(), end - r.left(), r.height()), Qt::white);
    chart::drawHatch(p, QRectF(r.left(), r.top(), end - r.left(), r.height()), kHatch, 8.0);
    if (end < r.right()) p.fillRect(QRectF(end, r.top(), r.right() - end, r.height()), kPastRun);
    paintCells(p, l, g, r);

    const double slotWidth = l.width / range.span();
    if (slotWidth >= 5.0) {
        p.setPen(QPen(QColor(255, 255, 255, 200), 1.0));
        const int last =
            std::min<int>(g.index.slotCount(), static_cast<int>(std::ceil(range.last)));
        for (int t = static_cast<int>(std::ceil(range.first)); t <= last; ++t)
            p.drawLine(QPointF(xOf(l, t), r.top()), QPointF(xOf(l, t), r.bottom()));
    }
    if (rowHeight >= 8.0) {
        p.setPen(QPen(Qt::white, 1.0));
        for (int s = 1; s < stages; ++s)
            p.drawLine(QPointF(r.left(), r.top() + s * rowHeight),
                       QPointF(end, r.top() + s * rowHeight));
    }
    // Microbatch numbers where a cell has room for them.
    QFont small = font;
    small.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
    const QFontMetricsF sm(small);
    if (rowHeight >= sm.height() * 0.9 && slotWidth >= sm.horizontalAdvance(QLatin1Char('0')) + 4) {
        p.setFont(small);
        p.setPen(Qt::black);
        g.index.forEachCellIn(static_cast<int>(std::floor(range.first)),
                              static_cast<int>(std::ceil(range.last)), [&](const TimelineCell& c) {
                                  const QString text = QString::number(c.microbatch);
                                  const double x0 = xOf(l, c.startSlot);
                                  const double x1 = xOf(l, c.endSlot + 1);
                                  if (sm.horizontalAdvance(text) + 3 > x1 - x0) return;
                                  p.drawText(
                                      QRectF(x0, r.top() + c.stage * rowHeight, x1 - x0, rowHeight),
                                      Qt::AlignCenter, text);
                              });
    }
    // LocalSGD: replicas are averaged at the end of these slots.
    p.setPen(QPen(QColor(chart::kPurple), 2.0));
    for (int t : g.index.timeline()->averagingSlots) {
        if (t + 1 < range.first || t + 1 > range.last) continue;
        p.drawLine(QPointF(xOf(l, t + 1), r.top()), QPointF(xOf(l, t + 1), r.bottom()));
    }
    // Program schedules: optimizer-step ends, thin, and left out where too dense to tell apart.
    const auto& ends = g.index.timeline()->stepEndSlots;
    const auto firstEnd =
        std::lower_bound(ends.begin(), ends.end(), static_cast<int>(std::floor(range.first)) - 1);
    const auto lastEnd =
        std::upper_bound(firstEnd, ends.end(), static_cast<int>(std::ceil(range.last)));
    if (static_cast<double>(lastEnd - firstEnd) * 4.0 <= l.width) {
        p.setPen(QPen(QColor(50, 50, 50), 1.0, Qt::DashLine));
        for (auto it = firstEnd; it != lastEnd; ++it)
            p.drawLine(QPointF(xOf(l, *it + 1), r.top()), QPointF(xOf(l, *it + 1), r.bottom()));
    }
    p.restore();
    p.setPen(QColor(120, 120, 120));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r);
    // Stage labels: stage 1, then every step-th stage, never two closer than a label's height
    // (thin lanes: a smaller font first, then fewer labels).
    QFont labelFont = font;
    if (rowHeight < QFontMetricsF(font).height())
        labelFont.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.8));
    const QFontMetricsF fm(labelFont);
    p.setFont(labelFont);
    int step = 1;
    while (step * rowHeight < fm.height() && step < stages) step *= 2;
    p.setPen(QColor(60, 60, 60));
    for (int s = 1; s <= stages; s += step) {
        const double y = r.top() + (s - 0.5) * rowHeight;
        p.drawText(QRectF(0, y - fm.height() / 2, r.left() - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("stage %1").arg(s));
    }
    p.setFont(font);
}

// Cells wider than a pixel are drawn one by one; narrower, each pixel column shows the share of
// forward (on top) and backward (below) slots among those it covers, read off the index.
void ComparisonGantt::Impl::paintCells(QPainter& p, const Layout& l, const Group& g,
                                       const QRectF& r) const {
    const int stages = g.index.stages();
    const double rowHeight = r.height() / stages;
    const QColor forward(chart::kGanttForward);
    const QColor backward(chart::kGanttBackward);
    if (range.span() <= l.width) {
        g.index.forEachCellIn(static_cast<int>(std::floor(range.first)),
                              static_cast<int>(std::ceil(range.last)), [&](const TimelineCell& c) {
                                  const double x0 = xOf(l, c.startSlot);
                                  const double x1 = xOf(l, c.endSlot + 1);
                                  p.fillRect(
                                      QRectF(x0, r.top() + c.stage * rowHeight, x1 - x0, rowHeight),
                                      g.split                   ? ganttOpColour(c.op)
                                      : c.op == OpKind::Forward ? forward
                                                                : backward);
                              });
        return;
    }
    const int columns = static_cast<int>(std::ceil(l.width));
    const double perColumn = range.span() / columns;
    const int runSlots = g.index.slotCount();
    for (int c = 0; c < columns; ++c) {
        const int lo = std::clamp(static_cast<int>(std::floor(range.first + c * perColumn + 0.5)),
                                  0, runSlots);
        const int hi = std::clamp(
            std::max(lo + 1, static_cast<int>(std::floor(range.first + (c + 1) * perColumn + 0.5))),
            0, runSlots);
        if (hi <= lo) break;
        const double x = r.left() + c;
        for (int s = 0; s < stages; ++s) {
            const double top = r.top() + s * rowHeight;
            const double fShare = g.index.forwardBusy(s, lo, hi) / static_cast<double>(hi - lo);
            const double bShare = g.index.backwardBusy(s, lo, hi) / static_cast<double>(hi - lo);
            if (fShare > 0) p.fillRect(QRectF(x, top, 1.0, fShare * rowHeight), forward);
            if (bShare > 0)
                p.fillRect(QRectF(x, top + fShare * rowHeight, 1.0, bShare * rowHeight), backward);
        }
    }
}

void ComparisonGantt::Impl::paintAxis(QPainter& p, const Layout& l, const QFontMetricsF& fm) const {
    p.save();
    const double slotWidth = l.width / range.span();
    const double labelWidth = fm.horizontalAdvance(QString::number(slotCount)) + 18;
    const double step = chart::niceTickStep(slotWidth, labelWidth);
    const double firstTick = std::ceil((range.first - 0.5) / step) * step;
    for (double t = firstTick; t < range.last && t < slotCount; t += step) {
        const double x = xOf(l, t + 0.5);
        if (x < l.left - 0.5 || x > l.left + l.width + 0.5) continue;
        // A faint line through every group: the shared slot scale at a glance.
        p.setPen(QPen(QColor(0, 0, 0, 45), 1.0, Qt::DashLine));
        p.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.axisTop));
        p.setPen(QColor(60, 60, 60));
        p.drawLine(QPointF(x, l.axisTop), QPointF(x, l.axisTop + 4));
        p.drawText(QRectF(x - labelWidth / 2, l.axisTop + 4, labelWidth, fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop, QString::number(static_cast<long long>(t)));
    }
    p.setPen(QColor(60, 60, 60));
    p.drawText(QRectF(l.left, l.axisTop + 4 + fm.height(), l.width, fm.height() + 2),
               Qt::AlignHCenter | Qt::AlignTop, QStringLiteral("slot (one axis for every method)"));
    p.restore();
}

void ComparisonGantt::Impl::paintLegend(QPainter& p, const Layout& l,
                                        const QFontMetricsF& fm) const {
    p.save();
    const double box = std::min(12.0, fm.height() - 2);
    const double y = l.legend.top() + (l.legend.height() - box) / 2;
    double x = l.legend.left();
    // The full names when they fit the row, else the letters alone (a narrow export).
    const bool split =
        std::any_of(groups.begin(), groups.end(), [](const Group& g) { return g.split; });
    const bool finished = std::any_of(groups.begin(), groups.end(), [&](const Group& g) {
        return g.index.slotCount() < slotCount;
    });
    const bool steps = std::any_of(groups.begin(), groups.end(), [](const Group& g) {
        return !g.index.timeline()->stepEndSlots.empty();
    });
    QStringList full = {QStringLiteral("F forward"), QStringLiteral("B backward")};
    if (split) full << QStringLiteral("I input grad") << QStringLiteral("W weight grad");
    full << QStringLiteral("idle");
    if (finished) full << QStringLiteral("finished");
    if (steps) full << QStringLiteral("optimizer step");
    double needed = 0.0;
    for (const QString& t : full) needed += box + 4 + fm.horizontalAdvance(t) + 14;
    const bool shortNames = needed > l.legend.width() * 0.8;  // room left for averaging
    const auto name = [&](const char* longName, const char* shortName) {
        return QString::fromUtf8(shortNames ? shortName : longName);
    };
    auto entry = [&](const QBrush& brush, const QString& text) {
        p.setPen(QColor(120, 120, 120));
        p.setBrush(brush.style() == Qt::NoBrush ? QBrush(Qt::white) : brush);
        p.drawRect(QRectF(x, y, box, box));
        if (brush.style() == Qt::NoBrush)  // idle: the plain-line hatching of the lanes
            chart::drawHatch(p, QRectF(x, y, box, box), QColor(140, 140, 140), 4.0);
        x += box + 4;
        p.setPen(QColor(40, 40, 40));
        const double w = fm.horizontalAdvance(text);
        p.drawText(QRectF(x, l.legend.top(), w + 2, l.legend.height()), Qt::AlignVCenter, text);
        x += w + 14;
    };
    entry(QColor(chart::kGanttForward), name("F forward", "F"));
    entry(QColor(chart::kGanttBackward), name("B backward", "B"));
    if (split) {
        entry(ganttOpColour(OpKind::InputGrad), name("I input grad", "I"));
        entry(ganttOpColour(OpKind::WeightGrad), name("W weight grad", "W"));
    }
    entry(QBrush(Qt::NoBrush), QStringLiteral("idle"));
    // Shown when some run ends before the longest one.
    if (finished) entry(kPastRun, QStringLiteral("finished"));
    // Program schedules: their optimizer steps' ends.
    if (steps) {
        p.setPen(QPen(QColor(50, 50, 50), 1.0, Qt::DashLine));
        p.drawLine(QPointF(x + box / 2, y - 1), QPointF(x + box / 2, y + box + 1));
        x += box + 2;
        p.setPen(QColor(40, 40, 40));
        const QString text = name("optimizer step", "step");
        const double w = fm.horizontalAdvance(text);
        p.drawText(QRectF(x, l.legend.top(), w + 2, l.legend.height()), Qt::AlignVCenter, text);
        x += w + 14;
    }
    const bool averaging = std::any_of(groups.begin(), groups.end(), [](const Group& g) {
        return !g.index.timeline()->averagingSlots.empty();
    });
    if (averaging) {
        p.setPen(QPen(QColor(chart::kPurple), 2.0));
        p.drawLine(QPointF(x + box / 2, y - 1), QPointF(x + box / 2, y + box + 1));
        x += box + 2;
        p.setPen(QColor(40, 40, 40));
        p.drawText(QRectF(x, l.legend.top(), l.legend.right() - x, l.legend.height()),
                   Qt::AlignVCenter, QStringLiteral("averaging"));
    }
    p.restore();
}

// ---------------------------------------------------------------------------------------------

ComparisonGantt::ComparisonGantt(QWidget* parent)
    : RangeChart(kMinVisibleSlots, QStringLiteral("PipeLens pipeline comparison"), parent),
      d_(std::make_unique<Impl>(visibleRange())) {}

ComparisonGantt::~ComparisonGantt() = default;

void ComparisonGantt::setSnapshot(SnapshotPtr snapshot) {
    const int oldSlots = d_->slotCount;
    d_->snapshot = std::move(snapshot);
    d_->groups.clear();
    d_->withoutTimeline.clear();
    d_->slotCount = 0;
    if (d_->snapshot) {
        const auto& runs = d_->snapshot->runs();
        for (std::size_t i = 0; i < runs.size(); ++i) {
            auto timeline = timelineOf(d_->snapshot, i);
            if (!timeline || timeline->totalSlots <= 0) {
                d_->withoutTimeline << d_->snapshot->label(i);
                continue;
            }
            Group g;
            g.method = static_cast<int>(i);
            g.label = d_->snapshot->label(i);
            g.colour = methodColour(runs, i);
            // The engine's numbers: its utilization (planned runs have it too) and peak stash.
            const auto& u = d_->snapshot->result(i).utilization;
            g.bubble = u ? u->bubbleFraction : utilization(*timeline).bubbleFraction;
            // Program schedules hold their own weight versions (1 for a synchronous step, 2 for
            // 2BW); peakStash is what a backend allocates for them, not what they hold.
            g.versions = !timeline->weightVersions.empty();
            const auto& peaks = g.versions ? timeline->weightVersions : timeline->peakStash;
            const auto top = std::max_element(peaks.begin(), peaks.end());
            g.peak = top == peaks.end() ? 0 : *top;
            g.peakStage = top == peaks.end() ? 0 : static_cast<int>(top - peaks.begin());
            g.split = std::any_of(
                timeline->cells.begin(), timeline->cells.end(), [](const TimelineCell& c) {
                    return c.op == OpKind::InputGrad || c.op == OpKind::WeightGrad;
                });
            g.index.reset(std::move(timeline));
            d_->slotCount = std::max(d_->slotCount, g.index.slotCount());
            d_->groups.push_back(std::move(g));
        }
    }
    if (!d_->empty() && oldSlots != d_->slotCount) showStartUp();
    updateGeometry();
    update();
}

int ComparisonGantt::groupCount() const {
    return static_cast<int>(d_->groups.size());
}

int ComparisonGantt::groupMethod(int group) const {
    return d_->groups.at(static_cast<std::size_t>(group)).method;
}

QString ComparisonGantt::groupLabel(int group) const {
    return d_->groups.at(static_cast<std::size_t>(group)).label;
}

double ComparisonGantt::groupBubble(int group) const {
    return d_->groups.at(static_cast<std::size_t>(group)).bubble;
}

int ComparisonGantt::groupPeakStash(int group) const {
    return d_->groups.at(static_cast<std::size_t>(group)).peak;
}

int ComparisonGantt::groupPeakStage(int group) const {
    return d_->groups.at(static_cast<std::size_t>(group)).peakStage;
}

QString ComparisonGantt::groupStatsText(int group) const {
    return statsText(d_->groups.at(static_cast<std::size_t>(group)));
}

QString ComparisonGantt::noteText() const {
    return d_->note();
}

QRectF ComparisonGantt::laneRect(int group, int stage) const {
    if (d_->empty() || group < 0 || group >= groupCount()) return {};
    const Group& g = d_->groups[static_cast<std::size_t>(group)];
    if (stage < 0 || stage >= g.index.stages()) return {};
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    const QRectF& r = l.lanes[static_cast<std::size_t>(group)];
    const double h = r.height() / g.index.stages();
    return {r.left(), r.top() + stage * h, r.width(), h};
}

int ComparisonGantt::heightForLanes(double laneHeight) const {
    if (d_->empty()) return 0;
    return static_cast<int>(
        std::ceil(d_->chromeHeight(QFontMetricsF(font())) + laneHeight * d_->totalLanes()));
}

int ComparisonGantt::startUpSlots() const {
    int widest = 0;
    for (const Group& g : d_->groups)
        widest = std::max(
            widest, ganttStartUpSlots(g.index.timeline()->params, g.index.timeline()->totalSlots));
    return widest;
}

void ComparisonGantt::showStartUp() {
    if (d_->empty()) return fitAll();
    setVisibleRange(0.0, startUpSlots());
}

void ComparisonGantt::paintChart(QPainter& painter, const QSize& size, bool) const {
    d_->paint(painter, size, font());
}

QSize ComparisonGantt::sizeHint() const {
    // Lanes a line of text high (up to 48 of them).
    if (d_->empty()) return {900, 220};
    const double lane = QFontMetricsF(font()).height() + 4;
    const double lanes = std::min(d_->totalLanes(), 48);
    return {900, std::max(220, static_cast<int>(std::ceil(d_->chromeHeight(QFontMetricsF(font())) +
                                                          lane * lanes)))};
}

double ComparisonGantt::extent() const {
    return d_->empty() ? 0.0 : d_->slotCount;
}

QRectF ComparisonGantt::plotArea() const {
    if (d_->empty()) return QRectF(QPointF(0, 0), size());
    return d_->layout(size(), QFontMetricsF(font())).plot;
}

QByteArray ComparisonGantt::csv() const {
    CsvWriter out;
    out.header("method,slot,stage,op,microbatch,end_slot");
    for (const Group& g : d_->groups) {
        for (const TimelineCell& c : g.index.timeline()->cells) {
            out.label(g.label.toStdString())
                .integer(c.startSlot)
                .integer(c.stage)
                .plain(opLetter(c.op).toStdString())
                .integer(c.microbatch)
                .integer(c.endSlot);
            out.endRow();
        }
    }
    return QByteArray::fromStdString(out.take());
}

QString ComparisonGantt::toolTipAt(const QPointF& position) const {
    if (d_->empty()) return {};
    const Layout l = d_->layout(size(), QFontMetricsF(font()));
    for (std::size_t i = 0; i < d_->groups.size(); ++i) {
        const QRectF& r = l.lanes[i];
        if (!r.contains(position)) continue;
        const Group& g = d_->groups[i];
        const int stage =
            static_cast<int>((position.y() - r.top()) / r.height() * g.index.stages());
        const int slot = static_cast<int>(
            std::floor(d_->range.first + (position.x() - l.left) / l.width * d_->range.span()));
        const TimelineCell* c = g.index.cellAt(stage, slot);
        if (!c)
            return slot >= g.index.slotCount()
                       ? QStringLiteral("%1: finished (its run ends at slot %2)")
                             .arg(g.label)
                             .arg(g.index.slotCount())
                       : QStringLiteral("%1: stage %2 idle at slot %3")
                             .arg(g.label)
                             .arg(stage + 1)
                             .arg(slot);
        const bool half = c->op == OpKind::InputGrad || c->op == OpKind::WeightGrad;
        return QStringLiteral("%1: %2(m=%3)%4 on stage %5, slot %6")
            .arg(g.label)
            .arg(opLetter(c->op))
            .arg(c->microbatch)
            .arg(half ? QStringLiteral(" (%1)").arg(opName(c->op)) : QString())
            .arg(stage + 1)
            .arg(slot);
    }
    return {};
}

void ComparisonGantt::boundaryClicked(long long) {}

}  // namespace pipelens::ui

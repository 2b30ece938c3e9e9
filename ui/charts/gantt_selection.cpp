#include "charts/gantt_selection.hpp"

#include <QPainter>
#include <QStringList>
#include <algorithm>

#include "charts/chart_support.hpp"

namespace pipelens::ui {

namespace {
// I: the backward's orange halfway to white (its family, told apart); W: Okabe-Ito bluish green
// a third of the way to white, a colour no method family uses either.
constexpr QRgb kInputGradColour = 0xfff3cf80;
constexpr QRgb kWeightGradColour = 0xff4dbb9d;
}  // namespace

QColor ganttOpColour(OpKind op, int chunk) {
    QColor base;
    switch (op) {
        case OpKind::Forward:
            base = QColor(chart::kGanttForward);
            break;
        case OpKind::Backward:
            base = QColor(chart::kGanttBackward);
            break;
        case OpKind::InputGrad:
            base = QColor(kInputGradColour);
            break;
        case OpKind::WeightGrad:
            base = QColor(kWeightGradColour);
            break;
    }
    if (chunk <= 0) return base;
    // Odd chunks darker, even ones lighter, a step further every two chunks; black labels stay
    // readable on all of them.
    const int step = (chunk + 1) / 2;
    return chunk % 2 == 1 ? base.darker(100 + std::min(3, step) * 22)
                          : base.lighter(100 + std::min(3, step) * 14);
}

QString opName(OpKind op) {
    switch (op) {
        case OpKind::Forward:
            return QStringLiteral("forward");
        case OpKind::Backward:
            return QStringLiteral("backward");
        case OpKind::InputGrad:
            return QStringLiteral("input gradient");
        case OpKind::WeightGrad:
            return QStringLiteral("weight gradient");
    }
    return {};
}

QString opLetter(OpKind op) {
    switch (op) {
        case OpKind::Forward:
            return QStringLiteral("F");
        case OpKind::Backward:
            return QStringLiteral("B");
        case OpKind::InputGrad:
            return QStringLiteral("I");
        case OpKind::WeightGrad:
            return QStringLiteral("W");
    }
    return {};
}

GanttLanes ganttLanes(const Timeline& timeline) {
    GanttLanes lanes;
    const int stages = std::max(0, timeline.params.stages);
    const auto& rank = timeline.stageRank;
    const bool ranked =
        static_cast<int>(rank.size()) == stages &&
        std::all_of(rank.begin(), rank.end(), [stages](int r) { return r >= 0 && r < stages; });
    int devices = 0;
    if (ranked) {
        for (int r : rank) devices = std::max(devices, r + 1);
    }
    lanes.byDevice = ranked && devices < stages;
    const int count = lanes.byDevice ? devices : stages;
    lanes.stagesOf.assign(static_cast<std::size_t>(count), {});
    lanes.laneOfStage.resize(static_cast<std::size_t>(stages));
    lanes.chunkOfStage.resize(static_cast<std::size_t>(stages));
    for (int s = 0; s < stages; ++s) {
        const int lane = lanes.byDevice ? rank[static_cast<std::size_t>(s)] : s;
        auto& held = lanes.stagesOf[static_cast<std::size_t>(lane)];
        lanes.laneOfStage[static_cast<std::size_t>(s)] = lane;
        lanes.chunkOfStage[static_cast<std::size_t>(s)] = static_cast<int>(held.size());
        held.push_back(s);
    }
    return lanes;
}

QString GanttLanes::title(int lane) const {
    if (lane < 0 || lane >= count()) return {};
    const auto& held = stagesOf[static_cast<std::size_t>(lane)];
    if (!byDevice) return QStringLiteral("stage %1").arg(lane + 1);
    QStringList names;
    for (std::size_t i = 0; i < held.size() && i < 2; ++i) names << QString::number(held[i] + 1);
    if (held.size() == 3) names << QString::number(held[2] + 1);
    if (held.size() > 3) names << QStringLiteral("… (%1)").arg(held.size());
    return QStringLiteral("device %1 (%2 %3)")
        .arg(lane + 1)
        .arg(held.size() == 1 ? QStringLiteral("stage") : QStringLiteral("stages"),
             names.join(QStringLiteral(", ")));
}

QString MicrobatchSelection::summary() const {
    if (empty()) return {};
    int firstStage = cells.front().stage;
    int lastStage = firstStage;
    int firstVersion = cells.front().version;
    int lastVersion = firstVersion;
    for (const SelectedCell& c : cells) {
        if (c.stage < firstStage) {
            firstStage = c.stage;
            firstVersion = c.version;
        }
        if (c.stage > lastStage) {
            lastStage = c.stage;
            lastVersion = c.version;
        }
    }
    QString text = QStringLiteral("microbatch %1").arg(microbatch);
    if (firstVersion >= 0) {
        text += QStringLiteral(
                    ": weight version v%1 (stage %2) … v%3 (stage %4); B uses F's "
                    "stashed copy")
                    .arg(firstVersion)
                    .arg(firstStage + 1)
                    .arg(lastVersion)
                    .arg(lastStage + 1);
    }
    return text;
}

MicrobatchSelection selectMicrobatch(const Timeline& timeline, const DelayTable* delays,
                                     int microbatch) {
    MicrobatchSelection s;
    const GanttLanes lanes = ganttLanes(timeline);
    for (const TimelineCell& c : timeline.cells) {
        if (c.microbatch != microbatch) continue;
        if (c.stage < 0 || c.stage >= static_cast<int>(lanes.laneOfStage.size())) continue;
        SelectedCell cell;
        cell.stage = c.stage;
        cell.lane = lanes.laneOfStage[static_cast<std::size_t>(c.stage)];
        cell.op = c.op;
        cell.startSlot = c.startSlot;
        cell.endSlot = c.endSlot;
        if (delays) cell.version = delays->versionRead(c.microbatch, c.stage);
        s.cells.push_back(cell);
    }
    if (!s.cells.empty()) s.microbatch = microbatch;
    return s;
}

void paintSelection(QPainter& p, const MicrobatchSelection& selection, const QRectF& plot,
                    const std::function<double(double)>& xOfSlot, double rowHeight,
                    const QFont& font) {
    if (selection.empty()) return;
    p.save();
    p.setClipRect(plot);
    p.fillRect(plot, QColor(255, 255, 255, 150));  // the rest steps back
    QFont small = font;
    small.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
    small.setBold(true);
    const QFontMetricsF fm(small);
    p.setFont(small);
    constexpr double kMinWidth = 5.0;  // visible, in its colour, when a pixel holds many slots
    for (const SelectedCell& c : selection.cells) {
        double x0 = xOfSlot(c.startSlot);
        double x1 = xOfSlot(c.endSlot + 1.0);
        if (x1 - x0 < kMinWidth) {
            const double mid = (x0 + x1) / 2.0;
            x0 = mid - kMinWidth / 2.0;
            x1 = mid + kMinWidth / 2.0;
        }
        const QRectF cell(x0, plot.top() + c.lane * rowHeight, x1 - x0, rowHeight);
        p.fillRect(cell, ganttOpColour(c.op));
        const double outline = cell.width() >= 10.0 ? 1.5 : 1.0;
        p.setPen(QPen(Qt::black, outline));
        p.setBrush(Qt::NoBrush);
        p.drawRect(cell.adjusted(outline / 2, outline / 2, -outline / 2, -outline / 2));
        if (c.version < 0) continue;
        const QString text = QStringLiteral("v%1").arg(c.version);
        if (fm.horizontalAdvance(text) + 4 > cell.width() || fm.height() > rowHeight) continue;
        p.setPen(Qt::black);
        p.drawText(cell, Qt::AlignCenter, text);
    }
    p.restore();
}

}  // namespace pipelens::ui

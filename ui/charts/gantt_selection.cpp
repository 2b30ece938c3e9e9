#include "charts/gantt_selection.hpp"

#include <QPainter>
#include <algorithm>

#include "charts/chart_support.hpp"

namespace pipelens::ui {

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
    for (const TimelineCell& c : timeline.cells) {
        if (c.microbatch != microbatch) continue;
        SelectedCell cell;
        cell.stage = c.stage;
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
        const QRectF cell(x0, plot.top() + c.stage * rowHeight, x1 - x0, rowHeight);
        const bool forward = c.op == OpKind::Forward;
        p.fillRect(cell, QColor(forward ? chart::kGanttForward : chart::kGanttBackward));
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

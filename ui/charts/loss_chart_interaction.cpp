// The loss chart's interaction (LossChart, continued): the hover readout of every curve at x,
// the zoom's reset, the pinned runs.
#include "charts/loss_chart.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFontMetrics>
#include <QGraphicsEllipseItem>
#include <QGraphicsLineItem>
#include <QLabel>
#include <QLineSeries>
#include <QMouseEvent>
#include <QToolButton>
#include <algorithm>
#include <cmath>
#include <limits>

namespace pipelens::ui {
namespace {

// The settings a pinned run is labelled with (its γ are in the legend names).
QString settingsSummary(const ExperimentConfig& c) {
    QString budget;
    if (c.budget.totalSlots > 0) {
        budget = QStringLiteral("%1 slots").arg(c.budget.totalSlots);
    } else if (c.budget.microbatches > 0) {
        budget = QStringLiteral("%1 microbatches").arg(c.budget.microbatches);
    } else {
        budget = QStringLiteral("%1 epochs").arg(c.budget.epochs);
    }
    return QStringLiteral("S = %1, b = %2, n = %3, d = %4, %5, seed %6")
        .arg(c.stages)
        .arg(c.batchSize)
        .arg(c.data.rows)
        .arg(c.data.dim)
        .arg(budget)
        .arg(c.seed);
}

}  // namespace

void LossChart::resetZoom() {
    zoomed_ = false;
    rebuildAxes();
}

bool LossChart::pin() {
    if (!snapshot_ || live_ || snapshot_->planOnly || curves_.empty()) return false;
    if (pins_.empty()) nextPin_ = 1;
    Pin p;
    p.number = nextPin_++;
    p.snapshot = snapshot_;
    p.settings = settingsSummary(snapshot_->experiment.config);
    for (const Curve& c : curves_) {
        Curve pinned = c;
        pinned.name = tr("pin %1: %2").arg(p.number).arg(c.name);
        p.curves.push_back(std::move(pinned));
    }
    pins_.push_back(std::move(p));
    if (pins_.size() > static_cast<size_t>(kMaxPins)) pins_.erase(pins_.begin());  // the oldest
    updatePinList();
    pinList_->setCurrentIndex(pinList_->count() - 1);
    rebuildSeries();
    return true;
}

void LossChart::unpin() {
    pins_.clear();
    updatePinList();
    rebuildSeries();
}

bool LossChart::removePin(int index) {
    if (index < 0 || index >= pinCount()) return false;
    pins_.erase(pins_.begin() + index);
    updatePinList();
    rebuildSeries();
    return true;
}

void LossChart::updatePinList() {
    const QSignalBlocker block(pinList_);
    const int selected = pinList_->currentIndex();
    pinList_->clear();
    for (const Pin& p : pins_) {
        const QString text = tr("pin %1: %2").arg(p.number).arg(p.settings);
        pinList_->addItem(text);
        pinList_->setItemData(pinList_->count() - 1, text, Qt::ToolTipRole);
    }
    pinList_->setCurrentIndex(std::clamp(selected, 0, pinList_->count() - 1));
    pinList_->setVisible(!pins_.empty());
    unpin_->setVisible(!pins_.empty());
}

QList<LossChart::PinInfo> LossChart::pins() const {
    QList<PinInfo> out;
    for (const Pin& p : pins_) out << PinInfo{p.number, p.snapshot, p.settings};
    return out;
}

SnapshotPtr LossChart::pinned() const {
    return pins_.empty() ? nullptr : pins_.back().snapshot;
}

QString LossChart::pinnedSettings() const {
    return pins_.empty() ? QString() : pins_.back().settings;
}

QString LossChart::readoutNumber(double v) {
    if (std::isnan(v)) return QStringLiteral("NaN");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("∞") : QStringLiteral("−∞");
    if (v == 0.0) return QStringLiteral("0");
    const double magnitude = std::abs(v);
    if (magnitude < 1e-3 || magnitude >= 1e4) return QString::number(v, 'e', 3);
    const int decimals = 3 - static_cast<int>(std::floor(std::log10(magnitude)));
    return QString::number(v, 'f', std::max(0, decimals));
}

LossChart::Readout LossChart::readoutAt(const QPointF& viewPos) const {
    Readout out;
    if (methodSeries_.isEmpty() && pinnedSeries_.isEmpty()) return out;
    QLineSeries* any = methodSeries_.isEmpty() ? pinnedSeries_[0] : methodSeries_[0];
    const QPointF scenePos = view_->mapToScene(viewPos.toPoint());
    const QPointF chartPos = chart()->mapFromScene(scenePos);
    if (!chart()->plotArea().contains(chartPos)) return out;
    const double x = chart()->mapToValue(chartPos, any).x();
    out.atX = x;
    double bestDistance = std::numeric_limits<double>::infinity();
    auto read = [&](const Curve& curve, QLineSeries* series, bool pinned) {
        ReadoutLine line;
        line.name = curve.name;
        line.colour = curve.colour;
        line.pinned = pinned;
        const auto& drawn = drawnOf(curve);
        const auto& raw = pointsOf(curve);
        const double limit =
            pinned ? std::numeric_limits<double>::infinity() : cursorX(curve.method);
        // The last point at or before x, while x is within the curve as drawn.
        const auto after = std::upper_bound(drawn.begin(), drawn.end(), x,
                                            [](double v, const QPointF& p) { return v < p.x(); });
        const bool pastEnd = after == drawn.end() && (drawn.empty() || x > drawn.back().x());
        if (after != drawn.begin() && !pastEnd && x <= limit) {
            const auto at = after - 1;
            const auto index = static_cast<size_t>(at - drawn.begin());
            line.hasValue = true;
            line.x = at->x();
            line.y = at->y();
            line.raw = raw[index].y();
            if (std::isfinite(line.y)) {
                const QPointF where = chart()->mapToPosition(
                    QPointF(line.x, logY() ? std::max(line.y, kLogFloor) : line.y), series);
                const double distance = std::abs(where.y() - chartPos.y());
                if (distance < bestDistance) {
                    bestDistance = distance;
                    out.method = curve.method;
                    out.pinned = pinned;
                    out.name = curve.name;
                    out.x = line.x;
                    out.y = line.y;
                }
            }
        }
        out.lines << line;
    };
    for (int i = 0; i < methodSeries_.size(); ++i)
        read(curves_[static_cast<size_t>(i)], methodSeries_[i], false);
    for (int i = 0; i < pinnedSeries_.size(); ++i)
        read(pinnedCurves_[static_cast<size_t>(i)], pinnedSeries_[i], true);
    if (out.method < 0) {
        for (const ReadoutLine& l : out.lines) {
            if (l.hasValue) out.method = 0;  // only NaN or ∞ here: shown, no marker
        }
    }
    if (out.method < 0) return out;
    QStringList text{
        tr("%1 %2").arg(xAxis_ == XAxis::Slots ? tr("slot") : tr("update")).arg(x, 0, 'f', 0)};
    for (const ReadoutLine& l : out.lines) {
        QString value = tr("—");
        if (l.hasValue) {
            value = readoutNumber(l.y);
            if (smoothing_ > 0.0) value += tr(" (raw %1)").arg(readoutNumber(l.raw));
        }
        text << tr("%1: %2").arg(l.name, value);
    }
    out.text = text.join(QLatin1Char('\n'));
    return out;
}

QString LossChart::readoutHtml(const Readout& r) const {
    // Rows that fit the chart's height; more curves than that go into further columns.
    const QFontMetrics fm(readout_->font());
    const int rowsFit = std::max(3, (view_->viewport()->height() - 16) / fm.lineSpacing() - 1);
    const auto lines = static_cast<int>(r.lines.size());
    const int columns = std::max(1, (lines + rowsFit - 1) / rowsFit);
    const int rows = (lines + columns - 1) / columns;
    const QStringList text = r.text.split(QLatin1Char('\n'));
    QString html = QStringLiteral(
                       "<table cellspacing=\"0\" cellpadding=\"0\"><tr><td colspan=\"%1\">"
                       "<b>%2</b></td></tr>")
                       .arg(2 * columns)
                       .arg(text.value(0).toHtmlEscaped());
    for (int row = 0; row < rows; ++row) {
        html += QStringLiteral("<tr>");
        for (int col = 0; col < columns; ++col) {
            const int i = col * rows + row;
            if (i >= lines) break;
            // A sample of the curve's colour, then its text in that colour (darkened where it
            // is too light to read on the label's white).
            const QColor c = r.lines[i].colour;
            const QColor ink = c.lightness() > 150 ? c.darker(100 + (c.lightness() - 110)) : c;
            html += QStringLiteral(
                        "<td style=\"color: %1\">&#9632;&nbsp;</td>"
                        "<td style=\"color: %2; padding-right: 10px\">%3</td>")
                        .arg(c.name(), ink.name(), text.value(i + 1).toHtmlEscaped());
        }
        html += QStringLiteral("</tr>");
    }
    return html + QStringLiteral("</table>");
}

void LossChart::hideReadout() {
    readout_->hide();
    marker_->hide();
    guide_->hide();
}

void LossChart::showReadout(const QPointF& viewPos) {
    const Readout r = readoutAt(viewPos);
    if (r.method < 0) {
        hideReadout();
        return;
    }
    readout_->setText(readoutHtml(r));
    readout_->adjustSize();
    // Beside the pointer, inside the chart.
    QPoint at = viewPos.toPoint() + QPoint(14, 14);
    const QSize area = view_->viewport()->size();
    if (at.x() + readout_->width() > area.width())
        at.rx() = viewPos.toPoint().x() - 14 - readout_->width();
    if (at.y() + readout_->height() > area.height())
        at.ry() = std::max(0, area.height() - readout_->height());
    at.rx() = std::max(0, at.x());
    readout_->move(at);
    readout_->show();
    readout_->raise();
    // The guide: a vertical line across the plot at x.
    const QRectF plot = chart()->plotArea();
    const double guideX = chart()->mapFromScene(view_->mapToScene(viewPos.toPoint())).x();
    guide_->setLine(QLineF(chart()->mapToScene(QPointF(guideX, plot.top())),
                           chart()->mapToScene(QPointF(guideX, plot.bottom()))));
    guide_->show();
    QLineSeries* series = r.pinned ? pinnedSeries_.value(0) : methodSeries_.value(0);
    if (series && std::isfinite(r.y) && r.name.size() > 0) {
        const QPointF drawn(r.x, logY() ? std::max(r.y, kLogFloor) : r.y);
        marker_->setPos(chart()->mapToScene(chart()->mapToPosition(drawn, series)));
        marker_->show();
    } else {
        marker_->hide();
    }
}

bool LossChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched == view_->viewport()) {
        if (event->type() == QEvent::MouseMove) {
            showReadout(static_cast<QMouseEvent*>(event)->position());
        } else if (event->type() == QEvent::Leave) {
            hideReadout();
        } else if (event->type() == QEvent::Resize && logY() &&
                   logLabelCapacity() != builtLabelCapacity_) {
            rebuildAxes();  // taller or shorter: more or fewer decades get a label
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace pipelens::ui

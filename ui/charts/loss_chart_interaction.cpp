// The loss chart's interaction (LossChart, continued): the hover readout, the zoom's reset,
// pinning a run.
#include "charts/loss_chart.hpp"

#include <QChart>
#include <QChartView>
#include <QGraphicsEllipseItem>
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
    if (!snapshot_ || live_ || snapshot_->planOnly || curves_.empty()) {
        const QSignalBlocker block(pin_);
        pin_->setChecked(!pinnedCurves_.empty());
        return false;
    }
    pinned_ = snapshot_;
    pinnedSettings_ = settingsSummary(snapshot_->experiment.config);
    pinnedCurves_.clear();
    for (const Curve& c : curves_) {
        Curve p = c;
        p.name = tr("%1 (pinned)").arg(c.name);
        pinnedCurves_.push_back(std::move(p));
    }
    const QSignalBlocker block(pin_);
    pin_->setChecked(true);
    pin_->setText(tr("unpin"));
    rebuildSeries();
    return true;
}

void LossChart::unpin() {
    pinned_.reset();
    pinnedSettings_.clear();
    pinnedCurves_.clear();
    const QSignalBlocker block(pin_);
    pin_->setChecked(false);
    pin_->setText(tr("pin run"));
    rebuildSeries();
}

LossChart::Readout LossChart::readoutAt(const QPointF& viewPos) const {
    Readout best;
    if (methodSeries_.isEmpty() && pinnedSeries_.isEmpty()) return best;
    QLineSeries* any = methodSeries_.isEmpty() ? pinnedSeries_[0] : methodSeries_[0];
    const QPointF scenePos = view_->mapToScene(viewPos.toPoint());
    const QPointF chartPos = chart()->mapFromScene(scenePos);
    if (!chart()->plotArea().contains(chartPos)) return best;
    const double x = chart()->mapToValue(chartPos, any).x();
    double bestDistance = 30.0;  // pixels
    auto consider = [&](const Curve& curve, QLineSeries* series, bool pinned) {
        const auto& pts = pointsOf(curve);
        const double limit =
            pinned ? std::numeric_limits<double>::infinity() : cursorX(curve.method);
        const auto at = std::lower_bound(pts.begin(), pts.end(), x,
                                         [](const QPointF& p, double v) { return p.x() < v; });
        for (auto it : {at - 1, at}) {
            if (it < pts.begin() || it >= pts.end() || it->x() > limit) continue;
            if (!std::isfinite(it->y())) continue;
            QPointF drawn = *it;
            if (logY()) drawn.setY(std::max(drawn.y(), kLogFloor));
            const QPointF where = chart()->mapToPosition(drawn, series);
            const double distance = QLineF(where, chartPos).length();
            if (distance < bestDistance) {
                bestDistance = distance;
                best.method = curve.method;
                best.pinned = pinned;
                best.name = curve.name;
                best.x = it->x();
                best.y = it->y();
            }
        }
    };
    for (int i = 0; i < methodSeries_.size(); ++i)
        consider(curves_[static_cast<size_t>(i)], methodSeries_[i], false);
    for (int i = 0; i < pinnedSeries_.size(); ++i)
        consider(pinnedCurves_[static_cast<size_t>(i)], pinnedSeries_[i], true);
    if (best.method >= 0) {
        best.text = tr("%1\n%2 %3: %5 = %4")
                        .arg(best.name, xAxis_ == XAxis::Slots ? tr("slot") : tr("update"))
                        .arg(best.x, 0, 'f', 0)
                        .arg(best.y, 0, 'g', 4)
                        .arg(quantityName());
    }
    return best;
}

void LossChart::showReadout(const QPointF& viewPos) {
    const Readout r = readoutAt(viewPos);
    if (r.method < 0) {
        readout_->hide();
        marker_->hide();
        return;
    }
    readout_->setText(r.text);
    readout_->adjustSize();
    // Beside the pointer, inside the chart.
    QPoint at = viewPos.toPoint() + QPoint(14, 14);
    const QSize area = view_->viewport()->size();
    if (at.x() + readout_->width() > area.width())
        at.rx() = viewPos.toPoint().x() - 14 - readout_->width();
    if (at.y() + readout_->height() > area.height())
        at.ry() = viewPos.toPoint().y() - 14 - readout_->height();
    readout_->move(at);
    readout_->show();
    readout_->raise();
    QPointF drawn(r.x, logY() ? std::max(r.y, kLogFloor) : r.y);
    QLineSeries* series = r.pinned ? pinnedSeries_.value(0) : methodSeries_.value(0);
    if (series) {
        marker_->setPos(chart()->mapToScene(chart()->mapToPosition(drawn, series)));
        marker_->show();
    }
}

bool LossChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched == view_->viewport()) {
        if (event->type() == QEvent::MouseMove) {
            showReadout(static_cast<QMouseEvent*>(event)->position());
        } else if (event->type() == QEvent::Leave) {
            readout_->hide();
            marker_->hide();
        } else if (event->type() == QEvent::Resize && logY() &&
                   logLabelCapacity() != builtLabelCapacity_) {
            rebuildAxes();  // taller or shorter: more or fewer decades get a label
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace pipelens::ui

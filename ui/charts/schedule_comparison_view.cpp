#include "schedule_comparison_view.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <limits>

#include "util/format_number.hpp"

namespace pipelens::ui {
namespace {

// A right-aligned number cell; its value (not its rounded text) under Qt::UserRole.
QTableWidgetItem* numberItem(double v, const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setData(Qt::UserRole, v);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setFlags(item->flags() & ~Qt::ItemIsEditable);
    return item;
}

QTableWidgetItem* textItem(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(item->flags() & ~Qt::ItemIsEditable);
    return item;
}

QString number(double v) {
    if (!std::isfinite(v)) return v > 0 ? QStringLiteral("∞") : QStringLiteral("—");
    return QString::fromStdString(formatNumber(v, 4));
}

const QString kNone = QStringLiteral("—");

}  // namespace

QStringList ScheduleComparisonView::columnTitles() {
    return {tr("Method"),
            tr("Key"),
            tr("S"),
            tr("Microbatches / step"),
            tr("γ"),
            tr("Final"),
            tr("To target (slots)"),
            tr("Bubble"),
            tr("Peak memory / stage"),
            tr("Slots")};
}

ScheduleComparisonView::ScheduleComparisonView(QWidget* parent) : QWidget(parent) {
    setObjectName("scheduleComparisonView");
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    table_ = new QTableWidget(0, static_cast<int>(columnTitles().size()));
    table_->setObjectName("scheduleComparisonTable");
    table_->setHorizontalHeaderLabels(columnTitles());
    table_->verticalHeader()->setVisible(false);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    const QStringList tips = {
        tr("The method's label"),
        tr("The method key in configs"),
        tr("Stages (devices)"),
        tr("Microbatches per optimizer step: M (fill-drain, 1F1B, ZB-H1), m (2BW), NOAM (PD)"),
        tr("The step size its rule chose"),
        tr("Final f − f* (the language model: final loss)"),
        tr("Slots until the value first reached the target (— never)"),
        tr("Idle share of the stage-slots"),
        tr("Max over stages of weight versions + activations held at once"),
        tr("Length of the run in slots")};
    for (int c = 0; c < tips.size(); ++c) table_->horizontalHeaderItem(c)->setToolTip(tips[c]);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(caption_);
    layout->addWidget(table_, 1);
    clear();
}

void ScheduleComparisonView::clear() {
    comparison_ = {};
    planned_ = false;
    table_->setRowCount(0);
    caption_->setText(tr("No run yet: run an experiment to compare its methods."));
}

void ScheduleComparisonView::setSnapshot(const SnapshotPtr& snapshot) {
    if (!snapshot) {
        clear();
        return;
    }
    setComparison(scheduleComparison(snapshot->experiment), snapshot->planOnly);
}

QString ScheduleComparisonView::caption() const {
    return caption_->text();
}

void ScheduleComparisonView::setComparison(const ScheduleComparison& c, bool planned) {
    comparison_ = c;
    planned_ = planned;
    table_->setSortingEnabled(false);
    table_->setRowCount(static_cast<int>(c.rows.size()));
    for (int r = 0; r < static_cast<int>(c.rows.size()); ++r) {
        const ScheduleComparisonRow& row = c.rows[static_cast<std::size_t>(r)];
        int col = 0;
        auto put = [&](QTableWidgetItem* item) { table_->setItem(r, col++, item); };
        put(textItem(QString::fromStdString(row.label)));
        put(textItem(QString::fromStdString(row.method)));
        put(numberItem(row.stages, QString::number(row.stages)));
        if (row.stats) {
            put(numberItem(row.stats->microbatchesPerStep,
                           QString::number(row.stats->microbatchesPerStep)));
        } else {
            put(numberItem(-1, kNone));
        }
        put(planned ? numberItem(-1, kNone) : numberItem(row.stepSize, number(row.stepSize)));
        put(planned ? numberItem(-1, kNone) : numberItem(row.finalValue, number(row.finalValue)));
        put(planned || row.timeToTarget < 0
                ? numberItem(std::numeric_limits<double>::infinity(), kNone)
                : numberItem(row.timeToTarget, QString::number(row.timeToTarget)));
        if (row.stats) {
            put(numberItem(row.stats->bubbleFraction,
                           QString::number(100.0 * row.stats->bubbleFraction, 'f', 1) + "%"));
            put(numberItem(row.stats->peakStageMemoryUnits,
                           QString::number(row.stats->peakStageMemoryUnits)));
        } else {
            put(numberItem(-1, kNone));
            put(numberItem(-1, kNone));
        }
        put(row.totalSlots > 0 ? numberItem(row.totalSlots, QString::number(row.totalSlots))
                               : numberItem(-1, kNone));
    }
    if (c.rows.empty()) {
        caption_->setText(tr("No method to compare yet."));
    } else if (planned) {
        caption_->setText(
            tr("Planned: the schedules' bubble, memory and length; the results "
               "fill in when the run ends."));
    } else {
        const QString value = c.valueName == "loss" ? tr("the final loss") : tr("final f − f*");
        caption_->setText(
            (c.targetGiven ? tr("Target %1 = %2 (given). Final: %3.")
                           : tr("Target %1 = %2 (2 × the best final value). Final: %3."))
                .arg(c.valueName == "loss" ? tr("loss") : tr("f − f*"), number(c.target), value));
    }
}

}  // namespace pipelens::ui

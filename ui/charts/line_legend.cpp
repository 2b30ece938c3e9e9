#include "charts/line_legend.hpp"

#include <QFontMetrics>
#include <QPainter>
#include <QVBoxLayout>
#include <algorithm>

namespace pipelens::ui {
namespace {

constexpr int kSample = 28;   // length of the line sample, px
constexpr int kGap = 5;       // between sample and name
constexpr int kSpacing = 14;  // between entries
constexpr int kMargin = 4;

}  // namespace

LineLegend::LineLegend(QWidget* parent) : QWidget(parent) {
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void LineLegend::setEntries(const QList<Entry>& entries) {
    entries_ = entries;
    updateGeometry();
    update();
}

QList<QRect> LineLegend::layoutAt(int width) const {
    const QFontMetrics fm(font());
    const int rowHeight = fm.height() + 2;
    QList<QRect> out;
    int x = kMargin;
    int y = kMargin;
    for (const Entry& e : entries_) {
        const int w = kSample + kGap + fm.horizontalAdvance(e.name);
        if (x > kMargin && x + w > width - kMargin) {  // next row
            x = kMargin;
            y += rowHeight;
        }
        out << QRect(x, y, w, rowHeight);
        x += w + kSpacing;
    }
    return out;
}

int LineLegend::heightForWidth(int width) const {
    const QList<QRect> rects = layoutAt(width);
    return rects.isEmpty() ? 0 : rects.back().bottom() + 1 + kMargin;
}

QSize LineLegend::sizeHint() const {
    const QList<QRect> rects = layoutAt(QWIDGETSIZE_MAX);
    const int w = rects.isEmpty() ? 0 : rects.back().right() + 1 + kMargin;
    return {w, heightForWidth(width() > 0 ? width() : w)};
}

QSize LineLegend::minimumSizeHint() const {
    return {kSample * 2, heightForWidth(width())};
}

void LineLegend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QList<QRect> rects = layoutAt(width());
    for (qsizetype i = 0; i < rects.size(); ++i) {
        const QRect& r = rects[i];
        const int mid = r.center().y();
        p.setPen(entries_[i].pen);
        p.drawLine(QPointF(r.left(), mid + 0.5), QPointF(r.left() + kSample, mid + 0.5));
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(
            QRect(r.left() + kSample + kGap, r.top(), r.width() - kSample - kGap, r.height()),
            Qt::AlignLeft | Qt::AlignVCenter, entries_[i].name);
    }
}

QWidget* chartWithLegend(QWidget* chart, LineLegend* legend, QWidget* parent) {
    auto* panel = new QWidget(parent);
    panel->setAutoFillBackground(true);
    panel->setBackgroundRole(QPalette::Base);
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(chart, 1);
    layout->addWidget(legend);
    return panel;
}

}  // namespace pipelens::ui

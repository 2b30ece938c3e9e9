#include "animation/animation_frames.hpp"

#include <QChartView>
#include <QCoreApplication>
#include <QFont>
#include <QFontMetricsF>
#include <QPainter>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "charts/gantt_chart.hpp"
#include "charts/line_legend.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "cmdline/args.hpp"
#include "errors.hpp"
#include "method.hpp"

namespace pipelens::ui {
namespace {

// The layout is designed at 960 x 540; larger frames draw the same picture at a higher pixel
// ratio (sharper, not smaller).
constexpr double kDesignWidth = 960.0;
constexpr double kDesignHeight = 540.0;

bool sameNoCase(const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

int animationMethod(const RunSnapshot& snapshot, const std::string& label,
                    const std::string& field) {
    const std::optional<Method> kind = findMethod(label, true);
    std::string allowed;
    int ofKind = -1;  // the first method of the kind `label` names, if it names one
    for (size_t i = 0; i < snapshot.runs().size(); ++i) {
        if (!snapshot.result(i).timeline) continue;
        const std::string& name = snapshot.runs()[i].label;
        if (label.empty() || sameNoCase(name, label)) return static_cast<int>(i);
        if (kind && snapshot.runs()[i].spec.method == *kind && ofKind < 0) {
            ofKind = static_cast<int>(i);
        }
        if (!allowed.empty()) allowed += ", ";
        allowed += "\"";
        allowed += cmdline::shownValue(name);
        allowed += "\"";
    }
    if (ofKind >= 0) return ofKind;
    if (allowed.empty()) {
        throw ConfigError(
            "no method of this experiment has a pipeline timeline to animate (RPD runs none): "
            "add a pd, fill-drain, localsgd or sgd method");
    }
    std::string message = field;
    message += " = \"";
    message += cmdline::shownValue(label);
    message += "\" is not allowed: the label of a method with a timeline (";
    message += allowed;
    message += ") or its kind (pd, fill-drain, localsgd, sgd)";
    throw ConfigError(message);
}

struct AnimationFrames::Impl {
    SnapshotPtr snapshot;
    int method = 0;
    int heatmapMethod = -1;
    AnimationPanels panels = AnimationPanels::Gantt;
    QSize size;
    double ratio = 1.0;  // device pixels per layout pixel
    QSizeF logical;      // the frame in layout pixels
    int total = 0;
    int stages = 1;
    QFont titleFont;
    QFont captionFont;
    QRectF titleRect;
    QRectF ganttRect;
    QRectF lossRect;  // caption and plot
    QRectF heatmapRect;
    QString title;
    QString lossCaption;
    QString heatmapCaption;
    std::unique_ptr<GanttChart> gantt;
    std::unique_ptr<StalenessHeatmap> heatmap;
    std::unique_ptr<LossChart> loss;
    QImage frame;

    void layOut();
    void placeLoss();
    double captionHeight() const { return std::ceil(QFontMetricsF(captionFont).height() + 6); }
    // The loss chart's room below its caption, and the scale its plot is drawn at there.
    QRectF lossRoom() const;
    double lossShrink() const;
    void paintCaption(QPainter& p, const QRectF& panel, const QString& text) const;
};

void AnimationFrames::Impl::layOut() {
    ratio = std::max(1.0, std::min(size.width() / kDesignWidth, size.height() / kDesignHeight));
    logical = QSizeF(size.width() / ratio, size.height() / ratio);
    titleFont = QFont();
    titleFont.setPixelSize(16);
    titleFont.setBold(true);
    captionFont = QFont();
    captionFont.setPixelSize(13);
    captionFont.setBold(true);
    const double titleHeight = std::ceil(QFontMetricsF(titleFont).height() + 12);
    titleRect = QRectF(0, 0, logical.width(), titleHeight);
    const double body = logical.height() - titleHeight;
    if (panels == AnimationPanels::Gantt) {
        ganttRect = QRectF(0, titleHeight, logical.width(), body);
        return;
    }
    const double ganttHeight = std::round(body * 0.5);
    ganttRect = QRectF(0, titleHeight, logical.width(), ganttHeight);
    const double top = ganttRect.bottom();
    const double rest = logical.height() - top;
    if (panels == AnimationPanels::GanttLoss) {
        lossRect = QRectF(0, top, logical.width(), rest);
    } else {
        const double half = std::round(logical.width() / 2);
        lossRect = QRectF(0, top, half, rest);
        heatmapRect = QRectF(half, top, logical.width() - half, rest);
    }
}

// The loss chart's plot (chart and legend) at exactly the panel's size below its caption: the
// widget is sized once, measured, and sized again so that its controls above the plot take
// what they need and the plot gets the rest.
void AnimationFrames::Impl::placeLoss() {
    const QSize want(static_cast<int>(lossRect.width()),
                     static_cast<int>(lossRect.height() - captionHeight()));
    // The window's minimum (for a usable chart on screen) would not fit a short frame.
    loss->view()->setMinimumSize(120, 60);
    loss->resize(want);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    const int extra = loss->height() - loss->plot()->height();
    loss->resize(want.width(), want.height() + extra);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

void AnimationFrames::Impl::paintCaption(QPainter& p, const QRectF& panel,
                                         const QString& text) const {
    p.setFont(captionFont);
    p.setPen(QColor(40, 40, 40));
    p.drawText(panel.adjusted(10, 0, -6, 0)
                   .intersected(QRectF(panel.left(), panel.top(), panel.width(), captionHeight())),
               Qt::AlignLeft | Qt::AlignVCenter, text);
}

AnimationFrames::AnimationFrames(SnapshotPtr snapshot, int method, AnimationPanels panels,
                                 QSize size, const LossChart* lossStyle)
    : d_(std::make_unique<Impl>()) {
    Impl& d = *d_;
    d.snapshot = std::move(snapshot);
    d.method = method;
    d.panels = panels;
    d.size = size;
    const auto m = static_cast<size_t>(method);
    const auto timeline = timelineOf(d.snapshot, m);
    if (!timeline) throw ConfigError("the method chosen has no pipeline timeline to animate");
    d.total = timeline->totalSlots;
    d.stages = std::max(1, timeline->params.stages);
    d.layOut();

    const RunSnapshot& s = *d.snapshot;
    d.title = QStringLiteral("%1  \u00b7  %2  \u00b7  S = %3")
                  .arg(QString::fromStdString(s.experiment.config.name), s.label(m))
                  .arg(d.stages);
    d.gantt = std::make_unique<GanttChart>();
    d.gantt->setTimeline(timeline, delaysOf(d.snapshot, m));
    d.gantt->setExportTitle(s.label(m));
    if (panels == AnimationPanels::Gantt) return;

    // The loss curves of every method, on the window's axes.
    d.loss = std::make_unique<LossChart>();
    d.loss->setAttribute(Qt::WA_DontShowOnScreen);
    if (lossStyle) {
        d.loss->setXAxis(lossStyle->xAxis());
        d.loss->setLogY(lossStyle->logY());
        d.loss->setLogX(lossStyle->logX());
    }
    d.loss->setSnapshot(d.snapshot);
    d.loss->show();  // offscreen: lays out and sizes the chart view as on screen
    d.placeLoss();
    d.lossCaption = d.loss->yAxisTitle() == QStringLiteral("f \u2212 f*")
                        ? QStringLiteral("Loss f \u2212 f* (every method)")
                        : QStringLiteral("Loss (every method): ") + d.loss->yAxisTitle();
    if (panels != AnimationPanels::All) return;

    // The heatmap follows the Gantt's method when it has delays, else the first that has (as
    // the window's).
    if (s.result(m).delays) {
        d.heatmapMethod = method;
    } else {
        for (size_t i = 0; i < s.runs().size() && d.heatmapMethod < 0; ++i) {
            if (s.result(i).delays) d.heatmapMethod = static_cast<int>(i);
        }
    }
    d.heatmap = std::make_unique<StalenessHeatmap>();
    if (d.heatmapMethod >= 0) {
        const auto h = static_cast<size_t>(d.heatmapMethod);
        const auto shown = timelineOf(d.snapshot, h);
        d.heatmap->setDelays(delaysOf(d.snapshot, h),
                             shown && pipeDreamFormulaApplies(shown->params));
        d.heatmapCaption = QStringLiteral("Staleness \u2014 ") + s.label(h);
    } else {
        d.heatmapCaption = QStringLiteral("Staleness \u2014 no delay table");
    }
}

AnimationFrames::~AnimationFrames() = default;

int AnimationFrames::totalSlots() const {
    return d_->total;
}

std::pair<int, int> AnimationFrames::ganttWindow(int cursor, int totalSlots,
                                                 const ScheduleParams& params) {
    const int width = ganttStartUpSlots(params, totalSlots);
    if (width >= totalSlots) return {0, totalSlots};
    const double turn = 0.9 * width;  // the cursor's last position before the window moves
    const int page = std::max(1, static_cast<int>(std::lround(0.8 * width)));
    int first = 0;
    if (cursor > turn) {
        const auto pages = static_cast<int>(std::ceil((cursor - turn) / page));
        first = std::min(pages * page, totalSlots - width);
    }
    return {first, width};
}

QRectF AnimationFrames::Impl::lossRoom() const {
    return {lossRect.left(), lossRect.top() + captionHeight(), lossRect.width(),
            lossRect.height() - captionHeight()};
}

double AnimationFrames::Impl::lossShrink() const {
    const QWidget* plot = loss->plot();
    const QRectF room = lossRoom();
    return std::min({1.0, room.width() / std::max(1, plot->width()),
                     room.height() / std::max(1, plot->height())});
}

QStringList AnimationFrames::lossLegendShown() const {
    const Impl& d = *d_;
    QStringList shown;
    if (!d.loss) return shown;
    const LineLegend* legend = d.loss->legend();
    const QPoint offset = legend->mapTo(d.loss->plot(), QPoint(0, 0));
    const QRectF room = d.lossRoom();
    const double shrink = d.lossShrink();
    const QRectF frame(QPointF(0, 0), d.logical);
    const QList<QRect> rects = legend->entryRects();
    for (int i = 0; i < rects.size() && i < legend->entries().size(); ++i) {
        const QRectF r = rects[i].translated(offset);
        const QRectF drawn(room.topLeft() + r.topLeft() * shrink, r.size() * shrink);
        if (d.lossRect.contains(drawn) && frame.contains(drawn)) shown << legend->entries()[i].name;
    }
    return shown;
}

const QImage& AnimationFrames::render(int slot) {
    Impl& d = *d_;
    const int cursor = std::clamp(slot + 1, 0, d.total);
    if (d.frame.size() != d.size) {
        d.frame = QImage(d.size, QImage::Format_RGB32);
        d.frame.setDevicePixelRatio(d.ratio);
    }
    d.frame.fill(Qt::white);
    QPainter p(&d.frame);
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);

    // Title line: what is shown on the left, where the playback is on the right.
    p.setFont(d.titleFont);
    p.setPen(QColor(30, 30, 30));
    const QRectF text = d.titleRect.adjusted(12, 0, -12, 0);
    const QString where = QStringLiteral("slot %1 / %2").arg(cursor).arg(d.total);
    const double whereWidth = QFontMetricsF(d.titleFont).horizontalAdvance(where);
    p.drawText(text.adjusted(0, 0, -whereWidth - 16, 0), Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetricsF(d.titleFont)
                   .elidedText(d.title, Qt::ElideRight, text.width() - whereWidth - 16));
    p.drawText(text, Qt::AlignRight | Qt::AlignVCenter, where);
    p.setPen(QColor(210, 210, 210));
    p.drawLine(QPointF(0, d.titleRect.bottom() - 0.5),
               QPointF(d.logical.width(), d.titleRect.bottom() - 0.5));

    d.gantt->setCursorSlot(cursor);
    const auto [first, count] = ganttWindow(cursor, d.total, d.gantt->timeline()->params);
    d.gantt->setVisibleRange(first, first + count);
    p.save();
    p.translate(d.ganttRect.topLeft());
    d.gantt->paintChart(p, d.ganttRect.size().toSize());
    p.restore();

    if (d.loss) {
        d.loss->setCursorSlot(cursor);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        d.paintCaption(p, d.lossRect, d.lossCaption);
        // Drawn into the panel below the caption, scaled down should the widget's minimum
        // size have kept it larger.
        QWidget* plot = d.loss->plot();
        const QRectF room = d.lossRoom();
        const double shrink = d.lossShrink();
        p.save();
        p.translate(room.topLeft());
        p.scale(shrink, shrink);
        plot->render(&p, QPoint(), QRegion(), QWidget::DrawChildren);
        p.restore();
    }
    if (d.heatmap) {
        if (d.heatmapMethod >= 0) {
            d.heatmap->setCursorUpdate(
                d.snapshot->runs()[static_cast<size_t>(d.heatmapMethod)].updatesBefore(cursor),
                cursor);
        }
        d.paintCaption(p, d.heatmapRect, d.heatmapCaption);
        p.save();
        p.translate(d.heatmapRect.topLeft() + QPointF(0, d.captionHeight()));
        d.heatmap->paintChart(
            p, QSizeF(d.heatmapRect.width(), d.heatmapRect.height() - d.captionHeight()).toSize());
        p.restore();
        p.setPen(QColor(210, 210, 210));
        p.drawLine(QPointF(d.heatmapRect.left() + 0.5, d.heatmapRect.top() + 4),
                   QPointF(d.heatmapRect.left() + 0.5, d.heatmapRect.bottom() - 4));
    }
    if (d.loss) {
        p.setPen(QColor(210, 210, 210));
        p.drawLine(QPointF(0, d.lossRect.top() + 0.5),
                   QPointF(d.logical.width(), d.lossRect.top() + 0.5));
    }
    p.end();
    return d.frame;
}

}  // namespace pipelens::ui

#include "figure_chart.hpp"

#include <QAreaSeries>
#include <QChart>
#include <QGraphicsScene>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QPen>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "charts/chart_support.hpp"

namespace pipelens::ui {
namespace {

const QSize kFigureSize(960, 620);
constexpr double kPngScale = 1.5;
constexpr double kLogStageMargin = 1.2;

// Okabe-Ito, then black and grey: distinguishable under the common colour-vision deficiencies.
QColor seriesColour(int i) {
    static const QRgb colours[] = {0xff000000, 0xff0072b2, 0xffe69f00, 0xff009e73,
                                   0xffd55e00, 0xffcc79a7, 0xff56b4e9, 0xff999999};
    return QColor::fromRgba(colours[static_cast<std::size_t>(i) % std::size(colours)]);
}

// A log x axis is always the stage count S (E1, E4): ticks on powers of two and a range that
// hugs the data, so S = 2 ... 128 is not drawn out to the next decade (1000).
QAbstractAxis* makeLogStageAxis(const QString& title, double lo, double hi) {
    auto* a = new QLogValueAxis;
    a->setBase(2.0);
    a->setLabelFormat("%g");
    a->setRange(lo / kLogStageMargin, hi * kLogStageMargin);
    a->setMinorTickCount(0);
    a->setTitleText(title);
    return a;
}

}  // namespace

// Of the steps of 1, 2, 2.5 or 5 times a power of ten that cover [lo, hi] in 4 to 10 intervals,
// the one that leaves the least empty space (on a tie, more intervals), with the range rounded
// out to it. QValueAxis::applyNiceNumbers chose coarser steps: E5's 2,080 slots were drawn on an
// axis to 3,000 in 4 ticks.
LinearTicks linearTicks(double lo, double hi) {
    constexpr int kMinIntervals = 4, kMaxIntervals = 10;
    if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo, lo + 1, 2};
    const double decade = std::pow(10.0, std::floor(std::log10((hi - lo) / kMaxIntervals)));
    LinearTicks best{lo, hi, 2};
    double bestEmpty = INFINITY;
    for (const double scale : {1.0, 10.0}) {
        for (const double m : {1.0, 2.0, 2.5, 5.0}) {
            const double step = m * scale * decade;
            const double a = std::floor(lo / step + 1e-9) * step;
            const double b = std::ceil(hi / step - 1e-9) * step;
            const int intervals = static_cast<int>(std::lround((b - a) / step));
            if (intervals < kMinIntervals || intervals > kMaxIntervals) continue;
            const double empty = (b - a) - (hi - lo);
            if (empty < bestEmpty - 1e-9 * step) {
                best = {a, b, intervals + 1};
                bestEmpty = empty;
            }
        }
    }
    return best;
}

namespace {

QAbstractAxis* makeAxis(bool log, const QString& title, double lo, double hi) {
    if (log) {
        auto* a = new QLogValueAxis;
        a->setBase(10.0);
        a->setLabelFormat(hi / lo > 1e3 ? "%.0e" : "%g");
        // Whole decades around the data so the ticks land on powers of ten.
        a->setRange(std::pow(10.0, std::floor(std::log10(lo))),
                    std::pow(10.0, std::ceil(std::log10(hi))));
        a->setMinorTickCount(-1);
        a->setTitleText(title);
        return a;
    }
    auto* a = new QValueAxis;
    const LinearTicks t = linearTicks(lo, hi);
    a->setRange(t.lo, t.hi);
    a->setTickCount(t.count);
    a->setLabelFormat("%g");
    a->setTitleText(title);
    return a;
}

// Vertical mean +- sd bars in the series' colour, kept out of the legend. On a log axis the
// lower end is held above zero (a bar reaching zero has no place there).
void addErrorBars(QChart* chart, const FigureSeries& s, bool logY, const QPen& pen,
                  QAbstractAxis* ax, QAbstractAxis* ay) {
    for (std::size_t i = 0; i < s.yError.size() && i < s.x.size(); ++i) {
        if (!(s.yError[i] > 0)) continue;
        const double lo =
            logY ? std::max(s.y[i] - s.yError[i], s.y[i] * 1e-2) : s.y[i] - s.yError[i];
        auto* bar = new QLineSeries;
        bar->append(s.x[i], lo);
        bar->append(s.x[i], s.y[i] + s.yError[i]);
        QPen thin(pen);
        thin.setWidthF(1.0);
        thin.setStyle(Qt::SolidLine);
        bar->setPen(thin);
        chart->addSeries(bar);
        bar->attachAxis(ax);
        bar->attachAxis(ay);
        for (QLegendMarker* m : chart->legend()->markers(bar)) m->setVisible(false);
    }
}

// The mean +- sd band of a curve over seeds, in the series' colour made translucent, behind the
// curve and out of the legend. On a log axis the lower edge is held at 1 % of the mean.
void addBand(QChart* chart, const FigureSeries& s, bool logY, const QColor& colour,
             QAbstractAxis* ax, QAbstractAxis* ay) {
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    for (std::size_t i = 0; i < s.yError.size() && i < s.x.size(); ++i) {
        const double lo =
            logY ? std::max(s.y[i] - s.yError[i], s.y[i] * 1e-2) : s.y[i] - s.yError[i];
        upper->append(s.x[i], s.y[i] + s.yError[i]);
        lower->append(s.x[i], lo);
    }
    auto* area = new QAreaSeries(upper, lower);
    upper->setParent(area);
    lower->setParent(area);
    QColor fill(colour);
    fill.setAlpha(50);
    area->setBrush(fill);
    area->setPen(Qt::NoPen);
    chart->addSeries(area);
    area->attachAxis(ax);
    area->attachAxis(ay);
    for (QLegendMarker* m : chart->legend()->markers(area)) m->setVisible(false);
}

}  // namespace

QChart* buildFigureChart(const FigurePanel& panel) {
    auto* chart = new QChart;
    chart->setTitle(QString::fromStdString(panel.title));
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignRight);
    chart->setBackgroundBrush(Qt::white);
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (const FigureSeries& s : panel.series) {
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            if (panel.logX && !(s.x[i] > 0)) continue;
            if (panel.logY && !(s.y[i] > 0)) continue;
            xlo = std::min(xlo, s.x[i]);
            xhi = std::max(xhi, s.x[i]);
            const double err = i < s.yError.size() ? s.yError[i] : 0.0;
            ylo = std::min(ylo, s.y[i]);
            yhi = std::max(yhi, s.y[i] + err);
        }
    }
    if (!(xlo < xhi)) xhi = xlo + 1;
    if (!(ylo < yhi)) yhi = ylo * 2 + 1;
    const QString xTitle = QString::fromStdString(panel.xTitle);
    QAbstractAxis* ax =
        panel.logX ? makeLogStageAxis(xTitle, xlo, xhi) : makeAxis(false, xTitle, xlo, xhi);
    QAbstractAxis* ay = makeAxis(panel.logY, QString::fromStdString(panel.yTitle), ylo, yhi);
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    int colour = 0;
    for (const FigureSeries& s : panel.series) {
        auto* line = new QLineSeries;
        line->setName(QString::fromStdString(s.name));
        QList<QPointF> points;
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            if ((panel.logX && !(s.x[i] > 0)) || (panel.logY && !(s.y[i] > 0))) continue;
            points.append(QPointF(s.x[i], s.y[i]));
        }
        line->replace(points);
        if (s.band) addBand(chart, s, panel.logY, seriesColour(colour), ax, ay);
        QPen pen(seriesColour(colour++));
        pen.setWidthF(s.reference ? 1.5 : 2.0);
        if (s.reference) pen.setStyle(Qt::DashLine);
        line->setPen(pen);
        if (s.markers) {
            line->setPointsVisible(true);
            line->setMarkerSize(5.0);
        }
        chart->addSeries(line);
        line->attachAxis(ax);
        line->attachAxis(ay);
        if (!s.band) addErrorBars(chart, s, panel.logY, pen, ax, ay);
    }
    return chart;
}

bool exportFigure(const FigurePanel& panel, const QString& folder, QString* error) {
    QGraphicsScene scene;
    QChart* chart = buildFigureChart(panel);  // owned by the scene
    scene.addItem(chart);
    chart->setGeometry(QRectF(QPointF(0, 0), QSizeF(kFigureSize)));
    scene.setSceneRect(chart->geometry());
    const chart::PaintFunction paint = [&](QPainter& p) {
        p.setRenderHint(QPainter::Antialiasing);
        p.fillRect(QRectF(QPointF(0, 0), QSizeF(kFigureSize)), Qt::white);
        scene.render(&p, QRectF(QPointF(0, 0), QSizeF(kFigureSize)), scene.sceneRect());
    };
    const QString base = folder + QLatin1Char('/') + QString::fromStdString(panel.file);
    return chart::exportPngImage(base + ".png", kFigureSize, kPngScale, paint, error) &&
           chart::exportSvgImage(base + ".svg", kFigureSize, QString::fromStdString(panel.title),
                                 paint, error);
}

}  // namespace pipelens::ui

#include "charts/figure_strip.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSet>
#include <QStackedBarSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "charts/axis_ticks.hpp"
#include "charts/delay_by_stages.hpp"
#include "charts/method_colours.hpp"
#include "charts/widget_export.hpp"
#include "controls/fitting_scroll_area.hpp"
#include "schedule/delays.hpp"
#include "util/csv_writer.hpp"

namespace pipelens::ui {
namespace {

constexpr int kDelayVsStagesEvery = 32;
constexpr int kMinFigureWidth = 150;
constexpr int kMinFigureHeight = 185;  // title, legend and axes with room for the plot  // every S
                                       // up to here; beyond, a few S and the current

QChartView* smallChart(const QString& title, QWidget* parent) {
    auto* chart = new QChart;
    chart->setTitle(title);
    QFont f = chart->titleFont();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    f.setBold(true);
    chart->setTitleFont(f);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->legend()->setAlignment(Qt::AlignBottom);
    QFont lf = chart->legend()->font();
    lf.setPointSizeF(lf.pointSizeF() * 0.75);
    chart->legend()->setFont(lf);
    chart->legend()->setMarkerShape(QLegend::MarkerShapeCircle);
    chart->setAnimationOptions(QChart::NoAnimation);
    auto* view = new QChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(kMinFigureWidth, kMinFigureHeight);
    return view;
}

void clearChart(QChart* c) {
    c->removeAllSeries();
    for (QAbstractAxis* a : c->axes()) {
        c->removeAxis(a);
        delete a;
    }
}

QFont smallFont(const QFont& base) {
    QFont f = base;
    f.setPointSizeF(f.pointSizeF() * 0.8);
    return f;
}

// A method's compact name; where the experiment has several of one method, the parameter that
// tells them apart ("LSGD H=2", "LSGD R=4 H=2", "RPD δ=60"), with "#k" only as a last resort.
QString shortName(const RunSnapshot& s, size_t i) {
    const MethodSpec& spec = s.runs()[i].spec;
    const int stages = s.experiment.config.stages;
    QString name = QString::fromUtf8(methodInfo(spec.method).shortLabel);
    std::vector<const MethodSpec*> same;
    int index = 0;
    for (size_t j = 0; j < s.runs().size(); ++j) {
        if (s.runs()[j].spec.method != spec.method) continue;
        if (j < i) ++index;
        same.push_back(&s.runs()[j].spec);
    }
    if (same.size() < 2) return name;
    // The parameters in which the methods of this kind differ, with `m`'s values.
    const auto partsOf = [&](const MethodSpec& m) {
        const auto differ = [&](auto field) {
            return !std::all_of(same.begin(), same.end(),
                                [&](const MethodSpec* o) { return field(*o) == field(m); });
        };
        const auto r = [&](const MethodSpec& o) { return replicasFor(o, stages); };
        const auto h = [](const MethodSpec& o) { return o.localSteps; };
        const auto d = [&](const MethodSpec& o) { return deltaFor(o, stages); };
        const auto g = [&](const MethodSpec& o) { return flushGroupFor(o, stages); };
        QStringList parts;
        if (m.method == Method::LocalSgd && differ(r)) parts << QStringLiteral("R=%1").arg(r(m));
        if (m.method == Method::LocalSgd && differ(h)) parts << QStringLiteral("H=%1").arg(h(m));
        if (m.method == Method::RandomizedPipeDream && differ(d))
            parts << QStringLiteral("δ=%1").arg(d(m));
        if (m.method == Method::FillDrain && differ(g)) parts << QStringLiteral("G=%1").arg(g(m));
        return parts.join(' ');
    };
    const QString mine = partsOf(spec);
    const auto alike = std::count_if(same.begin(), same.end(),
                                     [&](const MethodSpec* m) { return partsOf(*m) == mine; });
    if (!mine.isEmpty() && alike == 1) return name + ' ' + mine;
    return QStringLiteral("%1 #%2").arg(name).arg(index + 1);
}

void attach(QChart* c, QAbstractAxis* x, QAbstractAxis* y) {
    x->setLabelsFont(smallFont(x->labelsFont()));
    y->setLabelsFont(smallFont(y->labelsFont()));
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries* s : c->series()) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
}

// The S the max-delay-vs-S figure shows: every S from 2 to 32, and up to the current S (when
// larger) a dozen round values and the current S itself.
std::vector<int> delayVsStagesPoints(int current) {
    std::vector<int> out;
    for (int s = 2; s <= kDelayVsStagesEvery; ++s) out.push_back(s);
    if (current <= kDelayVsStagesEvery) return out;
    const int step = static_cast<int>(integerStep((current - kDelayVsStagesEvery) / 12.0));
    for (int s = (kDelayVsStagesEvery / step + 1) * step; s < current; s += step) out.push_back(s);
    out.push_back(current);
    return out;
}

}  // namespace

FigureStrip::FigureStrip(QWidget* parent)
    : QWidget(parent), delayWorker_(std::make_unique<DelayByStagesWorker>()) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    const QStringList titles = {tr("Utilization / bubble (%)"), tr("Delays (max, mean)"),
                                tr("Peak stashed copies per stage"),
                                tr("PipeDream max delay vs S")};
    const QStringList tips = {
        tr("Busy share of the stage-slots and the bubble (idle) share, per pipeline method"),
        tr("Measured max and mean delay over the second half of each run; for PipeDream "
           "(NOAM = S) dashed marks at its steady-state S² − S/2 (S² − S/2 − ½ for odd S) and "
           "S²/2. Other methods have other delays and no mark. Delays depend only on the "
           "schedule, so they are shown even for a run that diverged."),
        tr("The most weight copies each stage holds at once (forward done, backward not yet)"),
        tr("Measured steady-state max delay of PipeDream (N = 10·S) against S² − S/2; the "
           "dot is the current S")};
    for (int i = 0; i < titles.size(); ++i) {
        QChartView* v = smallChart(titles[i], this);
        v->setToolTip(tips[i]);
        charts_ << v;
        layout->addWidget(v, 1);
    }
    numbers_ = new QLabel(this);
    numbers_->setTextFormat(Qt::RichText);
    numbers_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    numbers_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    numbers_->setToolTip(tr("Run lengths from the engine's timelines beside their closed forms"));
    numbers_->setMargin(2);
    numbers_->setMinimumWidth(200);
    numbers_->setWordWrap(true);
    // Never cut: a table taller than the strip scrolls.
    layout->addWidget(new FittingScrollArea(numbers_, Qt::Vertical, this), 1);
}

FigureStrip::~FigureStrip() = default;

void FigureStrip::add(const QString& figure, const QString& method, double shown) {
    values_.push_back({figure, method, shown});
}

double FigureStrip::value(const QString& figure, const QString& method) const {
    for (const Value& v : values_) {
        if (v.figure == figure && v.method == method) return v.shown;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

void FigureStrip::setSnapshot(SnapshotPtr snapshot) {
    snapshot_ = std::move(snapshot);
    values_.clear();
    for (QChartView* v : charts_) clearChart(v->chart());
    numbers_->clear();
    if (!snapshot_) return;
    fillUtilization(*snapshot_);
    fillDelays(*snapshot_);
    fillStash(*snapshot_);
    fillDelayVsStages(*snapshot_);
    fillNumbers(*snapshot_);
    fitChartsToText();
}

void FigureStrip::showPending(const QString& text) {
    setSnapshot(nullptr);
    numbers_->setText(text);
}

void FigureStrip::fitChartsToText() {
    for (QChartView* v : charts_) {
        const QChart* c = v->chart();
        // Qt Charts ends a title, legend name or axis label that does not fit in "...": room
        // for the title, the legend's names in one row, and every category label, plus the
        // chart's own paddings (measured: about 40 px besides the margins).
        constexpr double kPadding = 48.0;
        double needed = QFontMetrics(c->titleFont()).horizontalAdvance(c->title());
        const QFontMetrics legendFont(c->legend()->font());
        double legend = 0.0;
        QSet<QString> names;  // the formula marks share one entry (the others are hidden)
        for (const QLegendMarker* m : c->legend()->markers()) names.insert(m->label());
        for (const QString& name : names)
            legend += legendFont.horizontalAdvance(name) + 2.0 * legendFont.height() + 12;
        needed = std::max(needed, legend);
        for (QAbstractAxis* axis : c->axes(Qt::Horizontal)) {
            auto* categories = qobject_cast<QBarCategoryAxis*>(axis);
            if (!categories) continue;
            const QFontMetrics fm(axis->labelsFont());
            int widest = 0;
            for (const QString& label : categories->categories())
                widest = std::max(widest, fm.horizontalAdvance(label));
            needed = std::max(needed, 70.0 + categories->count() * (widest + 24.0));
        }
        v->setMinimumWidth(
            std::max(kMinFigureWidth, static_cast<int>(std::ceil(needed + kPadding))));
    }
}

void FigureStrip::fillUtilization(const RunSnapshot& s) {
    QChart* c = charts_[0]->chart();
    auto* busy = new QBarSet(tr("busy"));
    auto* bubble = new QBarSet(tr("bubble"));
    // Neutral greys: these bars are shares, not a method (the method colours are its own).
    busy->setColor(QColor(0x4d, 0x4d, 0x4d));
    bubble->setColor(QColor(0xcc, 0xcc, 0xcc));
    QStringList categories;
    for (size_t i = 0; i < s.runs().size(); ++i) {
        const auto& u = s.result(i).utilization;
        if (!u) continue;
        categories << shortName(s, i);
        *busy << 100.0 * u->overall;
        *bubble << 100.0 * u->bubbleFraction;
        add("utilization", s.label(i), 100.0 * u->overall);
        add("bubble", s.label(i), 100.0 * u->bubbleFraction);
    }
    auto* series = new QStackedBarSeries;
    series->append(busy);
    series->append(bubble);
    c->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    auto* y = new QValueAxis;
    setIntegerTicks(y, 0, 100, 2);
    attach(c, x, y);
}

void FigureStrip::fillDelays(const RunSnapshot& s) {
    QChart* c = charts_[1]->chart();
    auto* measured = new QBarSet(tr("measured"));
    measured->setColor(QColor(0x80, 0x80, 0x80));  // several methods' bars: no method's colour
    QStringList categories;
    double top = 1.0;
    int withDelays = 0;
    for (size_t i = 0; i < s.runs().size(); ++i) withDelays += s.result(i).delayStats ? 1 : 0;
    // Each method beside its own closed form: PipeDream's S² − S/2 and S²/2 are drawn as marks
    // over its bars; fill-drain and sequential SGD have none here, so they get none.
    std::vector<QLineSeries*> marks;
    auto mark = [&](double category, double value) {
        auto* line = new QLineSeries;
        line->setName(tr("PipeDream formula"));
        QPen pen(Qt::black);
        pen.setWidthF(2.0);
        pen.setStyle(Qt::DashLine);
        line->setPen(pen);
        line->append(category - 0.4, value);
        line->append(category + 0.4, value);
        marks.push_back(line);
    };
    for (size_t i = 0; i < s.runs().size(); ++i) {
        const auto& d = s.result(i).delayStats;
        if (!d) continue;
        const QString name = withDelays > 1 ? shortName(s, i) + ' ' : QString();
        categories << name + tr("max") << name + tr("mean");
        *measured << static_cast<double>(d->max) << d->mean;
        top = std::max(top, static_cast<double>(d->max));
        add("max delay", s.label(i), static_cast<double>(d->max));
        add("mean delay", s.label(i), d->mean);
        const auto& tl = s.result(i).timeline;
        if (!tl || !pipeDreamFormulaApplies(tl->params)) continue;
        mark(categories.size() - 2, d->formulaMax);
        mark(categories.size() - 1, d->formulaMean);
        top = std::max(top, d->formulaMax);
        add("formula max delay", s.label(i), d->formulaMax);
        add("formula mean delay", s.label(i), d->formulaMean);
    }
    auto* series = new QBarSeries;
    series->append(measured);
    series->setLabelsVisible(categories.size() <= 4);
    series->setLabelsFormat("@value");
    series->setLabelsPrecision(6);  // 20352, not 2.04e+04 (which the bar clipped)
    measured->setLabelFont(smallFont(measured->labelFont()));
    c->addSeries(series);
    for (QLineSeries* line : marks) c->addSeries(line);
    auto* x = new QBarCategoryAxis;
    x->append(categories.isEmpty() ? QStringList{tr("(no delay table)")} : categories);
    auto* y = new QValueAxis;
    setIntegerTicks(y, 0, top * 1.15, 4);  // room above the bars for their labels
    attach(c, x, y);
    // One legend entry for all the marks.
    const auto markers = c->legend()->markers();
    bool first = true;
    for (QLegendMarker* m : markers) {
        if (m->series()->type() != QAbstractSeries::SeriesTypeLine) continue;
        m->setVisible(first);
        first = false;
    }
}

void FigureStrip::fillStash(const RunSnapshot& s) {
    QChart* c = charts_[2]->chart();
    int stages = 1;
    int top = 1;
    for (size_t i = 0; i < s.runs().size(); ++i) {
        const auto& tl = s.result(i).timeline;
        if (!tl) continue;
        auto* line = new QLineSeries;
        line->setName(shortName(s, i));
        QPen pen(methodColour(s.runs(), i));
        pen.setWidthF(2.0);
        line->setPen(pen);
        line->setPointsVisible(tl->peakStash.size() <= 16);
        for (size_t st = 0; st < tl->peakStash.size(); ++st) {
            line->append(static_cast<double>(st + 1), tl->peakStash[st]);
            add(QStringLiteral("stash stage %1").arg(st + 1), s.label(i), tl->peakStash[st]);
            top = std::max(top, tl->peakStash[st]);
        }
        stages = std::max(stages, static_cast<int>(tl->peakStash.size()));
        c->addSeries(line);
    }
    auto* x = new QValueAxis;
    setIntegerTicks(x, 1, std::max(2, stages), 6);
    x->setRange(1, std::max(2, stages));  // stages count from 1, and end at S
    x->setTitleText(tr("stage"));
    x->setTitleFont(smallFont(x->titleFont()));
    auto* y = new QValueAxis;
    setIntegerTicks(y, 0, top + 1, 3);
    attach(c, x, y);
}

void FigureStrip::refreshDelayVsStages() {
    if (!snapshot_) return;
    std::erase_if(values_, [](const Value& v) {
        return v.figure == "max delay vs S" || v.figure == "formula max delay vs S";
    });
    clearChart(charts_[3]->chart());
    fillDelayVsStages(*snapshot_);
    fitChartsToText();  // the legend's names changed
}

void FigureStrip::fillDelayVsStages(const RunSnapshot& s) {
    QChart* c = charts_[3]->chart();
    const int S = s.experiment.config.stages;
    auto* measured = new QLineSeries;
    measured->setName(tr("max"));
    auto* formula = new QLineSeries;
    formula->setName(tr("S²−S/2"));
    QPen mp(familyColour(Method::PipeDream));  // PipeDream's delays, in PipeDream's colour
    mp.setWidthF(2.5);
    measured->setPen(mp);
    QPen fp(Qt::black);
    fp.setStyle(Qt::DashLine);
    formula->setPen(fp);
    const std::vector<int> points = delayVsStagesPoints(S);
    bool pending = false;
    for (int stages : points) {
        // Up to 32 at once (milliseconds); beyond, what the worker has computed so far.
        const std::optional<DelayStats> known = stages <= kDelayVsStagesEvery
                                                    ? pipeDreamDelayStatsCached(stages)
                                                    : cachedPipeDreamDelayStats(stages);
        formula->append(stages, static_cast<double>(pipeDreamMaxDelayFormula(stages)));
        add("formula max delay vs S", QStringLiteral("S=%1").arg(stages),
            static_cast<double>(pipeDreamMaxDelayFormula(stages)));
        if (!known) {
            pending = true;
            continue;
        }
        const DelayStats& d = *known;
        measured->append(d.stages, static_cast<double>(d.max));
        add("max delay vs S", QStringLiteral("S=%1").arg(d.stages), static_cast<double>(d.max));
    }
    if (pending) {
        measured->setName(tr("max (computing…)"));
        // The figure is drawn again when the worker has the missing S.
        delayWorker_->request(points, [this] {
            QMetaObject::invokeMethod(
                this, [this] { refreshDelayVsStages(); }, Qt::QueuedConnection);
        });
    }
    c->addSeries(measured);
    c->addSeries(formula);
    const int last = points.back();
    const std::optional<DelayStats> current = S >= 2 ? cachedPipeDreamDelayStats(S) : std::nullopt;
    if (current) {
        auto* here = new QScatterSeries;
        here->setName(tr("S = %1").arg(S));
        here->setMarkerSize(9);
        here->setColor(Qt::black);
        here->append(S, static_cast<double>(current->max));
        c->addSeries(here);
    }
    const double top = std::max(1.0, static_cast<double>(pipeDreamMaxDelayFormula(last)));
    auto* x = new QValueAxis;
    setIntegerTicks(x, 0, last, 4);
    x->setTitleText(tr("S"));
    x->setTitleFont(smallFont(x->titleFont()));
    auto* y = new QValueAxis;
    setIntegerTicks(y, 0, top, 3);
    attach(c, x, y);
}

void FigureStrip::fillNumbers(const RunSnapshot& s) {
    const ExperimentConfig& cfg = s.experiment.config;
    const int S = cfg.stages;
    const bool defaultCosts =
        cfg.costs.forwardSlots == 1 && cfg.costs.backwardSlots == 1 && cfg.costs.latencySlots == 0;
    QString html = QStringLiteral(
                       "<b>Run lengths</b> (S = %1)<table cellspacing='0' cellpadding='1'>"
                       "<tr><th align='left'>method</th><th>&nbsp;N</th><th>&nbsp;slots</th>"
                       "<th>&nbsp;busy</th></tr>")
                       .arg(S);
    QStringList closedForms;
    for (size_t i = 0; i < s.runs().size(); ++i) {
        const RunResult& r = s.result(i);
        const MethodRun& plan = s.experiment.methods[i];
        const QString name = shortName(s, i).toHtmlEscaped();
        if (r.timeline && defaultCosts) {
            const int N = static_cast<int>(r.microbatches);
            const ScheduleParams& p = r.timeline->params;
            if (plan.spec.method == Method::PipeDream && p.noam == S) {
                const int f = pipeDreamSlotsFormula(S, N);
                closedForms << QStringLiteral("%1: 2N + 2(S−1) = <b>%2</b>").arg(name).arg(f);
                add("pd slots formula", s.label(i), f);
            } else if (plan.spec.method == Method::LocalSgd && p.replicas == S) {
                const int f = localSgdRoundSlotsFormula(S, p.localSteps);
                closedForms
                    << QStringLiteral("%1: a round is 2SH + 2(S−1) = <b>%2</b>").arg(name).arg(f);
                add("localsgd round slots formula", s.label(i), f);
            }
        }
        const QString slotText = r.timeline ? QString::number(r.timeline->totalSlots)
                                            : QStringLiteral("%1 upd.").arg(r.updates);
        if (r.timeline) add("slots", s.label(i), r.timeline->totalSlots);
        const QString busy = r.utilization
                                 ? QString::number(100.0 * r.utilization->overall, 'f', 1) + "%"
                                 : QStringLiteral("—");
        html += QStringLiteral(
                    "<tr><td>%1</td><td align='right'>&nbsp;%2</td>"
                    "<td align='right'>&nbsp;%3</td><td align='right'>&nbsp;%4</td></tr>")
                    .arg(name)
                    .arg(r.timeline ? QString::number(r.microbatches) : QStringLiteral("—"))
                    .arg(slotText, busy);
    }
    html += "</table>";
    if (!closedForms.isEmpty()) html += "<p>" + closedForms.join("<br>") + "</p>";
    const long long formulaMax = pipeDreamMaxDelayFormula(S);
    add("pd max delay formula", QStringLiteral("S=%1").arg(S), static_cast<double>(formulaMax));
    html += QStringLiteral(
                "<p>PipeDream max delay S² − S/2%1 = <b>%2</b>, "
                "mean ≈ S²/2 = %3</p>")
                .arg(S % 2 ? QStringLiteral(" − ½") : QString())
                .arg(formulaMax)
                .arg(S * S / 2.0);
    if (s.languageModel()) {
        // No f* or L: the model's size and the corpus's say what its loss means.
        if (const CharTransformerProblem* p = s.lmProblem()) {
            const int vocabulary = p->corpus.vocabSize();
            html += tr("<p>Language model: %1 parameters, V = %2 characters (log V = %3 nats), "
                       "M = %4 batches</p>")
                        .arg(static_cast<long long>(p->layout.size()))
                        .arg(vocabulary)
                        .arg(std::log(static_cast<double>(std::max(1, vocabulary))), 0, 'f', 2)
                        .arg(p->train.batches());
        } else {
            html += tr("<p>Language model: computing…</p>");
        }
    } else if (s.planOnly) {
        html += tr("<p>f*, L: computing…</p>");
    } else {
        html += QStringLiteral("<p>f* = %1, L = %2</p>")
                    .arg(QString::number(s.experiment.optimum, 'g', 6))
                    .arg(QString::number(s.experiment.smoothness, 'g', 4));
    }
    numbers_->setText(html);
}

bool FigureStrip::exportPng(const QString& path, double scale, QString* error) {
    return exportWidgetPng(this, path, scale, error);
}

bool FigureStrip::exportSvg(const QString& path, QString* error) {
    return exportWidgetSvg(this, path, error);
}

bool FigureStrip::exportCsv(const QString& path, QString* error) const {
    QByteArray out = "figure,method,value\n";
    for (const Value& v : values_) {
        out += QByteArray::fromStdString(csv::textCell(v.figure.toStdString())) + ',' +
               QByteArray::fromStdString(csv::labelCell(v.method.toStdString())) + ',' +
               QByteArray::number(v.shown, 'g', 17) + '\n';
    }
    return writeTextAtomically(path, out, error);
}

}  // namespace pipelens::ui

#include "charts/figure_strip.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QGridLayout>
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
#include "experiment/output/results.hpp"
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

// The optimizer in a few letters ("SGD", "mom", "Adam"), for names that must stay short.
QString optimizerTag(const OptimizerSpec& o) {
    switch (o.kind) {
        case OptimizerKind::Momentum:
            return QStringLiteral("mom");
        case OptimizerKind::Nesterov:
            return QStringLiteral("Nest");
        case OptimizerKind::Adam:
            return QStringLiteral("Adam");
        case OptimizerKind::AdamW:
            return QStringLiteral("AdamW");
        case OptimizerKind::Sgd:
            break;
    }
    return QStringLiteral("SGD");
}

// The corrector in a few letters ("pred", "pred(PO)", "k=2"; "plain" for none); "" for several
// (their letters would not fit a bar's label: the name falls back to "#k").
QString correctorTag(const CorrectorSpec& c) {
    QStringList tags;
    if (c.prediction)
        tags << (c.steps == PredictionSteps::Exact ? QStringLiteral("pred")
                                                   : QStringLiteral("pred(PO)"));
    if (c.lookahead) tags << QStringLiteral("LA");
    if (c.dc) tags << QStringLiteral("DC");
    if (c.accumulate > 1) tags << QStringLiteral("k=%1").arg(c.accumulate);
    if (c.delayAdaptive) tags << QStringLiteral("DA");
    if (tags.size() > 1) return {};
    return tags.isEmpty() ? QStringLiteral("plain") : tags.front();
}

// A method's compact name; where the experiment has several of one method, the parameter that
// tells them apart ("LSGD H=2", "LSGD R=4 H=2", "RPD δ=60", "PD pred", "PD plain"), with "#k"
// only as a last resort.
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
        const auto opt = [](const MethodSpec& o) { return normalizedOptimizer(o.optimizer); };
        if (differ(opt)) parts << optimizerTag(m.optimizer);
        const auto fix = [](const MethodSpec& o) { return normalizedCorrectors(o.correctors); };
        if (differ(fix) && !correctorTag(m.correctors).isEmpty())
            parts << correctorTag(m.correctors);
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
    auto* layout = new QGridLayout(this);
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
    titles_ = titles;
    for (int i = 0; i < titles.size(); ++i) {
        QChartView* v = smallChart(titles[i], this);
        v->setToolTip(tips[i]);
        charts_ << v;
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
    numbersArea_ = new FittingScrollArea(numbers_, Qt::Vertical, this);
    layout->setSizeConstraint(QLayout::SetNoConstraint);  // minimumSizeHint decides
    placeFigures();
}

int FigureStrip::widestFigure() const {
    int widest = numbersArea_->minimumSizeHint().width();
    for (const QChartView* v : charts_)
        widest = std::max(widest, v->minimumSizeHint().expandedTo(v->minimumSize()).width());
    return widest;
}

void FigureStrip::setWrapped(bool wrapped) {
    wrapped_ = wrapped;
    placeFigures();
}

QSize FigureStrip::minimumSizeHint() const {
    const QSize grid = layout()->minimumSize();
    return wrapped_ ? QSize(widestFigure(), grid.height()) : grid;
}

void FigureStrip::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (wrapped_) placeFigures();
}

void FigureStrip::placeFigures() {
    QList<QWidget*> items;
    for (QChartView* v : charts_) items << v;
    items << numbersArea_;
    const auto count = static_cast<int>(items.size());
    auto* grid = qobject_cast<QGridLayout*>(layout());
    const int spacing = grid->spacing();
    const int columns =
        wrapped_ ? std::clamp((width() + spacing) / std::max(1, widestFigure() + spacing), 1, count)
                 : count;
    if (columns == columns_ && grid->count() == count) return;
    columns_ = columns;
    for (QWidget* item : items) grid->removeWidget(item);
    for (int r = 0; r < grid->rowCount(); ++r) grid->setRowMinimumHeight(r, 0);
    for (int c = 0; c < grid->columnCount(); ++c) grid->setColumnStretch(c, 0);
    for (int i = 0; i < count; ++i) {
        grid->addWidget(items[i], i / columns, i % columns);
        if (wrapped_) grid->setRowMinimumHeight(i / columns, kGridRowHeight);
    }
    for (int c = 0; c < columns; ++c) grid->setColumnStretch(c, 1);
    updateGeometry();
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
    setCursorSlot(cursorSlot_);
    fitChartsToText();
}

void FigureStrip::setCursorSlot(int slot) {
    cursorSlot_ = slot;
    const bool note = snapshot_ && slot >= 0 && slot < snapshot_->totalSlots;
    if (note == wholeRunNote_) return;
    wholeRunNote_ = note;
    applyTitles();  // no width changes: fitChartsToText measures the titles without the note
}

void FigureStrip::applyTitles() {
    // The first three figures are the run's (the fourth, PipeDream's delays against S, is not).
    // The note is a second, plain line of the title: the figures keep their widths.
    for (int i = 0; i < charts_.size(); ++i) {
        const bool ofTheRun = i < 3;
        charts_[i]->chart()->setTitle(
            wholeRunNote_ && ofTheRun ? QStringLiteral("<div align='center'>%1<br><span "
                                                       "style='font-weight:normal'>%2</span></div>")
                                            .arg(titles_[i].toHtmlEscaped(), tr("whole run"))
                                      : titles_[i]);
    }
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
        const int index = static_cast<int>(charts_.indexOf(v));
        double needed = QFontMetrics(c->titleFont()).horizontalAdvance(titles_[index]);
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
    if (wrapped_) placeFigures();  // wider figures: perhaps fewer a row
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
    // Three methods or more, or long names ("PD pred(PO)"): one bar each (a max and a mean bar
    // each, "PD pred(PO) mean", would make the figure wider than a small screen's tab).
    bool longNames = false;
    for (size_t i = 0; i < s.runs().size(); ++i) {
        if (s.result(i).delayStats && withDelays > 1) longNames |= shortName(s, i).size() > 6;
    }
    const bool compact = withDelays > 2 || longNames;
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
        // Several methods (the schedule family): one bar each, its largest delay, so the figure
        // stays narrow enough for a small screen; the means stay in the numbers table and CSV.
        if (compact) {
            categories << shortName(s, i);
            *measured << static_cast<double>(d->max);
        } else {
            categories << name + tr("max") << name + tr("mean");
            // Delays are whole block updates; a mean is shown with one decimal (its bar's label).
            *measured << static_cast<double>(d->max) << std::round(d->mean * 10.0) / 10.0;
        }
        top = std::max(top, static_cast<double>(d->max));
        add("max delay", s.label(i), static_cast<double>(d->max));
        add("mean delay", s.label(i), d->mean);
        const auto& tl = s.result(i).timeline;
        if (!tl || !pipeDreamFormulaApplies(tl->params)) continue;
        if (compact) {
            mark(categories.size() - 1, d->formulaMax);
        } else {
            mark(categories.size() - 2, d->formulaMax);
            mark(categories.size() - 1, d->formulaMean);
        }
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
    y->setTitleText(tr("block updates"));  // SPEC §3: delay(k, j) = k − h(m, j)
    // With many methods only each one's largest delay is drawn: the title says so.
    c->setTitle(compact ? tr("Delays (max)") : tr("Delays (max, mean)"));
    y->setTitleFont(smallFont(y->titleFont()));
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
    // Methods whose peaks are equal at every stage draw one line over another: each such group's
    // first is drawn widest and each later one narrower and dashed on top, so every colour shows
    // along the line, and a later one's legend name says which it equals ("LSGD H=2 (= PD)").
    std::vector<size_t> withTimeline;
    for (size_t i = 0; i < s.runs().size(); ++i) {
        if (s.result(i).timeline) withTimeline.push_back(i);
    }
    const auto peaks = [&](size_t i) -> const std::vector<int>& {
        // Program schedules' own weight versions (peakStash is the backend's allocation).
        const Timeline& tl = *s.result(i).timeline;
        return tl.weightVersions.empty() ? tl.peakStash : tl.weightVersions;
    };
    for (size_t k = 0; k < withTimeline.size(); ++k) {
        const size_t i = withTimeline[k];
        const std::vector<int>& stash = peaks(i);
        int before = 0;  // equal lines drawn earlier
        int after = 0;   // equal lines drawn later
        std::optional<size_t> first;
        for (size_t other = 0; other < withTimeline.size(); ++other) {
            if (other == k || peaks(withTimeline[other]) != stash) continue;
            if (other < k) {
                ++before;
                if (!first) first = withTimeline[other];
            } else {
                ++after;
            }
        }
        auto* line = new QLineSeries;
        line->setName(first ? tr("%1 (= %2)").arg(shortName(s, i), shortName(s, *first))
                            : shortName(s, i));
        QPen pen(methodColour(s.runs(), i));
        pen.setWidthF(2.0 + 2.5 * after);
        if (before > 0) pen.setStyle(Qt::DashLine);  // the line under it shows in the gaps
        line->setPen(pen);
        line->setPointsVisible(stash.size() <= 16 && before == 0);
        for (size_t st = 0; st < stash.size(); ++st) {
            line->append(static_cast<double>(st + 1), stash[st]);
            add(QStringLiteral("stash stage %1").arg(st + 1), s.label(i), stash[st]);
            top = std::max(top, stash[st]);
        }
        stages = std::max(stages, static_cast<int>(stash.size()));
        c->addSeries(line);
    }
    auto* x = new QValueAxis;
    setIntegerTicks(x, 1, std::max(2, stages), 6);
    x->setRange(1, std::max(2, stages));  // stages count from 1, and end at S
    x->setTitleText(tr("stage"));
    x->setTitleFont(smallFont(x->titleFont()));
    auto* y = new QValueAxis;
    setIntegerTicks(y, 0, top + 1, 3);
    y->setTitleText(tr("copies"));
    y->setTitleFont(smallFont(y->titleFont()));
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
    y->setTitleText(tr("block updates"));
    y->setTitleFont(smallFont(y->titleFont()));
    attach(c, x, y);
}

void FigureStrip::fillNumbers(const RunSnapshot& s) {
    const ExperimentConfig& cfg = s.experiment.config;
    const int S = cfg.stages;
    const bool defaultCosts =
        cfg.costs.forwardSlots == 1 && cfg.costs.backwardSlots == 1 && cfg.costs.latencySlots == 0;
    // Under the truncate budget rule a pipeline runs a longer timeline (N microbatches) cut at
    // the budget: its table shows the microbatches that finished beside that N.
    int cutAt = -1;
    for (const MethodRun& m : s.experiment.methods) {
        if (m.pipeline() && m.truncateSlots > 0) cutAt = m.truncateSlots;
    }
    const bool cut = cutAt >= 0;
    QString html = QStringLiteral(
                       "<b>Run lengths</b> (S = %1)<table cellspacing='0' cellpadding='1'>"
                       "<tr><th align='left'>method</th>%2<th>&nbsp;N</th><th>&nbsp;slots</th>"
                       "<th>&nbsp;busy</th></tr>")
                       .arg(S)
                       .arg(cut ? QStringLiteral("<th>&nbsp;finished</th>") : QString());
    QStringList closedForms;
    for (size_t i = 0; i < s.runs().size(); ++i) {
        const RunResult& r = s.result(i);
        const MethodRun& plan = s.experiment.methods[i];
        const QString name = shortName(s, i).toHtmlEscaped();
        if (r.timeline && defaultCosts) {
            const int N = static_cast<int>(r.microbatches);
            const ScheduleParams& p = r.timeline->params;
            if (plan.spec.method == Method::PipeDream && p.noam == S) {
                // Cut, the run is shorter than the closed form: it is the uncut timeline's.
                const int f = pipeDreamSlotsFormula(S, N);
                closedForms << (plan.truncateSlots > 0
                                    ? QStringLiteral("%1 uncut run: 2N + 2(S−1) = <b>%2</b>")
                                    : QStringLiteral("%1: 2N + 2(S−1) = <b>%2</b>"))
                                   .arg(name)
                                   .arg(f);
                add("pd slots formula", s.label(i), f);
            } else if (plan.spec.method == Method::LocalSgd && p.replicas == S) {
                const int f = localSgdRoundSlotsFormula(S, p.localSteps);
                closedForms
                    << QStringLiteral("%1: a round is 2SH + 2(S−1) = <b>%2</b>").arg(name).arg(f);
                add("localsgd round slots formula", s.label(i), f);
            }
        }
        const std::optional<RunLengthCounts> counts = runLengthCounts(s.experiment.methods[i]);
        QString finished;
        if (cut) {
            finished = counts ? QString::number(counts->microbatchesFinished) : QStringLiteral("—");
            finished = QStringLiteral("<td align='right'>&nbsp;%1</td>").arg(finished);
        }
        if (counts) {
            add("microbatches planned", s.label(i),
                static_cast<double>(counts->microbatchesPlanned));
            add("microbatches finished", s.label(i),
                static_cast<double>(counts->microbatchesFinished));
        }
        const QString slotText = r.timeline ? QString::number(r.timeline->totalSlots)
                                            : QStringLiteral("%1&nbsp;upd.").arg(r.updates);
        if (r.timeline) add("slots", s.label(i), r.timeline->totalSlots);
        const QString busy = r.utilization
                                 ? QString::number(100.0 * r.utilization->overall, 'f', 1) + "%"
                                 : QStringLiteral("—");
        html += QStringLiteral(
                    "<tr><td>%1</td>%2<td align='right'>&nbsp;%3</td>"
                    "<td align='right'>&nbsp;%4</td><td align='right'>&nbsp;%5</td></tr>")
                    .arg(name, finished,
                         r.timeline ? QString::number(r.microbatches) : QStringLiteral("—"),
                         slotText, busy);
    }
    html += "</table>";
    if (cut) {
        add("cut at slot", QString(), cutAt);
        html += tr("<p>cut at slot %1 (truncate): N is the uncut timeline's; microbatches in "
                   "flight at the cut never finish</p>")
                    .arg(cutAt);
    }
    if (cfg.budget.rule == BudgetRule::Reach && cfg.budget.compare == BudgetCompare::Time) {
        // Under reach every pipeline run is whole: its slots column is where it ended.
        const int budget = s.experiment.budget.slotBudget;
        add("reach budget", QString(), budget);
        html += tr("<p>reach: each pipeline method runs, whole, the smallest N whose run lasts "
                   "at least %1 slots, so it may end after slot %1</p>")
                    .arg(budget);
    }
    if (!closedForms.isEmpty()) html += "<p>" + closedForms.join("<br>") + "</p>";
    const long long formulaMax = pipeDreamMaxDelayFormula(S);
    add("pd max delay formula", QStringLiteral("S=%1").arg(S), static_cast<double>(formulaMax));
    html += QStringLiteral(
                "<p>PipeDream max delay S² − S/2%1 = <b>%2</b>, "
                "mean ≈ S²/2 = %3</p>")
                .arg(S % 2 ? QStringLiteral(" − ½") : QString())
                .arg(formulaMax)
                .arg(S * S / 2.0, 0, 'f', 1);
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

#include "charts/loss_chart.hpp"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGraphicsEllipseItem>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QSettings>
#include <QToolButton>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "charts/line_legend.hpp"
#include "charts/method_colours.hpp"
#include "charts/widget_export.hpp"
#include "experiment/run/run_warnings.hpp"
#include "models/uncorrected_twin.hpp"
#include "util/csv_writer.hpp"

namespace pipelens::ui {
namespace {

constexpr int kMaxPointsPerSeries = 2500;
constexpr double kMaxSmoothing = 0.99;
const char* const kSmoothingKey = "lossChart/smoothing";

// Pin N's dash pattern (in pen widths): dashes, dots, dash-dot, … distinct for kMaxPins pins.
QList<qreal> pinDashes(int number) {
    static const QList<QList<qreal>> patterns{
        {4, 3}, {1, 2}, {6, 2, 1, 2}, {8, 4}, {2, 4}, {6, 2, 1, 2, 1, 2}, {12, 3}, {3, 2, 3, 6}};
    return patterns[static_cast<qsizetype>(number - 1) % patterns.size()];
}

// Whether runs[i] is another run's uncorrected twin.
bool isTwin(const std::vector<MethodRun>& runs, size_t i) {
    std::vector<MethodSpec> specs;
    specs.reserve(runs.size());
    for (const MethodRun& r : runs) specs.push_back(r.spec);
    return i < specs.size() && uncorrectedPartners(specs)[i] >= 0;
}

QString shortNumber(double v) {
    return QString::number(v, 'g', 3);
}

// 1, 2 or 5 times a power of ten, at least `raw`.
double niceStep(double raw) {
    if (!(raw > 0.0)) return 1.0;
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0}) {
        if (m * decade >= raw) return m * decade;
    }
    return 10.0 * decade;
}

// Short legend entries ("RPD δ=60"): the full labels do not fit side by side.
QString shortName(const MethodRun& plan);

// What the default label adds for the optimizer and the correctors (" + Adam + prediction
// (exact s)"), so that two runs of one method that differ only there have different names.
QString trainingSuffix(const MethodRun& plan) {
    MethodSpec bare = plan.spec;
    bare.label.clear();
    bare.optimizer = OptimizerSpec{};
    bare.correctors = CorrectorSpec{};
    MethodSpec full = plan.spec;
    full.label.clear();
    const std::string base = defaultMethodLabel(bare, plan.schedule.stages);
    const std::string all = defaultMethodLabel(full, plan.schedule.stages);
    if (all.size() <= base.size() || all.compare(0, base.size(), base) != 0) return {};
    return QString::fromStdString(all.substr(base.size()));
}

QString legendName(const MethodRun& plan) {
    if (!plan.spec.label.empty()) return QString::fromStdString(plan.spec.label);
    return shortName(plan) + trainingSuffix(plan);
}

QString shortName(const MethodRun& plan) {
    const MethodSpec& m = plan.spec;
    if (!m.label.empty()) return QString::fromStdString(m.label);
    switch (m.method) {
        case Method::PipeDream:
            return m.noam > 0 && m.noam != plan.schedule.stages
                       ? QStringLiteral("PD NOAM=%1").arg(m.noam)
                       : QStringLiteral("PD");
        case Method::RandomizedPipeDream:
            switch (m.delayMode) {
                case DelayMode::PipeDream:
                    return QStringLiteral("RPD PD-delays");
                case DelayMode::Zero:
                    return QStringLiteral("RPD δ=0");
                case DelayMode::Max:
                    return QStringLiteral("RPD max δ=%1").arg(plan.delta);
                case DelayMode::Uniform:
                    break;
            }
            return QStringLiteral("RPD δ=%1").arg(plan.delta);
        case Method::LocalSgd:
            return QStringLiteral("LocalSGD R=%1 H=%2%3")
                .arg(plan.replicas)
                .arg(m.localSteps)
                .arg(neverAveragesWarning(plan) ? QStringLiteral(" ⚠ never averages") : QString());
        case Method::FillDrain:
            return QStringLiteral("Fill-drain G=%1").arg(plan.schedule.flushGroup);
        case Method::OneFOneB:
            return QStringLiteral("1F1B M=%1").arg(plan.schedule.flushGroup);
        case Method::ZeroBubbleH1:
            return QStringLiteral("ZB-H1 M=%1").arg(plan.schedule.flushGroup);
        case Method::TwoBw:
            return QStringLiteral("2BW m=%1").arg(plan.schedule.flushGroup);
        case Method::Interleaved:
            return QStringLiteral("Interleaved v=%1 M=%2")
                .arg(plan.schedule.virtualStages)
                .arg(plan.schedule.flushGroup);
        case Method::Imported: {
            MethodSpec bare = m;  // the optimizer and correctors come from trainingSuffix
            bare.optimizer = OptimizerSpec{};
            bare.correctors = CorrectorSpec{};
            return QString::fromStdString(defaultMethodLabel(bare, plan.schedule.stages));
        }
        case Method::Sgd:
            break;
    }
    return QStringLiteral("SGD");
}

}  // namespace

std::vector<QPointF> smoothEma(const std::vector<QPointF>& points, double weight) {
    std::vector<QPointF> out = points;
    if (!(weight > 0.0)) return out;
    double average = 0.0;
    double decay = 1.0;  // w^t
    for (QPointF& p : out) {
        if (!std::isfinite(p.y())) {  // kept; the average starts again after it
            average = 0.0;
            decay = 1.0;
            continue;
        }
        average = weight * average + (1.0 - weight) * p.y();
        decay *= weight;
        p.setY(average / (1.0 - decay));
    }
    return out;
}

QList<QPointF> decimate(const std::vector<QPointF>& points, size_t count, int maxPoints) {
    count = std::min(count, points.size());
    QList<QPointF> out;
    if (count <= static_cast<size_t>(maxPoints)) {
        out.reserve(static_cast<qsizetype>(count));
        for (size_t i = 0; i < count; ++i) out.append(points[i]);
        return out;
    }
    const size_t buckets = static_cast<size_t>(maxPoints) / 4;
    out.reserve(static_cast<qsizetype>(buckets) * 4 + 1);
    for (size_t b = 0; b < buckets; ++b) {
        const size_t lo = b * count / buckets;
        const size_t hi = std::max(lo + 1, (b + 1) * count / buckets);
        size_t mn = lo;
        size_t mx = lo;
        for (size_t i = lo; i < hi; ++i) {
            if (points[i].y() < points[mn].y()) mn = i;
            if (points[i].y() > points[mx].y()) mx = i;
        }
        // In x order, without duplicates.
        size_t idx[4] = {lo, std::min(mn, mx), std::max(mn, mx), hi - 1};
        size_t last = std::numeric_limits<size_t>::max();
        for (size_t i : idx) {
            if (i != last) out.append(points[i]);
            last = i;
        }
    }
    return out;
}

LossChart::LossChart(QWidget* parent) : QWidget(parent) {
    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 4, 4, 4));
    // The legend is a LineLegend under the chart: it wraps, so no name (nor its γ) is elided.
    chart->legend()->hide();
    chart->setAnimationOptions(QChart::NoAnimation);
    view_ = new QChartView(chart, this);
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setMinimumSize(300, 160);
    view_->setRubberBand(QChartView::RectangleRubberBand);
    view_->viewport()->setMouseTracking(true);
    view_->viewport()->installEventFilter(this);
    readout_ = new QLabel(view_->viewport());
    readout_->setObjectName("lossReadout");
    readout_->setStyleSheet(
        "background: rgba(255, 255, 255, 235); border: 1px solid #888; padding: 2px 4px;");
    readout_->hide();
    marker_ = new QGraphicsEllipseItem(-4, -4, 8, 8);
    marker_->setPen(QPen(Qt::black, 1.5));
    marker_->setZValue(100);
    marker_->hide();
    chart->scene()->addItem(marker_);
    guide_ = new QGraphicsLineItem;
    guide_->setPen(QPen(QColor(90, 90, 90, 160), 1.0, Qt::DashLine));
    guide_->setZValue(99);
    guide_->hide();
    chart->scene()->addItem(guide_);

    xChoice_ = new QComboBox(this);
    xChoice_->addItem(tr("x: slots"));
    xChoice_->addItem(tr("x: block updates"));
    xChoice_->setToolTip(
        tr("Compare the methods against slots (simulated time) or against the "
           "number of block updates"));
    logY_ = new QCheckBox(tr("log y"), this);
    logY_->setChecked(true);
    logY_->setToolTip(tr("Logarithmic f − f* axis"));
    logX_ = new QCheckBox(tr("log x"), this);
    logX_->setToolTip(tr("Logarithmic x axis"));
    theorem_ = new QCheckBox(tr("theorem (RPD)"), this);
    theorem_->setToolTip(
        tr("Show, beside these curves, the theorem's chart for an RPD run: the running mean of "
           "‖∇f(w_k)‖² against the bound 2SΔ₀/(γK) + γSLG² + γ²L²δ²G² and its three terms. "
           "The bound holds for the randomized proxy, not for deterministic PipeDream."));
    smooth_ = new QDoubleSpinBox(this);
    smooth_->setObjectName("lossSmoothing");
    smooth_->setRange(0.0, kMaxSmoothing);
    smooth_->setSingleStep(0.05);
    smooth_->setDecimals(2);
    smooth_->setPrefix(tr("smooth "));
    smooth_->setSpecialValueText(tr("smooth off"));
    smooth_->setToolTip(
        tr("Smoothing weight w (0: off): each curve is drawn as its exponential moving average "
           "s = w·s + (1 − w)·value over its recorded points, debiased as TensorBoard does, "
           "with the raw curve faint behind it. A NaN or ∞ is never averaged over."));
    pin_ = new QToolButton(this);
    pin_->setText(tr("pin run"));
    pin_->setToolTip(tr("Keep this run's curves (dashed, faded, a dash pattern per pin) to "
                        "compare with the runs of the next settings; up to %1 pins, then the "
                        "oldest goes")
                         .arg(kMaxPins));
    pinList_ = new QComboBox(this);
    pinList_->setObjectName("lossPins");
    pinList_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    pinList_->setMinimumContentsLength(10);
    pinList_->setToolTip(tr("The pinned runs and their settings"));
    pinList_->hide();
    unpin_ = new QToolButton(this);
    unpin_->setText(tr("unpin"));
    unpin_->setToolTip(tr("Remove the pin selected in the list (the menu: unpin all)"));
    unpin_->setPopupMode(QToolButton::MenuButtonPopup);
    auto* unpinMenu = new QMenu(unpin_);
    unpinMenu->addAction(tr("unpin all"), this, [this] { unpin(); });
    unpin_->setMenu(unpinMenu);
    unpin_->hide();
    resetZoom_ = new QToolButton(this);
    resetZoom_->setText(tr("reset zoom"));
    resetZoom_->setEnabled(false);
    resetZoom_->setToolTip(
        tr("Drag a rectangle on the chart to zoom in, right-click to zoom "
           "out; this shows the whole run again"));
    note_ = new QLabel(this);
    note_->setStyleSheet("color: #555;");
    note_->setWordWrap(true);
    // Two rows of controls, so that the chart fits a narrow window beside the heatmap.
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    heading_ = new QLabel(tr("<b>Loss f − f*</b>"), this);
    heading_->setObjectName("lossHeading");
    bar->addWidget(heading_);
    bar->addWidget(xChoice_);
    bar->addWidget(logY_);
    bar->addWidget(logX_);
    bar->addStretch();
    auto* tools = new QHBoxLayout;
    tools->setContentsMargins(0, 0, 0, 0);
    tools->addWidget(smooth_);
    tools->addWidget(theorem_);
    tools->addWidget(pin_);
    tools->addWidget(pinList_, 1);
    tools->addWidget(unpin_);
    tools->addWidget(resetZoom_);
    tools->addStretch();
    legend_ = new LineLegend(this);
    plot_ = chartWithLegend(view_, legend_, this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addLayout(tools);
    layout->addWidget(plot_, 1);
    layout->addWidget(note_);
    note_->hide();

    connect(xChoice_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setXAxis(i == 0 ? XAxis::Slots : XAxis::Updates); });
    connect(logY_, &QCheckBox::toggled, this, [this] { rebuildAxes(); });
    connect(logX_, &QCheckBox::toggled, this, [this] { rebuildAxes(); });
    connect(theorem_, &QCheckBox::toggled, this, &LossChart::theoremChartToggled);
    connect(pin_, &QToolButton::clicked, this, [this] { pin(); });
    connect(unpin_, &QToolButton::clicked, this, [this] { removePin(pinList_->currentIndex()); });
    connect(resetZoom_, &QToolButton::clicked, this, &LossChart::resetZoom);
    smoothing_ = std::clamp(QSettings().value(kSmoothingKey, 0.0).toDouble(), 0.0, kMaxSmoothing);
    smooth_->setValue(smoothing_);
    connect(smooth_, &QDoubleSpinBox::valueChanged, this, [this](double w) {
        if (w == smoothing_) return;
        smoothing_ = w;
        QSettings().setValue(kSmoothingKey, w);
        smoothAll();
        rebuildSeries();
    });
    rebuildSeries();
}

void LossChart::setSmoothing(double weight) {
    smooth_->setValue(std::clamp(weight, 0.0, kMaxSmoothing));
}

void LossChart::smoothCurve(Curve& c) const {
    c.smoothed.reset();
    if (smoothing_ > 0.0 && c.points) {
        c.smoothed = std::make_shared<const CurvePoints>(CurvePoints{
            smoothEma(c.points->bySlot, smoothing_), smoothEma(c.points->byUpdate, smoothing_)});
    }
}

void LossChart::smoothAll() {
    for (Curve& c : curves_) smoothCurve(c);
    for (Pin& pin : pins_) {
        for (Curve& c : pin.curves) smoothCurve(c);
    }
}

QChart* LossChart::chart() const {
    return view_->chart();
}
bool LossChart::logY() const {
    return logY_->isChecked();
}
bool LossChart::logX() const {
    return logX_->isChecked();
}
bool LossChart::theoremChartShown() const {
    return theorem_->isChecked();
}
void LossChart::setLogY(bool on) {
    logY_->setChecked(on);
}
void LossChart::setLogX(bool on) {
    logX_->setChecked(on);
}
void LossChart::setTheoremChartShown(bool on) {
    theorem_->setChecked(on);
}

void LossChart::setXAxis(XAxis axis) {
    xAxis_ = axis;
    zoomed_ = false;  // the zoomed range was on the other axis
    const QSignalBlocker block(xChoice_);
    xChoice_->setCurrentIndex(axis == XAxis::Slots ? 0 : 1);
    rebuildAxes();
}

void LossChart::setSnapshot(SnapshotPtr snapshot) {
    live_ = false;
    failure_.clear();
    plan_.reset();
    liveSlots_ = liveUpdates_ = 0.0;
    snapshot_ = std::move(snapshot);
    showQuantity(snapshot_);
    rebuildData();
    rebuildSeries();
}

void LossChart::setComputing(SnapshotPtr plan) {
    failure_.clear();
    plan_ = std::move(plan);
    snapshot_.reset();
    if (plan_) showQuantity(plan_);
    liveSlots_ = plan_ ? plan_->totalSlots : 0.0;
    liveUpdates_ = plan_ ? static_cast<double>(plan_->experiment.budget.updateBudget) : 0.0;
    setLive({}, liveSlots_, liveUpdates_);
}

void LossChart::setFailed(const QString& reason) {
    setSnapshot(nullptr);
    failure_ = reason.isEmpty() ? tr("the run failed") : reason;
    updateTitle();
}

void LossChart::showQuantity(const SnapshotPtr& of) {
    const bool lm = of && of->languageModel();
    if (lm == languageModel_) return;
    languageModel_ = lm;
    // The paper's E5 draws the language model's loss on a linear axis; f − f* spans decades.
    // (A saved view's scales are applied after this, and win.)
    logY_->setChecked(!lm);
    heading_->setText(lm ? tr("<b>Loss</b> (last-stage forward)") : tr("<b>Loss f − f*</b>"));
    heading_->setToolTip(lm ? tr("The language model has no f*: each method's curve is the "
                                 "next-character cross-entropy (nats) of its latest last-stage "
                                 "forward, one batch at a time")
                            : QString());
    logY_->setToolTip(lm ? tr("Logarithmic loss axis") : tr("Logarithmic f − f* axis"));
    // The theorem's bound is for the linear models (f*, L, ‖∇f‖²).
    if (lm) setTheoremChartShown(false);
    theorem_->setEnabled(!lm);
    theorem_->setToolTip(lm ? tr("The theorem's chart does not apply to the language model: it "
                                 "bounds ‖∇f‖² on the linear models (L-smooth, with f*)")
                            : tr("Show, beside these curves, the theorem's chart for an RPD run: "
                                 "the running mean of ‖∇f(w_k)‖² against the bound "
                                 "2SΔ₀/(γK) + γSLG² + γ²L²δ²G² and its three terms. The bound "
                                 "holds for the randomized proxy, not for deterministic "
                                 "PipeDream."));
    if (yAxisItem_) yAxisItem_->setTitleText(yAxisTitle());
}

QString LossChart::yAxisTitle() const {
    return languageModel_ ? tr("loss (nats)") : tr("f − f*");
}

QString LossChart::quantityName() const {
    return languageModel_ ? tr("loss") : tr("f − f*");
}

QString LossChart::curveName(const MethodRun& run, double stepSize) const {
    return legendName(run) + QStringLiteral(", γ=") + shortNumber(stepSize);
}

void LossChart::updateTitle() {
    QString title;
    if (!failure_.isEmpty()) {
        title = tr("No result: %1").arg(failure_.toHtmlEscaped());
    } else if (live_) {
        title = plan_ ? tr("S = %1: computing… (the curves fill in as the methods run)")
                            .arg(plan_->experiment.config.stages)
                      : tr("computing…");
    } else if (!snapshot_) {
        title = tr("No run yet");
    }
    if (!pins_.empty()) {
        // One pin: its settings; more: their numbers (the settings are in the pins list).
        QString pinnedTitle;
        if (pins_.size() == 1) {
            pinnedTitle =
                tr("dashed: pin %1 (%2)").arg(pins_.front().number).arg(pins_.front().settings);
        } else {
            QStringList numbers;
            for (const Pin& p : pins_) numbers << QString::number(p.number);
            pinnedTitle = tr("dashed: pins %1 (their settings in the pins list)")
                              .arg(numbers.join(QStringLiteral(", ")));
        }
        title = title.isEmpty() ? pinnedTitle : title + QStringLiteral("<br>") + pinnedTitle;
    }
    chart()->setTitle(title);
}

void LossChart::setLive(const std::vector<LiveCurve>& curves, double totalSlots,
                        double totalUpdates) {
    live_ = true;
    if (totalSlots > 0.0) liveSlots_ = totalSlots;
    if (totalUpdates > 0.0) liveUpdates_ = totalUpdates;
    bool sameSeries = curves.size() == curves_.size() &&
                      static_cast<qsizetype>(curves.size()) == methodSeries_.size();
    curves_.clear();
    for (const LiveCurve& live : curves) {
        Curve c;
        const auto index = static_cast<size_t>(live.method);
        if (live.name.isEmpty()) {
            c.name = tr("waiting…");
        } else if (plan_ && index < plan_->runs().size()) {
            // The same name the finished run's curve gets, so nothing jumps when it arrives.
            c.name = curveName(plan_->runs()[index], live.stepSize) +
                     (live.tuning ? tr(" (tuning γ)") : QString());
        } else {
            c.name = live.name;
        }
        c.method = live.method;
        c.colour = plan_ ? methodColour(plan_->runs(), index) : QColor(0x66, 0x66, 0x66);
        c.twin = plan_ && isTwin(plan_->runs(), index);
        c.points = std::make_shared<const CurvePoints>(CurvePoints{live.bySlot, live.byUpdate});
        smoothCurve(c);
        if (sameSeries && methodSeries_[static_cast<qsizetype>(curves_.size())]->name() != c.name)
            sameSeries = false;
        curves_.push_back(std::move(c));
    }
    note_->hide();
    if (sameSeries) {
        rebuildAxes();
    } else {
        rebuildSeries();
    }
    updateTitle();
}

void LossChart::setCursorSlot(int slot) {
    if (slot == cursor_) return;
    cursor_ = slot;
    refreshPoints();
}

const std::vector<QPointF>& LossChart::pointsOf(const Curve& c) const {
    return xAxis_ == XAxis::Slots ? c.points->bySlot : c.points->byUpdate;
}

const std::vector<QPointF>& LossChart::drawnOf(const Curve& c) const {
    if (!c.smoothed) return pointsOf(c);
    return xAxis_ == XAxis::Slots ? c.smoothed->bySlot : c.smoothed->byUpdate;
}

const std::vector<QPointF>& LossChart::methodData(int i) const {
    return pointsOf(curves_.at(static_cast<size_t>(i)));
}

const std::vector<QPointF>& LossChart::methodDrawnData(int i) const {
    return drawnOf(curves_.at(static_cast<size_t>(i)));
}

void LossChart::rebuildData() {
    curves_.clear();
    uniformGuessLoss_ = 0.0;
    if (!snapshot_) return;
    const RunSnapshot& s = *snapshot_;
    if (const CharTransformerProblem* lm = s.lmProblem()) {
        uniformGuessLoss_ = std::log(static_cast<double>(std::max(1, lm->corpus.vocabSize())));
    }
    // Points stay in the snapshot (derived there once); the curves alias them.
    auto pointsIn = [&](const CurvePoints& points) {
        return std::shared_ptr<const CurvePoints>(snapshot_, &points);
    };
    bool rpdMapped = false;
    for (size_t i = 0; i < s.runs().size(); ++i) {
        const RunResult& r = s.result(i);
        const MethodRun& run = s.runs()[i];
        Curve c;
        c.method = static_cast<int>(i);
        c.colour = methodColour(s.runs(), i);
        c.twin = isTwin(s.runs(), i);
        c.name = curveName(s.experiment.methods[i], r.stepSize);
        if (r.divergence.diverged)
            c.name += tr(" — diverged at update %1").arg(r.divergence.update);
        if (s.experiment.methods[i].allDiverged) c.name += tr(" (every γ diverged)");
        c.points = pointsIn(snapshot_->curves[i].loss);
        smoothCurve(c);
        curves_.push_back(std::move(c));
        if (!run.pipeline()) rpdMapped = true;
    }
    note_->setText(
        tr("RPD has no slots of its own: its update k is drawn at PipeDream's update k."));
    note_->setVisible(rpdMapped && xAxis_ == XAxis::Slots);
}

void LossChart::rebuildSeries() {
    QChart* c = chart();
    c->removeAllSeries();
    methodSeries_.clear();
    pinnedSeries_.clear();
    rawSeries_.clear();
    hideReadout();
    ensureAxes();
    pinnedCurves_.clear();
    std::vector<QPen> pinPens;  // one per pinned curve
    for (const Pin& pin : pins_) {
        for (const Curve& curve : pin.curves) {
            QColor colour = curve.colour;
            colour.setAlpha(130);
            QPen pen(colour);
            pen.setWidthF(1.6);
            pen.setCapStyle(Qt::FlatCap);
            if (pin.number == 1) {
                pen.setStyle(Qt::DashLine);
            } else {
                pen.setDashPattern(pinDashes(pin.number));
            }
            pinPens.push_back(pen);
            pinnedCurves_.push_back(curve);
        }
    }
    auto add = [&](const QString& name, const QPen& pen) {
        auto* s = new QLineSeries;
        s->setName(name);
        s->setPen(pen);
        c->addSeries(s);
        s->attachAxis(xAxisItem_);
        s->attachAxis(yAxisItem_);
        return s;
    };
    // Smoothing on: the raw curves first (drawn under every smoothed one), thin and faint.
    if (smoothing_ > 0.0) {
        auto addRaw = [&](const Curve& curve, QPen pen) {
            QColor colour = curve.colour;
            colour.setAlpha(pen.color().alpha() < 255 ? 40 : 60);
            pen.setColor(colour);
            pen.setWidthF(1.0);
            rawSeries_ << add(tr("%1 (raw)").arg(curve.name), pen);
        };
        for (const Curve& curve : curves_) addRaw(curve, QPen(curve.colour));
        for (size_t i = 0; i < pinnedCurves_.size(); ++i) addRaw(pinnedCurves_[i], pinPens[i]);
    }
    for (size_t i = 0; i < pinnedCurves_.size(); ++i)
        pinnedSeries_ << add(pinnedCurves_[i].name, pinPens[i]);
    for (const Curve& curve : curves_) {
        QPen pen(curve.colour);
        pen.setWidthF(2.0);
        if (curve.twin) {
            pen.setCapStyle(Qt::FlatCap);
            pen.setDashPattern({5, 3});
        }
        methodSeries_ << add(curve.name, pen);
    }
    uniformGuess_ = nullptr;
    if (uniformGuessLoss_ > 0.0) {
        uniformGuess_ = new QLineSeries;
        uniformGuess_->setName(
            tr("log V = %1 (a uniform guess)").arg(uniformGuessLoss_, 0, 'f', 2));
        QPen pen(QColor(110, 110, 110));
        pen.setWidthF(1.4);
        pen.setStyle(Qt::DashLine);
        uniformGuess_->setPen(pen);
        c->addSeries(uniformGuess_);
        uniformGuess_->attachAxis(xAxisItem_);
        uniformGuess_->attachAxis(yAxisItem_);
    }
    updateTitle();
    QList<LineLegend::Entry> entries;
    for (const QLineSeries* s : methodSeries_ + pinnedSeries_)
        entries << LineLegend::Entry{s->pen(), s->name()};
    if (uniformGuess_) entries << LineLegend::Entry{uniformGuess_->pen(), uniformGuess_->name()};
    legend_->setEntries(entries);
    rebuildAxes();
}

bool LossChart::ensureAxes() {
    QChart* c = chart();
    bool replaced = false;
    // Replaces `axis` by a new one of the wanted scale, if it is not of that scale already.
    auto ensure = [&](QAbstractAxis*& axis, bool log, Qt::Alignment side) {
        if (axis && (axis->type() == QAbstractAxis::AxisTypeLogValue) == log) return;
        if (axis) {
            c->removeAxis(axis);
            delete axis;
        }
        // A range change the chart did not make itself is a zoom (rubber band, right click).
        auto zoomedBy = [this] {
            if (settingRanges_) return;
            zoomed_ = true;
            resetZoom_->setEnabled(true);
            refreshPoints();
        };
        if (log) {
            auto* a = new QLogValueAxis;
            connect(a, &QLogValueAxis::rangeChanged, this, zoomedBy);
            axis = a;
        } else {
            auto* a = new QValueAxis;
            connect(a, &QValueAxis::rangeChanged, this, zoomedBy);
            axis = a;
        }
        replaced = true;
        c->addAxis(axis, side);
        for (QAbstractSeries* s : c->series()) s->attachAxis(axis);
    };
    ensure(xAxisItem_, logX(), Qt::AlignBottom);
    ensure(yAxisItem_, logY(), Qt::AlignLeft);
    return replaced;
}

int LossChart::logLabelCapacity() const {
    // Room for a label and a label's height of space between two labels, in the plot's height
    // (about the view's less the title, the x axis and the margins).
    const QFontMetrics fm(yAxisItem_ ? yAxisItem_->labelsFont() : font());
    const int plotHeight = view_->height() - 4 * fm.height() - 24;
    return std::clamp(plotHeight / (2 * fm.height()), 2, 8);
}

void LossChart::rebuildAxes() {
    const bool replaced = ensureAxes();
    if (zoomed_ && !replaced) {  // the person's zoom stays
        refreshPoints();
        return;
    }
    zoomed_ = false;
    resetZoom_->setEnabled(false);
    settingRanges_ = true;
    // Ranges from the whole run, so the axes stay still during playback.
    double xMax = 1.0;
    double yMin = std::numeric_limits<double>::infinity();
    double yMax = 0.0;
    double startMax = 0.0;
    auto scan = [&](const Curve& curve) {
        const auto& pts = pointsOf(curve);
        if (!pts.empty()) startMax = std::max(startMax, pts.front().y());
        for (const QPointF& p : pts) {
            xMax = std::max(xMax, p.x());
            if (!std::isfinite(p.y())) continue;
            if (p.y() > kLogFloor) yMin = std::min(yMin, p.y());
            yMax = std::max(yMax, p.y());
        }
    };
    for (const Curve& curve : curves_) scan(curve);
    for (const Curve& curve : pinnedCurves_) scan(curve);
    if (uniformGuessLoss_ > 0.0) yMax = std::max(yMax, uniformGuessLoss_);  // the line in sight
    if (live_) xMax = std::max(xMax, xAxis_ == XAxis::Slots ? liveSlots_ : liveUpdates_);
    // A diverging run must not squash the others: cap the top near the starting gap.
    if (startMax > 0.0) yMax = std::min(yMax, (logY() ? 1e3 : 1.5) * startMax);
    if (!(yMax > 0.0)) yMax = 1.0;
    if (!std::isfinite(yMin) || yMin >= yMax) yMin = yMax / 10.0;

    const QString xTitle = xAxis_ == XAxis::Slots ? tr("slots") : tr("block updates");
    if (logX()) {
        auto* a = static_cast<QLogValueAxis*>(xAxisItem_);
        a->setBase(10.0);
        a->setLabelFormat("%g");
        a->setRange(1.0, std::pow(10.0, std::ceil(std::log10(std::max(10.0, xMax)))));
        a->setMinorTickCount(-1);
    } else {
        auto* a = static_cast<QValueAxis*>(xAxisItem_);
        a->setLabelFormat("%.0f");
        // Ticks at round numbers from 0, the axis ending exactly where the run ends. The axis is
        // kept between runs: fixed ticks while the range changes, or the old interval over the
        // new range would lay out a tick per old interval (hundreds of thousands).
        a->setTickType(QValueAxis::TicksFixed);
        a->setRange(0.0, xMax);
        a->setTickAnchor(0.0);
        a->setTickInterval(niceStep(xMax / 5.0));
        a->setTickType(QValueAxis::TicksDynamic);
    }
    xAxisItem_->setTitleText(xTitle);
    if (logY()) {
        auto* a = static_cast<QLogValueAxis*>(yAxisItem_);
        // One label per decade while they fit the chart's height (at most 8); beyond, one per
        // 2, 3, … decades, so the labels never crowd (Qt elides them to "..." when they do).
        int loExp = static_cast<int>(std::floor(std::log10(std::max(yMin, kLogFloor))));
        int hiExp = static_cast<int>(std::ceil(std::log10(yMax)));
        if (hiExp <= loExp) hiExp = loExp + 1;
        builtLabelCapacity_ = logLabelCapacity();
        const int intervals = builtLabelCapacity_ - 1;
        const int perTick = std::max(1, (hiExp - loExp + intervals - 1) / intervals);
        loExp = static_cast<int>(std::floor(static_cast<double>(loExp) / perTick)) * perTick;
        hiExp = static_cast<int>(std::ceil(static_cast<double>(hiExp) / perTick)) * perTick;
        // No minor ticks while the base changes: -1 ("base − 2 of them") with a base of 10^14
        // would lay out 10^14 ticks.
        a->setMinorTickCount(0);
        a->setBase(std::pow(10.0, perTick));
        a->setLabelFormat("%.0e");  // 1e-06, never a column of 0.0
        // A hair beyond the decades, so rounding never drops the end labels.
        a->setRange(std::pow(10.0, loExp) * 0.999, std::pow(10.0, hiExp) * 1.001);
        a->setMinorTickCount(perTick > 1 ? perTick - 1 : -1);
    } else {
        auto* a = static_cast<QValueAxis*>(yAxisItem_);
        a->setLabelFormat("%.3g");
        a->setRange(0.0, yMax * 1.05);
        a->applyNiceNumbers();
    }
    yAxisItem_->setTitleText(yAxisTitle());
    settingRanges_ = false;
    refreshPoints();
}

double LossChart::cursorX(int method) const {
    if (live_ || cursor_ < 0 || !snapshot_) return std::numeric_limits<double>::infinity();
    if (xAxis_ == XAxis::Slots) return cursor_;
    return static_cast<double>(
        snapshot_->runs()[static_cast<size_t>(method)].updatesBefore(cursor_));
}

void LossChart::refreshPoints() {
    const bool ly = logY();
    const bool lx = logX();
    // Zoomed in: the points are thinned over the range shown, so a zoom shows the full detail.
    double first = -std::numeric_limits<double>::infinity();
    double last = std::numeric_limits<double>::infinity();
    if (zoomed_ && xAxisItem_) {
        first = xAxisItem_->property("min").toDouble();
        last = xAxisItem_->property("max").toDouble();
    }
    auto fill = [&](QLineSeries* series, const Curve& curve, const std::vector<QPointF>& all,
                    bool followCursor) {
        auto after = [&](double limit) {
            return static_cast<size_t>(
                std::upper_bound(all.begin(), all.end(), limit,
                                 [](double v, const QPointF& p) { return v < p.x(); }) -
                all.begin());
        };
        const size_t end = std::min(
            after(followCursor ? cursorX(curve.method) : std::numeric_limits<double>::infinity()),
            std::min(all.size(), after(last) + 1));
        size_t begin = std::isfinite(first) ? after(first) : 0;
        begin = begin > 0 ? begin - 1 : 0;  // one point beyond each edge: the line reaches it
        QList<QPointF> shown;
        if (begin == 0) {
            shown = decimate(all, end, kMaxPointsPerSeries);
        } else if (begin < end) {
            const std::vector<QPointF> part(all.begin() + static_cast<std::ptrdiff_t>(begin),
                                            all.begin() + static_cast<std::ptrdiff_t>(end));
            shown = decimate(part, part.size(), kMaxPointsPerSeries);
        }
        if (ly || lx) {
            QList<QPointF> kept;
            kept.reserve(shown.size());
            for (QPointF p : shown) {
                if (lx && p.x() < 1.0) continue;
                if (ly) p.setY(std::isfinite(p.y()) ? std::max(p.y(), kLogFloor) : p.y());
                kept.append(p);
            }
            shown.swap(kept);
        }
        series->replace(shown);
    };
    for (int i = 0; i < methodSeries_.size(); ++i) {
        const Curve& curve = curves_[static_cast<size_t>(i)];
        fill(methodSeries_[i], curve, drawnOf(curve), true);
        if (i < rawSeries_.size()) fill(rawSeries_[i], curve, pointsOf(curve), true);
    }
    for (int i = 0; i < pinnedSeries_.size(); ++i) {
        const Curve& curve = pinnedCurves_[static_cast<size_t>(i)];
        fill(pinnedSeries_[i], curve, drawnOf(curve), false);
        const qsizetype raw = methodSeries_.size() + i;
        if (raw < rawSeries_.size()) fill(rawSeries_[raw], curve, pointsOf(curve), false);
    }
    if (uniformGuess_ && xAxisItem_) {
        // Across the axis as it stands (zoomed or not).
        const double from = std::max(lx ? 1.0 : 0.0, xAxisItem_->property("min").toDouble());
        const double to = xAxisItem_->property("max").toDouble();
        uniformGuess_->replace({QPointF(from, uniformGuessLoss_), QPointF(to, uniformGuessLoss_)});
    }
}

QStringList LossChart::yAxisLabels() const {
    QStringList out;
    const QRectF plot = chart()->plotArea();
    for (QGraphicsItem* item : chart()->childItems()) {
        QList<QGraphicsItem*> stack{item};
        while (!stack.isEmpty()) {
            QGraphicsItem* it = stack.takeLast();
            stack << it->childItems();
            auto* text = dynamic_cast<QGraphicsTextItem*>(it);
            if (!text || !text->isVisible() || text->toPlainText().isEmpty()) continue;
            if (text->rotation() != 0.0) continue;  // the axis title
            const QRectF r = text->mapToItem(chart(), text->boundingRect()).boundingRect();
            if (r.right() <= plot.left() + 1 && r.bottom() > plot.top() - 10 &&
                r.top() < plot.bottom() + 10 && r.width() < plot.left()) {
                out << text->toPlainText();
            }
        }
    }
    return out;
}

bool LossChart::exportPng(const QString& path, double scale, QString* error) {
    return exportWidgetPng(plot_, path, scale, error);
}

bool LossChart::exportSvg(const QString& path, QString* error) {
    return exportWidgetSvg(plot_, path, error);
}

bool LossChart::exportCsv(const QString& path, QString* error) const {
    QByteArray out = xAxis_ == XAxis::Slots ? "series,slot,value\n" : "series,update,value\n";
    auto write = [&](const Curve& c) {
        const QByteArray name = QByteArray::fromStdString(csv::labelCell(c.name.toStdString()));
        for (const QPointF& p : pointsOf(c)) {
            out += name + ',' + QByteArray::number(p.x(), 'g', 17) + ',' +
                   QByteArray::number(p.y(), 'g', 17) + '\n';
        }
    };
    for (const Curve& c : curves_) write(c);
    for (const Curve& c : pinnedCurves_) write(c);
    return writeTextAtomically(path, out, error);
}

}  // namespace pipelens::ui

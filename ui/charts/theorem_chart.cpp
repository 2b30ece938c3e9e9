#include "charts/theorem_chart.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "charts/axis_ticks.hpp"
#include "charts/chart_support.hpp"
#include "charts/line_legend.hpp"
#include "charts/widget_export.hpp"
#include "util/csv_writer.hpp"

namespace pipelens::ui {
namespace {

struct LineStyle {
    const char* name;
    QRgb colour;
    Qt::PenStyle dash;
    double width;
};

// Okabe-Ito colours and five dash patterns: each line is told apart by colour and by dash.
constexpr QRgb kBluishGreen = 0xff009e73;
constexpr QRgb kBlack = 0xff000000;
const LineStyle kStyles[TheoremChart::LineCount] = {
    {QT_TRANSLATE_NOOP("TheoremChart", "mean ‖∇f‖² (measured)"), kBluishGreen, Qt::SolidLine, 2.5},
    {QT_TRANSLATE_NOOP("TheoremChart", "bound = sum of the terms"), kBlack, Qt::DashLine, 2.0},
    {QT_TRANSLATE_NOOP("TheoremChart", "optimisation 2SΔ₀/(γK)"), chart::kBlue, Qt::DotLine, 2.0},
    {QT_TRANSLATE_NOOP("TheoremChart", "noise γSLG²"), chart::kOrange, Qt::DashDotLine, 2.0},
    {QT_TRANSLATE_NOOP("TheoremChart", "stale reads γ²L²δ²G²"), chart::kVermillion,
     Qt::DashDotDotLine, 2.0}};

const CurvePoints& lineOf(const TheoremCurves& t, int line) {
    switch (line) {
        case TheoremChart::MeanGradNormSq:
            return t.meanGradNormSq;
        case TheoremChart::Bound:
            return t.bound;
        case TheoremChart::OptimisationTerm:
            return t.optimisation;
        case TheoremChart::NoiseTerm:
            return t.noise;
        default:
            return t.staleness;
    }
}

}  // namespace

TheoremChart::TheoremChart(QWidget* parent) : QWidget(parent) {
    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->hide();
    view_ = new QChartView(chart, this);
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setMinimumSize(240, 160);
    run_ = new QComboBox(this);
    run_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    run_->setToolTip(tr("The RPD run whose bound is shown"));
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    note_->setStyleSheet("color: #555;");
    note_->hide();
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    auto* title = new QLabel(tr("<b>Theorem</b> (mean ‖∇f‖² ≤ bound)"), this);
    title->setToolTip(
        tr("SPEC §4: (1/K) Σ ‖∇f(w_k)‖² ≤ 2SΔ₀/(γK) + γSLG² + γ²L²δ²G² for Randomized "
           "PipeDream with 0 < γ ≤ 1/L, G the largest block-gradient norm seen up to K. It does "
           "not hold for deterministic PipeDream."));
    bar->addWidget(title);
    bar->addWidget(run_);
    bar->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    legend_ = new LineLegend(this);
    plot_ = chartWithLegend(view_, legend_, this);
    layout->addWidget(plot_, 1);
    layout->addWidget(note_);
    connect(run_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
    rebuild();
}

QChart* TheoremChart::chart() const {
    return view_->chart();
}
QString TheoremChart::note() const {
    return note_->isHidden() ? QString() : note_->text();
}

int TheoremChart::selectedMethod() const {
    return run_->currentIndex() < 0 ? -1 : run_->currentData().toInt();
}

bool TheoremChart::selectMethod(int method) {
    const int at = run_->findData(method);
    if (at < 0) return false;
    run_->setCurrentIndex(at);
    return true;
}

void TheoremChart::setSnapshot(SnapshotPtr snapshot) {
    snapshot_ = std::move(snapshot);
    listRuns();
    rebuild();
}

void TheoremChart::listRuns() {
    const QString previous = run_->currentText();
    const QSignalBlocker block(run_);
    run_->clear();
    if (snapshot_ && !snapshot_->planOnly) {
        for (size_t i = 0; i < snapshot_->runs().size(); ++i) {
            if (snapshot_->runs()[i].spec.method == Method::RandomizedPipeDream)
                run_->addItem(snapshot_->label(i), static_cast<int>(i));
        }
    }
    const int keep = run_->findText(previous);
    run_->setCurrentIndex(keep >= 0 ? keep : run_->count() > 0 ? 0 : -1);
    run_->setVisible(run_->count() > 1);
}

void TheoremChart::rebuild() {
    QChart* c = chart();
    c->removeAllSeries();
    for (QAbstractAxis* axis : c->axes()) {
        c->removeAxis(axis);
        delete axis;
    }
    series_.clear();
    legend_->setEntries({});
    needsSamples_ = false;
    int method = selectedMethod();
    QString note;
    if (snapshot_ && snapshot_->languageModel()) {
        // Checked before "computing": a language model's run will not have it either.
        c->setTitle(tr("Does not apply to the language model"));
        note =
            tr("The theorem bounds ‖∇f‖² of RPD on the linear models (L-smooth, with f*); "
               "the language model has no f*, L or full gradient norm.");
        method = -1;
    } else if (!snapshot_ || snapshot_->planOnly) {
        c->setTitle(snapshot_ ? tr("computing…") : tr("No run yet"));
    } else if (method < 0) {
        c->setTitle(tr("No RPD run in this experiment"));
        note = tr("The theorem bounds Randomized PipeDream: add an RPD method to see it.");
    } else if (snapshot_->curves[static_cast<size_t>(method)].theorem.bound.byUpdate.empty()) {
        needsSamples_ = true;
        c->setTitle(tr("Needs ‖∇f‖² samples"));
        note =
            tr("The runs must sample ‖∇f‖² (the config's sampling.grad_norm_every); ticking "
               "theorem (RPD) above the loss curves asks for them and reruns.");
    }
    note_->setText(note);
    note_->setVisible(!note.isEmpty());
    if (method < 0 || needsSamples_ || !snapshot_ || snapshot_->planOnly) return;

    const size_t i = static_cast<size_t>(method);
    const RunResult& r = snapshot_->result(i);
    const TheoremCurves& theorem = snapshot_->curves[i].theorem;
    // Two short lines: the panel is narrow.
    QString title = tr("%1<br>γ = %2, δ = %3")
                        .arg(snapshot_->label(i).toHtmlEscaped())
                        .arg(r.stepSize, 0, 'g', 3)
                        .arg(r.maxDelay);
    if (r.theorem && !r.theorem->stepSizeAllowed) title += tr("<br>γ > 1/L: not guaranteed");
    c->setTitle(title);

    auto* x = new QValueAxis;
    auto* y = new QLogValueAxis;
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    double xMax = 1.0;
    double yMin = std::numeric_limits<double>::infinity();
    double yMax = 0.0;
    QList<LineLegend::Entry> entries;
    for (int line = 0; line < LineCount; ++line) {
        const LineStyle& style = kStyles[line];
        auto* s = new QLineSeries;
        QList<QPointF> shown;
        bool zero = false;
        for (const QPointF& p : lineOf(theorem, line).byUpdate) {
            // A log axis has no 0: a term that is 0 (δ = 0) is named in the legend instead.
            if (!(p.y() > 0.0) || !std::isfinite(p.y())) {
                zero = zero || p.y() == 0.0;
                continue;
            }
            shown.append(p);
            xMax = std::max(xMax, p.x());
            yMin = std::min(yMin, p.y());
            yMax = std::max(yMax, p.y());
        }
        s->setName(tr(style.name) + (zero && shown.isEmpty() ? tr(" = 0") : QString()));
        QPen pen{QColor(style.colour)};
        pen.setWidthF(style.width);
        pen.setStyle(style.dash);
        s->setPen(pen);
        c->addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
        series_ << s;
        entries << LineLegend::Entry{pen, s->name()};
    }
    legend_->setEntries(entries);
    refillPoints();
    // The axes span the whole run, so they stay still during playback.
    setIntegerTicks(x, 0.0, xMax, 3);  // a narrow panel: few labels, each at its grid line
    x->setTitleText(tr("block updates K"));
    if (!std::isfinite(yMin)) yMin = yMax = 1.0;
    const int loExp = static_cast<int>(std::floor(std::log10(yMin)));
    const int hiExp = std::max(loExp + 1, static_cast<int>(std::ceil(std::log10(yMax))));
    y->setBase(10.0);
    y->setLabelFormat("%.0e");
    y->setRange(std::pow(10.0, loExp) * 0.999, std::pow(10.0, hiExp) * 1.001);
    y->setTitleText(tr("‖∇f‖²"));
}

void TheoremChart::setCursorSlot(int slot) {
    if (slot == cursor_) return;
    cursor_ = slot;
    refillPoints();
}

void TheoremChart::refillPoints() {
    const int method = selectedMethod();
    if (series_.size() != LineCount || method < 0 || !snapshot_) return;
    const auto i = static_cast<size_t>(method);
    // Playback: the samples at K no larger than the updates done by the cursor's slot.
    const double limit = cursor_ < 0
                             ? std::numeric_limits<double>::infinity()
                             : static_cast<double>(snapshot_->runs()[i].updatesBefore(cursor_));
    for (int line = 0; line < LineCount; ++line) {
        QList<QPointF> shown;
        for (const QPointF& p : lineOf(snapshot_->curves[i].theorem, line).byUpdate) {
            if (p.x() > limit) break;
            if (p.y() > 0.0 && std::isfinite(p.y())) shown.append(p);  // a log axis has no 0
        }
        series_[line]->replace(shown);
    }
}

bool TheoremChart::exportPng(const QString& path, double scale, QString* error) {
    return exportWidgetPng(plot_, path, scale, error);
}

bool TheoremChart::exportSvg(const QString& path, QString* error) {
    return exportWidgetSvg(plot_, path, error);
}

bool TheoremChart::exportCsv(const QString& path, QString* error) const {
    QByteArray out = "line,updates,value\n";
    const int method = selectedMethod();
    if (snapshot_ && !snapshot_->planOnly && method >= 0) {
        const TheoremCurves& theorem = snapshot_->curves[static_cast<size_t>(method)].theorem;
        for (int line = 0; line < LineCount; ++line) {
            const QByteArray name =
                QByteArray::fromStdString(csv::labelCell(tr(kStyles[line].name).toStdString()));
            for (const QPointF& p : lineOf(theorem, line).byUpdate) {
                out += name + ',' + QByteArray::number(p.x(), 'g', 17) + ',' +
                       QByteArray::number(p.y(), 'g', 17) + '\n';
            }
        }
    }
    return writeTextAtomically(path, out, error);
}

}  // namespace pipelens::ui

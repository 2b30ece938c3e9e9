#include "charts/memory_chart.hpp"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QSettings>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "charts/chart_support.hpp"
#include "controls/eliding_label.hpp"
#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_layout.hpp"

namespace pipelens::ui {
namespace {

// Within the budget: the Okabe-Ito blue for weights, its sky blue for activations. Over it:
// two reds, so a bar over the budget reads as such without the legend.
constexpr QRgb kWeights = chart::kBlue;
constexpr QRgb kActivations = chart::kSkyBlue;
constexpr QRgb kOverWeights = 0xffb71c1c;
constexpr QRgb kOverActivations = 0xffef9a9a;
constexpr QRgb kBudgetLine = 0xffc62828;
const char* const kBudgetKey = "memory/budget";

QString units(double v) {
    return QString::number(v, 'g', 4);
}

}  // namespace

// The painted part: axes, stacked bars, the budget line.
class MemoryBars : public QWidget {
  public:
    explicit MemoryBars(MemoryChart* chart) : QWidget(chart), chart_(chart) {
        setMouseTracking(true);
        setMinimumSize(120, 60);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }

  protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.fillRect(rect(), Qt::white);
        const auto& bars = chart_->bars_;
        if (bars.empty()) {
            chart::drawEmptyState(p, QRectF(rect()), chart_->emptyText());
            return;
        }
        const QFontMetricsF fm(font());
        const double budget = chart_->budget();
        double top = budget;
        for (const auto& b : bars) top = std::max(top, b.total());
        top = std::max(1.0, top * 1.12);
        const QRectF plot = plotRect(fm, top);
        const double perUnit = plot.height() / top;
        auto yOf = [&](double v) { return plot.bottom() - v * perUnit; };

        const double lh = fm.height();
        const std::vector<int> over = chart_->overBudget();
        // Legend along the top, wrapped into rows where the view is narrow.
        p.setPen(Qt::black);
        for (const LegendItem& item : legendLayout(fm)) {
            p.fillRect(QRectF(item.at.x(), item.at.y() + 2, 10, fm.height() - 4),
                       QColor::fromRgb(item.colour));
            p.drawText(QPointF(item.at.x() + 13, item.at.y() + fm.ascent()), item.text);
        }

        // Y axis: ticks at a nice step, at least 22 px apart.
        const double step = chart::niceTickStep(perUnit, 22.0, 0.5);
        p.setPen(QColor(0xdd, 0xdd, 0xdd));
        for (double v = 0; v <= top + 1e-9; v += step) {
            const double y = yOf(v);
            p.setPen(QColor(0xe4, 0xe4, 0xe4));
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
            p.setPen(QColor(0x44, 0x44, 0x44));
            const QString t = units(v);
            p.drawText(QPointF(plot.left() - 4 - fm.horizontalAdvance(t), y + fm.ascent() / 2 - 1),
                       t);
        }
        p.setPen(QColor(0x88, 0x88, 0x88));
        p.drawLine(plot.bottomLeft(), plot.bottomRight());

        // Bars, their labels every `labelEvery` bars when they would crowd.
        const int n = static_cast<int>(bars.size());
        const double slot = plot.width() / n;
        const double width = std::max(1.0, std::min(44.0, slot * 0.72));
        double widest = 0;
        for (const auto& b : bars) widest = std::max(widest, fm.horizontalAdvance(b.label));
        const int labelEvery = std::max(1, static_cast<int>(std::ceil((widest + 6) / slot)));
        for (int i = 0; i < n; ++i) {
            const auto& b = bars[static_cast<std::size_t>(i)];
            const bool isOver = std::find(over.begin(), over.end(), i) != over.end();
            const double cx = plot.left() + slot * (i + 0.5);
            const QRectF w(cx - width / 2, yOf(b.weights), width, b.weights * perUnit);
            const QRectF a(cx - width / 2, yOf(b.total()), width, b.activations * perUnit);
            p.fillRect(w, QColor::fromRgb(isOver ? kOverWeights : kWeights));
            p.fillRect(a, QColor::fromRgb(isOver ? kOverActivations : kActivations));
            if (width >= fm.horizontalAdvance(units(b.total())) + 2) {
                p.setPen(isOver ? QColor::fromRgb(kBudgetLine) : QColor(0x33, 0x33, 0x33));
                const QString t = units(b.total());
                p.drawText(QPointF(cx - fm.horizontalAdvance(t) / 2, a.top() - 2), t);
            }
            if (i % labelEvery == 0) {
                p.setPen(QColor(0x44, 0x44, 0x44));
                p.drawText(QPointF(cx - fm.horizontalAdvance(b.label) / 2, plot.bottom() + lh),
                           b.label);
            }
        }
        if (budget > 0) {
            QPen pen(QColor::fromRgb(kBudgetLine), 1.5, Qt::DashLine);
            p.setPen(pen);
            const double y = yOf(budget);
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        }
    }

    void mouseMoveEvent(QMouseEvent* event) override {
        const auto& bars = chart_->bars_;
        if (bars.empty()) return;
        const QFontMetricsF fm(font());
        double top = chart_->budget();
        for (const auto& b : bars) top = std::max(top, b.total());
        const QRectF plot = plotRect(fm, std::max(1.0, top * 1.12));
        const double slot = plot.width() / static_cast<double>(bars.size());
        const int i = static_cast<int>(std::floor((event->position().x() - plot.left()) / slot));
        if (i < 0 || i >= static_cast<int>(bars.size())) {
            QToolTip::hideText();
            return;
        }
        const auto& b = bars[static_cast<std::size_t>(i)];
        const QString what = chart_->perDevice_ ? tr("device %1 (stages %2)").arg(b.label, b.stages)
                                                : tr("stage %1").arg(b.label);
        QToolTip::showText(event->globalPosition().toPoint(),
                           tr("%1: %2 weight versions (%3 units) + %4 activations (%5 units) = "
                              "%6 units")
                               .arg(what)
                               .arg(b.weightVersions)
                               .arg(units(b.weights))
                               .arg(b.activationCount)
                               .arg(units(b.activations))
                               .arg(units(b.total())),
                           this);
    }

  private:
    struct LegendItem {
        QRgb colour;
        QString text;
        QPointF at;  // top left of its swatch
    };
    std::vector<LegendItem> legendLayout(const QFontMetricsF& fm) const {
        std::vector<LegendItem> items{{kWeights, tr("weight versions"), {}},
                                      {kActivations, tr("activations"), {}}};
        if (!chart_->overBudget().empty())
            items.push_back({kOverWeights, tr("over the budget"), {}});
        double x = 4;
        double y = 2;
        for (LegendItem& item : items) {
            const double w = 13 + fm.horizontalAdvance(item.text);
            if (x > 4 && x + w > width() - 4) {
                x = 4;
                y += fm.height();
            }
            item.at = QPointF(x, y);
            x += w + 10;
        }
        return items;
    }

    QRectF plotRect(const QFontMetricsF& fm, double top) const {
        const std::vector<LegendItem> legend = legendLayout(fm);
        const double legendBottom = legend.back().at.y() + fm.height();
        const double yLabels = fm.horizontalAdvance(units(top)) + 8;
        return QRectF(QPointF(yLabels, legendBottom + 8),
                      QPointF(width() - 6, height() - fm.height() - 4));
    }

    MemoryChart* chart_;
};

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) {
    setObjectName("memoryChart");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* head = new QHBoxLayout;
    // Titles and lines elide (whole text in the tooltip): the view fits beside the Gantt chart
    // of a 1024-pixel window.
    title_ = new ElidingLabel;
    title_->setObjectName("memoryTitle");
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    head->addWidget(title_, 1);
    // "Budget" and no suffix on the field: the view's least width is what a 1024-pixel window
    // leaves beside the Gantt chart (the tooltip and the verdict name the unit).
    auto* budgetLabel = new QLabel(tr("Budget"));
    budget_ = new QDoubleSpinBox;
    budget_->setObjectName("memoryBudget");
    budget_->setRange(0.0, 9999.9);
    budget_->setDecimals(1);
    budget_->setSingleStep(1.0);
    budget_->setSpecialValueText(tr("none"));
    budget_->setToolTip(
        tr("Memory one device may hold, in units (0 = no budget): the bars over it turn red"));
    budgetLabel->setBuddy(budget_);
    head->addWidget(budgetLabel);
    head->addWidget(budget_);
    layout->addLayout(head);
    barsView_ = new MemoryBars(this);
    barsView_->setToolTip(
        tr("Weight versions and activations each stage holds at once. Linear models: 1 unit = "
           "one stage's weights = one microbatch's activations; language model: 1 unit = one "
           "transformer block's parameters, an activation 1 unit."));
    layout->addWidget(barsView_, 1);
    verdict_ = new ElidingLabel;
    verdict_->setObjectName("memoryVerdict");
    layout->addWidget(verdict_);
    peaks_ = new ElidingLabel;
    peaks_->setObjectName("memoryPeaks");
    layout->addWidget(peaks_);
    // The budget is the person's hardware, not the experiment's: kept between sessions.
    budget_->setValue(QSettings().value(kBudgetKey, 0.0).toDouble());
    connect(budget_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        QSettings().setValue(kBudgetKey, v);
        refresh();
        emit budgetChanged(v);
    });
    refresh();
}

MemoryChart::~MemoryChart() = default;

MemoryModel MemoryChart::memoryModel(const RunSnapshot& snapshot) {
    MemoryModel model;
    const CharTransformerProblem* lm = snapshot.experiment.lmProblem.get();
    if (lm && lm->layout.stages() == snapshot.experiment.config.stages) {
        // One transformer block's parameters is the unit: the embedding and head stages are
        // their own sizes in blocks.
        const double block =
            static_cast<double>(std::max(1LL, LmLayout::blockSize(lm->layout.dims())));
        for (int s = 0; s < lm->layout.stages(); ++s)
            model.stageWeights.push_back(static_cast<double>(lm->layout.stage(s).size) / block);
    }
    return model;
}

void MemoryChart::setSnapshot(const SnapshotPtr& snapshot, int method) {
    pendingText_.clear();
    bars_.clear();
    peakOf_.clear();
    perDevice_ = false;
    methodLabel_.clear();
    if (snapshot) {
        const MemoryModel model = memoryModel(*snapshot);
        for (std::size_t i = 0; i < snapshot->runs().size(); ++i) {
            const auto& timeline = snapshot->result(i).timeline;
            if (!timeline) continue;
            try {
                const std::vector<StageMemory> stages = stageMemory(*timeline, model);
                const std::vector<DeviceMemory> devices = deviceMemory(*timeline, model);
                const bool shared = devices.size() < stages.size();
                MethodPeak peak;
                peak.label = snapshot->label(i);
                if (shared) {
                    const DeviceMemory d = peakDevice(devices);
                    peak.peak = d.total;
                } else {
                    for (const StageMemory& m : stages) peak.peak = std::max(peak.peak, m.total);
                }
                peakOf_.push_back(peak);
                if (static_cast<int>(i) != method) continue;
                methodLabel_ = peak.label;
                perDevice_ = shared;
                if (shared) {
                    for (const DeviceMemory& d : devices) {
                        Bar b;
                        b.label = QString::number(d.device + 1);
                        QStringList held;
                        for (int s : d.stages) held << QString::number(s + 1);
                        b.stages = held.join(QStringLiteral(", "));
                        b.weights = d.weightUnits;
                        b.activations = d.activationUnits;
                        for (int s : d.stages)
                            b.weightVersions += stages[static_cast<std::size_t>(s)].weightVersions;
                        b.activationCount = d.activations;
                        bars_.push_back(b);
                    }
                } else {
                    for (std::size_t s = 0; s < stages.size(); ++s) {
                        Bar b;
                        b.label = QString::number(s + 1);
                        b.weights = stages[s].weightUnits;
                        b.activations = stages[s].activationUnits;
                        b.weightVersions = stages[s].weightVersions;
                        b.activationCount = stages[s].activations;
                        bars_.push_back(b);
                    }
                }
            } catch (const std::exception&) {
                // A model that does not fit the timeline (stage counts differ): no bars for it.
                continue;
            }
        }
    }
    refresh();
}

void MemoryChart::showPending(const QString& text) {
    bars_.clear();
    peakOf_.clear();
    methodLabel_.clear();
    pendingText_ = text;
    refresh();
}

double MemoryChart::budget() const {
    return budget_->value();
}

void MemoryChart::setBudget(double units) {
    budget_->setValue(units);
}

std::vector<int> MemoryChart::overBudget() const {
    std::vector<int> out;
    const double b = budget();
    if (b <= 0) return out;
    for (std::size_t i = 0; i < bars_.size(); ++i)
        if (bars_[i].total() > b) out.push_back(static_cast<int>(i));
    return out;
}

QString MemoryChart::verdict() const {
    const std::vector<int> over = overBudget();
    if (over.empty()) return {};
    QStringList where;
    for (int i : over) where << bars_[static_cast<std::size_t>(i)].label;
    const QString unit = perDevice_ ? (over.size() == 1 ? tr("device") : tr("devices"))
                                    : (over.size() == 1 ? tr("stage") : tr("stages"));
    return tr("exceeds the budget of %1 units on %2 %3")
        .arg(units(budget()), unit, where.join(QStringLiteral(", ")));
}

QStringList MemoryChart::methodsOverBudget() const {
    QStringList out;
    const double b = budget();
    if (b <= 0) return out;
    for (const MethodPeak& m : peakOf_)
        if (m.peak > b) out << m.label;
    return out;
}

QString MemoryChart::emptyText() const {
    if (!pendingText_.isEmpty()) return pendingText_;
    return tr("No pipeline method: RPD and SGD-only runs have no stages to hold memory");
}

QString MemoryChart::verdictLine() const {
    if (!pendingText_.isEmpty() || peakOf_.empty()) return {};
    const QString v = verdict();
    if (!v.isEmpty()) return methodLabel_ + QLatin1Char(' ') + v;
    if (budget() > 0 && !methodLabel_.isEmpty())
        return tr("%1 fits the budget of %2 units").arg(methodLabel_, units(budget()));
    return {};
}

QString MemoryChart::peaksLine() const {
    if (!pendingText_.isEmpty() || peakOf_.empty()) return {};
    // Every pipeline method's peak on one line, those over the budget named first.
    QStringList over;
    QStringList within;
    const double b = budget();
    for (const MethodPeak& m : peakOf_)
        (b > 0 && m.peak > b ? over : within) << tr("%1 %2").arg(m.label, units(m.peak));
    if (over.isEmpty()) {
        return (b > 0 ? tr("All within the budget: %1") : tr("Peaks: %1"))
            .arg(within.join(QStringLiteral(" · ")));
    }
    QString line = tr("Over the budget: %1").arg(over.join(QStringLiteral(", ")));
    if (!within.isEmpty()) line += tr(" · within: %1").arg(within.join(QStringLiteral(", ")));
    return line;
}

QString MemoryChart::summaryText() const {
    QStringList lines;
    for (const QString& line : {verdictLine(), peaksLine()})
        if (!line.isEmpty()) lines << line;
    return lines.join(QLatin1Char('\n'));
}

void MemoryChart::refresh() {
    QString title = perDevice_ ? tr("Memory per device") : tr("Memory per stage");
    if (!pendingText_.isEmpty()) {
        title += tr(" — waiting for the schedule…");
    } else if (!methodLabel_.isEmpty()) {
        title += QStringLiteral(" — ") + methodLabel_;
    }
    title_->setFullText(title);
    const QString verdictText = verdictLine();
    verdict_->setFullText(verdictText);
    verdict_->setStyleSheet(verdict().isEmpty() ? QString() : QStringLiteral("color: #c62828;"));
    verdict_->setVisible(!verdictText.isEmpty());
    const QString peaksText = peaksLine();
    peaks_->setFullText(peaksText);
    peaks_->setStyleSheet(methodsOverBudget().isEmpty() ? QString()
                                                        : QStringLiteral("color: #c62828;"));
    peaks_->setVisible(!peaksText.isEmpty());
    barsView_->update();
}

}  // namespace pipelens::ui

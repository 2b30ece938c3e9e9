#include "sweep_view.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "charts/schedule_comparison_view.hpp"
#include "charts/sweep_chart.hpp"
#include "charts/widget_export.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/sweep_controller.hpp"
#include "errors.hpp"
#include "experiment/config/field_limits.hpp"
#include "experiment/sweep/sweep_folder.hpp"
#include "models/screen_labels.hpp"
#include "util/format_number.hpp"

namespace pipelens::ui {
namespace {

struct AxisChoice {
    const char* name;
    const char* values;  // offered when the axis is picked
};

constexpr AxisChoice kAxes[] = {
    {"stages", "2, 4, 8, 16, 32"},
    {"delta", "0, 8, 30, 60, 180"},
    {"local_steps", "1, 2, 5, 10, 30"},
    {"replicas", "2, 4, 8, 16"},
    {"noam", "1, 2, 4, 8"},
    {"gradient_noise", "0, 0.1, 0.5, 1"},
    {"step_size", "0.01, 0.03, 0.1, 0.3"},
    {"rows", "100, 300, 1000"},
    {"dim", "16, 64, 256"},
    {"schedule", "pd, 1f1b, zb-h1, 2bw, fill-drain"},
    // The kinds, each with its defaults; a kind's settings go in parentheses, correctors
    // combine with " + " (the names the chart shows read back: "prediction (pipeoptim) + dc").
    {"optimizer", "sgd, momentum, nesterov, adam, adamw"},
    {"corrector", "none, delay_adaptive, prediction, dc, lookahead, accumulate"},
};

// The text of one optimizer or corrector-list point as the chart and summary name it.
std::string categoricalName(const SweepSpec& spec, std::size_t i) {
    return spec.axis == SweepAxis::Optimizer ? optimizerShortName(spec.optimizers.at(i))
                                             : correctorsShortName(spec.correctors.at(i));
}

QString valuesText(const SweepSpec& spec) {
    QStringList parts;
    if (spec.axis == SweepAxis::Schedule) {
        for (const std::string& key : spec.schedules) parts << QString::fromStdString(key);
    } else if (categoricalSweepAxis(spec.axis)) {
        // By name, never by position (the values are the positions).
        for (std::size_t i = 0; i < spec.points(); ++i) {
            parts << QString::fromStdString(categoricalName(spec, i));
        }
    } else {
        for (double v : spec.values) parts << QString::fromStdString(formatNumber(v));
    }
    return parts.join(", ");
}

std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return {};
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// `text` cut at `separator` outside parentheses (a name's settings may hold commas).
std::vector<std::string> splitOutsideParens(const std::string& text, char separator) {
    std::vector<std::string> parts(1);
    int depth = 0;
    for (char ch : text) {
        if (ch == '(') ++depth;
        if (ch == ')') depth = std::max(0, depth - 1);
        if (ch == separator && depth == 0) {
            parts.emplace_back();
        } else {
            parts.back() += ch;
        }
    }
    for (std::string& part : parts) part = trimmed(part);
    return parts;
}

// One setting's value as JSON: true/false, a number (an integer where it is one), else text.
nlohmann::json settingValue(const std::string& text) {
    if (text == "true" || text == "false") return text == "true";
    try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size()) {
            const bool whole = text.find_first_of(".eE") == std::string::npos &&
                               std::abs(v) < 1e15 && v == std::floor(v);
            return whole ? nlohmann::json(static_cast<long long>(v)) : nlohmann::json(v);
        }
    } catch (const std::exception&) {
        // Not a number: the value is text (a unit, a prediction's s).
    }
    return text;
}

// "kind" or "kind (key=value, ...)" as the names read: the kind alone (a string) or an object
// with the keys; prediction's bare "(pipeoptim)" is its s. Core validates the result.
nlohmann::json namedKind(const std::string& text, const std::string& field) {
    const auto open = text.find('(');
    if (open == std::string::npos) return trimmed(text);
    if (text.back() != ')') {
        throw ConfigError(field + " = \"" + text +
                          "\" is not allowed: a kind, or a kind with its settings in "
                          "parentheses, e.g. adam (beta1=0.8) or dc (lambda=0.2)");
    }
    nlohmann::json object{{"kind", trimmed(text.substr(0, open))}};
    for (const std::string& setting :
         splitOutsideParens(text.substr(open + 1, text.size() - open - 2), ',')) {
        if (setting.empty()) continue;
        const auto eq = setting.find('=');
        if (eq == std::string::npos && object["kind"] == "prediction") {
            object["s"] = setting;
        } else if (eq == std::string::npos) {
            throw ConfigError(field + " = \"" + text + "\" is not allowed: the setting \"" +
                              setting + "\" needs a key=value form, e.g. beta=0.5");
        } else {
            object[trimmed(setting.substr(0, eq))] = settingValue(trimmed(setting.substr(eq + 1)));
        }
    }
    return object;
}

}  // namespace

SweepView::SweepView(ExperimentController* experiment, QWidget* parent)
    : QWidget(parent), experiment_(experiment) {
    setObjectName("sweepView");
    sweep_ = new SweepController(this);
    chart_ = new SweepChart;
    axis_ = new QComboBox;
    for (const AxisChoice& a : kAxes) {
        const SweepAxis axis = parseSweepAxis(a.name);
        const QString symbol = QString::fromStdString(sweepAxisSymbol(axis));
        const QString name = QString::fromLatin1(a.name);
        axis_->addItem(symbol == name ? name : QStringLiteral("%1 (%2)").arg(symbol, name), name);
    }
    axis_->setToolTip(tr("The parameter that changes from point to point"));
    values_ = new QLineEdit(QString::fromLatin1(kAxes[0].values));
    values_->setToolTip(
        tr("One point per value: numbers separated by commas or spaces (the schedule axis: "
           "method keys, e.g. pd, 1f1b, zb-h1, 2bw, fill-drain; the optimizer axis: kinds "
           "separated by commas, e.g. sgd, momentum, nesterov, adam, adamw, settings in "
           "parentheses as in adam (beta1=0.8); the corrector axis: none, delay_adaptive, "
           "prediction, dc, lookahead, accumulate, combined with +, as in prediction "
           "(pipeoptim) + dc (lambda=0.2))"));
    seeds_ = new QSpinBox;
    seeds_->setRange(static_cast<int>(limits::kSeeds.lo), static_cast<int>(limits::kSeeds.hi));
    seeds_->setPrefix(tr("seeds "));
    seeds_->setToolTip(tr("Runs per step size and point, averaged: the error bars are ± one sd"));
    rule_ = new QComboBox;
    rule_->addItem(tr("γ: per method"), QString());
    rule_->addItem(tr("γ: best final"), QStringLiteral("best_final"));
    rule_->addItem(tr("γ: stable"), QStringLiteral("stable"));
    rule_->setToolTip(
        tr("How each method's step size γ is picked from its grid at every point: "
           "each method's own rule, or one for all (best final f − f*, or the "
           "stable rule of SPEC §6)"));
    metric_ = new QComboBox;
    metric_->addItem(tr("y: final f − f*"), QStringLiteral("final_gap"));
    metric_->addItem(tr("y: final f"), QStringLiteral("final_objective"));
    metric_->setToolTip(tr("What the chart plots at each point"));
    // Narrow combo boxes (their lists still show whole names), so the dock can be narrow.
    for (QComboBox* box : {axis_, rule_, metric_}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(6);
    }
    values_->setMinimumWidth(80);
    run_ = new QPushButton(tr("Run sweep"));
    run_->setToolTip(tr("Runs the current experiment at every value (on all cores)"));
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setToolTip(tr("Stops between runs; every finished point is kept"));
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    progress_->setTextVisible(true);
    state_ = new QLabel;
    state_->setWordWrap(true);
    state_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Two lines reserved whatever the text: a wrapped state line ("Done: 5 points. Hover a
    // marker…") used to grow by a line the dock's layout had not counted, squeezing the chart
    // below its minimum at 1024 × 700 whenever the sweep ended after the window was laid out.
    state_->setMinimumHeight(2 * state_->fontMetrics().lineSpacing());
    state_->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    // Three short rows, so the view fits a narrow dock.
    auto* first = new QHBoxLayout;
    first->addWidget(new QLabel(tr("Axis")));
    first->addWidget(axis_);
    first->addWidget(values_, 1);
    auto* second = new QHBoxLayout;
    second->addWidget(seeds_);
    second->addWidget(rule_, 1);
    second->addWidget(metric_, 1);
    auto* third = new QHBoxLayout;
    third->addWidget(progress_, 1);
    third->addWidget(run_);
    third->addWidget(cancel_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(first);
    layout->addLayout(second);
    layout->addLayout(third);
    layout->addWidget(state_);
    layout->addWidget(chart_, 1);
    // A schedule sweep's points side by side with the comparison columns (hidden otherwise).
    table_ = new ScheduleComparisonView;
    table_->setVisible(false);
    layout->addWidget(table_, 1);

    connect(axis_, &QComboBox::activated, this, &SweepView::axisPicked);
    connect(values_, &QLineEdit::textChanged, this, &SweepView::refresh);
    connect(seeds_, &QSpinBox::valueChanged, this, &SweepView::refresh);
    connect(rule_, &QComboBox::currentIndexChanged, this, &SweepView::refresh);
    connect(metric_, &QComboBox::currentIndexChanged, this, &SweepView::refresh);
    connect(run_, &QPushButton::clicked, this, &SweepView::run);
    connect(values_, &QLineEdit::returnPressed, this, &SweepView::run);
    connect(cancel_, &QPushButton::clicked, this, &SweepView::cancel);
    connect(experiment_, &ExperimentController::configChanged, this, &SweepView::refresh);
    connect(sweep_, &SweepController::started, this, &SweepView::refresh);
    connect(sweep_, &SweepController::pointFinished, this, &SweepView::refresh);
    connect(sweep_, &SweepController::progressChanged, this, &SweepView::refresh);
    connect(sweep_, &SweepController::finished, this, &SweepView::refresh);
    connect(chart_, &SweepChart::pointClicked, this, &SweepView::openPoint);
    refresh();
}

SweepMetric SweepView::selectedMetric() const {
    return parseSweepMetric(metric_->currentData().toString().toStdString());
}

void SweepView::axisPicked() {
    values_->setText(QString::fromLatin1(kAxes[axis_->currentIndex()].values));
    refresh();
}

void SweepView::openSweep(const SweepSpec& spec, SweepMetric metric, bool start) {
    base_ = spec;
    {
        const QSignalBlocker b1(axis_), b2(values_), b3(seeds_), b4(rule_), b5(metric_);
        axis_->setCurrentIndex(axis_->findData(QString::fromStdString(sweepAxisName(spec.axis))));
        values_->setText(valuesText(spec));
        seeds_->setValue(spec.seeds);
        rule_->setCurrentIndex(spec.stepRule ? rule_->findData(QString::fromStdString(
                                                   stepRuleName(spec.stepRule->kind)))
                                             : 0);
        metric_->setCurrentIndex(
            metric_->findData(QString::fromStdString(sweepMetricName(metric))));
    }
    if (start) {
        sweep_->start(spec);
    } else {
        refresh();
    }
}

void SweepView::parseNamedValues(SweepSpec& s) const {
    std::size_t i = 0;
    for (const std::string& token : splitOutsideParens(values_->text().toStdString(), ',')) {
        if (token.empty()) continue;
        const std::string field = "axis.values[" + std::to_string(i) + "]";
        // A name of the sweep opened or run last stands for its value in full (a setting the
        // short name leaves out, such as a default written out, is kept).
        bool known = false;
        for (std::size_t j = 0; base_ && base_->axis == s.axis && j < base_->points(); ++j) {
            if (categoricalName(*base_, j) != token) continue;
            if (s.axis == SweepAxis::Optimizer) s.optimizers.push_back(base_->optimizers[j]);
            if (s.axis == SweepAxis::Corrector) s.correctors.push_back(base_->correctors[j]);
            known = true;
            break;
        }
        if (!known && s.axis == SweepAxis::Optimizer) {
            s.optimizers.push_back(readOptimizerOrKind(namedKind(token, field), field));
        } else if (!known) {
            const std::vector<std::string> parts = splitOutsideParens(token, '+');
            nlohmann::json list = nlohmann::json::array();
            for (const std::string& part : parts) {
                nlohmann::json kind = namedKind(part, field);
                list.push_back(kind.is_string() ? nlohmann::json{{"kind", kind}} : kind);
            }
            // A kind alone ("dc", "none") reads as the config's bare kind.
            s.correctors.push_back(readCorrectorsOrKind(
                parts.size() == 1 && list[0].size() == 1 ? list[0]["kind"] : list, field));
        }
        s.values.push_back(static_cast<double>(i++));
    }
    if (i == 0) {
        throw ConfigError("axis.values = \"" + values_->text().toStdString() +
                          "\" is not allowed: at least one " + sweepAxisName(s.axis) +
                          " name, separated by commas");
    }
}

ExperimentConfig SweepView::baseExperiment() const {
    const ExperimentConfig& current = experiment_->config();
    if (base_) {
        const bool shown = sweep_->spec() && *sweep_->spec() == *base_;
        if (sweepIncludes(*base_, shown ? sweep_->points() : SweepPoints{}, current)) {
            return base_->experiment;
        }
    }
    return current;
}

std::optional<SweepSpec> SweepView::pendingSpec(QString* error) const {
    try {
        // Typed, checked by core as a sweep file is (SweepSpec::validate).
        SweepSpec s;
        s.experiment = baseExperiment();
        s.name = base_ ? base_->name : s.experiment.name;
        s.axis = parseSweepAxis(axis_->currentData().toString().toStdString());
        if (s.axis == SweepAxis::Schedule) {
            // One method per key, compared on equal terms (the values are the positions).
            s.schedules = parseScheduleKeys(values_->text().toStdString());
            for (std::size_t i = 0; i < s.schedules.size(); ++i) {
                s.values.push_back(static_cast<double>(i));
            }
        } else if (s.axis == SweepAxis::Optimizer || s.axis == SweepAxis::Corrector) {
            parseNamedValues(s);
        } else {
            s.values = parseAxisValues(values_->text().toStdString());
        }
        s.seeds = seeds_->value();
        const QString rule = rule_->currentData().toString();
        if (!rule.isEmpty()) {
            // The box names the kind; a sweep opened with thresholds keeps them while its kind
            // stays picked.
            s.stepRule = parseStepRuleSpec(nlohmann::json(rule.toStdString()), "step_rule");
            if (base_ && base_->stepRule && base_->stepRule->kind == s.stepRule->kind) {
                s.stepRule = base_->stepRule;
            }
        }
        s.validate();
        return s;
    } catch (const std::exception& e) {
        if (error) *error = withScreenLabels(QString::fromStdString(e.what()), baseExperiment());
        return std::nullopt;
    }
}

bool SweepView::upToDate() const {
    if (!sweep_->spec()) return false;
    const std::optional<SweepSpec> pending = pendingSpec();
    return pending && *pending == *sweep_->spec();
}

void SweepView::run() {
    QString error;
    const std::optional<SweepSpec> spec = pendingSpec(&error);
    if (!spec) {
        refresh();
        return;
    }
    base_ = spec;
    sweep_->start(*spec);
}

void SweepView::cancel() {
    sweep_->cancel();
}

void SweepView::openPoint(int point, int method) {
    const auto& spec = sweep_->spec();
    if (!spec || point < 0 || static_cast<std::size_t>(point) >= sweep_->points().size()) return;
    const auto& result = sweep_->points()[static_cast<std::size_t>(point)];
    if (!result) return;
    try {
        experiment_->setConfig(pointRunConfig(*spec, *result));
    } catch (const std::exception& e) {
        state_->setStyleSheet("color: #b00020;");
        state_->setText(QString::fromStdString(e.what()));
        return;
    }
    emit pointOpened(point, method);
}

bool SweepView::exportCsv(const QString& path, QString* error) const {
    if (!sweep_->spec()) {
        if (error) *error = tr("nothing to export: no sweep has run");
        return false;
    }
    return writeTextAtomically(
        path, QByteArray::fromStdString(sweepSummaryCsv(*sweep_->spec(), sweep_->points())), error);
}

void SweepView::refresh() {
    QString error;
    const std::optional<SweepSpec> pending = pendingSpec(&error);
    const bool current = upToDate();
    const bool running = sweep_->running();
    run_->setEnabled(pending.has_value());
    cancel_->setEnabled(sweep_->state() == SweepController::State::Running);
    const std::size_t done = sweep_->pointsDone();
    const std::size_t total = sweep_->spec() ? sweep_->spec()->points() : 0;
    const SweepProgress& progress = sweep_->progress();
    progress_->setValue(running ? static_cast<int>(progress.fractionDone * 1000.0)
                                : (total > 0 ? static_cast<int>(1000.0 * done / total) : 0));
    progress_->setFormat(tr("%1/%2 points").arg(done).arg(total));

    QString banner;
    QString line;
    bool bad = false;
    switch (sweep_->state()) {
        case SweepController::State::Empty:
            line =
                tr("Pick the axis and its values, then Run sweep: every method is tuned at every "
                   "value.");
            break;
        case SweepController::State::Running:
            banner = done == 0
                         ? tr("Waiting for the first point (0 of %1)…").arg(total)
                         : tr("Running: %1 of %2 points, more are coming").arg(done).arg(total);
            line = QString::fromStdString(sweepProgressLine(progress));
            break;
        case SweepController::State::Cancelling:
            banner = tr("Cancelling: the finished points are kept…");
            line = banner;
            break;
        case SweepController::State::Cancelled:
            banner = tr("Cancelled: %1 of %2 points finished (kept)").arg(done).arg(total);
            line = banner + tr(" — Run sweep to compute them all again");
            break;
        case SweepController::State::Failed:
            banner = tr("The sweep failed");
            line = sweep_->error();
            bad = true;
            break;
        case SweepController::State::Done:
            line = tr("Done: %1 points. Hover a marker for its γ, click it to open that run.")
                       .arg(total);
            break;
    }
    if (sweep_->spec() && !current) {
        // The state line says why; the badge over the chart is kept short (and wraps, never
        // elided, where even that is too wide).
        banner = running ? tr("Out of date: started with other parameters")
                         : tr("Out of date — Run sweep to update");
        if (!running) line = tr("Out of date: the parameters changed — Run sweep to update");
    }
    if (!pending) {
        line = error;
        bad = true;
    }
    state_->setStyleSheet(bad ? "color: #b00020;" : QString());
    state_->setText(line);
    if (sweep_->spec()) {
        chart_->setPlot(sweepPlot(*sweep_->spec(), sweep_->points(), selectedMetric()),
                        current && sweep_->state() != SweepController::State::Failed);
    } else {
        chart_->clear();
    }
    const bool schedules = sweep_->spec() && sweep_->spec()->axis == SweepAxis::Schedule;
    table_->setVisible(schedules);
    if (schedules) {
        table_->setComparison(scheduleSweepComparison(*sweep_->spec(), sweep_->points()));
        table_->setEnabled(current);
    }
    chart_->setBanner(banner);
    // The point whose run the window's other views show: its run's experiment is the one the
    // controller holds (opened from this chart, or set to the same parameters).
    int open = -1;
    QString note;
    if (const auto& spec = sweep_->spec()) {
        // Compared as runs (as sweepIncludes does): normalized, the view aside.
        auto comparable = [](ExperimentConfig c) {
            c.view.reset();
            c.normalize();
            return c;
        };
        const ExperimentConfig shown = comparable(experiment_->config());
        const SweepPoints& points = sweep_->points();
        for (std::size_t i = 0; i < points.size() && open < 0; ++i) {
            try {
                if (points[i] && comparable(pointRunConfig(*spec, *points[i])) == shown) {
                    open = static_cast<int>(i);
                    note = tr("ringed: %1 = %2, the run the other views show")
                               .arg(QString::fromStdString(sweepAxisSymbol(spec->axis)))
                               .arg(QString::fromStdString(spec->valueText(i)));
                }
            } catch (const std::exception&) {
                // Not a run of this sweep: nothing to ring.
            }
        }
    }
    chart_->setOpenPoint(open, note);
}

}  // namespace pipelens::ui

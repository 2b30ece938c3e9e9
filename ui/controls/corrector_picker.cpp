#include "controls/corrector_picker.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardItemModel>
#include <algorithm>
#include <cmath>

#include "controls/number_text.hpp"
#include "errors.hpp"
#include "schedule/delays.hpp"

namespace pipelens::ui {
namespace {

QString allowedText(const RealLimit& limit) {
    return QString::fromUtf8(limit.allowed.data(), static_cast<qsizetype>(limit.allowed.size()));
}

QLineEdit* numberField(QWidget* parent, const QString& placeholder = {}) {
    auto* f = new QLineEdit(parent);
    f->setPlaceholderText(placeholder);
    // Short numbers: a narrow field, so that a corrector's row fits a narrow panel.
    f->setMinimumWidth(f->fontMetrics().horizontalAdvance(QStringLiteral("0.00")) + 10);
    f->setMaximumWidth(f->fontMetrics().horizontalAdvance(QStringLiteral("0.000000000")) + 12);
    return f;
}

int kindIndex(CorrectorKind kind) {
    return static_cast<int>(kind);
}

}  // namespace

CorrectorPicker::CorrectorPicker(QFormLayout* form, QWidget* parent, FieldErrors& errors, Edit edit,
                                 Current current)
    : QObject(parent),
      errors_(errors),
      edit_(std::move(edit)),
      current_(std::move(current)),
      parent_(parent),
      form_(form) {
    optimizer_ = new QComboBox(parent);
    optimizer_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    optimizer_->setMinimumContentsLength(12);
    optimizer_->addItem(tr("SGD"), "sgd");
    optimizer_->addItem(tr("heavy-ball momentum"), "momentum");
    optimizer_->addItem(tr("Nesterov momentum"), "nesterov");
    optimizer_->addItem(tr("Adam"), "adam");
    optimizer_->addItem(tr("AdamW"), "adamw");
    errors_.addRow(form, tr("Optimizer"), optimizer_,
                   tr("How a block applies its gradient (per block, state kept beside the "
                      "weights; docs/correctors.md): SGD, heavy-ball or Nesterov momentum, Adam, "
                      "AdamW. Any but plain SGD runs on the CPU engine."));
    momentum_ = numberField(parent);
    errors_.addRow(form, tr("Momentum β"), momentum_,
                   tr("Momentum and Nesterov: v ← β v + g (a number in [0, 1)); Enter applies"));
    beta1_ = numberField(parent);
    beta2_ = numberField(parent);
    eps_ = numberField(parent);
    beta1_->setToolTip(tr("β1: the first moment's decay, in [0, 1)"));
    beta2_->setToolTip(tr("β2: the second moment's decay, in [0, 1)"));
    eps_->setToolTip(tr("ε: added to √ŝ, in (0, 1]"));
    adamRow_ = row(beta1_, beta2_, eps_);
    errors_.addRow(form, tr("β1, β2, ε"), adamRow_,
                   tr("Adam and AdamW: the moments' decays β1, β2 in [0, 1) and ε in (0, 1]; "
                      "Enter applies"));
    weightDecay_ = numberField(parent);
    errors_.addRow(form, tr("Weight decay"), weightDecay_,
                   tr("λ_wd ≥ 0: coupled (g + λ_wd·w) for SGD, momentum and Adam, decoupled for "
                      "AdamW; Enter applies"));

    // One row per corrector: its box in the label's column, its parameter in the field's (a
    // narrow panel puts the parameter under the box rather than squeeze either).
    auto* title = new QLabel(tr("Correctors"), parent);
    title->setToolTip(
        tr("Staleness correctors (docs/correctors.md): each changes what a stale "
           "update does, never the schedule; off by default"));
    form->addRow(title);
    auto box = [&](CorrectorKind kind, const QString& text) {
        auto* b = new QCheckBox(text, parent);
        boxes_[kindIndex(kind)] = b;
        return b;
    };
    auto caption = [&](const QString& text) { return new QLabel(text, parent); };
    tauRef_ = numberField(parent, tr("S"));
    rows_[kindIndex(CorrectorKind::DelayAdaptive)] = row(caption(tr("τ_ref")), tauRef_);
    perBlock_ = new QCheckBox(tr("per block"), parent);
    // The unit τ_k and τ_ref count in (docs/correctors.md): beside per block, on the same row.
    unit_ = new QComboBox(parent);
    const std::pair<DelayUnit, QString> units[] = {
        {DelayUnit::BlockUpdates,
         tr("block updates: the updates of all blocks between the read and the apply (the "
            "paper's k − h(m, j′), the default)")},
        {DelayUnit::OptimizerSteps,
         tr("optimizer steps: the updates of the block itself between the read and the apply")},
        {DelayUnit::Slots, tr("slots: the time slots between the read and the apply")},
    };
    for (const auto& [unit, tip] : units) {
        unit_->addItem(QString::fromLatin1(delayUnitWords(unit)),
                       QString::fromStdString(std::string(enumName(kDelayUnits, unit))));
        unit_->setItemData(unit_->count() - 1, tip, Qt::ToolTipRole);
    }
    unit_->setToolTip(
        tr("The unit of the delays τ_k and τ_ref: block updates (all blocks' updates in "
           "between, the default), optimizer steps (the block's own updates in between) or "
           "slots (time slots in between)"));
    perBlockRow_ = row(perBlock_, caption(tr("unit")), unit_);
    steps_ = new QComboBox(parent);
    steps_->addItem(tr("exact"), "exact");
    steps_->addItem(tr("PipeOptim"), "pipeoptim");
    steps_->setItemData(0,
                        tr("s: the updates the block receives before this gradient lands, "
                           "counted from the schedule"),
                        Qt::ToolTipRole);
    steps_->setItemData(1, tr("s = S − 1 − stage (PipeOptim's estimate)"), Qt::ToolTipRole);
    rows_[kindIndex(CorrectorKind::Prediction)] = row(caption(tr("s")), steps_);
    lambda_ = numberField(parent);
    rows_[kindIndex(CorrectorKind::DelayCompensation)] = row(caption(tr("λ")), lambda_);
    lookaheadBeta_ = numberField(parent);
    rows_[kindIndex(CorrectorKind::Lookahead)] = row(caption(tr("β")), lookaheadBeta_);
    accumulate_ = spin(2, static_cast<int>(limits::kAccumulateK.hi));
    rows_[kindIndex(CorrectorKind::Accumulate)] = row(caption(tr("k")), accumulate_);
    const QString names[5] = {tr("delay-adaptive γ"), tr("prediction"), tr("DC"), tr("look-ahead"),
                              tr("accumulate")};
    const QString tips[5] = {
        tr("Delay-adaptive step (Mishchenko et al. 2022): γ_k = γ·τ_ref / max(τ_ref, τ_k), "
           "τ_k the delay of the applied gradient; τ_ref empty or 0 means S"),
        tr("Weight prediction (SpecTrain, PipeOptim): a forward reads ŵ = w + s·d, d the "
           "block's last change, s the updates the block will receive before this gradient "
           "lands: exact from the schedule, or PipeOptim's S − 1 − stage"),
        tr("Delay compensation (DC-ASGD): g ← g + λ·g⊙g⊙(w_now − w_read)"),
        tr("Look-ahead, asynchronous Nesterov (Ajanthan et al. 2025): a forward reads w + β·d "
           "and the update is w ← w + β·d − γ·g (optimizer SGD only)"),
        tr("Local accumulation (PACI-style): each block applies the mean of its last k "
           "gradients at every k-th backward"),
    };
    for (int i = 0; i < 5; ++i) {
        QCheckBox* b = box(static_cast<CorrectorKind>(i), names[i]);
        b->setToolTip(tips[i]);
        errors_.addRow(form, b, rows_[i], tips[i]);
        if (i != kindIndex(CorrectorKind::DelayAdaptive)) continue;
        errors_.addRow(form, QString(), perBlockRow_,
                       tr("Delay-adaptive γ per block: each block uses its steady delay (the "
                          "most frequent τ_k of its updates) instead of each update's own"));
    }
    compare_ = new QPushButton(tr("Compare with uncorrected"), parent);
    compare_->setObjectName("compareUncorrected");
    errors_.addSpanningRow(
        form, compare_,
        tr("Adds the same method without its correctors (\"… (uncorrected)\") right "
           "after it: the loss chart draws it dashed in the same colour"));

    // Edits.
    connect(optimizer_, &QComboBox::currentIndexChanged, this, [this] {
        if (updating_) return;
        const auto kind =
            parseEnum(kOptimizerKinds, optimizer_->currentData().toString().toStdString());
        if (!kind) return;
        edit_(optimizer_, [kind](MethodSpec& m) {
            // A decay left at the old kind's default takes the new kind's (AdamW's 0.01).
            const double oldDefault = defaultWeightDecay(m.optimizer.kind);
            m.optimizer.kind = *kind;
            if (m.optimizer.weightDecay == oldDefault)
                m.optimizer.weightDecay = defaultWeightDecay(*kind);
        });
        refresh();
    });
    editNumber(momentum_, momentum_, tr("Momentum β"),
               [](MethodSpec& m, double v) { m.optimizer.beta = v; });
    editNumber(beta1_, adamRow_, tr("β1"), [](MethodSpec& m, double v) { m.optimizer.beta1 = v; });
    editNumber(beta2_, adamRow_, tr("β2"), [](MethodSpec& m, double v) { m.optimizer.beta2 = v; });
    editNumber(eps_, adamRow_, tr("ε"), [](MethodSpec& m, double v) { m.optimizer.eps = v; });
    editNumber(weightDecay_, weightDecay_, tr("Weight decay"),
               [](MethodSpec& m, double v) { m.optimizer.weightDecay = v; });
    auto toggle = [this](CorrectorKind kind, const std::function<void(CorrectorSpec&, bool)>& set) {
        QCheckBox* b = boxes_[kindIndex(kind)];
        connect(b, &QCheckBox::toggled, this, [this, kind, set](bool on) {
            if (updating_) return;
            edit_(rows_[kindIndex(kind)], [&set, on](MethodSpec& m) { set(m.correctors, on); });
            refresh();
        });
    };
    toggle(CorrectorKind::DelayAdaptive, [](CorrectorSpec& c, bool on) { c.delayAdaptive = on; });
    toggle(CorrectorKind::Prediction, [](CorrectorSpec& c, bool on) { c.prediction = on; });
    toggle(CorrectorKind::DelayCompensation, [](CorrectorSpec& c, bool on) { c.dc = on; });
    toggle(CorrectorKind::Lookahead, [](CorrectorSpec& c, bool on) { c.lookahead = on; });
    toggle(CorrectorKind::Accumulate,
           [this](CorrectorSpec& c, bool on) { c.accumulate = on ? accumulate_->value() : 1; });
    connect(perBlock_, &QCheckBox::toggled, this, [this](bool on) {
        if (updating_) return;
        edit_(perBlockRow_, [on](MethodSpec& m) { m.correctors.perBlock = on; });
        refresh();
    });
    connect(unit_, &QComboBox::currentIndexChanged, this, [this] {
        if (updating_) return;
        const auto unit = parseEnum(kDelayUnits, unit_->currentData().toString().toStdString());
        if (!unit) return;
        edit_(perBlockRow_, [unit](MethodSpec& m) { m.correctors.unit = *unit; });
        refresh();
    });
    connect(tauRef_, &QLineEdit::editingFinished, this, [this] {
        if (updating_) return;
        const QString text = tauRef_->text().trimmed();
        bool ok = text.isEmpty();
        const double v = ok ? 0.0 : text.toDouble(&ok);
        QWidget* at = rows_[kindIndex(CorrectorKind::DelayAdaptive)];
        if (!ok || !std::isfinite(v)) {
            errors_.show(at, tr("τ_ref = \"%1\" is not allowed: %2")
                                 .arg(tauRef_->text(), allowedText(limits::kTauRef)));
            return;
        }
        edit_(at, [v](MethodSpec& m) { m.correctors.tauRef = v; });
    });
    connect(steps_, &QComboBox::currentIndexChanged, this, [this] {
        if (updating_) return;
        const auto s = parseEnum(kPredictionSteps, steps_->currentData().toString().toStdString());
        if (!s) return;
        edit_(rows_[kindIndex(CorrectorKind::Prediction)],
              [s](MethodSpec& m) { m.correctors.steps = *s; });
    });
    editNumber(lambda_, rows_[kindIndex(CorrectorKind::DelayCompensation)], tr("λ"),
               [](MethodSpec& m, double v) { m.correctors.lambda = v; });
    editNumber(lookaheadBeta_, rows_[kindIndex(CorrectorKind::Lookahead)], tr("β"),
               [](MethodSpec& m, double v) { m.correctors.beta = v; });
    connect(accumulate_, &QSpinBox::valueChanged, this, [this](int k) {
        if (updating_) return;
        edit_(rows_[kindIndex(CorrectorKind::Accumulate)],
              [k](MethodSpec& m) { m.correctors.accumulate = k; });
    });
    connect(compare_, &QPushButton::clicked, this, &CorrectorPicker::compareRequested);
}

void CorrectorPicker::refresh() {
    // A box or choice shows what the method now has (a refused one goes back, its message
    // stays in the message area).
    if (const MethodSpec* m = current_()) show(*m);
}

QWidget* CorrectorPicker::row(QWidget* first, QWidget* second, QWidget* third) {
    auto* w = new QWidget(parent_);
    auto* layout = new QHBoxLayout(w);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    for (QWidget* part : {first, second, third}) {
        if (part) layout->addWidget(part);
    }
    layout->addStretch();
    return w;
}

QCheckBox* CorrectorPicker::correctorBox(CorrectorKind kind) const {
    return boxes_[kindIndex(kind)];
}

QWidget* CorrectorPicker::correctorRow(CorrectorKind kind) const {
    return rows_[kindIndex(kind)];
}

void CorrectorPicker::editNumber(QLineEdit* field, QWidget* row, const QString& label,
                                 const std::function<void(MethodSpec&, double)>& set) {
    connect(field, &QLineEdit::editingFinished, this, [this, field, row, label, set] {
        if (updating_) return;
        bool ok = false;
        const double v = field->text().trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(v)) {
            errors_.show(row, tr("%1 = \"%2\" is not allowed: a number").arg(label, field->text()));
            return;
        }
        edit_(row, [&set, v](MethodSpec& m) { set(m, v); });
    });
}

QString CorrectorPicker::refusal(const MethodSpec& m, CorrectorKind kind, bool perBlock) {
    MethodSpec trial = m;
    CorrectorSpec& c = trial.correctors;
    switchOn(c, kind);
    if (kind == CorrectorKind::DelayAdaptive) c.perBlock = c.perBlock || perBlock;
    try {
        requireCorrectorsFit(trial, 0);
    } catch (const ConfigError& e) {
        // The config's path (methods[0].correctors[1].kind = ) means nothing beside the box.
        static const QRegularExpression path(
            QStringLiteral(R"(methods\[\d+\]\.correctors\[\d+\]\.(kind = )?)"));
        return QString::fromStdString(e.what()).remove(path);
    }
    return {};
}

void CorrectorPicker::show(const MethodSpec& m) {
    const bool wasUpdating = updating_;
    updating_ = true;
    const OptimizerSpec& o = m.optimizer;
    optimizer_->setCurrentIndex(optimizer_->findData(
        QString::fromStdString(std::string(enumName(kOptimizerKinds, o.kind)))));
    // Look-ahead is Nesterov momentum itself: with it on, only SGD.
    if (auto* model = qobject_cast<QStandardItemModel*>(optimizer_->model())) {
        for (int i = 1; i < model->rowCount(); ++i) {
            QStandardItem* item = model->item(i);
            item->setEnabled(!m.correctors.lookahead);
            item->setToolTip(m.correctors.lookahead
                                 ? tr("Not with look-ahead, which is the momentum itself: turn "
                                      "look-ahead off first")
                                 : QString());
        }
    }
    momentum_->setText(formatNumber(o.beta));
    beta1_->setText(formatNumber(o.beta1));
    beta2_->setText(formatNumber(o.beta2));
    eps_->setText(formatNumber(o.eps));
    weightDecay_->setText(formatNumber(o.weightDecay));
    form_->setRowVisible(momentum_,
                         o.kind == OptimizerKind::Momentum || o.kind == OptimizerKind::Nesterov);
    form_->setRowVisible(adamRow_, o.kind == OptimizerKind::Adam || o.kind == OptimizerKind::AdamW);

    const CorrectorSpec& c = m.correctors;
    const bool on[5] = {c.delayAdaptive, c.prediction, c.dc, c.lookahead, c.accumulate > 1};
    QWidget* const params[5] = {tauRef_, steps_, lambda_, lookaheadBeta_, accumulate_};
    const QString tips[5] = {rows_[0]->toolTip(), rows_[1]->toolTip(), rows_[2]->toolTip(),
                             rows_[3]->toolTip(), rows_[4]->toolTip()};
    for (int i = 0; i < 5; ++i) {
        const auto kind = static_cast<CorrectorKind>(i);
        // One that is on stays enabled, so that it can be turned off.
        const QString why = on[i] ? QString() : refusal(m, kind);
        boxes_[i]->setChecked(on[i]);
        boxes_[i]->setEnabled(why.isEmpty());
        boxes_[i]->setToolTip(why.isEmpty() ? tips[i] : tr("Not available: %1").arg(why));
        params[i]->setEnabled(on[i]);
    }
    tauRef_->setText(c.tauRef > 0.0 ? formatNumber(c.tauRef) : QString());
    const QString perBlockWhy =
        c.perBlock ? QString() : refusal(m, CorrectorKind::DelayAdaptive, true);
    perBlock_->setChecked(c.perBlock);
    perBlock_->setEnabled(c.delayAdaptive && perBlockWhy.isEmpty());
    perBlock_->setToolTip(perBlockWhy.isEmpty() ? perBlockRow_->toolTip()
                                                : tr("Not available: %1").arg(perBlockWhy));
    unit_->setCurrentIndex(
        unit_->findData(QString::fromStdString(std::string(enumName(kDelayUnits, c.unit)))));
    unit_->setEnabled(c.delayAdaptive);
    steps_->setCurrentIndex(
        steps_->findData(QString::fromStdString(std::string(enumName(kPredictionSteps, c.steps)))));
    lambda_->setText(formatNumber(c.lambda));
    lookaheadBeta_->setText(formatNumber(c.beta));
    accumulate_->setValue(std::max(2, c.accumulate));
    compare_->setEnabled(c.any());
    updating_ = wasUpdating;
}

}  // namespace pipelens::ui

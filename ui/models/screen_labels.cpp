#include "models/screen_labels.hpp"

#include <QCoreApplication>
#include <QHash>
#include <QRegularExpression>

namespace pipelens::ui {
namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("ScreenLabels", text);
}

// Keys of the experiment, as the controls panel labels them.
const QHash<QString, QString>& experimentLabels() {
    static const QHash<QString, QString> labels = {
        {"stages", tr("Stages S")},
        {"batch_size", tr("Batch size b")},
        {"seed", tr("Seed")},
        {"shuffle", tr("Shuffle")},
        {"backend", tr("Device")},
        {"device", tr("Device")},
        {"precision", tr("Precision")},
        {"objective.kind", tr("Objective")},
        {"objective.l2", tr("λ (L2)")},
        {"objective.gradient_noise", tr("Gradient noise σ")},
        // The language model's fields.
        {"objective.width", tr("Width C")},
        {"objective.heads", tr("Heads")},
        {"objective.context", tr("Context T")},
        {"objective.corpus", tr("Corpus file")},
        {"objective.corpus_seed", tr("Corpus seed")},
        {"objective.corpus_characters", tr("Characters")},
        {"objective.held_out_fraction", tr("Held-out fraction")},
        {"objective.held_out_every", tr("Held-out fraction")},
        {"objective.init_seed", tr("Init seed")},
        {"objective.full_objective", tr("Full objective")},
        {"data.source", tr("Data")},
        {"data.kind", tr("Data")},
        {"data.x", tr("File")},
        {"data.y", tr("File")},
        {"data.rows", tr("Rows n")},
        {"data.dim", tr("Dimension d")},
        {"data.seed", tr("Data seed")},
        {"budget", tr("Budget")},
        {"budget.slots", tr("Amount (slots)")},
        {"budget.microbatches", tr("Amount (microbatches)")},
        {"budget.epochs", tr("Amount (epochs)")},
        {"budget.compare", tr("Compare at")},
        {"budget.rule", tr("Budget rule")},
        {"costs.forward_slots", tr("Forward cost")},
        {"costs.backward_slots", tr("Backward cost")},
        {"costs.latency_slots", tr("Link latency")},
        {"costs.weight_slots", tr("Weight-gradient cost")},
        // The Sweep view's fields.
        {"axis.name", tr("Axis")},
        {"axis.values", tr("Axis values")},
        {"seeds", tr("Seeds")},
        {"step_rule", tr("γ rule")},
    };
    return labels;
}

// Keys of one method, as the method editor labels them.
const QHash<QString, QString>& methodLabels() {
    static const QHash<QString, QString> labels = {
        {"step_size", tr("Step size γ")},
        {"step_size.value", tr("Step size γ")},
        {"step_size.grid", tr("Grid")},
        {"step_size.rule", tr("Grid")},
        {"noam", tr("NOAM")},
        {"delay_mode", tr("Delay mode")},
        {"delta", tr("δ (max delay)")},
        {"order", tr("Stage/batch order")},
        {"replicas", tr("R (replicas)")},
        {"local_steps", tr("H (local steps)")},
        {"flush_group", tr("Flush group")},
        {"accumulation", tr("Accumulation m")},
        {"schedule_file", tr("Schedule file")},
        {"update", tr("Update")},
        {"virtual_stages", tr("Virtual stages v")},
        // The optimizer and the correctors (controls/corrector_picker.hpp); a corrector's
        // index in the list (correctors[1]) is left out: each has its own row.
        {"optimizer", tr("Optimizer")},
        {"optimizer.kind", tr("Optimizer")},
        {"optimizer.beta", tr("Momentum β")},
        {"optimizer.beta1", tr("β1")},
        {"optimizer.beta2", tr("β2")},
        {"optimizer.eps", tr("ε")},
        {"optimizer.weight_decay", tr("Weight decay")},
        {"correctors", tr("Correctors")},
        {"correctors.kind", tr("Correctors")},
        {"correctors.tau_ref", tr("delay-adaptive γ τ_ref")},
        {"correctors.per_block", tr("per block")},
        {"correctors.unit", tr("delay-adaptive γ unit")},
        {"correctors.s", tr("prediction s")},
        {"correctors.lambda", tr("DC λ")},
        {"correctors.beta", tr("look-ahead β")},
        {"correctors.k", tr("accumulate k")},
    };
    return labels;
}

QString methodTitle(const ExperimentConfig& config, int index) {
    if (index < 0 || index >= static_cast<int>(config.methods.size())) {
        return tr("method %1").arg(index + 1);
    }
    const MethodSpec& m = config.methods[static_cast<size_t>(index)];
    return QString::fromStdString(m.label.empty() ? defaultMethodLabel(m, config.stages) : m.label);
}

}  // namespace

QString withScreenLabels(const QString& message, const ExperimentConfig& config) {
    // A key: words joined by dots, or methods[i] with an optional field; not part of a longer
    // word or path.
    static const QRegularExpression key(QStringLiteral(
        R"((?<![\w.\[\]])(?:methods\[(\d+)\](?:\.([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+[0-9]?)*))?|([a-z_]+(?:\.[a-z_]+)*))(?![\w\[]))"));
    // What follows a plain word that names a value.
    static const QRegularExpression namesValue(QStringLiteral(R"(^\s*(?:=|is\b))"));
    QString out;
    qsizetype done = 0;
    auto it = key.globalMatch(message);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        QString label;
        if (m.capturedStart(1) >= 0) {
            const QString title = methodTitle(config, m.captured(1).toInt());
            static const QRegularExpression index(QStringLiteral(R"(\[\d+\])"));
            const QString field = m.captured(2).remove(index);
            if (field.isEmpty())
                label = title;
            else if (methodLabels().contains(field))
                label = title + ": " + methodLabels()[field];
        } else {
            QString path = m.captured(3);
            if (path.startsWith(QStringLiteral("experiment."))) path.remove(0, 11);  // a sweep's
            // With a dot it is always a key; a plain word only where it names a value.
            const bool isKey =
                path.contains('.') || namesValue.match(message.mid(m.capturedEnd(0))).hasMatch();
            if (isKey && experimentLabels().contains(path)) label = experimentLabels()[path];
        }
        if (label.isEmpty()) continue;
        out += message.mid(done, m.capturedStart(0) - done) + label;
        done = m.capturedEnd(0);
    }
    return out + message.mid(done);
}

}  // namespace pipelens::ui

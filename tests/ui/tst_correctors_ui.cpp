// The optimizer and corrector picker of the method editor (issue 33): it edits the selected
// method's optimizer and correctors and the app reruns at once; a corrector the method cannot
// take is disabled with the reason, an edit the config refuses is refused with its message.
// "Compare with uncorrected" adds the method's uncorrected twin, drawn dashed in its colour; the
// heatmap's "after correction" shows only where a run has effective delays; the preset "Can
// prediction fix PipeDream?" loads and validates.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTest>

#include "charts/line_legend.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controls/controls_panel.hpp"
#include "controls/corrector_picker.hpp"
#include "controls/method_list_editor.hpp"
#include "experiment/run/experiment.hpp"
#include "main_window.hpp"
#include "models/screen_labels.hpp"
#include "models/uncorrected_twin.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// Types `text` into `field` and finishes the edit, as Enter does.
void typeInto(QLineEdit* field, const QString& text) {
    field->setText(text);
    emit field->editingFinished();
}

void selectMethod(MethodListEditor* methods, Method kind) {
    const int count = methods->list()->count();
    for (int i = 0; i < count; ++i) {
        if (methods->list()->item(i)->text().startsWith(kind == Method::RandomizedPipeDream ? "RPD"
                                                        : kind == Method::LocalSgd ? "LocalSGD"
                                                        : kind == Method::OneFOneB ? "1F1B"
                                                                                   : "PipeDream")) {
            methods->list()->setCurrentRow(i);
            return;
        }
    }
    QFAIL("no such method in the list");
}

}  // namespace

class TestCorrectorsUi : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    // The optimizer's kind and keys edit methods[i].optimizer; each kind shows its own keys; a
    // value out of range or not a number is refused, naming the field as labelled.
    void pickerEditsTheOptimizer() {
        ExperimentController c;
        ControlsPanel panel(&c);
        MethodListEditor* methods = panel.methods();
        CorrectorPicker* picker = methods->correctors();
        selectMethod(methods, Method::PipeDream);
        QVERIFY(methods->rowShown(picker->optimizerField()));
        QVERIFY(!methods->rowShown(picker->momentumField()));
        QVERIFY(!methods->rowShown(picker->beta1Field()));
        QComboBox* kind = picker->optimizerField();
        kind->setCurrentIndex(kind->findData("momentum"));
        QCOMPARE(c.config().methods[0].optimizer.kind, OptimizerKind::Momentum);
        QVERIFY(methods->rowShown(picker->momentumField()));
        typeInto(picker->momentumField(), "0.5");
        QCOMPARE(c.config().methods[0].optimizer.beta, 0.5);
        kind->setCurrentIndex(kind->findData("adamw"));
        QCOMPARE(c.config().methods[0].optimizer.kind, OptimizerKind::AdamW);
        // AdamW's own default decay, shown.
        QCOMPARE(c.config().methods[0].optimizer.weightDecay, 0.01);
        QCOMPARE(picker->weightDecayField()->text(), QString("0.01"));
        QVERIFY(methods->rowShown(picker->beta1Field()));
        QVERIFY(!methods->rowShown(picker->momentumField()));
        typeInto(picker->beta2Field(), "0.99");
        QCOMPARE(c.config().methods[0].optimizer.beta2, 0.99);
        typeInto(picker->epsField(), "1e-6");
        QCOMPARE(c.config().methods[0].optimizer.eps, 1e-6);
        typeInto(picker->beta1Field(), "1.5");  // out of range: refused, named as labelled
        QCOMPARE(c.config().methods[0].optimizer.beta1, 0.9);
        const QString refused = methods->errors().message(picker->adamRow());
        QVERIFY2(refused.contains("β1 = 1.5 is not allowed") && refused.contains("[0, 1)"),
                 qPrintable(refused));
        QVERIFY2(!refused.contains("methods["), qPrintable(refused));
        QCOMPARE(panel.messageArea()->text(), refused);
        typeInto(picker->beta1Field(), "x");  // not a number
        QVERIFY(methods->errors().message(picker->adamRow()).contains("β1 = \"x\" is not allowed"));
        typeInto(picker->beta1Field(), "0.8");  // accepted: the message goes
        QCOMPARE(c.config().methods[0].optimizer.beta1, 0.8);
        QVERIFY(methods->errors().message(picker->adamRow()).isEmpty());
        typeInto(picker->weightDecayField(), "0.05");
        QCOMPARE(c.config().methods[0].optimizer.weightDecay, 0.05);
        // The list names the method with its optimizer, as its legend does.
        QVERIFY2(methods->list()->item(0)->text().contains("AdamW"),
                 qPrintable(methods->list()->item(0)->text()));
        // The other methods are untouched.
        QVERIFY(c.config().methods[1].optimizer.plain());
    }

    // Each corrector's box and parameter edit methods[i].correctors; a parameter is editable
    // only while its corrector is on; an edit reruns at once, the views waiting say so.
    void pickerEditsTheCorrectors() {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset("default"));
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        MethodListEditor* methods = w.controls()->methods();
        CorrectorPicker* picker = methods->correctors();
        selectMethod(methods, Method::PipeDream);
        const auto spec = [&] { return w.controller()->config().methods[0].correctors; };
        QVERIFY(!picker->compareButton()->isEnabled());
        QVERIFY(!picker->lambdaField()->isEnabled());
        const quint64 before = w.controller()->generation();
        picker->correctorBox(CorrectorKind::Prediction)->setChecked(true);
        QVERIFY(spec().prediction);
        QCOMPARE(spec().steps, PredictionSteps::Exact);
        // Rerun at once; the loss chart and the heatmap wait for it and say so.
        QVERIFY(w.controller()->generation() > before);
        QVERIFY(w.lossChart()->computing() || w.heatmap()->computing() ||
                w.controller()->running());
        QVERIFY(picker->compareButton()->isEnabled());
        QComboBox* steps = picker->predictionStepsField();
        QVERIFY(steps->isEnabled());
        steps->setCurrentIndex(steps->findData("pipeoptim"));
        QCOMPARE(spec().steps, PredictionSteps::PipeOptim);
        picker->correctorBox(CorrectorKind::DelayCompensation)->setChecked(true);
        QVERIFY(picker->lambdaField()->isEnabled());
        typeInto(picker->lambdaField(), "0.25");
        QCOMPARE(spec().lambda, 0.25);
        typeInto(picker->lambdaField(), "-1");  // refused with the config's range
        QCOMPARE(spec().lambda, 0.25);
        const QString refused =
            methods->errors().message(picker->correctorRow(CorrectorKind::DelayCompensation));
        QVERIFY2(refused.contains("DC λ = -1") &&
                     refused.contains("is not allowed: a number in [0, 1e6]"),
                 qPrintable(refused));
        picker->correctorBox(CorrectorKind::Accumulate)->setChecked(true);
        QCOMPARE(spec().accumulate, 2);
        picker->accumulateField()->setValue(4);
        QCOMPARE(spec().accumulate, 4);
        picker->correctorBox(CorrectorKind::DelayAdaptive)->setChecked(true);
        QVERIFY(spec().delayAdaptive);
        QCOMPARE(spec().tauRef, 0.0);  // empty: S
        typeInto(picker->tauRefField(), "16");
        QCOMPARE(spec().tauRef, 16.0);
        QVERIFY(picker->perBlockBox()->isEnabled());
        picker->perBlockBox()->setChecked(true);
        QVERIFY(spec().perBlock);
        // Off again: the config keeps none of its parameters, the field is off.
        picker->correctorBox(CorrectorKind::DelayCompensation)->setChecked(false);
        QVERIFY(!spec().dc);
        QVERIFY(!picker->lambdaField()->isEnabled());
        QVERIFY2(methods->list()->item(0)->text().contains("prediction (PipeOptim s)"),
                 qPrintable(methods->list()->item(0)->text()));
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        // The legend names the correctors: the run is told from plain PD.
        const QString name = w.lossChart()->legend()->entries().at(0).name;
        QVERIFY2(name.contains("+ prediction (PipeOptim s)"), qPrintable(name));
        QCOMPARE(w.controller()->latest()->runs()[0].spec.correctors, spec());
    }

    // delay_adaptive's unit sits beside per block: editable only while delay-adaptive γ is on,
    // each unit's tooltip saying what it counts, and picking one edits correctors.unit.
    void pickerEditsTheDelayUnit() {
        ExperimentController c;
        ControlsPanel panel(&c);
        MethodListEditor* methods = panel.methods();
        CorrectorPicker* picker = methods->correctors();
        selectMethod(methods, Method::PipeDream);
        QComboBox* unit = picker->unitField();
        QVERIFY(unit != nullptr);
        QCOMPARE(unit->count(), 3);
        QVERIFY(!unit->isEnabled());  // delay-adaptive γ is off
        QVERIFY(picker->perBlockRow()->isAncestorOf(unit));
        const QString tips[3] = {unit->itemData(0, Qt::ToolTipRole).toString(),
                                 unit->itemData(1, Qt::ToolTipRole).toString(),
                                 unit->itemData(2, Qt::ToolTipRole).toString()};
        QVERIFY2(tips[0].contains("updates of all blocks"), qPrintable(tips[0]));
        QVERIFY2(tips[1].contains("the block itself"), qPrintable(tips[1]));
        QVERIFY2(tips[2].contains("time slots"), qPrintable(tips[2]));
        const auto spec = [&] { return c.config().methods[0].correctors; };
        picker->correctorBox(CorrectorKind::DelayAdaptive)->setChecked(true);
        QVERIFY(unit->isEnabled());
        QCOMPARE(unit->currentData().toString(), QString("block_updates"));
        unit->setCurrentIndex(unit->findData("optimizer_steps"));
        QCOMPARE(spec().unit, DelayUnit::OptimizerSteps);
        unit->setCurrentIndex(unit->findData("slots"));
        QCOMPARE(spec().unit, DelayUnit::Slots);
        QVERIFY2(methods->list()->item(0)->text().contains("delay"),
                 qPrintable(methods->list()->item(0)->text()));
        // Off again: the field is off and the config keeps the default unit.
        picker->correctorBox(CorrectorKind::DelayAdaptive)->setChecked(false);
        QVERIFY(!unit->isEnabled());
        QCOMPARE(spec().unit, DelayUnit::BlockUpdates);
    }

    // requireCorrectorsFit's rules, shown: RPD takes only delay-adaptive γ (not per block) and
    // DC; a synchronous schedule none; prediction and look-ahead exclude each other; look-ahead
    // needs SGD. Each refused one is disabled with the reason in its tooltip.
    void whatAMethodCannotTakeIsDisabled() {
        ExperimentController c;
        ControlsPanel panel(&c);
        MethodListEditor* methods = panel.methods();
        CorrectorPicker* picker = methods->correctors();
        auto box = [&](CorrectorKind k) { return picker->correctorBox(k); };
        selectMethod(methods, Method::RandomizedPipeDream);
        for (const CorrectorKind k :
             {CorrectorKind::Prediction, CorrectorKind::Lookahead, CorrectorKind::Accumulate}) {
            QVERIFY(!box(k)->isEnabled());
            QVERIFY2(box(k)->toolTip().contains("not allowed with method \"rpd\""),
                     qPrintable(box(k)->toolTip()));
        }
        QVERIFY(box(CorrectorKind::DelayCompensation)->isEnabled());
        QVERIFY(box(CorrectorKind::DelayAdaptive)->isEnabled());
        box(CorrectorKind::DelayAdaptive)->setChecked(true);
        QVERIFY(c.config().methods[1].correctors.delayAdaptive);
        QVERIFY(!picker->perBlockBox()->isEnabled());
        QVERIFY2(picker->perBlockBox()->toolTip().contains("per_block = true is not allowed"),
                 qPrintable(picker->perBlockBox()->toolTip()));
        // LocalSGD takes every one.
        selectMethod(methods, Method::LocalSgd);
        for (int k = 0; k < 5; ++k) QVERIFY(box(static_cast<CorrectorKind>(k))->isEnabled());
        // A synchronous schedule takes none.
        methods->addMethod(Method::OneFOneB);
        QCOMPARE(c.config().methods.back().method, Method::OneFOneB);
        for (int k = 0; k < 5; ++k) {
            QCheckBox* b = box(static_cast<CorrectorKind>(k));
            QVERIFY(!b->isEnabled());
            QVERIFY2(b->toolTip().contains("a synchronous step reads fresh weights"),
                     qPrintable(b->toolTip()));
        }
        // Prediction and look-ahead exclude each other; look-ahead needs SGD.
        selectMethod(methods, Method::PipeDream);
        box(CorrectorKind::Prediction)->setChecked(true);
        QVERIFY(!box(CorrectorKind::Lookahead)->isEnabled());
        QVERIFY(box(CorrectorKind::Lookahead)->toolTip().contains("together with prediction"));
        box(CorrectorKind::Prediction)->setChecked(false);
        QVERIFY(box(CorrectorKind::Lookahead)->isEnabled());
        box(CorrectorKind::Lookahead)->setChecked(true);
        QVERIFY(c.config().methods[0].correctors.lookahead);
        auto* model = qobject_cast<QStandardItemModel*>(picker->optimizerField()->model());
        QVERIFY(model);
        QVERIFY(model->item(0)->isEnabled());  // SGD
        for (int i = 1; i < model->rowCount(); ++i) QVERIFY(!model->item(i)->isEnabled());
        box(CorrectorKind::Lookahead)->setChecked(false);
        QComboBox* kind = picker->optimizerField();
        kind->setCurrentIndex(kind->findData("adam"));
        QCOMPARE(c.config().methods[0].optimizer.kind, OptimizerKind::Adam);
        QVERIFY(!box(CorrectorKind::Lookahead)->isEnabled());
        QVERIFY2(box(CorrectorKind::Lookahead)->toolTip().contains("optimizer sgd"),
                 qPrintable(box(CorrectorKind::Lookahead)->toolTip()));
    }

    // The OpenCL backend applies every corrector (docs/opencl.md): on Device = opencl a
    // corrector is taken, with no message.
    void openClTakesCorrectors() {
        ExperimentController c;
        ControlsPanel panel(&c);
        QVERIFY(
            c.tryModify([](ExperimentConfig& x) { x.backend = BackendKind::OpenCl; }).isEmpty());
        MethodListEditor* methods = panel.methods();
        CorrectorPicker* picker = methods->correctors();
        selectMethod(methods, Method::PipeDream);
        QCheckBox* dc = picker->correctorBox(CorrectorKind::DelayCompensation);
        dc->setChecked(true);
        QVERIFY(c.config().methods[0].correctors.dc);
        QCOMPARE(c.config().backend, BackendKind::OpenCl);
        QVERIFY(dc->isChecked());
        QCOMPARE(methods->errors().message(picker->correctorRow(CorrectorKind::DelayCompensation)),
                 QString());
        // The screen labels of every corrector key (on the method without its dc, for short).
        ExperimentConfig config = c.config();
        config.methods[0].correctors = {};
        QCOMPARE(withScreenLabels("methods[0].correctors[1].lambda = -1 is not allowed", config),
                 QString("PipeDream: DC λ = -1 is not allowed"));
        QCOMPARE(withScreenLabels("methods[0].optimizer.beta2 = 2 is not allowed", config),
                 QString("PipeDream: β2 = 2 is not allowed"));
        QCOMPARE(withScreenLabels("methods[0].correctors.k = 0 is not allowed", config),
                 QString("PipeDream: accumulate k = 0 is not allowed"));
    }

    // "Compare with uncorrected": the same method without its correctors, right after it,
    // labelled "… (uncorrected)", drawn dashed in the same colour; a second click adds nothing.
    void compareWithUncorrectedAddsTheTwin() {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset("default"));
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        MethodListEditor* methods = w.controls()->methods();
        CorrectorPicker* picker = methods->correctors();
        selectMethod(methods, Method::PipeDream);
        QVERIFY(!methods->compareWithUncorrected());  // no correctors yet
        picker->correctorBox(CorrectorKind::Prediction)->setChecked(true);
        QTest::mouseClick(picker->compareButton(), Qt::LeftButton);
        const auto& config = w.controller()->config();
        QCOMPARE(config.methods.size(), std::size_t(4));
        const MethodSpec& twin = config.methods[1];
        QCOMPARE(twin.label, std::string("PipeDream (uncorrected)"));
        QVERIFY(!twin.correctors.any());
        QCOMPARE(twin.step.value, config.methods[0].step.value);
        QVERIFY(isUncorrectedTwin(twin, config.methods[0]));
        QCOMPARE(methods->list()->currentRow(), 0);  // the corrected one stays selected
        QCOMPARE(methods->list()->item(1)->text(), QString("PipeDream (uncorrected)"));
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        const QList<QLineSeries*> series = w.lossChart()->methodSeries();
        QCOMPARE(series.size(), 4);
        QCOMPARE(series[0]->pen().style(), Qt::SolidLine);
        QVERIFY(series[1]->pen().style() != Qt::SolidLine);  // dashed
        QCOMPARE(series[1]->pen().color(), series[0]->pen().color());
        QVERIFY(series[2]->pen().color() != series[0]->pen().color());  // RPD
        QCOMPARE(series[2]->pen().style(), Qt::SolidLine);
        const auto entries = w.lossChart()->legend()->entries();
        QVERIFY2(entries[0].name.startsWith("PD + prediction (exact s), γ="),
                 qPrintable(entries[0].name));
        QVERIFY2(entries[1].name.startsWith("PipeDream (uncorrected), γ="),
                 qPrintable(entries[1].name));
        QVERIFY(entries[1].pen.style() != Qt::SolidLine);
        // Again: nothing new. Unchecked: checked again.
        QVERIFY(methods->compareWithUncorrected());
        QCOMPARE(w.controller()->config().methods.size(), std::size_t(4));
        methods->list()->item(1)->setCheckState(Qt::Unchecked);
        QCOMPARE(w.controller()->config().methods.size(), std::size_t(3));
        methods->list()->setCurrentRow(0);
        QVERIFY(methods->compareWithUncorrected());
        QCOMPARE(w.controller()->config().methods.size(), std::size_t(4));
        QCOMPARE(methods->list()->count(), 4);
        // Another γ for the corrected method: the pair no longer runs alike, and is no pair.
        const std::vector<MethodSpec> specs = w.controller()->config().methods;
        QCOMPARE(uncorrectedPartners(specs), (std::vector<int>{-1, 0, -1, -1}));
        std::vector<MethodSpec> other = specs;
        other[0].step.value *= 2;
        QCOMPARE(uncorrectedPartners(other), (std::vector<int>{-1, -1, -1, -1}));
    }

    // "after correction" shows only where the heatmap's method has effective delays; ticked, the
    // heatmap shows them, and the title says which.
    void heatmapToggleOnlyWithEffectiveDelays() {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset("default"));
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        QCheckBox* after = w.afterCorrectionBox();
        QVERIFY(!after->isVisible());
        QCOMPARE(w.heatmapMethodIndex(), 0);
        // A run whose PD has effective delays: every second update takes effect.
        ExperimentResult r = runExperiment(w.controller()->config());
        RunResult& pd = r.methods[0].result;
        QVERIFY(pd.delays);
        const auto K = static_cast<std::size_t>(pd.delays->updates());
        std::vector<char> applies(K);
        std::vector<long long> closing(K);
        for (std::size_t k = 0; k < K; ++k) {
            applies[k] = k % 2 == 1;
            closing[k] = k % 2 == 1  ? static_cast<long long>(k)
                         : k + 1 < K ? static_cast<long long>(k + 1)
                                     : -1;
        }
        pd.effectiveDelays = pd.delays->effective(applies, closing);
        w.controller()->adoptResult(std::move(r), 0.1);
        QVERIFY(after->isVisible());
        QVERIFY(!after->isChecked());
        const SnapshotPtr s = w.controller()->latest();
        QCOMPARE(w.heatmap()->delays().get(), &*s->result(0).delays);
        const auto title = [&] {
            for (QLabel* l : w.findChildren<QLabel*>()) {
                if (l->text().startsWith("<b>Staleness</b>")) return l->text();
            }
            return QString();
        };
        QVERIFY2(title().endsWith("before correction"), qPrintable(title()));
        after->setChecked(true);
        QCOMPARE(w.heatmap()->delays().get(), &*s->result(0).effectiveDelays);
        QVERIFY2(title().endsWith("after correction"), qPrintable(title()));
        // Half the updates take effect: the effective maximum is about half the schedule's.
        QVERIFY(w.heatmap()->measuredMax() < 0.6 * s->result(0).delays->maxDelay());
        // A run without them: hidden, and the title names no correction.
        w.controller()->adoptResult(runExperiment(w.controller()->config()), 0.1);
        QVERIFY(!w.controller()->latest()->result(0).effectiveDelays);
        QVERIFY(!after->isVisible());
        QCOMPARE(w.heatmap()->delays().get(), &*w.controller()->latest()->result(0).delays);
        QVERIFY2(!title().contains("correction"), qPrintable(title()));
    }

    // The engine fills the effective delays for a method that accumulates (k = 2): the toggle
    // shows, and after correction the delays count only the updates that took effect (about
    // half the schedule's for k = 2).
    void accumulationShowsItsEffectiveDelays() {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset("default"));
        const QString refused = w.controller()->tryModify(
            [](ExperimentConfig& c) { c.methods[0].correctors.accumulate = 2; });
        QVERIFY2(refused.isEmpty(), qPrintable(refused));
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        const SnapshotPtr s = w.controller()->latest();
        QVERIFY(s->result(0).effectiveDelays);
        QCOMPARE(w.heatmapMethodIndex(), 0);
        QCheckBox* after = w.afterCorrectionBox();
        QVERIFY(after->isVisible());
        const double scheduled = w.heatmap()->measuredMax();
        after->setChecked(true);
        QCOMPARE(w.heatmap()->delays().get(), &*s->result(0).effectiveDelays);
        const double effective = w.heatmap()->measuredMax();
        QVERIFY2(effective < 0.6 * scheduled && effective > 0.4 * scheduled,
                 qPrintable(QStringLiteral("%1 vs %2").arg(effective).arg(scheduled)));
        // The same method without accumulation: no effective delays, no toggle.
        QVERIFY(w.controller()
                    ->tryModify([](ExperimentConfig& c) { c.methods[0].correctors.accumulate = 1; })
                    .isEmpty());
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        QVERIFY(!w.controller()->latest()->result(0).effectiveDelays);
        QVERIFY(!after->isVisible());
    }

    // The preset loads and validates: PD, PD + prediction (exact s), PD + prediction (PipeOptim
    // s) and 1F1B at S = 8, one γ.
    void predictionPresetLoads() {
        const Preset p = loadPreset("prediction");
        QVERIFY(!p.sweep);
        const ExperimentConfig& c = p.config;
        QCOMPARE(c.stages, 8);
        QCOMPARE(c.methods.size(), std::size_t(4));
        QCOMPARE(c.methods[0].method, Method::PipeDream);
        QVERIFY(!c.methods[0].correctors.any());
        QVERIFY(c.methods[1].correctors.prediction);
        QCOMPARE(c.methods[1].correctors.steps, PredictionSteps::Exact);
        QVERIFY(c.methods[2].correctors.prediction);
        QCOMPARE(c.methods[2].correctors.steps, PredictionSteps::PipeOptim);
        QCOMPARE(c.methods[3].method, Method::OneFOneB);
        for (const MethodSpec& m : c.methods) {
            QVERIFY(!m.step.grid);
            QCOMPARE(m.step.value, c.methods[0].step.value);
        }
        ExperimentController::validated(c);  // throws if not
        QVERIFY(p.title.startsWith("Can prediction fix PipeDream?"));
        QVERIFY(p.lesson.size() > 200);
        MainWindow w;
        QString error;
        QVERIFY2(w.loadPreset("prediction", &error), qPrintable(error));
        QVERIFY2(w.waitForResults(test::timeout(60000), &error), qPrintable(error));
        QCOMPARE(w.controller()->latest()->runs().size(), std::size_t(4));
    }
};

QTEST_MAIN(TestCorrectorsUi)
#include "tst_correctors_ui.moc"

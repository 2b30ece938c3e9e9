// Invalid field values are refused in place: the config keeps its value, the field shows a
// message that says what is allowed; valid values go through.
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTest>
#include <algorithm>
#include <limits>

#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controls/controls_panel.hpp"
#include "controls/lm_objective_fields.hpp"
#include "controls/log_slider.hpp"
#include "controls/method_list_editor.hpp"
#include "models/screen_labels.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

class TestControls : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void stagesAboveTheDimensionAreRefused() {
        ExperimentController c;
        ControlsPanel panel(&c);
        QWidget* field = panel.stagesField()->parentWidget();
        panel.stagesField()->setValue(100);  // d = 64
        QCOMPARE(c.config().stages, 8);
        QVERIFY2(panel.errors().message(field).startsWith("Stages S = 100 is not allowed"),
                 qPrintable(panel.errors().message(field)));
        QVERIFY2(panel.errors().message(field).contains("S <= d"),
                 qPrintable(panel.errors().message(field)));
        QCOMPARE(panel.errors().refused().size(), 1);
        panel.stagesField()->setValue(16);  // valid: accepted, message gone
        QCOMPARE(c.config().stages, 16);
        QVERIFY(panel.errors().message(field).isEmpty());
        QCOMPARE(panel.stagesSlider()->value(), 16);
        panel.stagesSlider()->setValue(12);  // the slider edits S too
        QCOMPARE(c.config().stages, 12);
        QCOMPARE(panel.stagesField()->value(), 12);
    }

    void rowsThatAreNotAMultipleOfTheBatchAreRefused() {
        ExperimentController c;
        ControlsPanel panel(&c);
        panel.rowsField()->setValue(605);
        QCOMPARE(c.config().data.rows, 600);
        QVERIFY(panel.errors().message(panel.rowsField()).contains("multiple"));
        panel.batchField()->setValue(7);
        QCOMPARE(c.config().batchSize, 10);
        const QString batch = panel.errors().message(panel.batchField());
        QVERIFY2(
            batch.startsWith("Batch size b = 7 is not allowed: Rows n = 600 must be a multiple"),
            qPrintable(batch));
    }

    // Messages under the controls name the controls, not the config's keys.
    void messagesUseTheLabelsOnScreen() {
        ExperimentConfig c = defaultExperiment();
        c.methods[1].label = "RPD, uniform";
        QCOMPARE(withScreenLabels("stages = 100 is not allowed: each stage needs a coordinate", c),
                 QString("Stages S = 100 is not allowed: each stage needs a coordinate"));
        QCOMPARE(withScreenLabels("budget.epochs = 5 is not allowed with stages = 300: at most "
                                  "4 stages x 2",
                                  c),
                 QString("Amount (epochs) = 5 is not allowed with Stages S = 300: at most 4 "
                         "stages x 2"));
        QCOMPARE(withScreenLabels("methods[1].delta = -3 is not allowed", c),
                 QString("RPD, uniform: δ (max delay) = -3 is not allowed"));
        QCOMPARE(withScreenLabels("methods[1] needs data.rows >= 10", c),
                 QString("RPD, uniform needs Rows n >= 10"));
        // A sweep's experiment keys, and the Sweep view's own fields.
        QCOMPARE(withScreenLabels("experiment.batch_size = 0 is not allowed; axis.values = []", c),
                 QString("Batch size b = 0 is not allowed; Axis values = []"));
        // Prose and keys it does not know are left alone.
        QCOMPARE(withScreenLabels("the seed of the stages, foo.bar = 1", c),
                 QString("the seed of the stages, foo.bar = 1"));
    }

    void textFieldsRefuseNonNumbers() {
        ExperimentController c;
        ControlsPanel panel(&c);
        panel.l2Field()->setText("-1");
        emit panel.l2Field()->editingFinished();
        QCOMPARE(c.config().objective.l2, 1e-4);
        QVERIFY(panel.errors().message(panel.l2Field()).contains("≥ 0"));
        panel.seedField()->setText("abc");
        emit panel.seedField()->editingFinished();
        QCOMPARE(c.config().seed, 1ULL);
        QVERIFY(panel.errors().message(panel.seedField()).startsWith("Seed = \"abc\""));
        panel.seedField()->setText("42");
        emit panel.seedField()->editingFinished();
        QCOMPARE(c.config().seed, 42ULL);
        QVERIFY(panel.errors().message(panel.seedField()).isEmpty());
    }

    void theStepSizeFieldIsExactAndBounded() {
        ExperimentController c;
        ControlsPanel panel(&c);
        MethodListEditor* m = panel.methods();
        m->list()->setCurrentRow(0);  // PipeDream
        LogSlider* step = m->stepSlider();
        step->field()->setText("0");
        emit step->field()->editingFinished();
        QCOMPARE(c.config().methods[0].step.value, 0.25);
        QVERIFY(step->errorText().contains("not allowed"));
        step->field()->setText("0.0123456789");
        emit step->field()->editingFinished();
        QCOMPARE(c.config().methods[0].step.value, 0.0123456789);  // exact, not slider-rounded
        QVERIFY(step->errorText().isEmpty());
        step->slider()->setValue(step->slider()->maximum());
        QCOMPARE(c.config().methods[0].step.value, 100.0);
        // The field accepts what the config accepts, (0, 1e12], beyond the slider's decades,
        // and refuses with the config's own words.
        step->field()->setText("1e-7");
        emit step->field()->editingFinished();
        QCOMPARE(c.config().methods[0].step.value, 1e-7);
        QCOMPARE(step->slider()->value(), step->slider()->minimum());
        step->field()->setText("2e12");
        emit step->field()->editingFinished();
        QCOMPARE(c.config().methods[0].step.value, 1e-7);
        QVERIFY2(step->errorText().endsWith("is not allowed: a number in (0, 1e12]"),
                 qPrintable(step->errorText()));
    }

    // Every numeric field's range is the config's (field_limits.hpp), cut only to what a spin
    // box holds: the app never refuses what a config file may say, nor offers what it may not.
    void fieldRangesAreTheConfigs() {
        ExperimentController c;
        ControlsPanel panel(&c);
        auto check = [](QSpinBox* box, const IntLimit& limit, const char* name) {
            const long long hi = std::min<long long>(limit.hi, std::numeric_limits<int>::max());
            QVERIFY2(box->minimum() == limit.lo && box->maximum() == hi, name);
        };
        check(panel.rowsField(), limits::kRows, "rows");
        check(panel.dimField(), limits::kDim, "dim");
        check(panel.stagesField(), limits::kStages, "stages");
        check(panel.batchField(), limits::kBatchSize, "batch");
        check(panel.forwardCostField(), limits::kOpSlots, "forward cost");
        check(panel.backwardCostField(), limits::kOpSlots, "backward cost");
        check(panel.latencyField(), limits::kLatencySlots, "latency");
        MethodListEditor* m = panel.methods();
        check(m->gridMinField(), limits::kGridExponent, "grid");
        check(m->noamField(), limits::kNoam, "noam");
        check(m->deltaField(), limits::kDelta, "delta");
        check(m->replicasField(), limits::kReplicas, "replicas");
        check(m->localStepsField(), limits::kLocalSteps, "local steps");
        LmObjectiveFields* lm = panel.lmFields();
        check(lm->widthField(), limits::kWidth, "width");
        check(lm->headsField(), limits::kHeads, "heads");
        check(lm->contextField(), limits::kContext, "context");
        check(lm->initSeedField(), limits::kSeed, "init seed");
        check(lm->corpusSeedField(), limits::kSeed, "corpus seed");
        check(lm->corpusCharactersField(), limits::kCorpusCharacters, "corpus characters");
        QCOMPARE(m->stepSlider()->accepted().allowed, limits::kStepSize.allowed);
    }

    // An edit of a key the config does not use (another method's parameter) is no change: no
    // rerun; the same edit of a used key is one.
    void anEditOfAnUnusedKeyIsNoChange() {
        ExperimentController c;
        QSignalSpy changed(&c, &ExperimentController::configChanged);
        QVERIFY(c.config().methods[0].method == Method::PipeDream);
        QVERIFY(c.tryModify([](ExperimentConfig& x) { x.methods[0].replicas = 7; }).isEmpty());
        QCOMPARE(changed.count(), 0);
        QVERIFY(c.tryModify([](ExperimentConfig& x) { x.methods[0].noam = 2; }).isEmpty());
        QCOMPARE(changed.count(), 1);
        QCOMPARE(c.config().methods[0].noam, 2);
        const QString refused = c.tryModify([](ExperimentConfig& x) { x.methods[0].noam = -1; });
        QVERIFY2(refused.contains("is not allowed: 0 (meaning S) or an integer in [1, 1000000000]"),
                 qPrintable(refused));
        QCOMPARE(changed.count(), 1);
    }

    // A grid-tuned preset's γ field shows the γ the grid chose; unticking "tune γ" keeps that
    // γ (it used to send step_size = 0 and be refused), and a refusal clears once the config is
    // valid again.
    void untickingTheGridKeepsTheGammaItChose() {
        ExperimentController c;
        ControlsPanel panel(&c);
        ExperimentConfig grid = loadPreset("e3-quadratic").config;
        grid.methods.resize(1);  // PD, γ = 2^a for a in [-10, 0]
        c.setConfig(grid);
        c.runNow();
        QVERIFY(test::waitForCurrentResults(c));
        MethodListEditor* m = panel.methods();
        m->list()->setCurrentRow(0);
        QVERIFY(m->gridField()->isChecked());
        const MethodRun& run = c.latest()->runs()[0];
        const double chosen = run.grid[static_cast<size_t>(run.chosen)].stepSize;
        QCOMPARE(m->stepSlider()->value(), chosen);
        m->gridField()->setChecked(false);
        QCOMPARE(m->errors().refused().size(), 0);
        QVERIFY(!c.config().methods[0].step.grid);
        QCOMPARE(c.config().methods[0].step.value, chosen);
        QCOMPARE(m->stepSlider()->value(), chosen);

        m->gridField()->setChecked(true);
        m->gridMinField()->setValue(5);  // above a_max = 0: refused
        QCOMPARE(m->errors().refused().size(), 1);
        m->stepSlider()->field()->setText("0.125");
        emit m->stepSlider()->field()->editingFinished();  // a valid edit: the config is valid
        QCOMPARE(m->errors().refused().size(), 0);
    }

    void methodParametersAndTheListAreEdited() {
        ExperimentController c;
        ControlsPanel panel(&c);
        MethodListEditor* m = panel.methods();
        m->list()->setCurrentRow(1);  // RPD
        m->deltaField()->setValue(30);
        QCOMPARE(c.config().methods[1].delta, 30LL);
        m->delayModeField()->setCurrentIndex(m->delayModeField()->findData("max"));
        QCOMPARE(c.config().methods[1].delayMode, DelayMode::Max);
        m->list()->setCurrentRow(2);  // LocalSGD
        m->localStepsField()->setValue(3);
        QCOMPARE(c.config().methods[2].localSteps, 3);
        m->replicasField()->setValue(4);
        QCOMPARE(c.config().methods[2].replicas, 4);
        // Unchecking leaves the method out of the config but keeps it in the list.
        m->list()->item(2)->setCheckState(Qt::Unchecked);
        QCOMPARE(c.config().methods.size(), size_t(2));
        QCOMPARE(m->list()->count(), 3);
        m->list()->item(2)->setCheckState(Qt::Checked);
        QCOMPARE(c.config().methods.size(), size_t(3));
        QCOMPARE(c.config().methods[2].localSteps, 3);
        m->addMethod(Method::FillDrain);
        QCOMPARE(c.config().methods.size(), size_t(4));
        QCOMPARE(c.config().methods[3].method, Method::FillDrain);
        // The last checked method cannot be unchecked: the engine needs at least one.
        for (int i = 1; i < m->list()->count(); ++i)
            m->list()->item(i)->setCheckState(Qt::Unchecked);
        QCOMPARE(c.config().methods.size(), size_t(1));
        m->list()->item(0)->setCheckState(Qt::Unchecked);
        QCOMPARE(m->list()->item(0)->checkState(), Qt::Checked);
        QCOMPARE(c.config().methods.size(), size_t(1));
    }

    void objectiveAndBudgetEdits() {
        ExperimentController c;
        ControlsPanel panel(&c);
        panel.objectiveField()->setCurrentIndex(panel.objectiveField()->findData("quadratic"));
        QCOMPARE(c.config().objective.loss, LossKind::Quadratic);
        QCOMPARE(c.config().data.kind, std::string("random"));  // logistic data switched too
        panel.budgetKindField()->setCurrentIndex(panel.budgetKindField()->findData("slots"));
        panel.budgetField()->setValue(500);
        QCOMPARE(c.config().budget.totalSlots, 500);
        QCOMPARE(c.config().budget.epochs, 0.0);
        panel.compareField()->setCurrentIndex(panel.compareField()->findData("updates"));
        QCOMPARE(c.config().budget.compare, BudgetCompare::Updates);
        panel.deviceField()->setCurrentIndex(panel.deviceField()->findData("cpu"));
        QCOMPARE(c.config().backend, BackendKind::Cpu);
    }

    // Budget rule: choosing Reach sets budget.rule and the run follows it (PD at S = 4 in 19
    // slots: fit N = 6, 18 slots; reach N = 7, 20 slots); a config with reach loaded elsewhere
    // shows it; under Equal block updates the combo is disabled (no rule applies).
    void theBudgetRuleIsEdited() {
        ExperimentController c;
        ControlsPanel panel(&c);
        QComboBox* rule = panel.budgetRuleField();
        QVERIFY(rule);
        QCOMPARE(rule->count(), 3);
        for (int i = 0; i < rule->count(); ++i)
            QVERIFY(!rule->itemData(i, Qt::ToolTipRole).toString().isEmpty());
        QCOMPARE(rule->currentData().toString(), QString("fit"));
        QVERIFY(rule->isEnabled());
        panel.stagesField()->setValue(4);
        panel.budgetKindField()->setCurrentIndex(panel.budgetKindField()->findData("slots"));
        panel.budgetField()->setValue(19);
        QCOMPARE(c.config().budget.totalSlots, 19);
        QCOMPARE(c.config().stages, 4);
        rule->setCurrentIndex(rule->findData("reach"));
        QCOMPARE(c.config().budget.rule, BudgetRule::Reach);
        c.runNow();
        QVERIFY(test::waitForCurrentResults(c));
        const RunResult& pd = c.latest()->result(0);
        QCOMPARE(c.latest()->experiment.methods[0].spec.method, Method::PipeDream);
        QCOMPARE(pd.microbatches, 7LL);
        QVERIFY(pd.timeline);
        QCOMPARE(pd.timeline->totalSlots, 20);
        rule->setCurrentIndex(rule->findData("truncate"));
        QCOMPARE(c.config().budget.rule, BudgetRule::Truncate);

        ExperimentConfig other = c.config();
        other.budget.rule = BudgetRule::Reach;
        c.setConfig(other);
        QCOMPARE(rule->currentData().toString(), QString("reach"));
        QCOMPARE(rule->currentText(), QString("Reach"));
        other.budget.compare = BudgetCompare::Updates;
        c.setConfig(other);
        QVERIFY(!rule->isEnabled());
        QCOMPARE(withScreenLabels("budget.rule = \"x\" is not allowed", other),
                 QString("Budget rule = \"x\" is not allowed"));
    }

    // Gradient noise σ is edited under Objective and data (E3-logistic's lesson asks for it):
    // a number ≥ 0 is the config's; anything else is refused, named with its label on screen.
    void theGradientNoiseIsEdited() {
        ExperimentController c;
        ControlsPanel panel(&c);
        QLineEdit* noise = panel.noiseField();
        QVERIFY(noise);
        noise->setText("0.5");
        emit noise->editingFinished();
        QCOMPARE(c.config().objective.gradientNoise, 0.5);
        noise->setText("lots");
        emit noise->editingFinished();
        QCOMPARE(c.config().objective.gradientNoise, 0.5);
        QVERIFY2(panel.errors().message(noise).startsWith("Gradient noise σ = \"lots\" is not "
                                                          "allowed: a number in [0, 1e12]"),
                 qPrintable(panel.errors().message(noise)));
        noise->setText("-1");
        emit noise->editingFinished();
        QCOMPARE(c.config().objective.gradientNoise, 0.5);
        QVERIFY2(panel.errors().message(noise).startsWith(
                     "Gradient noise σ = -1.0 is not allowed: a number in [0, 1e12]"),
                 qPrintable(panel.errors().message(noise)));
        ExperimentConfig other = c.config();
        other.objective.gradientNoise = 0.25;
        c.setConfig(other);
        QCOMPARE(noise->text(), QString("0.25"));
    }

    // Forward and backward costs and the link latency are the config's `costs`: the run's
    // timeline takes them (a backward of 2 slots and a latency of 1 lengthen PD's run), and a
    // config changed elsewhere shows in the fields.
    void costsAndLatencyAreEdited() {
        ExperimentController c;
        ControlsPanel panel(&c);
        c.runNow();
        QVERIFY(test::waitForCurrentResults(c));
        const int before = c.latest()->totalSlots;
        panel.backwardCostField()->setValue(2);
        panel.latencyField()->setValue(1);
        QCOMPARE(c.config().costs.backwardSlots, 2);
        QCOMPARE(c.config().costs.latencySlots, 1);
        QCOMPARE(c.config().costs.forwardSlots, 1);
        QVERIFY(test::waitForCurrentResults(c));
        const auto& timeline = c.latest()->result(0).timeline;
        QVERIFY(timeline);
        QCOMPARE(timeline->params.costs.backwardSlots, 2);
        QCOMPARE(timeline->params.costs.latencySlots, 1);
        QVERIFY2(c.latest()->totalSlots > before,
                 qPrintable(QString("%1 -> %2").arg(before).arg(c.latest()->totalSlots)));
        ExperimentConfig other = c.config();
        other.costs = OpCosts{3, 4, 2};
        c.setConfig(other);
        QCOMPARE(panel.forwardCostField()->value(), 3);
        QCOMPARE(panel.backwardCostField()->value(), 4);
        QCOMPARE(panel.latencyField()->value(), 2);
    }

    // The schedule family's parameters: each method shows its own fields, and edits go to the
    // config (refusals, such as 2BW's m < S, shown at the field with the engine's message).
    void theInterleavedFieldsFollowTheMethod() {
        ExperimentController c;
        ExperimentConfig cfg = c.config();
        cfg.costs = {4, 4, 0, 1};  // chunk ops of 4 / v slots
        c.setConfig(cfg);
        ControlsPanel panel(&c);
        MethodListEditor* m = panel.methods();
        m->addMethod(Method::Interleaved);
        QCOMPARE(c.config().methods.back().method, Method::Interleaved);
        QVERIFY(m->rowShown(m->virtualStagesField()));
        QVERIFY(m->rowShown(m->flushGroupField()));
        QVERIFY(!m->rowShown(m->accumulationField()));
        m->virtualStagesField()->setValue(4);
        QCOMPARE(c.config().methods.back().virtualStages, 4);
        m->virtualStagesField()->setValue(3);  // 4 slots do not split into 3 chunk ops
        QCOMPARE(c.config().methods.back().virtualStages, 4);
        const QString refused = m->errors().message(m->virtualStagesField());
        QVERIFY2(refused.contains("multiples of 3"), qPrintable(refused));
        m->list()->setCurrentRow(0);  // PipeDream has no such field
        QVERIFY(!m->rowShown(m->virtualStagesField()));
    }

    void theScheduleFamilyFieldsFollowTheMethod() {
        ExperimentController c;
        ControlsPanel panel(&c);
        MethodListEditor* m = panel.methods();
        const int S = c.config().stages;
        auto shown = [m] {
            QStringList names;
            const QList<QPair<QString, QWidget*>> fields = {{"noam", m->noamField()},
                                                            {"flush", m->flushGroupField()},
                                                            {"m", m->accumulationField()},
                                                            {"file", m->scheduleFileField()},
                                                            {"update", m->updateField()}};
            for (const auto& f : fields) {
                if (m->rowShown(f.second)) names << f.first;
            }
            return names.join(',');
        };
        m->list()->setCurrentRow(0);  // PipeDream
        QCOMPARE(shown(), QString("noam"));
        m->addMethod(Method::OneFOneB);
        QCOMPARE(c.config().methods.back().method, Method::OneFOneB);
        QCOMPARE(shown(), QString("flush"));
        m->flushGroupField()->setValue(6);
        QCOMPARE(c.config().methods.back().flushGroup, 6);
        m->addMethod(Method::ZeroBubbleH1);
        QCOMPARE(shown(), QString("flush"));
        QCOMPARE(m->flushGroupField()->value(), 0);  // its own M, not 1F1B's
        m->flushGroupField()->setValue(5);
        QCOMPARE(c.config().methods.back().method, Method::ZeroBubbleH1);
        QCOMPARE(c.config().methods.back().flushGroup, 5);
        m->addMethod(Method::TwoBw);
        QCOMPARE(shown(), QString("m"));
        m->accumulationField()->setValue(S + 2);
        QCOMPARE(c.config().methods.back().accumulation, S + 2);
        m->accumulationField()->setValue(S - 1);  // 2BW sums m >= S microbatches
        QCOMPARE(c.config().methods.back().accumulation, S + 2);
        const QString refused = m->errors().message(m->accumulationField());
        QVERIFY2(refused.contains(QString::number(S - 1)), qPrintable(refused));
        m->accumulationField()->setValue(0);  // 0 = S
        QCOMPARE(c.config().methods.back().accumulation, 0);
        QVERIFY(m->errors().message(m->accumulationField()).isEmpty());

        // An imported schedule waits, unchecked, for its file.
        const size_t before = c.config().methods.size();
        m->addMethod(Method::Imported);
        QCOMPARE(shown(), QString("file,update"));
        QCOMPARE(c.config().methods.size(), before);
        const int row = m->list()->currentRow();
        QCOMPARE(m->list()->item(row)->checkState(), Qt::Unchecked);
        // A missing file is refused with the engine's message, and it stays out.
        m->setScheduleFile("/nonexistent/schedule.csv");
        QCOMPARE(c.config().methods.size(), before);
        const QString missing = m->errors().message(m->scheduleFileField()->parentWidget());
        QVERIFY2(missing.contains("/nonexistent/schedule.csv"), qPrintable(missing));
        QCOMPARE(m->list()->item(row)->checkState(), Qt::Unchecked);
        // A file whose stages are not S's is refused too. The example has 4 ranks x 2 stages.
        const QString file = PIPELENS_SOURCE_DIR "/examples/schedules/interleaved_s4_m8_v2.csv";
        ExperimentConfig other = c.config();
        other.stages = 4;
        c.setConfig(other);
        QCOMPARE(c.config().stages, 4);
        m->list()->setCurrentRow(m->list()->count() - 1);
        QCOMPARE(m->list()->item(m->list()->count() - 1)->checkState(), Qt::Unchecked);
        m->setScheduleFile(file);
        QCOMPARE(c.config().methods.size(), before);
        const QString stages = m->errors().message(m->scheduleFileField()->parentWidget());
        QVERIFY2(stages.contains("its file has 8 stages"), qPrintable(stages));
        other = c.config();
        other.stages = 8;
        c.setConfig(other);
        QCOMPARE(c.config().stages, 8);
        m->list()->setCurrentRow(m->list()->count() - 1);
        // Through the line edit, as typed.
        m->scheduleFileField()->setText(file);
        m->scheduleFileField()->setModified(true);
        emit m->scheduleFileField()->editingFinished();
        QCOMPARE(c.config().methods.size(), before + 1);
        QCOMPARE(c.config().methods.back().method, Method::Imported);
        QCOMPARE(QString::fromStdString(c.config().methods.back().scheduleFile), file);
        QVERIFY(!c.config().methods.back().asyncUpdate);
        QCOMPARE(m->list()->item(m->list()->count() - 1)->checkState(), Qt::Checked);
        m->updateField()->setCurrentIndex(m->updateField()->findData("async"));
        QVERIFY(c.config().methods.back().asyncUpdate);
        QVERIFY(m->list()->item(m->list()->count() - 1)->text().contains("async"));
        // Once checked, a bad file is refused and the good one kept.
        m->setScheduleFile("/nonexistent/schedule.csv");
        QCOMPARE(QString::fromStdString(c.config().methods.back().scheduleFile), file);
        QCOMPARE(m->scheduleFileField()->text(), file);
        QVERIFY(!m->errors().message(m->scheduleFileField()->parentWidget()).isEmpty());
        // Back at fill-drain's row: only its flush group.
        m->addMethod(Method::FillDrain);
        QCOMPARE(shown(), QString("flush"));
    }

    void theWeightGradientCostIsEdited() {
        ExperimentController c;
        ControlsPanel panel(&c);
        panel.backwardCostField()->setValue(3);
        panel.weightCostField()->setValue(2);
        QCOMPARE(c.config().costs.weightSlots, 2);
        panel.weightCostField()->setValue(1);
        QCOMPARE(c.config().costs.weightSlots, 1);
        ExperimentConfig other = c.config();
        other.costs.weightSlots = 3;
        c.setConfig(other);
        QCOMPARE(panel.weightCostField()->value(), 3);
    }

    void fieldsFollowAConfigChangedElsewhere() {
        ExperimentController c;
        ControlsPanel panel(&c);
        panel.stagesField()->setValue(100);  // refused, message shown
        ExperimentConfig other = c.config();
        other.stages = 5;
        other.data.rows = 300;
        c.setConfig(other);
        QCOMPARE(panel.stagesField()->value(), 5);
        QCOMPARE(panel.rowsField()->value(), 300);
        QVERIFY(panel.errors().refused().isEmpty());
    }

    // "All γ ×" scales every method's γ at once, relative to the config loaded; ×1 restores it,
    // and a reset (a new preset) keeps the γ and shows ×1.
    void oneMultiplierScalesEveryStepSize() {
        ExperimentController c;
        ControlsPanel panel(&c);
        const ExperimentConfig before = c.config();
        QVERIFY(before.methods.size() >= 3);
        QComboBox* scale = panel.stepScaleField();
        scale->setCurrentIndex(scale->findData(2));  // × 4
        for (size_t i = 0; i < before.methods.size(); ++i)
            QCOMPARE(c.config().methods[i].step.value, 4.0 * before.methods[i].step.value);
        QCOMPARE(panel.stepScaleExponent(), 2);
        scale->setCurrentIndex(scale->findData(-1));  // × 1/2: from the loaded config, not from × 4
        for (size_t i = 0; i < before.methods.size(); ++i)
            QCOMPARE(c.config().methods[i].step.value, before.methods[i].step.value / 2.0);
        scale->setCurrentIndex(scale->findData(0));
        for (size_t i = 0; i < before.methods.size(); ++i)
            QCOMPARE(c.config().methods[i].step.value, before.methods[i].step.value);
        scale->setCurrentIndex(scale->findData(3));
        const double scaled = c.config().methods[0].step.value;
        panel.resetStepScale();
        QCOMPARE(scale->currentData().toInt(), 0);
        QCOMPARE(c.config().methods[0].step.value, scaled);
        QVERIFY(panel.errors().message(scale).isEmpty());
    }

    // A factor the engine refuses (a grid shifted past 2^20) leaves every γ as it was, says why
    // beside the field, and the next factor is still relative to the loaded config.
    void aRefusedMultiplierChangesNothing() {
        ExperimentController c;
        QCOMPARE(c.tryModify([](ExperimentConfig& x) {
            x.methods[0].step.grid = true;
            x.methods[0].step.gridMin = -2;
            x.methods[0].step.gridMax = 18;
        }),
                 QString());
        ControlsPanel panel(&c);
        const ExperimentConfig before = c.config();
        QComboBox* scale = panel.stepScaleField();
        scale->setCurrentIndex(scale->findData(4));  // x 16: the grid would end at 2^22
        QCOMPARE(c.config().methods[0].step.gridMax, 18);
        QCOMPARE(c.config().methods[1].step.value, before.methods[1].step.value);
        QCOMPARE(panel.stepScaleExponent(), 0);
        // Named as on screen: the method's title in the list and its "Grid" field.
        const QString refusal = panel.errors().message(scale);
        const QString title = QString::fromStdString(defaultMethodLabel(c.config().methods[0], 8));
        QVERIFY2(refusal.startsWith(title + ": Grid = "), qPrintable(refusal));
        QVERIFY2(!refusal.contains("step_size") && !refusal.contains("methods["),
                 qPrintable(refusal));
        scale->setCurrentIndex(scale->findData(1));  // x 2 is fine
        QCOMPARE(c.config().methods[0].step.gridMax, 19);
        QCOMPARE(c.config().methods[1].step.value, 2.0 * before.methods[1].step.value);
        QVERIFY(panel.errors().message(scale).isEmpty());
    }
};

QTEST_MAIN(TestControls)
#include "tst_controls.moc"

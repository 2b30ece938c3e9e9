// The presets are valid experiments in the command-line tool's format, each with a lesson, and a
// saved experiment reopens to the same configuration.
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/objective_cache.hpp"
#include "main_window.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

class TestPresets : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void everyFigureOfThePaperHasAPreset() {
        const QStringList ids = presetIds();
        QCOMPARE(ids.first(), QString("default"));
        for (const char* id :
             {"e1-delays", "e2-pd-vs-rpd", "e3-quadratic", "e3-logistic", "e4-scaling"}) {
            QVERIFY2(ids.contains(id), id);
        }
    }

    void presetsAreCliConfigsWithLessons_data() {
        QTest::addColumn<QString>("id");
        for (const QString& id : presetIds()) QTest::newRow(qPrintable(id)) << id;
    }
    void presetsAreCliConfigsWithLessons() {
        QFETCH(QString, id);
        const Preset p = loadPreset(id);
        QVERIFY(p.lesson.size() > 200);
        QVERIFY(!p.title.isEmpty());
        QCOMPARE(QString::fromStdString(p.config.name), id);
        // The command-line tool runs the preset's file from the source tree, and the config it
        // records is the one the app loaded: for an experiment config.json (what it read,
        // defaults filled in) after `run`; for a sweep its sweep.json, which `sweep` writes
        // before the first point (the sweep itself is stopped there: it is long).
        QTemporaryDir dir;
        const QString file =
            QStringLiteral(PIPELENS_SOURCE_DIR "/resources/presets/%1.json").arg(id);
        const QString out = dir.filePath(QStringLiteral("results"));
        const QString recordedPath =
            out + (p.sweep ? QStringLiteral("/sweep.json") : QStringLiteral("/config.json"));
        QProcess cli;
        cli.start(QStringLiteral(PIPELENS_CLI_PATH),
                  {p.sweep ? QStringLiteral("sweep") : QStringLiteral("run"), file,
                   QStringLiteral("--out"), out, QStringLiteral("--quiet")});
        if (p.sweep) {
            QVERIFY(QTest::qWaitFor(
                [&] {
                    return QFileInfo::exists(recordedPath) || cli.state() == QProcess::NotRunning;
                },
                test::timeout(120000)));
            QVERIFY2(QFileInfo::exists(recordedPath), cli.readAllStandardError().constData());
            cli.kill();
            QVERIFY(cli.waitForFinished(test::timeout(10000)));
        } else {
            QVERIFY(cli.waitForFinished(test::timeout(120000)));
            QVERIFY2(cli.exitStatus() == QProcess::NormalExit && cli.exitCode() == 0,
                     cli.readAllStandardError().constData());
        }
        QFile recorded(recordedPath);
        QVERIFY(recorded.open(QIODevice::ReadOnly));
        const nlohmann::json cliConfig = nlohmann::json::parse(recorded.readAll().toStdString());
        const nlohmann::json appConfig = p.sweep ? p.sweep->toJson() : p.config.toJson();
        QVERIFY2(cliConfig == appConfig,
                 qPrintable(QStringLiteral("the CLI read %1 as\n%2\nthe app as\n%3")
                                .arg(file, QString::fromStdString(cliConfig.dump(1)),
                                     QString::fromStdString(appConfig.dump(1)))));
        if (p.sweep && p.sweep->axis == SweepAxis::Delta) {
            // A sweep over δ opens as one run of the first point's methods with RPD at every δ
            // of the axis (the paper's E2 figure): the same settings otherwise.
            ExperimentConfig first = p.sweep->pointConfig(0);
            QCOMPARE(first.methods.size(), std::size_t(2));
            QCOMPARE(first.methods[0].method, Method::PipeDream);
            QCOMPARE(p.config.methods.size(), 1 + p.sweep->values.size());
            QVERIFY(p.config.methods[0] == first.methods[0]);
            for (std::size_t i = 0; i < p.sweep->values.size(); ++i) {
                MethodSpec expected = first.methods[1];
                expected.delta = static_cast<long long>(p.sweep->values[i]);
                QVERIFY2(p.config.methods[i + 1] == expected, qPrintable(QString::number(i)));
            }
            first.methods = p.config.methods;
            QVERIFY(p.config.toJson() == first.toJson());
            QCOMPARE(QString::fromStdString(p.sweep->name), id);
        } else if (p.sweep) {
            // The window opens with the sweep's first point.
            QVERIFY(p.config.toJson() == p.sweep->pointConfig(0).toJson());
            QCOMPARE(QString::fromStdString(p.sweep->name), id);
        }
    }

    // SPEC section 7's setups as the authors' notebooks ran them (section 7.1); E2 and E4 open as
    // sweeps (their figures are sweeps), E3 as one run of several methods (its figure is curves
    // over time).
    void thePaperSetupsAreThePapers() {
        // The notebook's stable rule as it ran (its thresholds, the tests not applied) on f over
        // the given curve, with that tail fraction.
        const auto notebookRule = [](const StepSpec& step, StepCurve curve, double tail) {
            StableThresholds thresholds = stablePreset("notebook");
            thresholds.tailFraction = tail;
            thresholds.applyTests = false;
            return step.rule.kind == StepRule::Stable && step.rule.preset == "notebook_as_run" &&
                   step.rule.stable == thresholds && step.rule.curve == curve &&
                   step.rule.value == StepValue::Objective;
        };
        const Preset e2 = loadPreset("e2-pd-vs-rpd");
        QVERIFY(e2.sweep);
        QCOMPARE(e2.sweep->axis, SweepAxis::Delta);
        QCOMPARE(e2.sweep->values, (std::vector<double>{8, 30, 60, 180, 420}));
        QVERIFY(!e2.sweep->stepRule);  // each method's own rule
        const ExperimentConfig& b2 = e2.sweep->experiment;
        QCOMPARE(b2.data.seed, std::uint64_t(0));
        QCOMPARE(b2.stages, 8);
        QCOMPARE(b2.data.rows, 2000);
        QCOMPARE(b2.data.dim, 512);
        QCOMPARE(b2.batchSize, 100);
        QCOMPARE(b2.budget.epochs, 20.0);
        QCOMPARE(b2.budget.compare, BudgetCompare::Updates);
        QCOMPARE(b2.seed, std::uint64_t(0));  // RPD's seed 0 stands for it: the authors' seed 0
        for (const MethodSpec& m : b2.methods) {
            QVERIFY(m.step.grid);
            QCOMPARE(m.step.gridMin, -8);
            QCOMPARE(m.step.gridMax, 0);
        }
        QCOMPARE(b2.methods.size(), std::size_t(2));
        QVERIFY(notebookRule(b2.methods[0].step, StepCurve::Updates, 0.2));  // PD: the last 20 %
        QVERIFY(notebookRule(b2.methods[1].step, StepCurve::Updates, 1.0));  // RPD: the whole curve

        const Preset e4 = loadPreset("e4-scaling");
        QVERIFY(e4.sweep);
        QCOMPARE(e4.sweep->axis, SweepAxis::Stages);
        QCOMPARE(e4.sweep->values, (std::vector<double>{2, 4, 8, 16, 32, 64, 128}));
        QVERIFY(!e4.sweep->stepRule);  // each method's own rule
        QCOMPARE(e4.metric, SweepMetric::FinalObjective);
        const ExperimentConfig& b4 = e4.sweep->experiment;
        QCOMPARE(b4.data.rows, 50);
        QCOMPARE(b4.data.dim, 512);
        QCOMPARE(b4.batchSize, 1);
        QCOMPARE(b4.objective.l2, 1e-4);
        QCOMPARE(b4.objective.gradientNoise, 0.5);
        QCOMPARE(b4.objective.noiseStream, NoiseStream::Shared);  // one stream per S, as run
        QCOMPARE(b4.budget.totalSlots, 3180);
        QCOMPARE(b4.budget.compare, BudgetCompare::Time);
        QCOMPARE(b4.budget.rule, BudgetRule::Reach);  // the smallest N that lasts 3180 slots, uncut
        QCOMPARE(b4.methods.size(), std::size_t(3));
        for (const MethodSpec& m : b4.methods) {
            QVERIFY(m.step.grid);
            QVERIFY(notebookRule(m.step, StepCurve::Slots, 0.01));
        }
        QCOMPARE(b4.methods[0].step.gridMin, -12);  // PD and RPD: 2^-12 ... 2^-3
        QCOMPARE(b4.methods[0].step.gridMax, -3);
        QCOMPARE(b4.methods[1].step.gridMin, -12);
        QCOMPARE(b4.methods[1].step.gridMax, -3);
        QCOMPARE(b4.methods[2].step.gridMin, -8);  // LocalSGD: 2^-8 ... 2^2
        QCOMPARE(b4.methods[2].step.gridMax, 2);
        QCOMPARE(b4.methods[1].delta, -1LL);  // S^2 - S/2 at every S
        QCOMPARE(b4.methods[2].localSteps, 5);
        QCOMPARE(b4.methods[2].replicas, 0);  // R = S

        for (const char* id : {"e3-quadratic", "e3-logistic"}) {
            const Preset e3 = loadPreset(id);
            QVERIFY(!e3.sweep);
            QCOMPARE(e3.config.stages, 16);
            QCOMPARE(e3.config.data.dim, 512);
            // N = 600 microbatches for every method, cut at PD's run length (1230 slots).
            QCOMPARE(e3.config.budget.totalSlots, 0);
            QCOMPARE(e3.config.budget.microbatches, 600);
            QCOMPARE(e3.config.budget.compare, BudgetCompare::Time);
            QCOMPARE(e3.config.budget.rule, BudgetRule::Truncate);
            for (const MethodSpec& m : e3.config.methods) {
                QVERIFY(m.step.grid);
                QCOMPARE(m.step.gridMin, -12);
                QCOMPARE(m.step.gridMax, -3);
                QVERIFY(notebookRule(m.step, StepCurve::Slots, 0.2));
            }
            const ExperimentResult planned = plannedViews(e3.config, *prepareObjective(e3.config));
            QCOMPARE(planned.budget.slotBudget, 1230);
        }
        const ExperimentConfig q = loadPreset("e3-quadratic").config;
        QCOMPARE(q.data.kind, std::string("tridiagonal"));
        QCOMPARE(q.data.rows, 600);
        QCOMPARE(q.batchSize, 5);  // M = 120: the 600 microbatches of 1230 slots are 5 epochs
        // The logistic panel is the paper's noisy logistic setting (E4's).
        const ExperimentConfig l = loadPreset("e3-logistic").config;
        QCOMPARE(l.data.rows, 50);
        QCOMPARE(l.batchSize, 1);
        QCOMPARE(l.objective.gradientNoise, 0.5);
        std::vector<int> hs;
        for (const MethodSpec& m : q.methods) {
            if (m.method == Method::LocalSgd) hs.push_back(m.localSteps);
        }
        QCOMPARE(hs, (std::vector<int>{2, 5, 30}));
        QCOMPARE(loadPreset("e3-logistic").config.methods[1].localSteps, 5);
    }

    // The default lesson's numbers are what its preset's PipeDream run shows: the second-half
    // maximum (the heatmap's header) is S² − S/2 = 60, the whole run's (the start-up stripe)
    // 72.
    void theDefaultLessonSaysWhatItsPresetShows() {
        const Preset p = loadPreset("default");
        ExperimentConfig c = p.config;
        auto pipeDream = [&](int S) {
            c.stages = S;
            const ExperimentResult planned = plannedViews(c, *prepareObjective(c));
            QTEST_ASSERT(planned.methods[0].spec.method == Method::PipeDream);
            return planned.methods[0].result;
        };
        const RunResult at8 = pipeDream(8);
        QVERIFY(p.lesson.contains(QStringLiteral("S = %1 stages").arg(8)));
        QVERIFY(
            p.lesson.contains(QStringLiteral("S² − S/2 = %1 updates").arg(at8.delayStats->max)));
        QCOMPARE(at8.delayStats->max, pipeDreamMaxDelayFormula(8));
        QVERIFY(p.lesson.contains(
            QStringLiteral("start-up stripe on the left reaches %1").arg(at8.delays->maxDelay())));
        QVERIFY(at8.delays->maxDelay() > at8.delayStats->max);
    }

    // "Which schedule wins?" is listed under that title, runs the schedule family (PD, GPipe,
    // 1F1B, ZB-H1, 2BW) and is examples/schedule-family.json under its own name: the file
    // docs/schedules.md's figures and CLI output come from.
    void theScheduleFamilyPresetIsTheExample() {
        QVERIFY(presetIds().contains("schedules"));
        const Preset p = loadPreset("schedules");
        QVERIFY2(p.title.startsWith("Which schedule wins?"), qPrintable(p.title));
        QVERIFY(!p.sweep);
        std::vector<std::string> keys;
        for (const MethodSpec& m : p.config.methods) keys.push_back(methodName(m.method));
        QCOMPARE(keys, (std::vector<std::string>{"pd", "fill-drain", "1f1b", "zb-h1", "2bw"}));
        ExperimentConfig example =
            ExperimentConfig::fromFile(PIPELENS_SOURCE_DIR "/examples/schedule-family.json");
        QCOMPARE(example.name, std::string("schedule-family"));
        example.name = p.config.name;
        QVERIFY(example.toJson() == p.config.toJson());
    }

    void anUnknownPresetIsRefused() {
        QVERIFY_THROWS_EXCEPTION(std::exception, loadPreset("e9"));
        MainWindow w;
        QString error;
        QVERIFY(!w.loadPreset("e9", &error));
        QVERIFY(error.contains("e1-delays"));  // says what is allowed
    }

    void aSavedExperimentReopensToTheSameConfiguration() {
        QTemporaryDir dir;
        MainWindow w;
        QVERIFY(w.loadPreset("e1-delays"));
        QCOMPARE(w.controller()->tryModify([](ExperimentConfig& c) {
            c.seed = 31337;
            c.stages = 5;
        }),
                 QString());
        const auto saved = w.controller()->config().toJson();
        const QString path = dir.filePath("exp.json");
        QString error;
        QVERIFY2(w.saveConfig(path, &error), qPrintable(error));
        MainWindow other;
        QVERIFY2(other.openConfig(path, &error), qPrintable(error));
        QVERIFY(other.controller()->config().toJson() == saved);
        QCOMPARE(other.currentFile(), QFileInfo(path).absoluteFilePath());
        // And the command-line tool reads the same file: the same run, plus the window's view.
        ExperimentConfig read = ExperimentConfig::fromFile(path.toStdString());
        QVERIFY(read.view.has_value());
        read.view.reset();
        QVERIFY(read.toJson() == saved);
    }
};

QTEST_MAIN(TestPresets)
#include "tst_presets.moc"

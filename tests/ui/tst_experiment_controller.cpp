// The controller: the one owner of the config. Valid edits rerun (debounced) on a worker thread,
// invalid ones are refused with the engine's message, newer runs make older ones out of date,
// and the one-line text restores the exact run.
#include <QSignalSpy>
#include <QTest>

#include "backend_select.hpp"
#include "controllers/experiment_controller.hpp"
#include "experiment/run/experiment.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

class TestExperimentController : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void runsTheDefaultExperimentOnAWorker() {
        ExperimentController c;
        QSignalSpy ready(&c, &ExperimentController::resultsReady);
        c.runNow();
        QVERIFY(c.running());
        QVERIFY(test::waitForCurrentResults(c));
        QCOMPARE(ready.count(), 1);
        const SnapshotPtr s = c.latest();
        QCOMPARE(s->runs().size(), c.config().methods.size());
        // The same numbers as the engine run directly with the same config on the same backend
        // (the default config's backend is "auto": the CPU engine for a run this small).
        std::vector<std::string> notices;
        const BackendChoice backend = selectBackend(c.config(), notices);
        RunOptions options;
        options.backend = backend.provider;
        options.backendName = backend.name;
        const ExperimentResult direct = runExperiment(c.config(), options);
        for (size_t i = 0; i < s->runs().size(); ++i) {
            QCOMPARE(s->result(i).objectivePerUpdate, direct.methods[i].result.objectivePerUpdate);
        }
        QVERIFY(s->totalSlots > 0);
    }

    void aValidChangeIsDebouncedIntoOneRerun() {
        ExperimentController c;
        c.setDebounceMs(30);
        QSignalSpy changed(&c, &ExperimentController::configChanged);
        QSignalSpy started(&c, &ExperimentController::runStarted);
        QCOMPARE(c.tryModify([](ExperimentConfig& x) { x.stages = 4; }), QString());
        QCOMPARE(c.tryModify([](ExperimentConfig& x) { x.stages = 6; }), QString());
        QCOMPARE(changed.count(), 2);
        QCOMPARE(started.count(), 0);  // still waiting for quiet
        QVERIFY(test::waitForCurrentResults(c));
        QCOMPARE(started.count(), 1);
        QCOMPARE(c.latest()->experiment.config.stages, 6);
    }

    void anInvalidChangeIsRefusedWithTheEngineMessage() {
        ExperimentController c;
        const auto before = c.config().toJson();
        QSignalSpy changed(&c, &ExperimentController::configChanged);
        const QString error = c.tryModify([](ExperimentConfig& x) { x.stages = 100; });  // d = 64
        QVERIFY2(error.startsWith("Stages S = 100"), qPrintable(error));  // the control's label
        QVERIFY(error.contains("S <= d"));
        QCOMPARE(changed.count(), 0);
        QVERIFY(c.config().toJson() == before);
        const QString rows = c.tryModify([](ExperimentConfig& x) { x.data.rows = 605; });
        QVERIFY2(rows.contains("multiple"), qPrintable(rows));
    }

    void aNewerRunMakesTheOlderOneOutOfDate() {
        ExperimentController c;
        QSignalSpy ready(&c, &ExperimentController::resultsReady);
        c.runNow();
        const auto first = c.generation();
        QCOMPARE(c.tryModify([](ExperimentConfig& x) { x.stages = 4; }), QString());
        c.runNow();
        QVERIFY(c.generation() > first);
        QVERIFY(test::waitForCurrentResults(c));
        QTest::qWait(50);  // anything late from the first run would arrive now
        QCOMPARE(ready.count(), 1);
        const auto snapshot = ready.at(0).at(0).value<SnapshotPtr>();
        QCOMPARE(snapshot->experiment.config.stages, 4);
    }

    void aFailingRunReportsItsMessage() {
        ExperimentController c;
        ExperimentConfig bad = c.config();
        bad.data.source = DataSource::Csv;
        bad.data.x = "/nonexistent/pipelens-test.csv";
        c.setConfig(bad);
        QSignalSpy failed(&c, &ExperimentController::runFailed);
        c.runNow();
        QVERIFY(failed.wait(test::timeout(30000)));
        QVERIFY(failed.at(0).at(1).toString().contains("pipelens-test.csv"));
    }

    void copyAsTextRestoresTheExactRun() {
        ExperimentController c;
        QCOMPARE(c.tryModify([](ExperimentConfig& x) {
            x.seed = 987654321;
            x.shuffle = true;
            x.methods[1].delta = 17;
        }),
                 QString());
        const QString text = c.configAsText();
        QVERIFY(!text.contains('\n'));
        const ExperimentConfig back = ExperimentController::configFromText(text);
        QVERIFY(back.toJson() == c.config().toJson());
        QCOMPARE(back.seed, 987654321ULL);
        // Same run: identical curves (RPD's draws and the shuffling depend on the seed).
        const ExperimentResult a = runExperiment(c.config());
        const ExperimentResult b = runExperiment(back);
        for (size_t i = 0; i < a.methods.size(); ++i) {
            QCOMPARE(a.methods[i].result.objectivePerUpdate,
                     b.methods[i].result.objectivePerUpdate);
        }
        QVERIFY_THROWS_EXCEPTION(std::exception, ExperimentController::configFromText("not json"));
    }
};

QTEST_MAIN(TestExperimentController)
#include "tst_experiment_controller.moc"

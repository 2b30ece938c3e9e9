// One experiment stack for every objective: the same sequence of edits, driven through the
// window's own fields, on a linear and on a language-model experiment, must give the same kind of
// status line, an "Export all results" folder written by the one results writer (the language
// model's files for the language model), and exactly the folder `pipelens-cli run` writes for
// the config the app saves. Tiny runs: seconds in Release, also under the sanitizers.
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "../folder_snapshot.hpp"
#include "controllers/experiment_controller.hpp"
#include "controls/controls_panel.hpp"
#include "controls/lm_objective_fields.hpp"
#include "controls/log_slider.hpp"
#include "controls/method_list_editor.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "main_window.hpp"
#include "tiny_language_model.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

MethodSpec methodWithStep(Method method, double step) {
    MethodSpec m;
    m.method = method;
    m.step.value = step;
    return m;
}

// Logistic regression, n = 120, d = 16, S = 3, PD / RPD / LocalSGD over 90 slots.
ExperimentConfig tinyLinear() {
    ExperimentConfig c = defaultExperiment();
    c.name = "tiny-linear";
    c.backend = BackendKind::Cpu;
    c.data.rows = 120;
    c.data.dim = 16;
    c.stages = 3;
    c.budget = {};
    c.budget.totalSlots = 90;
    MethodSpec local = methodWithStep(Method::LocalSgd, 0.25);
    local.replicas = 3;
    local.localSteps = 2;
    c.methods = {methodWithStep(Method::PipeDream, 0.25),
                 methodWithStep(Method::RandomizedPipeDream, 0.25), local};
    return c;
}

// The language model (tiny_language_model.hpp), with one short sample line per method.
ExperimentConfig tinyLanguageModel() {
    ExperimentConfig c = ui::test::tinyLanguageModel(90);
    c.objective.languageModel->sampleLines = 1;
    c.objective.languageModel->sampleLength = 30;
    return c;
}

using Files = std::map<std::string, std::string>;

Files folderFiles(const QString& dir) {
    Files files = pipelens::test::snapshotFolder(std::filesystem::path(dir.toStdString()));
    // config.json differs only by the app's saved view, which a run ignores (compared apart).
    files.erase("config.json");
    return files;
}

}  // namespace

class TestOneStack : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { ui::test::isolateSettings(); }

    void theSameEditsGiveTheSameStackForEveryObjective_data() {
        QTest::addColumn<bool>("languageModel");
        QTest::newRow("linear") << false;
        QTest::newRow("language model") << true;
    }

    void theSameEditsGiveTheSameStackForEveryObjective() {
        QFETCH(bool, languageModel);
        QTemporaryDir dir;
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        ExperimentController* c = w.controller();
        c->setConfig(languageModel ? tinyLanguageModel() : tinyLinear());
        QVERIFY(w.waitForResults(ui::test::timeout(120000)));

        // The edits, as a person makes them: S from 3 to 4, then PD's γ from 0.25 to 0.125.
        w.controls()->stagesField()->setValue(4);
        QVERIFY(w.waitForResults(ui::test::timeout(120000)));
        QCOMPARE(c->latest()->experiment.config.stages, 4);
        MethodListEditor* methods = w.controls()->methods();
        methods->list()->setCurrentRow(0);
        methods->stepSlider()->field()->setText("0.125");
        emit methods->stepSlider()->field()->editingFinished();
        QCOMPARE(c->config().methods[0].step.value, 0.125);
        QVERIFY(w.waitForResults(ui::test::timeout(120000)));
        const SnapshotPtr s = c->latest();
        QCOMPARE(s->experiment.config.methods[0].step.value, 0.125);
        QCOMPARE(s->experiment.config.languageModel(), languageModel);
        QCOMPARE(s->runs().size(), std::size_t(3));
        for (const MethodRun& run : s->runs()) {
            QVERIFY2(run.result.finished, run.label.c_str());
            // The language model's extras travel with every method of its result, and only there.
            QCOMPARE(run.lm != nullptr, languageModel);
        }
        QCOMPARE(s->experiment.lmProblem != nullptr, languageModel);

        // The status line names the engine the result ran on, for either objective.
        const QString status = w.statusText();
        QVERIFY2(status.startsWith(QStringLiteral("3 methods ran in ")), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral(" on cpu")), qPrintable(status));
        QCOMPARE(s->experiment.backendName, std::string("cpu"));

        // "Export all results" writes the objective's own files through the one writer ...
        const QString exported = dir.filePath("exported");
        QString error;
        QVERIFY2(w.exportAllResults(exported, &error), qPrintable(error));
        const Files app = folderFiles(exported);
        const char* own = languageModel ? "samples.txt" : "objective_per_slot.csv";
        const char* other = languageModel ? "objective_per_slot.csv" : "samples.txt";
        QVERIFY2(app.count(own) == 1, own);
        QVERIFY2(app.count(other) == 0, other);
        const nlohmann::json summary = nlohmann::json::parse(app.at("summary.json"));
        QCOMPARE(summary.at("backend").get<std::string>(), std::string("cpu"));
        QCOMPARE(summary.contains("f_star"), !languageModel);

        // ... and they are the files `pipelens-cli run` writes for the config the app saves.
        const QString saved = dir.filePath("edited.json");
        QVERIFY2(w.saveConfig(saved, &error), qPrintable(error));
        const QString cliOut = dir.filePath("cli");
        QProcess cli;
        cli.start(QStringLiteral(PIPELENS_CLI_PATH),
                  {QStringLiteral("run"), saved, QStringLiteral("--out"), cliOut,
                   QStringLiteral("--quiet"), QStringLiteral("--threads"), QStringLiteral("2")});
        QVERIFY(cli.waitForFinished(ui::test::timeout(120000)));
        QVERIFY2(cli.exitStatus() == QProcess::NormalExit && cli.exitCode() == 0,
                 cli.readAllStandardError().constData());
        const Files fromCli = folderFiles(cliOut);
        QCOMPARE(fromCli.size(), app.size());
        for (const auto& [name, bytes] : app) {
            QVERIFY2(fromCli.count(name) == 1, name.c_str());
            QVERIFY2(fromCli.at(name) == bytes, name.c_str());
        }
        QFile cliConfig(cliOut + "/config.json");
        QVERIFY(cliConfig.open(QIODevice::ReadOnly));
        nlohmann::json ran = nlohmann::json::parse(cliConfig.readAll().toStdString());
        ran.erase("view");
        QVERIFY2(ran == s->experiment.config.toJson(), ran.dump().c_str());
    }
};

QTEST_MAIN(TestOneStack)
#include "tst_one_stack.moc"

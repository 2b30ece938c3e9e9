// The presets are valid experiments in the command-line tool's format, each with a lesson, and a
// saved experiment reopens to the same configuration.
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "experiment_controller.hpp"
#include "main_window.hpp"
#include "presets.hpp"
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
        for (const char* id : {"e1-delays", "e2-pd-vs-rpd", "e3-quadratic", "e3-logistic",
                               "e4-scaling"}) {
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
        // records (config.json: what it read, defaults filled in) is the one the app loaded.
        QTemporaryDir dir;
        const QString file =
            QStringLiteral(PIPELENS_SOURCE_DIR "/resources/presets/%1.json").arg(id);
        const QString out = dir.filePath(QStringLiteral("results"));
        QProcess cli;
        cli.start(
            QStringLiteral(PIPELENS_CLI_PATH),
            {QStringLiteral("run"), file, QStringLiteral("--out"), out, QStringLiteral("--quiet")});
        QVERIFY(cli.waitForFinished(120000));
        QVERIFY2(cli.exitStatus() == QProcess::NormalExit && cli.exitCode() == 0,
                 cli.readAllStandardError().constData());
        QFile recorded(out + QStringLiteral("/config.json"));
        QVERIFY(recorded.open(QIODevice::ReadOnly));
        const nlohmann::json cliConfig = nlohmann::json::parse(recorded.readAll().toStdString());
        QVERIFY2(cliConfig == p.config.toJson(),
                 qPrintable(QStringLiteral("the CLI read %1 as\n%2\nthe app as\n%3")
                                .arg(file, QString::fromStdString(cliConfig.dump(1)),
                                     QString::fromStdString(p.config.toJson().dump(1)))));
    }

    void thePaperSetupsAreThePapers() {
        const ExperimentConfig e2 = loadPreset("e2-pd-vs-rpd").config;
        QCOMPARE(e2.stages, 8);
        QCOMPARE(e2.batchSize, 10);
        QCOMPARE(e2.data.rows / e2.batchSize, 60);
        std::vector<long long> deltas;
        for (const MethodSpec& m : e2.methods) {
            if (m.method == Method::RandomizedPipeDream) deltas.push_back(m.delta);
        }
        QCOMPARE(deltas, (std::vector<long long>{8, 30, 60, 180, 420}));
        const ExperimentConfig e4 = loadPreset("e4-scaling").config;
        QCOMPARE(e4.data.dim, 512);
        QCOMPARE(e4.objective.l2, 1e-4);
        for (const char* id : {"e3-quadratic", "e3-logistic"}) {
            const ExperimentConfig e3 = loadPreset(id).config;
            QCOMPARE(e3.stages, 16);
            QCOMPARE(e3.budget.compare, std::string("time"));
        }
        QCOMPARE(loadPreset("e3-quadratic").config.data.kind, std::string("tridiagonal"));
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
        QVERIFY(w.loadPreset("e2-pd-vs-rpd"));
        QCOMPARE(w.controller()->tryModify([](ExperimentConfig& c) {
                     c.seed = 31337;
                     c.methods[2].delta = 44;
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
        // And the command-line tool reads the same file.
        QVERIFY(ExperimentConfig::fromFile(path.toStdString()).toJson() == saved);
    }
};

QTEST_MAIN(TestPresets)
#include "tst_presets.moc"

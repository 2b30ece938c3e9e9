// The language model in the workbench: the objective panel's fields round-trip through the
// config (and refuse bad values with the on-screen labels, moving nothing), a run shows its
// last-stage forward loss live and finished through the same curves, the views say they are
// computing while a superseded run is cancelled, each method's samples are shown, the views that
// do not apply say so, and a config saved from the app runs unchanged with `pipelens-cli run`.
// Every run here is tiny (S = 3, C = 16): seconds in Release, also under the sanitizers.
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QProcess>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "charts/theorem_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "controls/controls_panel.hpp"
#include "controls/lm_objective_fields.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "main_window.hpp"
#include "samples_view.hpp"
#include "tiny_language_model.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

ExperimentConfig tinyLm(int slotBudget) {
    return test::tinyLanguageModel(slotBudget);
}

bool hasTab(QTabWidget* tabs, QWidget* page) {
    return tabs->indexOf(page) >= 0;
}

QTabWidget* besideLoss(MainWindow& w) {
    return w.findChild<QTabWidget*>("besideLoss");
}

}  // namespace

class TestLanguageModel : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    // Choosing the objective shows the model's fields in place of the data's; each field edits
    // its key, a refused value leaves the config and every field where they were and says why
    // with the labels on screen; switching back restores the linear fields.
    void theObjectivePanelRoundTripsTheLanguageModel() {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        ControlsPanel* panel = w.controls();
        LmObjectiveFields* lm = panel->lmFields();
        QVERIFY(!lm->isVisible());
        QVERIFY(panel->rowsField()->isVisible());
        QComboBox* objective = panel->objectiveField();
        objective->setCurrentIndex(objective->findData("char_transformer"));
        ExperimentController* c = w.controller();
        QVERIFY(c->config().languageModel());
        QVERIFY(lm->isVisible());
        QVERIFY(!panel->rowsField()->isVisible());
        QVERIFY(!panel->dimField()->isVisible());
        QCOMPARE(panel->messageArea()->text(), QString());
        // The fields show the config, and each edit reaches it.
        QCOMPARE(lm->widthField()->value(), c->config().objective.languageModel->width);
        lm->widthField()->setValue(24);
        QCOMPARE(c->config().objective.languageModel->width, 24);
        lm->headsField()->setValue(3);
        QCOMPARE(c->config().objective.languageModel->heads, 3);
        lm->contextField()->setValue(12);
        QCOMPARE(c->config().objective.languageModel->context, 12);
        lm->initSeedField()->setValue(7);
        QCOMPARE(c->config().objective.languageModel->initSeed, std::uint64_t(7));
        lm->corpusSeedField()->setValue(5);
        QCOMPARE(c->config().objective.languageModel->corpusSeed, std::uint64_t(5));
        lm->corpusCharactersField()->setValue(8000);
        QCOMPARE(c->config().objective.languageModel->corpusCharacters, 8000LL);
        lm->heldOutField()->setText("0.25");
        emit lm->heldOutField()->editingFinished();
        QCOMPARE(c->config().objective.languageModel->heldOutFraction, 0.25);
        lm->fullObjectiveField()->setChecked(true);
        QVERIFY(c->config().objective.languageModel->fullObjective);

        // Refusals: nothing changes, nothing moves, the message names the field as shown.
        const QList<QWidget*> fields = {objective,           lm->widthField(),
                                        lm->headsField(),    lm->contextField(),
                                        lm->heldOutField(),  lm->corpusCharactersField(),
                                        lm->initSeedField(), panel->stagesField()};
        for (int i = 0; i < 5; ++i) {  // the layout of the fields just shown settles
            QCoreApplication::processEvents();
            QTest::qWait(20);
        }
        QList<QPoint> before;
        for (QWidget* f : fields) before << f->mapTo(&w, QPoint(0, 0));
        const auto saved = c->config().toJson();
        lm->headsField()->setValue(5);  // does not divide C = 24
        QCOMPARE(panel->messageArea()->text(),
                 QString("Heads = 5 is not allowed: it must divide width = 24"));
        QVERIFY(c->config().toJson() == saved);
        // The field offers exactly the config's range (field_limits.hpp): 500 characters cannot
        // even be entered (it used to be entered and then refused).
        QCOMPARE(lm->corpusCharactersField()->minimum(), 1000);
        lm->heldOutField()->setText("0.95");
        emit lm->heldOutField()->editingFinished();
        QVERIFY2(
            panel->messageArea()->text().startsWith("Held-out fraction = 0.95 is not allowed: "),
            qPrintable(panel->messageArea()->text()));
        lm->heldOutField()->setText("a lot");
        emit lm->heldOutField()->editingFinished();
        QVERIFY2(
            panel->messageArea()->text().startsWith("Held-out fraction = \"a lot\" is not allowed"),
            qPrintable(panel->messageArea()->text()));
        panel->stagesField()->setValue(2);  // the model needs an embedding, a block and a head
        QVERIFY2(panel->messageArea()->text().startsWith("Stages S = 2 is not allowed: "),
                 qPrintable(panel->messageArea()->text()));
        QVERIFY(c->config().toJson() == saved);
        for (int i = 0; i < 5; ++i) {
            QCoreApplication::processEvents();
            QTest::qWait(20);
        }
        for (qsizetype i = 0; i < fields.size(); ++i) {
            QVERIFY2(fields[i]->mapTo(&w, QPoint(0, 0)) == before[i],
                     qPrintable(QStringLiteral("field %1 moved from %2,%3 to %4,%5")
                                    .arg(i)
                                    .arg(before[i].x())
                                    .arg(before[i].y())
                                    .arg(fields[i]->mapTo(&w, QPoint(0, 0)).x())
                                    .arg(fields[i]->mapTo(&w, QPoint(0, 0)).y())));
        }

        // A corpus file, as the dialog returns it, then the built-in one again.
        QTemporaryDir dir;
        const QString corpus = dir.filePath("play.txt");
        QFile f(corpus);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("Ödipus: wer bist du? ").repeated(400));
        f.close();
        lm->setCorpusFile(corpus);
        QCOMPARE(QString::fromStdString(c->config().objective.languageModel->corpus), corpus);
        QCOMPARE(lm->corpusFileLabel()->text(), QString("play.txt"));
        QVERIFY(!lm->corpusSeedField()->isEnabled());
        lm->corpusField()->setCurrentIndex(0);
        QVERIFY(c->config().objective.languageModel->corpus.empty());
        QVERIFY(lm->corpusSeedField()->isEnabled());

        // Back to a linear objective.
        objective->setCurrentIndex(objective->findData("logistic"));
        QVERIFY(!c->config().languageModel());
        QVERIFY(!lm->isVisible());
        QVERIFY(panel->rowsField()->isVisible());
        QVERIFY2(w.waitForResults(test::timeout(60000)), "the linear run after the switch");
    }

    // A run shows its curves while it computes, labelled as the forward loss, and the finished
    // run's curves start with the very points shown live.
    void aRunShowsLiveForwardLossCurves() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        ExperimentController* c = w.controller();
        c->setLiveIntervalMs(20);
        std::vector<QPointF> lastLive;
        int liveShown = 0;
        connect(c, &ExperimentController::partialResults, this, [&] {
            if (c->liveCurves().empty() || c->liveCurves()[0].bySlot.empty()) return;
            if (w.lossChart()->showingLive() && !w.lossChart()->methodSeries().isEmpty() &&
                w.lossChart()->methodSeries()[0]->count() > 0)
                ++liveShown;
            lastLive = c->liveCurves()[0].bySlot;
        });
        c->setConfig(tinyLm(1500));
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
        QVERIFY2(liveShown >= 1, "no live curve was drawn while the run computed");
        QVERIFY(!lastLive.empty());
        const SnapshotPtr s = c->latest();
        QVERIFY(s->lmProblem());
        QCOMPARE(s->runs().size(), std::size_t(3));
        const std::vector<QPointF>& finalPd = s->curves[0].loss.bySlot;
        QVERIFY(lastLive.size() <= finalPd.size());
        for (size_t i = 0; i < lastLive.size(); ++i) QCOMPARE(lastLive[i], finalPd[i]);
        // The first point is PD's first last-stage forward (slot S), near log V.
        QCOMPARE(finalPd.front().x(), 3.0);
        const double logV = std::log(static_cast<double>(s->lmProblem()->corpus.vocabSize()));
        QVERIFY(std::abs(finalPd.front().y() - logV) < 1.0);
        QVERIFY(lmOf(s->runs()[0]).finalLoss < logV);
        QCOMPARE(w.lossChart()->yAxisTitle(), QString("loss (nats)"));
        QCOMPARE(w.lossChart()->methodData(0).size(), finalPd.size());
        // A linear loss axis (as the paper's E5), with a uniform guess's log V dashed across it.
        QVERIFY(!w.lossChart()->logY());
        QLineSeries* guess = w.lossChart()->uniformGuessSeries();
        QVERIFY(guess != nullptr);
        QVERIFY(guess->name().startsWith(QString("log V = %1").arg(logV, 0, 'f', 2)));
        QCOMPARE(guess->pen().style(), Qt::DashLine);
        QCOMPARE(guess->count(), 2);
        QCOMPARE(guess->at(0).y(), logV);
        QVERIFY(guess->at(1).x() >= finalPd.back().x());
        // The schedule views work as for the linear models.
        QVERIFY(w.gantt()->timeline());
        QCOMPARE(w.gantt()->timeline()->params.stages, 3);
        QVERIFY(w.heatmap()->delays());
        QVERIFY(w.figureStrip()->numbersTable()->text().contains("Language model: "));
        // The theorem does not apply; its box is off and says why.
        QVERIFY(!w.lossChart()->theoremChartShown());
        w.theoremChart()->setSnapshot(s);
        QCOMPARE(w.theoremChart()->chart()->title(),
                 QString("Does not apply to the language model"));
    }

    // During a slow run a change cancels it at once; until the new run's results arrive, the
    // loss chart, the heatmap and the samples say they are computing and show nothing older.
    void aChangeDuringASlowRunMarksTheViewsAndCancelsIt() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        ExperimentController* c = w.controller();
        c->setLiveIntervalMs(20);
        c->setConfig(tinyLm(200));
        QVERIFY(w.waitForResults(test::timeout(120000)));
        const SnapshotPtr first = c->latest();
        c->setConfig(tinyLm(400000));  // minutes: it must be cancelled
        QVERIFY(QTest::qWaitFor([&] { return !c->liveCurves().empty(); }, test::timeout(60000)));
        QVERIFY(w.samplesView()->computing());
        QVERIFY(w.lossChart()->computing());
        QVERIFY(w.heatmap()->computing());
        const QString width = QString::number(24);
        QCOMPARE(c->tryModify([](ExperimentConfig& e) {
            e.objective.languageModel->width = 24;
            e.budget.totalSlots = 300;
        }),
                 QString());
        // At once: every run view says it is computing, none shows the first run.
        QVERIFY(w.lossChart()->computing());
        QVERIFY(w.lossChart()->snapshot() != first);
        QVERIFY(w.samplesView()->computing());
        QVERIFY(w.samplesView()->snapshot() == nullptr);
        QVERIFY(w.heatmap()->computing());
        // The schedule views too: no earlier timeline or figures while the new plan is made.
        QVERIFY(!w.gantt()->timeline());
        QVERIFY2(w.gantt()->emptyText().startsWith("Planning"), qPrintable(w.gantt()->emptyText()));
        QVERIFY(w.figureStrip()->numbersTable()->text().startsWith("Planning"));
        // The superseded run stops within a chunk, long before its minutes are up.
        QVERIFY2(QTest::qWaitFor([&] { return c->workersInFlight() <= 1; }, test::timeout(10000)),
                 "the superseded run is still running");
        QVERIFY(w.waitForResults(test::timeout(120000)));
        QCOMPARE(c->latest()->experiment.config.objective.languageModel->width, 24);
        QVERIFY(w.gantt()->timeline());
        QVERIFY(w.figureStrip()->numbersTable()->text().contains("Language model: "));
        QVERIFY(!w.samplesView()->computing());
        QVERIFY(!w.lossChart()->computing());
    }

    // After a run, the Samples tab shows each method's label and its lines, the lines the
    // engine sampled from that method's final weights.
    void theSamplesOfEveryMethodAreShown() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(!hasTab(besideLoss(w), w.samplesView()));  // a linear run has none
        w.controller()->setConfig(tinyLm(300));
        QString error;
        QVERIFY2(w.waitForResults(test::timeout(120000), &error), qPrintable(error));
        QTabWidget* tabs = besideLoss(w);
        QVERIFY(hasTab(tabs, w.samplesView()));
        QCOMPARE(tabs->tabText(tabs->indexOf(w.samplesView())), QString("Samples"));
        const SnapshotPtr s = w.controller()->latest();
        const QString shown = w.samplesView()->text();
        // The engine's own samples for this config, computed apart from the app.
        const ExperimentResult direct = runExperiment(s->experiment.config);
        QCOMPARE(direct.methods.size(), std::size_t(3));
        for (size_t i = 0; i < 3; ++i) {
            QVERIFY2(shown.contains(s->label(i)), qPrintable(s->label(i)));
            QCOMPARE(lmOf(direct.methods[i]).samples.size(), std::size_t(2));
            QVERIFY(lmOf(direct.methods[i]).samples == lmOf(s->runs()[i]).samples);
            for (const std::string& line : lmOf(direct.methods[i]).samples) {
                QCOMPARE(static_cast<int>(QString::fromStdString(line).size()), 41);
                // The browser shows each line (newlines as line breaks).
                for (const QString& part : QString::fromStdString(line).split('\n'))
                    QVERIFY2(shown.contains(part), qPrintable(part));
            }
        }
        // The methods' lines differ (same seeds, different weights).
        QVERIFY(lmOf(s->runs()[0]).samples != lmOf(s->runs()[1]).samples);
        // Back to a linear model: the tab goes.
        QVERIFY(w.loadPreset("default"));
        QVERIFY(!hasTab(tabs, w.samplesView()));
    }

    // A config saved from the app with the language model runs unchanged with the CLI.
    void aSavedLanguageModelRunsWithTheCli() {
        QTemporaryDir dir;
        MainWindow w;
        w.controller()->setConfig(tinyLm(120));
        QVERIFY(w.waitForResults(test::timeout(120000)));
        const QString path = dir.filePath("lm.json");
        QString error;
        QVERIFY2(w.saveConfig(path, &error), qPrintable(error));
        const QString out = dir.filePath("results");
        QProcess cli;
        cli.start(
            QStringLiteral(PIPELENS_CLI_PATH),
            {QStringLiteral("run"), path, QStringLiteral("--out"), out, QStringLiteral("--quiet")});
        QVERIFY(cli.waitForFinished(test::timeout(120000)));
        QVERIFY2(cli.exitStatus() == QProcess::NormalExit && cli.exitCode() == 0,
                 cli.readAllStandardError().constData());
        QFile recorded(out + "/config.json");
        QVERIFY(recorded.open(QIODevice::ReadOnly));
        nlohmann::json cliConfig = nlohmann::json::parse(recorded.readAll().toStdString());
        QVERIFY(cliConfig.contains("view"));  // the file's view, which the run ignores
        cliConfig.erase("view");
        QVERIFY2(cliConfig == w.controller()->config().toJson(),
                 qPrintable(QString::fromStdString(
                     cliConfig.dump() + "\nthe app: " + w.controller()->config().toJson().dump())));
        QFile samples(out + "/samples.txt");
        QVERIFY(samples.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(samples.readAll());
        // The CLI's samples are the app's.
        const SnapshotPtr s = w.controller()->latest();
        for (size_t i = 0; i < s->runs().size(); ++i) {
            for (const std::string& line : lmOf(s->runs()[i]).samples) {
                for (const QString& part : QString::fromStdString(line).split('\n'))
                    QVERIFY2(text.contains(part), qPrintable(part));
            }
        }
    }
};

QTEST_MAIN(TestLanguageModel)
#include "tst_language_model.moc"

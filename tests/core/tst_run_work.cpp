// The run size that `backend: auto` decides on before any OpenCL call (run_work.hpp): entries of X
// from the config alone, PipeDream's microbatches from each kind of budget, and their product.
#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "experiment/config/config.hpp"
#include "experiment/run/run_work.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

ExperimentConfig config(int rows, int dim, int stages, const json& budget, int batch = 10) {
    json j = {{"stages", stages},
              {"batch_size", batch},
              {"data", {{"kind", "logistic"}, {"rows", rows}, {"dim", dim}}},
              {"objective", {{"kind", "logistic"}}},
              {"budget", budget},
              {"methods", json::array({{{"method", "pd"}, {"step_size", 0.05}}})}};
    return ExperimentConfig::fromJson(j);
}

}  // namespace

class TestRunWork : public QObject {
    Q_OBJECT

  private slots:
    // The run stays far below auto's 1e9, the OpenCL benchmark's large run far above.
    void referenceRuns() {
        const ExperimentConfig small = config(600, 512, 32, {{"microbatches", 300}});
        QCOMPARE(estimatedDataEntries(small), 600.0 * 512.0);
        QCOMPARE(estimatedRunMicrobatches(small), 300.0);
        QCOMPARE(estimatedRunWork(small), 600.0 * 512.0 * 300.0);
        ExperimentConfig large = config(65536, 8192, 16, {{"microbatches", 64}}, 256);
        QCOMPARE(estimatedRunWork(large), 65536.0 * 8192.0 * 64.0);
    }

    // Epochs: n / b batches per epoch, rounded as the planner rounds epochs * M.
    void epochBudget() {
        const ExperimentConfig c = config(600, 20, 4, {{"epochs", 2.5}}, 8);
        QCOMPARE(estimatedRunMicrobatches(c), 188.0);  // round(2.5 * 75)
        QCOMPARE(estimatedRunWork(c), 600.0 * 20.0 * 188.0);
    }

    // A slot budget: within S microbatches above the exact fit, never below it.
    void slotBudget() {
        for (int stages : {1, 4, 32}) {
            for (int budgetSlots : {200, 1000, 5000}) {
                const ExperimentConfig c = config(1000, 64, stages, {{"slots", budgetSlots}});
                ScheduleParams p;
                p.stages = stages;
                const double exact = microbatchesForBudget(p, budgetSlots);
                const double est = estimatedRunMicrobatches(c);
                QVERIFY2(est >= exact && est <= exact + stages,
                         qPrintable(QString("S %1, slots %2: %3 vs %4")
                                        .arg(stages)
                                        .arg(budgetSlots)
                                        .arg(est)
                                        .arg(exact)));
            }
        }
    }

    // A data file: its size / 8, found relative to the config's folder; a missing one counts 0.
    void dataFiles() {
        QTemporaryDir dir;
        {
            std::ofstream f(dir.filePath("x.npy").toStdString(), std::ios::binary);
            f << std::string(8000, '\0');
        }
        ExperimentConfig c = config(600, 512, 4, {{"microbatches", 10}});
        c.data.source = DataSource::Npy;
        c.data.x = "x.npy";
        c.baseDir = dir.path().toStdString();
        QCOMPARE(estimatedDataEntries(c), 1000.0);
        QCOMPARE(estimatedRunWork(c), 10000.0);
        QCOMPARE(resolveDataPath(c, "x.npy"), dir.filePath("x.npy").toStdString());
        c.data.x = "missing.npy";
        QCOMPARE(estimatedDataEntries(c), 0.0);
    }
};

QTEST_APPLESS_MAIN(TestRunWork)
#include "tst_run_work.moc"

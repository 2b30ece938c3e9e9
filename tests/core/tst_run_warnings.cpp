// LocalSGD shorter than one round never averages: the warning is computed once in core, with
// the plan, and lands in the result (summary.json "warnings", the summary text).
#include <QtTest>

#include <nlohmann/json.hpp>

#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/objective_cache.hpp"
#include "experiment/run/run_warnings.hpp"

using namespace pipelens;
using json = nlohmann::json;

namespace {

// S = 8, 5 epochs of M = 6 batches: N = 30 microbatches; a round is R·H = 8·H.
ExperimentConfig localSgd(int localSteps) {
    return ExperimentConfig::fromJson(json::parse(R"({
        "name": "warnings",
        "stages": 8,
        "batch_size": 10,
        "data": {"kind": "random", "rows": 60, "dim": 16, "seed": 3},
        "budget": {"epochs": 5},
        "methods": [
            {"method": "pd", "step_size": 0.05},
            {"method": "localsgd", "step_size": 0.05, "local_steps": )" +
                                                  std::to_string(localSteps) + R"(}
        ]
    })"));
}

}  // namespace

class TestRunWarnings : public QObject {
    Q_OBJECT
  private slots:
    void localSgdShorterThanOneRoundIsWarnedAbout() {
        const ExperimentResult res = runExperiment(localSgd(50));
        const MethodRun& local = res.methods[1];
        QVERIFY(local.result.timeline->averagingSlots.empty());  // it really never averages
        QCOMPARE(res.warnings.size(), size_t{1});
        const std::string& w = res.warnings[0];
        QVERIFY2(w.find(local.label) == 0, w.c_str());
        QVERIFY2(w.find("never averages") != std::string::npos, w.c_str());
        QVERIFY2(w.find("R·H = 400") != std::string::npos, w.c_str());
        QVERIFY2(w.find("2SH + 2(S − 1) = " + std::to_string(localSgdRoundSlotsFormula(8, 50))) !=
                     std::string::npos,
                 w.c_str());
        QCOMPARE(summaryJson(res)["warnings"], json(res.warnings));
        QVERIFY(summaryText(res).find("warning: " + w) != std::string::npos);
        // The plan knows it before anything runs.
        QCOMPARE(plannedViews(localSgd(50), *prepareObjective(localSgd(50))).warnings,
                 res.warnings);
    }

    void localSgdThatAveragesIsNotWarnedAbout() {
        const ExperimentResult res = runExperiment(localSgd(2));  // R·H = 16 <= N = 30
        QVERIFY(!res.methods[1].result.timeline->averagingSlots.empty());
        QVERIFY(res.warnings.empty());
        QVERIFY(!neverAveragesWarning(res.methods[0]));  // PD: never
        QCOMPARE(summaryJson(res)["warnings"], json::array());
    }
};

QTEST_APPLESS_MAIN(TestRunWarnings)
#include "tst_run_warnings.moc"

// What a run shows before (or without) its results: the schedule views of a planned experiment
// are exactly the finished run's; delays survive a diverged run; the objective cache is kept
// across a change of S; a run looks at its cancel flag at least every ChunkSizer::kChunkTarget;
// PipeDream's delay formula is claimed only for PipeDream's schedule.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/objective_cache.hpp"
#include "schedule/delays.hpp"

using namespace pipelens;
using json = nlohmann::json;

namespace {

ExperimentConfig config(double step = 0.05) {
    return ExperimentConfig::fromJson(json::parse(R"({
        "name": "planned-views",
        "stages": 4,
        "batch_size": 10,
        "data": {"kind": "random", "rows": 60, "dim": 8, "seed": 3},
        "budget": {"epochs": 3},
        "methods": [
            {"method": "pd", "step_size": )" + std::to_string(step) +
                                                  R"(},
            {"method": "rpd", "step_size": 0.05},
            {"method": "localsgd", "step_size": 0.05, "local_steps": 2},
            {"method": "sgd", "step_size": 0.05},
            {"method": "fill-drain", "step_size": 0.05}
        ]
    })"));
}

}  // namespace

class TestPlannedViews : public QObject {
    Q_OBJECT
  private slots:
    void plannedViewsAreTheFinishedRunsScheduleViews() {
        const ExperimentConfig c = config();
        ExperimentResult ran = runExperiment(c);
        placeUpdates(ran);  // as the app does with a finished run
        const ExperimentResult planned = plannedViews(c, *prepareObjective(c));
        QCOMPARE(planned.methods.size(), ran.methods.size());
        QCOMPARE(planned.budget.slotBudget, ran.budget.slotBudget);
        for (size_t i = 0; i < ran.methods.size(); ++i) {
            const RunResult& a = planned.methods[i].result;
            const RunResult& b = ran.methods[i].result;
            QCOMPARE(a.timeline.has_value(), b.timeline.has_value());
            QCOMPARE(a.delays.has_value(), b.delays.has_value());
            QCOMPARE(planned.methods[i].updateSlot, ran.methods[i].updateSlot);
            if (!b.timeline) continue;
            QCOMPARE(a.timeline->totalSlots, b.timeline->totalSlots);
            QCOMPARE(a.microbatches, b.microbatches);
            QCOMPARE(a.utilization->overall, b.utilization->overall);
            if (!b.delays) continue;
            QCOMPARE(a.delayStats->max, b.delayStats->max);
            QCOMPARE(a.delayStats->mean, b.delayStats->mean);
            QCOMPARE(a.maxDelay, b.maxDelay);
        }
    }

    void aDivergedRunKeepsItsDelays() {
        const ExperimentResult ran = runExperiment(config(1e3));
        const RunResult& pd = ran.methods[0].result;
        QVERIFY(pd.divergence.diverged);
        QVERIFY(pd.delayStats.has_value());  // the schedule's, whatever the run did
        QCOMPARE(
            pd.delayStats->max,
            plannedViews(config(), *prepareObjective(config())).methods[0].result.delayStats->max);
        QCOMPARE(pd.maxDelay, pd.delays->maxDelay());
    }

    void maxDelayIsTheLargestDelayOfTheTable() {
        for (const auto& run : plannedViews(config(), *prepareObjective(config())).methods) {
            if (!run.result.delays) continue;
            const DelayTable& d = *run.result.delays;
            long long brute = 0;
            for (long long k = 0; k < d.updates(); ++k) {
                for (int j = 0; j < d.stages(); ++j) brute = std::max(brute, d.delay(k, j));
            }
            QCOMPARE(d.maxDelay(), brute);
            QVERIFY(brute > 0);
        }
    }

    void theObjectiveCacheIsKeptWhenSChanges() {
        ObjectiveCache cache;
        ExperimentConfig c = config();
        QVERIFY(!cache.peek(c));
        const auto first = cache.get(c);
        c.stages = 2;
        QCOMPARE(cache.peek(c).get(), first.get());
        QCOMPARE(cache.get(c).get(), first.get());
        c.stages = 9;  // > d = 8: refused with the standard message, cached or not
        QVERIFY_THROWS_EXCEPTION(std::exception, cache.get(c));
        c.stages = 4;
        c.data.seed = 4;  // other data: not the cached objective
        QVERIFY(!cache.peek(c));
    }

    void chunksAreSizedByTime() {
        ChunkSizer chunk;
        QCOMPARE(chunk.steps(), 1LL);
        for (int i = 0; i < 40; ++i) chunk.took(std::chrono::microseconds(10));
        QCOMPARE(chunk.steps(), ChunkSizer::kMaxSteps);  // cheap steps: big chunks
        chunk.took(ChunkSizer::kChunkTarget * 3);
        QCOMPARE(chunk.steps(), ChunkSizer::kMaxSteps / 2);  // a slow chunk halves it
        for (int i = 0; i < 40; ++i) chunk.took(std::chrono::milliseconds(200));
        QCOMPARE(chunk.steps(), 1LL);
        chunk.took(ChunkSizer::kChunkTarget / 2);  // within the target: kept
        QCOMPARE(chunk.steps(), 1LL);
    }

    void pipeDreamsFormulaIsClaimedOnlyForItsSchedule() {
        const ExperimentResult planned = plannedViews(config(), *prepareObjective(config()));
        QVERIFY(pipeDreamFormulaApplies(planned.methods[0].result.timeline->params));   // PD
        QVERIFY(!pipeDreamFormulaApplies(planned.methods[3].result.timeline->params));  // SGD
        QVERIFY(
            !pipeDreamFormulaApplies(planned.methods[4].result.timeline->params));  // fill-drain
        ScheduleParams pd = planned.methods[0].result.timeline->params;
        pd.noam = 2;
        QVERIFY(!pipeDreamFormulaApplies(pd));
        QCOMPARE(steadyState(60, 60), SteadyState::Reached);
        QCOMPARE(steadyState(20352, 16320), SteadyState::StartUpStripe);
        QCOMPARE(steadyState(10, 60), SteadyState::NotReached);
    }
};

QTEST_APPLESS_MAIN(TestPlannedViews)
#include "tst_planned_views.moc"

// Budget planning (issue 7, defects 5, 6 and 8): run lengths from closed forms or one simulated
// round, checked against built timelines; budgets near the limits refused at once, naming the
// field the user set; no int overflow on the way; memory estimated before allocating.
#include <QtTest>

#include <functional>
#include <nlohmann/json.hpp>

#include "core/expect_error.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/budget_checks.hpp"
#include "experiment/run/experiment.hpp"
#include "schedule/run_length.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

ExperimentConfig config(const json& budget, int stages = 4, const json& extraMethod = nullptr) {
    json j = {{"stages", stages},
              {"batch_size", 5},
              {"data", {{"rows", 300}, {"dim", 16}}},
              {"budget", budget},
              {"methods", json::array({{{"method", "pd"}, {"step_size", 0.1}}})}};
    if (!extraMethod.is_null()) j["methods"].push_back(extraMethod);
    return ExperimentConfig::fromJson(j);
}

}  // namespace

class TestBudgetChecks : public QObject {
    Q_OBJECT

  private slots:
    void closedFormsAndRoundsMatchTimelines() {
        for (ScheduleKind kind :
             {ScheduleKind::PipeDream, ScheduleKind::FillDrain, ScheduleKind::LocalSgd}) {
            for (int S : {1, 2, 3, 5, 8}) {
                for (int N : {1, 2, 7, 16, 23}) {
                    for (int cost : {1, 2}) {
                        ScheduleParams p;
                        p.kind = kind;
                        p.stages = S;
                        p.microbatches = N;
                        p.localSteps = 2;
                        p.flushGroup = kind == ScheduleKind::FillDrain ? 3 : 0;
                        p.costs.backwardSlots = cost;
                        p.costs.latencySlots = cost - 1;
                        QCOMPARE(runLengthSlots(p),
                                 static_cast<long long>(buildTimeline(p).totalSlots));
                        if (kind == ScheduleKind::LocalSgd) {
                            p.replicas = 1;  // sequential SGD
                            QCOMPARE(runLengthSlots(p),
                                     static_cast<long long>(buildTimeline(p).totalSlots));
                        }
                    }
                }
            }
        }
    }

    void fitBudgetIsTheLargestFit() {
        ScheduleParams p;
        p.kind = ScheduleKind::LocalSgd;
        p.stages = 3;
        p.localSteps = 2;
        for (int budget : {10, 37, 100, 311}) {
            const int n = fitBudget(p, budget).microbatches;
            ScheduleParams q = p;
            q.microbatches = n;
            QVERIFY(buildTimeline(q).totalSlots <= budget);
            q.microbatches = n + 1;
            QVERIFY(buildTimeline(q).totalSlots > budget);
        }
    }

    // The search (interpolation with bisection steps) finds the largest microbatch count whose
    // run fits, the same as trying every count, over schedules, costs and budgets.
    void fitBudgetAgreesWithTryingEveryCount() {
        std::vector<ScheduleParams> cases;
        for (int stages : {2, 5, 8, 16}) {
            for (int h : {1, 2, 5}) {
                for (int r : {0, 1, 3}) {
                    ScheduleParams l;
                    l.kind = ScheduleKind::LocalSgd;
                    l.stages = stages;
                    l.localSteps = h;
                    l.replicas = r;
                    cases.push_back(l);
                }
            }
            ScheduleParams f;
            f.kind = ScheduleKind::FillDrain;
            f.stages = stages;
            cases.push_back(f);
            f.flushGroup = 3;
            cases.push_back(f);
            ScheduleParams pd;
            pd.stages = stages;
            pd.noam = std::max(1, stages / 2);
            cases.push_back(pd);
            pd.costs = {1, 2, 1};
            cases.push_back(pd);
        }
        int compared = 0;
        for (ScheduleParams p : cases) {
            for (long long budget : {3LL, 10LL, 37LL, 64LL, 100LL, 311LL, 640LL}) {
                int best = 0;
                for (int n = 1; n <= budget; ++n) {
                    p.microbatches = n;
                    if (runLengthSlots(p) <= budget) best = n;
                }
                const BudgetFit fit = fitBudget(p, budget);
                QVERIFY2(fit.microbatches == best,
                         qPrintable(QStringLiteral("kind %1, S = %2, H = %3, R = %4, budget %5: "
                                                   "the search found %6, every count %7")
                                        .arg(static_cast<int>(p.kind))
                                        .arg(p.stages)
                                        .arg(p.localSteps)
                                        .arg(p.replicas)
                                        .arg(budget)
                                        .arg(fit.microbatches)
                                        .arg(best)));
                ++compared;
            }
        }
        QCOMPARE(compared, 4 * 13 * 7);
    }

    // slots = 1e9 used to build timelines at each doubling (6.3 GB, 17-40 s), then blame
    // "microbatches = 67108864", a value the user never set.
    void hugeSlotBudgetRefusedNamingTheField() {
        ExperimentConfig c = config({{"slots", 1000000000}});
        auto objective = buildObjective(c);
        QElapsedTimer timer;
        timer.start();
        expectError<ConfigError>([&] { planExperiment(c, *objective); },
                                 {"budget.slots = 1000000000", "stages = 4", "400000000"});
        QVERIFY2(timer.elapsed() < 5000, "refused without building timelines");
        ExperimentConfig local =
            config({{"slots", 300000000}}, 4, {{"method", "localsgd"}, {"step_size", 0.1}});
        expectError<ConfigError>([&] { planExperiment(local, *objective); },
                                 {"budget.slots = 300000000"});
    }

    // llround(epochs * M) cast to int wrapped: 71582804.9333 epochs ran 1000 microbatches.
    void epochsNeverWrap() {
        ExperimentConfig c = config({{"epochs", 71582804.9333}});
        auto objective = buildObjective(c);  // M = 60
        expectError<ConfigError>([&] { planExperiment(c, *objective); },
                                 {"budget.epochs = 71582804.9333", "microbatches"});
        ExperimentConfig big = config({{"epochs", 1e9}});
        expectError<ConfigError>([&] { planExperiment(big, *objective); },
                                 {"budget.epochs = 1000000000"});
        ExperimentConfig ok = config({{"epochs", 2.5}});
        QCOMPARE(planExperiment(ok, *objective).budget.pipeDreamMicrobatches, 150);
    }

    // microbatches = 2e7 with S = 10 passed validation and failed after 31 s and 9.4 GB.
    void bigMicrobatchBudgetRefusedForMemory() {
        qputenv("PIPELENS_MEMORY_LIMIT", "8G");
        ExperimentConfig c = config({{"microbatches", 20000000}}, 10);
        auto objective = buildObjective(c);
        QElapsedTimer timer;
        timer.start();
        expectError<ResourceError>(
            [&] { planExperiment(c, *objective); },
            {"budget.microbatches = 20000000", "needs about", "8.0 GiB available"});
        QVERIFY(timer.elapsed() < 5000);
        qunsetenv("PIPELENS_MEMORY_LIMIT");
    }

    void syntheticShapeCheckedBeforeAllocating() {
        json j = {{"stages", 2},
                  {"batch_size", 1},
                  {"data", {{"rows", 100000000}, {"dim", 10000000}}},
                  {"budget", {{"microbatches", 1}}},
                  {"methods", json::array({{{"method", "pd"}, {"step_size", 0.1}}})}};
        expectError<ResourceError>([&] { buildObjective(ExperimentConfig::fromJson(j)); },
                                   {"n = 100000000 x d = 10000000", "needs about"});
    }

    // Costs without an upper bound overflowed slot numbers ("within -103079215040 slots").
    void scheduleCostsBounded() {
        ScheduleParams p;
        p.costs.forwardSlots = 2147483647;
        expectError<ConfigError>([&] { buildTimeline(p); },
                                 {"forward_slots = 2147483647", "at most 1000"});
        p.costs.forwardSlots = 1000;
        p.costs.backwardSlots = 1000;
        p.costs.latencySlots = 1000;
        p.stages = 4096;
        p.microbatches = 40000;
        expectError<ConfigError>([&] { buildTimeline(p); }, {"2147483647 slots"});
    }
};

QTEST_APPLESS_MAIN(TestBudgetChecks)
#include "tst_budget_checks.moc"

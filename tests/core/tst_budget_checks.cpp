// Budget planning (issue 7, defects 5, 6 and 8): run lengths from closed forms or one simulated
// round, checked against built timelines; budgets near the limits refused at once, naming the
// field the user set; no int overflow on the way; memory estimated before allocating.
#include <QtTest>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/expect_error.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/budget_checks.hpp"
#include "experiment/run/experiment.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/pytorch_csv.hpp"
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

// The schedule a method walks, set by hand (not by the planner): PD with NOAM = S, fill-drain
// with G = S, LocalSGD with R = S and H = 2, sequential SGD as one replica.
ScheduleParams scheduleByHand(Method method, int stages) {
    ScheduleParams p;
    p.stages = stages;
    if (method == Method::FillDrain) {
        p.kind = ScheduleKind::FillDrain;
        p.flushGroup = stages;
    } else if (method == Method::LocalSgd) {
        p.kind = ScheduleKind::LocalSgd;
        p.replicas = stages;
        p.localSteps = 2;
    } else if (method == Method::Sgd) {
        p.kind = ScheduleKind::LocalSgd;
        p.replicas = 1;
        p.localSteps = 1 << 29;
    }
    return p;
}

long long lengthWith(ScheduleParams p, int microbatches) {
    p.microbatches = microbatches;
    return runLengthSlots(p);
}

// Trying every count: the largest N whose run fits in `budget` slots, the smallest that reaches it.
int largestFitByTrying(const ScheduleParams& p, long long budget) {
    int n = 0;
    while (lengthWith(p, n + 1) <= budget) ++n;
    return n;
}
int smallestReachByTrying(const ScheduleParams& p, long long budget) {
    int n = 1;
    while (lengthWith(p, n) < budget) ++n;
    return n;
}

// PD's block updates (backwards) that end inside the first `budget` slots of a long run.
long long pipeDreamUpdatesWithin(int stages, int budget) {
    ScheduleParams p = scheduleByHand(Method::PipeDream, stages);
    p.microbatches = budget;  // more than can start in `budget` slots
    const Timeline tl = buildTimeline(p);
    return std::count_if(tl.cells.begin(), tl.cells.end(), [&](const TimelineCell& c) {
        return c.op == OpKind::Backward && c.endSlot < budget;
    });
}

ExperimentPlan planWith(int stages, int budget, const std::string& rule,
                        const std::string& compare = "time") {
    json methods = json::array();
    for (const char* m : {"pd", "fill-drain", "localsgd", "sgd", "rpd"}) {
        json spec = {{"method", m}, {"step_size", 0.1}};
        if (std::string(m) == "localsgd") spec["local_steps"] = 2;
        methods.push_back(spec);
    }
    const json j = {{"stages", stages},
                    {"batch_size", 1},
                    {"data", {{"rows", 40}, {"dim", 16}}},
                    {"budget", {{"slots", budget}, {"rule", rule}, {"compare", compare}}},
                    {"methods", methods}};
    return planExperiment(ExperimentConfig::fromJson(j), PlanSizes{40, 40, 16});
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

    // The schedule family's fit (whole steps, then the longest partial step that fits, from
    // cached step timings) finds what trying every count finds, each count's length the sum
    // of its steps timed afresh here (timeProgram of each step's program, not the cache).
    void programFitAgreesWithTryingEveryCount() {
        const std::string dir = std::string(PIPELENS_SOURCE_DIR) + "/examples/schedules/";
        std::vector<ScheduleParams> cases;
        for (int stages : {2, 4, 6}) {
            for (ScheduleKind kind : {ScheduleKind::OneFOneB, ScheduleKind::ZeroBubbleH1}) {
                for (int group : {0, 3, 8}) {
                    ScheduleParams p;
                    p.kind = kind;
                    p.stages = stages;
                    p.flushGroup = group;
                    p.costs = {1, 2, 0, 1};
                    cases.push_back(p);
                }
            }
            ScheduleParams v;
            v.kind = ScheduleKind::Interleaved;
            v.stages = 2 * stages;  // the model's chunks, two per device
            v.virtualStages = 2;
            v.flushGroup = 2 * stages;
            v.costs = {2, 4, 0, 2};
            cases.push_back(v);
        }
        for (bool async : {false, true}) {
            for (const char* file : {"1f1b_s4_m8.csv", "zb_h1_s4_m8.csv"}) {
                ScheduleParams p;
                p.kind = ScheduleKind::Imported;
                p.stages = 4;
                p.asyncUpdate = async;
                p.program =
                    std::make_shared<const PipelineProgram>(readPytorchScheduleCsv(dir + file));
                cases.push_back(p);
            }
        }
        // A step's program and its cost per action, as program_schedules.cpp documents them.
        auto stepLength = [](ScheduleParams p, int microbatches) {
            if (p.kind == ScheduleKind::Imported) p.flushGroup = programStepMicrobatches(p);
            ActionCosts c = programActionCosts(p.costs);
            if (p.kind == ScheduleKind::Interleaved) {
                c.forward /= p.virtualStages;
                c.backward /= p.virtualStages;
                c.inputGrad = std::max(1, c.inputGrad / p.virtualStages);
                c.weightGrad = std::max(1, c.weightGrad / p.virtualStages);
            }
            return timeProgram(stepProgram(p, microbatches), c).length;
        };
        int compared = 0;
        for (const ScheduleParams& p : cases) {
            ScheduleParams r = p;
            if (r.flushGroup == 0)
                r.flushGroup =
                    r.kind == ScheduleKind::Imported ? programStepMicrobatches(r) : r.stages;
            const int M = r.flushGroup;
            for (long long budget : {5LL, 23LL, 64LL, 101LL, 257LL}) {
                int best = 0;
                for (int n = 1; n <= budget; ++n) {
                    long long length = (n / M) * stepLength(r, M);
                    if (n % M > 0) length += stepLength(r, n % M);
                    if (length <= budget) best = n;
                }
                const BudgetFit fit = fitBudget(p, budget);
                QVERIFY2(fit.microbatches == best,
                         qPrintable(QStringLiteral("%1, S = %2, M = %3, budget %4: the fit found "
                                                   "%5, every count %6")
                                        .arg(QString::fromStdString(scheduleKindName(p.kind)))
                                        .arg(p.stages)
                                        .arg(M)
                                        .arg(budget)
                                        .arg(fit.microbatches)
                                        .arg(best)));
                // The run of that N (built through the same step cache) lasts what was summed.
                if (best > 0) {
                    ScheduleParams q = p;
                    q.microbatches = best;
                    long long length = (best / M) * stepLength(r, M);
                    if (best % M > 0) length += stepLength(r, best % M);
                    QCOMPARE(static_cast<long long>(buildTimeline(q).totalSlots), length);
                    QCOMPARE(runLengthSlots(q), length);
                }
                ++compared;
            }
        }
        QCOMPARE(compared, (3 * 7 + 4) * 5);
    }

    // Step timings are cached by what they depend on: two imported files with the same stages
    // and step size, read twice each (new programs, new addresses), keep their own lengths.
    void stepCacheKeepsImportedFilesApart() {
        const std::string dir = std::string(PIPELENS_SOURCE_DIR) + "/examples/schedules/";
        for (int round = 0; round < 2; ++round) {
            for (const char* file : {"1f1b_s4_m8.csv", "zb_h1_s4_m8.csv"}) {
                ScheduleParams p;
                p.kind = ScheduleKind::Imported;
                p.stages = 4;
                p.costs = {1, 2, 0, 1};
                p.microbatches = 20;  // two whole steps of 8 and one of 4
                const PipelineProgram program = readPytorchScheduleCsv(dir + file);
                p.program = std::make_shared<const PipelineProgram>(program);
                const ActionCosts c = programActionCosts(p.costs);
                ScheduleParams r = p;
                r.flushGroup = 8;
                const long long expected =
                    2 * timeProgram(program, c).length + timeProgram(stepProgram(r, 4), c).length;
                QCOMPARE(static_cast<long long>(buildTimeline(p).totalSlots), expected);
                QCOMPARE(runLengthSlots(p), expected);
            }
        }
    }

    // Budget rule reach rests on this: adding a microbatch never shortens a run.
    void runLengthNeverShrinksAsMicrobatchesGrow() {
        for (Method m : {Method::PipeDream, Method::FillDrain, Method::LocalSgd, Method::Sgd}) {
            for (int S : {1, 2, 3, 4, 8}) {
                for (int cost : {1, 2}) {
                    ScheduleParams p = scheduleByHand(m, S);
                    p.costs.backwardSlots = cost;
                    p.costs.latencySlots = cost - 1;
                    for (int r : {0, 1, 3}) {
                        if (m == Method::LocalSgd) p.replicas = r;
                        if (m != Method::LocalSgd && r != 0) continue;
                        long long previous = 0;
                        for (int n = 1; n <= 60; ++n) {
                            const long long length = lengthWith(p, n);
                            QVERIFY2(length >= previous,
                                     qPrintable(QStringLiteral("method %1, S = %2, cost %3, "
                                                               "R = %4: N = %5 runs %6 < %7")
                                                    .arg(static_cast<int>(m))
                                                    .arg(S)
                                                    .arg(cost)
                                                    .arg(r)
                                                    .arg(n)
                                                    .arg(length)
                                                    .arg(previous)));
                            previous = length;
                        }
                    }
                }
            }
        }
    }

    // Each budget rule on every method (PD, fill-drain, LocalSGD, SGD, RPD) against trying every
    // N with runLengthSlots: fit runs the largest N whose run fits, truncate a timeline cut at
    // the budget, reach the smallest N whose run lasts at least the budget, uncut. Budgets a run
    // length meets exactly (PD's 2N + 2(S - 1), a LocalSGD round 2SH + 2(S - 1)) and ones none
    // of PD's even lengths meets.
    void everyRuleOnEveryMethodAgreesWithTryingEveryCount() {
        const std::vector<Method> pipelines = {Method::PipeDream, Method::FillDrain,
                                               Method::LocalSgd, Method::Sgd};
        int checked = 0;
        for (int S : {2, 3, 4, 8}) {
            const int pdExact = 2 * 10 + 2 * (S - 1);
            const int roundExact = 2 * S * 2 + 2 * (S - 1);
            for (int B : {pdExact, pdExact + 1, roundExact, 97}) {
                const ExperimentPlan fit = planWith(S, B, "fit");
                const ExperimentPlan truncate = planWith(S, B, "truncate");
                const ExperimentPlan reach = planWith(S, B, "reach");
                QCOMPARE(reach.runs.size(), size_t{5});
                for (const ExperimentPlan* plan : {&fit, &truncate, &reach}) {
                    QCOMPARE(plan->budget.slotBudget, B);
                }
                for (size_t i = 0; i < pipelines.size(); ++i) {
                    const ScheduleParams p = scheduleByHand(pipelines[i], S);
                    const QString where = QStringLiteral("S = %1, B = %2, method %3")
                                              .arg(S)
                                              .arg(B)
                                              .arg(static_cast<int>(pipelines[i]));
                    // fit: the whole run, inside the budget.
                    const MethodRun& f = fit.runs[i];
                    QVERIFY2(f.schedule.microbatches == largestFitByTrying(p, B),
                             qPrintable(where));
                    QCOMPARE(f.truncateSlots, 0);
                    QVERIFY(lengthWith(p, f.schedule.microbatches) <= B);
                    // truncate: a longer timeline, cut after slot B.
                    const MethodRun& t = truncate.runs[i];
                    QCOMPARE(t.truncateSlots, B);
                    QCOMPARE(plannedTimeline(t).totalSlots, B);
                    QVERIFY2(lengthWith(p, t.schedule.microbatches) > B, qPrintable(where));
                    // reach: the smallest N reaching B, run whole (it may end after B).
                    const MethodRun& r = reach.runs[i];
                    const int n = smallestReachByTrying(p, B);
                    QVERIFY2(r.schedule.microbatches == n, qPrintable(where));
                    QCOMPARE(r.truncateSlots, 0);
                    const Timeline whole = plannedTimeline(r);
                    QCOMPARE(static_cast<long long>(whole.totalSlots), lengthWith(p, n));
                    QVERIFY(whole.totalSlots >= B);
                    if (n > 1) QVERIFY(lengthWith(p, n - 1) < B);
                    // A run that lasts exactly B is both the largest fit and the smallest reach.
                    if (lengthWith(p, f.schedule.microbatches) == B)
                        QCOMPARE(r.schedule.microbatches, f.schedule.microbatches);
                    ++checked;
                }
                // PD's run meets B exactly at PD's own lengths and overshoots by one slot else.
                const long long pdReach = lengthWith(scheduleByHand(Method::PipeDream, S),
                                                     reach.runs[0].schedule.microbatches);
                QCOMPARE(pdReach, static_cast<long long>(B % 2 == 0 ? B : B + 1));
                // RPD: PD's block updates under each rule.
                const int pdFit = largestFitByTrying(scheduleByHand(Method::PipeDream, S), B);
                const int pdReachN = smallestReachByTrying(scheduleByHand(Method::PipeDream, S), B);
                QCOMPARE(fit.runs[4].updates, static_cast<long long>(pdFit) * S);
                QCOMPARE(truncate.runs[4].updates, pipeDreamUpdatesWithin(S, B));
                QCOMPARE(reach.runs[4].updates, static_cast<long long>(pdReachN) * S);
                QCOMPARE(reach.budget.pipeDreamMicrobatches, pdReachN);
                // Under compare = updates no rule applies: every pipeline runs PD's fitted N.
                const ExperimentPlan updates = planWith(S, B, "reach", "updates");
                for (size_t i = 0; i < pipelines.size(); ++i)
                    QCOMPARE(updates.runs[i].schedule.microbatches, pdFit);
                QCOMPARE(updates.runs[4].updates, static_cast<long long>(pdFit) * S);
            }
        }
        QCOMPARE(checked, 4 * 4 * 4);
    }

    // E4 (SPEC section 7.1) on schedules alone: 3180 slots, reach. PD at S = 4 ends at exactly
    // 3180 (2N + 6 with N = 1587); LocalSGD (R = S, H = 5) ends in 3180 ... 3324 for every S.
    void reachMatchesTheE4Notebook() {
        auto e4 = [](int S) {
            const json j = {
                {"stages", S},
                {"batch_size", 1},
                {"objective", {{"kind", "logistic"}}},
                {"data", {{"rows", 50}, {"dim", 512}}},
                {"budget", {{"slots", 3180}, {"rule", "reach"}}},
                {"methods",
                 json::array({{{"method", "pd"}, {"step_size", 0.1}},
                              {{"method", "localsgd"}, {"local_steps", 5}, {"step_size", 0.1}},
                              {{"method", "rpd"}, {"step_size", 0.1}}})}};
            return planExperiment(ExperimentConfig::fromJson(j), PlanSizes{50, 50, 512});
        };
        const ExperimentPlan s4 = e4(4);
        QCOMPARE(s4.runs[0].schedule.microbatches, 1587);
        QCOMPARE(runLengthSlots(s4.runs[0].schedule), 3180LL);
        QCOMPARE(s4.runs[2].updates, 1587LL * 4);
        long long longest = 0;
        for (int S = 2; S <= 128; S *= 2) {
            const ExperimentPlan plan = e4(S);
            const long long local = runLengthSlots(plan.runs[1].schedule);
            QVERIFY2(
                local >= 3180 && local <= 3324,
                qPrintable(QStringLiteral("S = %1: LocalSGD runs %2 slots").arg(S).arg(local)));
            longest = std::max(longest, local);
            QCOMPARE(runLengthSlots(plan.runs[0].schedule),
                     static_cast<long long>(3180 + (3180 - 2 * (S - 1)) % 2));
        }
        QCOMPARE(longest, 3324LL);
    }

    // truncate with PD's N given (a microbatch budget): every pipeline method runs the same N,
    // cut at PD's run length; PD's own run is whole (drain included) and RPD runs N x S. The
    // authors' E3 notebook: N = 600 at S = 16, 1230 slots. With a slot budget of the same 1230
    // slots PD is the endless run's first slots instead, whose backwards end differently.
    void truncateWithMicrobatchesCutsEachRunOfTheSameN() {
        const json local = {{"method", "localsgd"}, {"local_steps", 2}, {"step_size", 0.1}};
        const json rpd = {{"method", "rpd"}, {"step_size", 0.1}};
        auto plan = [&](const json& budget) {
            json j = {
                {"stages", 16},
                {"batch_size", 5},
                {"data", {{"rows", 600}, {"dim", 512}}},
                {"budget", budget},
                {"methods", json::array({{{"method", "pd"}, {"step_size", 0.1}}, local, rpd})}};
            return planExperiment(ExperimentConfig::fromJson(j), PlanSizes{120, 600, 512});
        };
        const ExperimentPlan sameN = plan({{"microbatches", 600}, {"rule", "truncate"}});
        QCOMPARE(sameN.budget.slotBudget, 1230);
        const MethodRun& pd = sameN.runs[0];
        QCOMPARE(pd.schedule.microbatches, 600);
        QCOMPARE(pd.truncateSlots, 0);
        const Timeline pdRun = plannedTimeline(pd);
        QCOMPARE(pdRun.totalSlots, 1230);
        QCOMPARE(std::count_if(pdRun.cells.begin(), pdRun.cells.end(),
                               [](const TimelineCell& c) { return c.op == OpKind::Backward; }),
                 600L * 16);
        const MethodRun& cut = sameN.runs[1];
        QCOMPARE(cut.schedule.microbatches, 600);
        QVERIFY(runLengthSlots(cut.schedule) > 1230);
        QCOMPARE(cut.truncateSlots, 1230);
        QVERIFY(cut.cutOwnRun);
        // The cut keeps exactly the cells of the N = 600 run that end before slot 1230.
        const Timeline whole = buildTimeline(cut.schedule);
        const Timeline kept = plannedTimeline(cut);
        QCOMPARE(kept.totalSlots, 1230);
        QCOMPARE(static_cast<long long>(kept.cells.size()),
                 static_cast<long long>(
                     std::count_if(whole.cells.begin(), whole.cells.end(),
                                   [](const TimelineCell& c) { return c.endSlot < 1230; })));
        QCOMPARE(sameN.runs[2].updates, 600LL * 16);
        // A slot budget of 1230: PD is cut from the endless run, which starts microbatch 600 and
        // so runs some of the last backwards later than PD's own run of 600 does.
        const ExperimentPlan bySlots = plan({{"slots", 1230}, {"rule", "truncate"}});
        QCOMPARE(bySlots.runs[0].truncateSlots, 1230);
        QVERIFY(!bySlots.runs[0].cutOwnRun);
        const Timeline endless = plannedTimeline(bySlots.runs[0]);
        auto backwards = [](const Timeline& t) {
            std::vector<std::tuple<int, int, int>> b;
            for (const TimelineCell& c : t.cells) {
                if (c.op == OpKind::Backward) b.emplace_back(c.microbatch, c.stage, c.startSlot);
            }
            std::sort(b.begin(), b.end());
            return b;
        };
        QVERIFY(backwards(endless) != backwards(pdRun));
    }

    // reach needs one more microbatch than fits in B - 1 slots: at S = 4 the cap is 50000000
    // microbatches, whose PD run (2N + 6 slots) fits in B = 100000007 but does not reach it.
    void reachPastTheTimelineCapRefusedNamingTheField() {
        const int cap = maxMicrobatches(4);
        QCOMPARE(cap, 50000000);
        const ExperimentConfig fits = config({{"slots", 2 * cap + 6}, {"rule", "reach"}});
        QCOMPARE(planExperiment(fits, PlanSizes{60, 300, 16}).runs[0].schedule.microbatches, cap);
        const ExperimentConfig c = config({{"slots", 2 * cap + 7}, {"rule", "reach"}});
        expectError<ConfigError>(
            [&] {
                planExperiment(c, PlanSizes{60, 300, 16});
            },
            {"budget.slots = 100000007", "budget.rule = reach", "more than 50000000 microbatches",
             "stages = 4"});
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

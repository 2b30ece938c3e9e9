// The schedule comparison table (experiment/output/schedule_comparison.hpp) on a small linear
// experiment holding PD, fill-drain, 1F1B, ZB-H1 and 2BW at S = 4 (forward 1, backward 2,
// weight 1): rows in config order, bubbles against their closed forms, peak memory per stage
// against hand counts, the time to target as the first crossing of the curve, and the CSV and
// JSON forms.
#include <QtTest>

#include <cmath>
#include <limits>

#include "experiment/output/schedule_comparison.hpp"
#include "experiment/run/experiment.hpp"
#include "schedule/stage_memory.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

constexpr int kS = 4;
constexpr int kM = 4;

// 1F1B with F = 1 and B = 2: a step is (M + S - 1)(F + B) = 21 slots, so 210 slots fit ten whole
// steps and the run's bubble is one step's.
json experimentJson() {
    const json grid = {{"grid", {-6, 2}}, {"rule", "best_final"}};
    return {
        {"name", "compare"},
        {"seed", 0},
        {"objective", {{"kind", "logistic"}, {"l2", 0.001}}},
        {"data",
         {{"source", "synthetic"}, {"kind", "logistic"}, {"rows", 80}, {"dim", 16}, {"seed", 3}}},
        {"stages", kS},
        {"batch_size", 4},
        {"budget", {{"slots", 210}}},
        {"costs", {{"forward_slots", 1}, {"backward_slots", 2}, {"weight_slots", 1}}},
        {"backend", "cpu"},
        {"methods", json::array({{{"method", "pd"}, {"step_size", grid}},
                                 {{"method", "fill-drain"}, {"step_size", grid}},
                                 {{"method", "1f1b"}, {"step_size", grid}},
                                 {{"method", "zb-h1"}, {"step_size", grid}},
                                 {{"method", "2bw"}, {"step_size", grid}}})}};
}

const ExperimentResult& result() {
    static const ExperimentResult r = [] {
        RunOptions o;
        o.threads = 2;
        return runExperiment(ExperimentConfig::fromJson(experimentJson()), o);
    }();
    return r;
}

}  // namespace

class TestScheduleComparison : public QObject {
    Q_OBJECT
  private slots:
    void rowsInConfigOrder() {
        const ScheduleComparison c = scheduleComparison(result());
        QCOMPARE(c.rows.size(), std::size_t(5));
        const std::vector<std::string> keys{"pd", "fill-drain", "1f1b", "zb-h1", "2bw"};
        for (std::size_t i = 0; i < keys.size(); ++i) {
            QCOMPARE(c.rows[i].method, keys[i]);
            QCOMPARE(c.rows[i].label, result().methods[i].label);
            QCOMPARE(c.rows[i].stages, kS);
            QVERIFY(c.rows[i].stats.has_value());
            QCOMPARE(c.rows[i].totalSlots, result().methods[i].result.totalSlots);
            const MethodRun& m = result().methods[i];
            QCOMPARE(c.rows[i].stepSize, m.grid.at(static_cast<std::size_t>(m.chosen)).stepSize);
            QCOMPARE(c.rows[i].finalValue,
                     m.grid.at(static_cast<std::size_t>(m.chosen)).finalGap.mean);
        }
        QCOMPARE(c.valueName, std::string("f - f*"));
    }

    void bubblesMatchTheirClosedForms() {
        const ScheduleComparison c = scheduleComparison(result());
        // Every microbatch runs F and B (or I and W) once on every stage: busy = N (F + B).
        for (std::size_t i = 0; i < c.rows.size(); ++i) {
            const RunResult& r = result().methods[i].result;
            const double busy = static_cast<double>(r.microbatches) * 3.0;
            QVERIFY2(
                std::abs(c.rows[i].stats->bubbleFraction - (1.0 - busy / r.totalSlots)) < 1e-12,
                c.rows[i].method.c_str());
        }
        // Flushing schedules with M = S: per step (S - 1) / (M + S - 1), for GPipe and 1F1B.
        QCOMPARE(c.rows[2].totalSlots, 210);
        QVERIFY(std::abs(c.rows[2].stats->bubbleFraction - 3.0 / 7.0) < 1e-12);
        QVERIFY(std::abs(c.rows[1].stats->bubbleFraction - 3.0 / 7.0) < 1e-12);
        // ZB-H1 (F = I = W = 1): each stage idles (S - 1)(F + I - W) slots of a step of
        // M (F + B) + (S - 1)(F + I - W): 3 / 15 (the zero-bubble paper's H1 bubble).
        const RunResult& zb = result().methods[3].result;
        const int steps = static_cast<int>(zb.microbatches) / kM;
        QCOMPARE(zb.totalSlots, steps * (kM * 3 + (kS - 1)));
        QVERIFY(std::abs(c.rows[3].stats->bubbleFraction - 0.2) < 1e-12);
        // The flushes' microbatches per step: M = S by default; PD's NOAM = S.
        for (const ScheduleComparisonRow& row : c.rows) {
            QCOMPARE(row.stats->microbatchesPerStep, kS);
        }
    }

    void peakMemoryPerStage() {
        const ScheduleComparison c = scheduleComparison(result());
        // PD: S stashed copies and S microbatches' activations on stage 0.
        QCOMPARE(c.rows[0].stats->peakStageMemoryUnits, 2 * kS);
        // GPipe: one version, the M activations of a flush; 1F1B and ZB-H1: one version, at
        // most S in flight; 2BW: two versions, S in flight.
        QCOMPARE(c.rows[1].stats->peakStageMemoryUnits, 1 + kM);
        QCOMPARE(c.rows[2].stats->peakStageMemoryUnits, 1 + kS);
        QCOMPARE(c.rows[3].stats->peakStageMemoryUnits, 1 + kS);
        QCOMPARE(c.rows[4].stats->peakStageMemoryUnits, 2 + kS);
        // The table's number is the memory view's (stageMemory), stage by stage the largest.
        for (size_t i = 0; i < c.rows.size(); ++i) {
            double peak = 0.0;
            for (const StageMemory& m : stageMemory(*result().methods[i].result.timeline))
                peak = std::max(peak, m.total);
            QCOMPARE(c.rows[i].stats->peakStageMemoryUnits, static_cast<int>(peak));
        }
    }

    // LocalSGD's R replicas run on the same stages: each stage holds R weight copies, as the
    // memory view says (the table once counted one).
    void localSgdHoldsOneCopyPerReplica() {
        ScheduleParams p;
        p.kind = ScheduleKind::LocalSgd;
        p.stages = 4;
        p.replicas = 3;
        p.localSteps = 2;
        p.microbatches = 12;
        const Timeline tl = buildTimeline(p);
        const std::vector<StageMemory> memory = stageMemory(tl);
        int peak = 0;
        for (const StageMemory& m : memory) {
            QCOMPARE(m.weightVersions, 3);
            peak = std::max(peak, 3 + m.activations);
        }
        QCOMPARE(peakStageMemoryUnits(tl), peak);
        QVERIFY(peak >= 4);
    }

    void timeToTargetIsTheFirstCrossing() {
        const ScheduleComparison c = scheduleComparison(result());
        double best = std::numeric_limits<double>::infinity();
        for (const auto& row : c.rows) best = std::min(best, row.finalValue);
        QCOMPARE(c.target, 2.0 * best);
        QVERIFY(!c.targetGiven);
        for (std::size_t i = 0; i < c.rows.size(); ++i) {
            const std::vector<double>& curve = result().methods[i].curve.mean;
            const int t = c.rows[i].timeToTarget;
            if (c.rows[i].finalValue == best) QVERIFY(t >= 0);  // the best surely gets there
            if (t < 0) {
                for (double v : curve) QVERIFY(v > c.target);
                continue;
            }
            QVERIFY(curve[static_cast<std::size_t>(t)] <= c.target);
            for (int k = 0; k < t; ++k) QVERIFY(curve[static_cast<std::size_t>(k)] > c.target);
        }
        // A target given is used as is; one no curve reaches gives no time.
        const double start = result().methods[0].curve.mean.front();
        const ScheduleComparison easy = scheduleComparison(result(), start);
        QVERIFY(easy.targetGiven);
        for (const auto& row : easy.rows) QCOMPARE(row.timeToTarget, 0);
        const ScheduleComparison never = scheduleComparison(result(), -1.0);
        for (const auto& row : never.rows) QCOMPARE(row.timeToTarget, -1);
    }

    void firstSlotAndDefaultTarget() {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        QCOMPARE(firstSlotAtOrBelow({nan, 5.0, 3.0, 1.0, 0.5}, 1.0), 3);
        QCOMPARE(firstSlotAtOrBelow({nan, 5.0}, 1.0), -1);
        QCOMPARE(firstSlotAtOrBelow({}, 1.0), -1);
        QCOMPARE(defaultComparisonTarget({inf, 0.3, nan, 0.2}), 0.4);
        QCOMPARE(defaultComparisonTarget({inf}), inf);
    }

    void csvAndJson() {
        const ScheduleComparison c = scheduleComparison(result());
        const std::string csv = scheduleComparisonCsv(c);
        const std::string header =
            "label,method,stages,microbatches_per_step,step_size,final_value,target,"
            "time_to_target_slots,bubble_fraction,peak_stage_memory_units,total_slots\n";
        QCOMPARE(csv.substr(0, header.size()), header);
        QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 6L);
        QVERIFY(csv.find("\n\"1F1B") != std::string::npos);  // labels quoted
        const json j = scheduleComparisonJson(c);
        QCOMPARE(j["rows"].size(), std::size_t(5));
        QCOMPARE(j["rows"][3]["method"].get<std::string>(), std::string("zb-h1"));
        QCOMPARE(j["rows"][3]["peak_stage_memory_units"].get<int>(), 1 + kS);
        QCOMPARE(j["target"].get<double>(), c.target);
        QCOMPARE(j["value"].get<std::string>(), std::string("f - f*"));
    }

    // RPD has no timeline: no bubble, memory or microbatches per step; its time counts the
    // slots of PipeDream's updates.
    void rpdRowHasNoSchedule() {
        json j = experimentJson();
        j["methods"] = json::array(
            {{{"method", "pd"}, {"step_size", 0.25}}, {{"method", "rpd"}, {"step_size", 0.25}}});
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        const ScheduleComparison c = scheduleComparison(r, 1e9);
        QCOMPARE(c.rows.size(), std::size_t(2));
        QVERIFY(!c.rows[1].stats.has_value());
        QCOMPARE(c.rows[1].totalSlots, 0);
        QCOMPARE(c.rows[1].timeToTarget, 0);
        // Update k of RPD sits at the slot of PD's update k: its first crossing, in slots.
        const MethodRun& rpd = r.methods[1];
        const double mid = 0.5 * (rpd.curve.mean.front() + rpd.curve.mean.back());
        const int k = firstSlotAtOrBelow(rpd.curve.mean, mid);
        QVERIFY(k > 0);
        ScheduleParams pd;
        pd.stages = kS;
        pd.costs = r.config.costs;
        pd.microbatches = static_cast<int>(pipeDreamMicrobatchesFor(rpd.updates, kS));
        std::vector<int> ends;
        for (const ReplayEvent& e : replayOrder(buildTimeline(pd))) {
            if (e.op == OpKind::Backward) ends.push_back(e.slot);
        }
        QCOMPARE(scheduleComparison(r, mid).rows[1].timeToTarget,
                 ends.at(static_cast<std::size_t>(k - 1)) + 1);
        const std::string csv = scheduleComparisonCsv(c);
        QVERIFY2(csv.find(",rpd,4,,") != std::string::npos, csv.c_str());
    }
};

QTEST_APPLESS_MAIN(TestScheduleComparison)
#include "tst_schedule_comparison.moc"

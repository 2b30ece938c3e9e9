// Run lengths in summary.json (issue 29 §3, docs/results.md): under the truncate budget rule a
// pipeline method reports the microbatches that finished, the N of its uncut timeline, the slots
// run and the slot of the cut, each against a count made by hand from its timeline; under fit
// every planned microbatch finishes and nothing is cut; under reach the same, and a run may
// end after the budget.
#include <QtTest>

#include <map>
#include <nlohmann/json.hpp>

#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

ExperimentResult runWith(const std::string& rule) {
    const json j = {
        {"stages", 4},
        {"batch_size", 4},
        {"objective", {{"kind", "quadratic"}}},
        {"data", {{"source", "synthetic"}, {"kind", "random"}, {"rows", 40}, {"dim", 8}}},
        {"budget", {{"slots", 18}, {"rule", rule}}},
        {"methods", json::array({{{"method", "pd"}, {"step_size", 0.05}},
                                 {{"method", "localsgd"}, {"step_size", 0.05}, {"local_steps", 1}},
                                 {{"method", "rpd"}, {"step_size", 0.05}, {"delta", 2}}})}};
    RunOptions o;
    o.threads = 1;
    return runExperiment(ExperimentConfig::fromJson(j), o);
}

// Microbatches all of whose 2·S operations are in the timeline and end before slot `end`.
long long completeMicrobatches(const Timeline& tl, int stages, int end) {
    std::map<int, int> ops;
    for (const TimelineCell& c : tl.cells) {
        if (c.endSlot < end) ++ops[c.microbatch];
    }
    long long complete = 0;
    for (const auto& [mb, n] : ops) complete += n == 2 * stages ? 1 : 0;
    return complete;
}

}  // namespace

class TestRunLengths : public QObject {
    Q_OBJECT
  private slots:
    void truncatedRunsReportWhatRan() {
        const ExperimentResult r = runWith("truncate");
        const json s = summaryJson(r);
        QCOMPARE(s["budget_rule"].get<std::string>(), std::string("truncate"));
        QCOMPARE(s["budget_compare"].get<std::string>(), std::string("time"));
        for (int i : {0, 1}) {
            const json& m = s["methods"][i];
            const MethodRun& run = r.methods[static_cast<size_t>(i)];
            QVERIFY(run.result.timeline);
            const Timeline& tl = *run.result.timeline;
            QCOMPARE(m["slots_run"].get<int>(), 18);
            QCOMPARE(m["cut_at_slot"].get<int>(), 18);
            // Planned: the N of the longer timeline that was cut, some of it never started.
            QCOMPARE(m["microbatches_planned"].get<long long>(),
                     static_cast<long long>(tl.params.microbatches));
            QCOMPARE(m["microbatches"].get<long long>(),
                     m["microbatches_planned"].get<long long>());
            const long long finished = m["microbatches_finished"].get<long long>();
            QCOMPARE(finished, completeMicrobatches(tl, 4, 18));
            QVERIFY(finished < m["microbatches_planned"].get<long long>());
        }
        // PD, S = 4, 18 slots (docs/config.md, tests/core/tst_sweep.cpp): microbatches 0-5
        // complete; 6, 7, 8 started and never finished.
        QCOMPARE(s["methods"][0]["microbatches_finished"].get<long long>(), 6LL);
        // LocalSGD, R = S = 4, H = 1: a round of 2SH + 2(S-1) = 14 slots; each replica's
        // microbatch of the second round is still in flight at slot 18.
        QCOMPARE(s["methods"][1]["microbatches_finished"].get<long long>(), 4LL);
        // RPD has no timeline: no run-length fields.
        QVERIFY(!s["methods"][2].contains("microbatches_finished"));
        QVERIFY(!s["methods"][2].contains("cut_at_slot"));
    }

    void fittedRunsFinishEveryMicrobatch() {
        const ExperimentResult r = runWith("fit");
        const json s = summaryJson(r);
        QCOMPARE(s["budget_rule"].get<std::string>(), std::string("fit"));
        for (int i : {0, 1}) {
            const json& m = s["methods"][i];
            QVERIFY(m["cut_at_slot"].is_null());
            QCOMPARE(m["microbatches_finished"].get<long long>(),
                     m["microbatches_planned"].get<long long>());
            QCOMPARE(m["slots_run"].get<int>(), m["slots"].get<int>());
        }
        QCOMPARE(s["methods"][0]["microbatches_finished"].get<long long>(), 6LL);  // 2N + 6 = 18
    }

    // Under reach every run is whole (nothing cut) and lasts at least the budget: slots_run is
    // the run's own length, which may pass slot_budget.
    void reachedRunsAreWholeAndMayEndAfterTheBudget() {
        const ExperimentResult r = runWith("reach");
        const json s = summaryJson(r);
        QCOMPARE(s["budget_rule"].get<std::string>(), std::string("reach"));
        QCOMPARE(s["slot_budget"].get<int>(), 18);
        for (int i : {0, 1}) {
            const json& m = s["methods"][i];
            const Timeline& tl = *r.methods[static_cast<size_t>(i)].result.timeline;
            QVERIFY(m["cut_at_slot"].is_null());
            QCOMPARE(m["slots_run"].get<int>(), tl.totalSlots);
            QVERIFY(m["slots_run"].get<int>() >= 18);
            QCOMPARE(m["microbatches_finished"].get<long long>(),
                     m["microbatches_planned"].get<long long>());
            QCOMPARE(completeMicrobatches(tl, 4, tl.totalSlots),
                     m["microbatches_planned"].get<long long>());
        }
        // PD: 2N + 6 = 18 at N = 6, exactly the budget. LocalSGD (R = S = 4, H = 1): a round of
        // 4 microbatches lasts 14 slots, so 4 reach 14 < 18 and a fifth (alone, 2S = 8 slots)
        // makes 22.
        QCOMPARE(s["methods"][0]["slots_run"].get<int>(), 18);
        QCOMPARE(s["methods"][0]["microbatches_planned"].get<long long>(), 6LL);
        QCOMPARE(s["methods"][1]["microbatches_planned"].get<long long>(), 5LL);
        QCOMPARE(s["methods"][1]["slots_run"].get<int>(), 22);
        // RPD: PD's N x S block updates.
        QCOMPARE(s["methods"][2]["block_updates"].get<long long>(), 24LL);
    }
};

QTEST_APPLESS_MAIN(TestRunLengths)
#include "tst_run_lengths.moc"

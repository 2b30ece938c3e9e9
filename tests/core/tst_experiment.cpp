// Experiments: equal-time and equal-update planning, step-size grids, and the results folder
// (docs/results.md), which is replaced only when a run succeeds.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"
#include "schedule/schedule_tables.hpp"
#include "schedule/timeline.hpp"
#include "util/text_builder.hpp"

using namespace pipelens;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Quadratic, n = 60, d = 8, b = 10 (M = 6), S = 4, three PD epochs: N = 18, 42 slots.
json baseConfig() {
    return json::parse(R"({
        "name": "plan-test",
        "stages": 4,
        "batch_size": 10,
        "data": {"kind": "random", "rows": 60, "dim": 8, "seed": 3},
        "budget": {"epochs": 3},
        "methods": [
            {"method": "pd", "step_size": 0.05},
            {"method": "rpd", "step_size": 0.05},
            {"method": "localsgd", "step_size": 0.05, "local_steps": 2},
            {"method": "sgd", "step_size": 0.05},
            {"method": "fill-drain", "step_size": 0.05}
        ]
    })");
}

ExperimentConfig configOf(const json& j) {
    return ExperimentConfig::fromJson(j);
}

RunOptions twoThreads() {
    RunOptions o;
    o.threads = 2;
    return o;
}

std::string readFile(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string line;
    while (std::getline(ss, line)) out.push_back(line);
    return out;
}

std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    std::stringstream ss(line);
    while (std::getline(ss, cell, ',')) out.push_back(cell);
    if (!line.empty() && line.back() == ',') out.push_back("");
    return out;
}

// Every file under `dir` with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = readFile(e.path());
    }
    return files;
}

// Siblings of `target` that look like leftovers of a write (name.tmp-PID, name.old-PID).
int leftovers(const fs::path& target) {
    int n = 0;
    const std::string stem = target.filename().string();
    for (const auto& e : fs::directory_iterator(target.parent_path())) {
        const std::string name = e.path().filename().string();
        if (name != stem && name.rfind(stem, 0) == 0) ++n;
    }
    return n;
}

}  // namespace

class TestExperiment : public QObject {
    Q_OBJECT
  private slots:
    void equalTimePlanning() {
        for (const char* costs : {"default", "F=1 B=2 latency 1"}) {
            json j = baseConfig();
            if (std::string(costs) != "default") {
                j["costs"] = {{"forward_slots", 1}, {"backward_slots", 2}, {"latency_slots", 1}};
            }
            const ExperimentConfig c = configOf(j);
            auto obj = buildObjective(c);
            QCOMPARE(obj->batches(), 6);
            const ExperimentPlan plan = planExperiment(c, *obj);
            QCOMPARE(plan.budget.pipeDreamMicrobatches, 18);
            ScheduleParams pd;
            pd.stages = 4;
            pd.microbatches = 18;
            pd.costs = c.costs;
            QCOMPARE(plan.budget.slotBudget, buildTimeline(pd).totalSlots);
            if (std::string(costs) == "default") QCOMPARE(plan.budget.slotBudget, 2 * 18 + 2 * 3);
            QCOMPARE(plan.budget.updateBudget, 18LL * 4);
            QCOMPARE(plan.runs.size(), size_t(5));
            for (const MethodRun& r : plan.runs) {
                if (!r.pipeline()) {
                    QCOMPARE(r.spec.method, Method::RandomizedPipeDream);
                    QCOMPARE(r.updates, 72LL);
                    QCOMPARE(r.delta, 14LL);  // S^2 - S/2 at S = 4
                    continue;
                }
                ScheduleParams p = r.schedule;
                QCOMPARE(p.costs.backwardSlots, c.costs.backwardSlots);
                QVERIFY2(buildTimeline(p).totalSlots <= plan.budget.slotBudget, r.label.c_str());
                ++p.microbatches;
                if (r.spec.method == Method::Sgd) p.localSteps = p.microbatches;
                QVERIFY2(buildTimeline(p).totalSlots > plan.budget.slotBudget, r.label.c_str());
            }
            // The kinds and parameters the methods ask for.
            QCOMPARE(plan.runs[0].schedule.kind, ScheduleKind::PipeDream);
            QCOMPARE(plan.runs[0].schedule.microbatches, 18);
            QCOMPARE(plan.runs[2].schedule.kind, ScheduleKind::LocalSgd);
            QCOMPARE(plan.runs[2].replicas, 4);
            QCOMPARE(plan.runs[2].schedule.localSteps, 2);
            QCOMPARE(plan.runs[3].replicas, 1);
            QCOMPARE(plan.runs[4].schedule.kind, ScheduleKind::FillDrain);
            QCOMPARE(plan.runs[4].schedule.flushGroup, 4);
            QCOMPARE(plan.runs[4].stepScale, 0.25);
        }
        // Sequential SGD with unit costs: each microbatch takes 2S slots.
        const ExperimentConfig c = configOf(baseConfig());
        const ExperimentPlan plan = planExperiment(c, *buildObjective(c));
        QCOMPARE(plan.runs[3].schedule.microbatches, 42 / 8);
    }

    void budgetKinds() {
        json j = baseConfig();
        j["budget"] = {{"slots", 51}};
        ExperimentConfig c = configOf(j);
        auto obj = buildObjective(c);
        ExperimentPlan plan = planExperiment(c, *obj);
        QCOMPARE(plan.budget.slotBudget, 51);
        QCOMPARE(plan.budget.pipeDreamMicrobatches, (51 - 6) / 2);
        j["budget"] = {{"microbatches", 10}};
        plan = planExperiment(configOf(j), *obj);
        QCOMPARE(plan.budget.pipeDreamMicrobatches, 10);
        QCOMPARE(plan.budget.slotBudget, 26);
        // Slots take precedence over microbatches and epochs.
        j["budget"] = {{"slots", 30}, {"microbatches", 10}, {"epochs", 9}};
        plan = planExperiment(configOf(j), *obj);
        QCOMPARE(plan.budget.slotBudget, 30);
        QCOMPARE(plan.budget.pipeDreamMicrobatches, 12);
        j["budget"] = {{"microbatches", 10}, {"epochs", 9}};
        QCOMPARE(planExperiment(configOf(j), *obj).budget.pipeDreamMicrobatches, 10);
        // PD with NOAM = 1 sets the budget from its own (slower) run length.
        j = baseConfig();
        j["methods"][0]["noam"] = 1;
        plan = planExperiment(configOf(j), *obj);
        QCOMPARE(plan.budget.slotBudget, 18 * 2 * 4);
        // Too short for one microbatch.
        j = baseConfig();
        j["budget"] = {{"slots", 5}};
        try {
            planExperiment(configOf(j), *obj);
            QFAIL("no error for a budget of 5 slots at S = 4");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains("budget.slots = 5"), e.what());
        }
    }

    void equalUpdatesComparison() {
        json j = baseConfig();
        j["budget"]["compare"] = "updates";
        const ExperimentConfig c = configOf(j);
        const ExperimentResult res = runExperiment(c, twoThreads());
        QCOMPARE(res.methods.size(), size_t(5));
        for (const MethodRun& o : res.methods) {
            QVERIFY2(o.result.finished, o.label.c_str());
            QCOMPARE(o.result.updates, 72LL);
            if (o.pipeline()) QCOMPARE(o.result.microbatches, 18LL);
        }
    }

    void equalTimeRunsFitTheBudget() {
        const ExperimentResult res = runExperiment(configOf(baseConfig()), twoThreads());
        for (const MethodRun& o : res.methods) {
            QVERIFY(o.result.finished);
            if (o.pipeline()) {
                QVERIFY(o.result.totalSlots <= res.budget.slotBudget);
                QCOMPARE(o.result.updates, o.result.microbatches * 4);
            }
        }
        QCOMPARE(res.methods[0].result.totalSlots, res.budget.slotBudget);
        QVERIFY(res.optimum > 0.0 || res.optimum == 0.0);
        QVERIFY(res.smoothness > 0.0);
    }

    void stepSizeGridPicksBestNonDiverged() {
        json j = baseConfig();
        j["methods"] =
            json::array({{{"method", "pd"}, {"step_size", {{"grid", {-6, 4}}}}},
                         {{"method", "rpd"}, {"step_size", {{"grid", {-6, 4}}}}, {"delta", 3}}});
        const ExperimentConfig c = configOf(j);
        const ExperimentResult res = runExperiment(c, twoThreads());
        auto obj = buildObjective(c);
        obj->setOptimum(res.optimum);
        obj->setSmoothness(res.smoothness);
        for (const MethodRun& o : res.methods) {
            QCOMPARE(o.sweep.size(), size_t(11));
            QVERIFY(!o.allDiverged);
            // Re-run every grid point independently and apply the rule: diverged = stopped,
            // non-finite, or ended above the start; keep the lowest final gap of the others.
            double best = INFINITY;
            double bestStep = 0.0;
            for (int a = -6; a <= 4; ++a) {
                const double step = std::ldexp(1.0, a);
                RunResult r = runOne(c, o, step, obj, cpuBackendProvider());
                const double f = r.finalObjective();
                const bool diverged =
                    r.divergence.diverged || !std::isfinite(f) || f > r.initialObjective;
                const SweepPoint& p = o.sweep[static_cast<size_t>(a + 6)];
                QCOMPARE(p.stepSize, step);
                QCOMPARE(p.diverged, diverged);
                if (!diverged) {
                    QCOMPARE(p.finalGap, f - res.optimum);
                    if (p.finalGap < best) {
                        best = p.finalGap;
                        bestStep = step;
                    }
                }
            }
            QVERIFY2(o.sweep.back().diverged, "the largest step size (16) should diverge here");
            QCOMPARE(o.result.stepSize, bestStep);
            QCOMPARE(o.result.finalObjective() - res.optimum, best);
            QVERIFY(!o.result.divergence.diverged);
        }
        // Every step diverges: reported, with the smallest step's run kept.
        j["methods"] = json::array({{{"method", "pd"}, {"step_size", {{"grid", {6, 8}}}}}});
        const ExperimentResult bad = runExperiment(configOf(j), twoThreads());
        QVERIFY(bad.methods[0].allDiverged);
        QCOMPARE(bad.methods[0].sweep.size(), size_t(3));
        for (const SweepPoint& p : bad.methods[0].sweep) QVERIFY(p.diverged);
        QCOMPARE(bad.methods[0].result.stepSize, 64.0);
    }

    void writeResultsFilesAndColumns() {
        json j = baseConfig();
        j["methods"].push_back({{"method", "pd"}, {"label", "PD huge"}, {"step_size", 1000}});
        j["methods"][1]["step_size"] = {{"grid", {-3, -1}}};
        j["sampling"] = {{"grad_norm_every", 10}};
        const ExperimentConfig c = configOf(j);
        const ExperimentResult res = runExperiment(c, twoThreads());
        QTemporaryDir tmp;
        const fs::path out = fs::path(tmp.path().toStdString()) / "results";
        writeResults(res, out.string());
        QCOMPARE(leftovers(out), 0);

        const std::vector<std::string> labels = {res.methods[0].label, res.methods[1].label,
                                                 res.methods[2].label, res.methods[3].label,
                                                 res.methods[4].label, "PD huge"};
        QCOMPARE(res.methods[5].label, std::string("PD huge"));
        QVERIFY(res.methods[5].result.divergence.diverged);
        std::string header;
        for (const auto& l : labels) header += ",\"" + l + "\"";

        // objective_per_slot.csv: one row per slots_completed value, one column per method.
        auto perSlot = lines(readFile(out / "objective_per_slot.csv"));
        QCOMPARE(perSlot[0], "slots_completed" + header);
        size_t maxSlots = 0;
        for (const auto& o : res.methods)
            maxSlots = std::max(maxSlots, o.result.objectivePerSlot.size());
        QCOMPARE(perSlot.size(), 1 + maxSlots);
        for (size_t m = 0; m < labels.size(); ++m) {
            size_t filled = 0;
            for (size_t r = 1; r < perSlot.size(); ++r) {
                auto cs = cells(perSlot[r]);
                QCOMPARE(cs.size(), labels.size() + 1);
                QCOMPARE(cs[0], std::to_string(r - 1));
                if (!cs[m + 1].empty()) ++filled;
            }
            QCOMPARE(filled, res.methods[m].result.objectivePerSlot.size());
        }
        QCOMPARE(std::stod(cells(perSlot[1])[1]), res.methods[0].result.objectivePerSlot[0]);

        // objective_per_update.csv and gap_per_update.csv: block_update from 1.
        auto perUpdate = lines(readFile(out / "objective_per_update.csv"));
        auto gap = lines(readFile(out / "gap_per_update.csv"));
        QCOMPARE(perUpdate[0], "block_update" + header);
        QCOMPARE(gap[0], "block_update" + header);
        size_t maxUpdates = 0;
        for (const auto& o : res.methods)
            maxUpdates = std::max(maxUpdates, o.result.objectivePerUpdate.size());
        QCOMPARE(perUpdate.size(), 1 + maxUpdates);
        QCOMPARE(gap.size(), 1 + maxUpdates);
        QCOMPARE(cells(perUpdate[1])[0], std::string("1"));
        const double f5 = res.methods[2].result.objectivePerUpdate[4];
        QCOMPARE(std::stod(cells(perUpdate[5])[3]), f5);
        QVERIFY(std::abs(std::stod(cells(gap[5])[3]) - (f5 - res.optimum)) <=
                1e-15 * std::max(1.0, f5));

        // grad_norm.csv: long format.
        auto grad = lines(readFile(out / "grad_norm.csv"));
        QCOMPARE(grad[0], std::string("method,block_update,grad_norm_sq,running_mean"));
        size_t gradRows = 0;
        for (const auto& o : res.methods) gradRows += o.result.gradNormSq.size();
        QVERIFY(gradRows > 0);
        QCOMPARE(grad.size(), 1 + gradRows);

        // theorem.csv: the RPD method only; sweep.csv: its three grid points.
        auto theorem = lines(readFile(out / "theorem.csv"));
        QCOMPARE(theorem[0],
                 std::string("method,optimisation,noise,staleness,total,mean_grad_norm_sq"));
        QCOMPARE(theorem.size(), size_t(2));
        QVERIFY(theorem[1].rfind("\"" + labels[1] + "\",", 0) == 0);
        auto sweep = lines(readFile(out / "sweep.csv"));
        QCOMPARE(sweep[0], std::string("method,step_size,final_gap,diverged"));
        QCOMPARE(sweep.size(), size_t(4));
        QCOMPARE(cells(sweep[1]).back(), std::string("0"));

        // Timelines and delays per pipeline method (by index); delays need a single replica.
        for (size_t i = 0; i < res.methods.size(); ++i) {
            const RunResult& r = res.methods[i].result;
            const fs::path tl = out / ("timeline_" + std::to_string(i) + ".csv");
            const fs::path dl = out / ("delays_" + std::to_string(i) + ".csv");
            QCOMPARE(fs::exists(tl), r.timeline.has_value());
            const bool wantDelays = res.methods[i].pipeline() && res.methods[i].replicas == 1;
            QCOMPARE(fs::exists(dl), wantDelays);
            if (r.timeline) {
                auto t = lines(readFile(tl));
                QCOMPARE(t[0], std::string("method,slot,end_slot,stage,op,microbatch,"
                                           "version_read,replica,round"));
                QCOMPARE(t.size(),
                         1 + 2 * static_cast<size_t>(r.timeline->params.microbatches) * 4 +
                             r.timeline->averagingSlots.size());
                QCOMPARE(readFile(tl), ganttTableCsv(*r.timeline, r.delays ? &*r.delays : nullptr,
                                                     res.methods[i].label));
            }
            if (wantDelays) {
                auto d = lines(readFile(dl));
                QCOMPARE(d[0], std::string("method,block_update,updated_stage,microbatch,slot,"
                                           "delay_block1,delay_block2,delay_block3,delay_block4"));
                QCOMPARE(d.size(), 1 + static_cast<size_t>(r.timeline->params.microbatches) * 4);
                for (size_t k = 0; k + 1 < d.size(); ++k) {
                    auto cs = cells(d[k + 1]);
                    QCOMPARE(cs.size(), size_t(9));
                    QCOMPARE(cs[1], std::to_string(k));
                    const auto kk = static_cast<long long>(k);
                    QCOMPARE(std::stoll(cs[2]), r.delays->update(kk).stage + 1LL);
                    QCOMPARE(std::stoll(cs[5]), r.delays->delay(kk, 0));
                    QCOMPARE(std::stoll(cs[8]), r.delays->delay(kk, 3));
                }
            }
        }
        QVERIFY(!fs::exists(out / "timeline_1.csv"));

        // summary.json and config.json.
        const json s = json::parse(readFile(out / "summary.json"));
        for (const char* key :
             {"name", "backend", "stages", "f_star", "L", "slot_budget", "update_budget",
              "pd_microbatches", "notices", "cancelled", "methods"}) {
            QVERIFY2(s.contains(key), key);
        }
        QCOMPARE(s["slot_budget"].get<int>(), res.budget.slotBudget);
        QCOMPARE(s["methods"].size(), labels.size());
        for (size_t i = 0; i < labels.size(); ++i) {
            const json& m = s["methods"][i];
            QCOMPARE(m["label"].get<std::string>(), labels[i]);
            QCOMPARE(m["block_updates"].get<long long>(), res.methods[i].result.updates);
            for (const char* key : {"method", "step_size", "microbatches", "slots",
                                    "initial_objective", "final_objective", "final_gap",
                                    "gradient_bound_G", "max_delay", "finished", "diverged"}) {
                QVERIFY2(m.contains(key), key);
            }
        }
        QVERIFY(s["methods"][0].contains("delay_stats"));
        QVERIFY(s["methods"][0].contains("utilization"));
        QVERIFY(s["methods"][1].contains("theorem"));
        QVERIFY(s["methods"][1].contains("sweep"));
        const json& huge = s["methods"][5];
        QVERIFY(huge["diverged"].get<bool>());
        QCOMPARE(huge["divergence"]["update"].get<long long>(),
                 res.methods[5].result.divergence.update);
        QVERIFY(huge["divergence"]["message"].get<std::string>().find("block update") !=
                std::string::npos);
        const json cfg = json::parse(readFile(out / "config.json"));
        QCOMPARE(ExperimentConfig::fromJson(cfg).toJson().dump(), c.toJson().dump());
    }

    void resultsFolderReplacedOnlyOnSuccess() {
        json j = baseConfig();
        j["methods"] = json::array({{{"method", "pd"}, {"step_size", 0.05}}});
        QTemporaryDir tmp;
        const fs::path out = fs::path(tmp.path().toStdString()) / "results";
        writeResults(runExperiment(configOf(j), twoThreads()), out.string());
        {
            std::ofstream stale(out / "stale.txt");
            stale << "from an earlier run\n";
        }
        const auto before = snapshot(out);
        QVERIFY(before.count("stale.txt"));

        // A failing run (a missing data file) never reaches the folder.
        json bad = j;
        bad["data"] = {{"source", "npy"},
                       {"x", (tmp.path() + "/missing-X.npy").toStdString()},
                       {"y", (tmp.path() + "/missing-y.npy").toStdString()}};
        try {
            writeResults(runExperiment(configOf(bad), twoThreads()), out.string());
            QFAIL("a missing data file should fail the run");
        } catch (const DataError& e) {
            QVERIFY2(QString(e.what()).contains("missing-X.npy"), e.what());
        }
        QVERIFY(snapshot(out) == before);
        QCOMPARE(leftovers(out), 0);

        // A write that fails (here: the temporary folder's name is too long for the file system)
        // leaves the earlier folder untouched and nothing else behind.
        const fs::path longName = fs::path(tmp.path().toStdString()) / std::string(250, 'r');
        fs::create_directory(longName);
        {
            std::ofstream f(longName / "summary.json");
            f << "{}\n";
        }
        const auto longBefore = snapshot(longName);
        const ExperimentResult good = runExperiment(configOf(j), twoThreads());
        QVERIFY_THROWS_EXCEPTION(IoError, writeResults(good, longName.string()));
        QVERIFY(snapshot(longName) == longBefore);
        QCOMPARE(leftovers(longName), 0);

        // A successful run replaces the folder: the stale file is gone, nothing is left beside it.
        writeResults(good, out.string());
        const auto after = snapshot(out);
        QVERIFY(!after.count("stale.txt"));
        QVERIFY(after.count("summary.json"));
        QCOMPARE(leftovers(out), 0);
    }

    void writeFileAtomicallyReplaces() {
        QTemporaryDir tmp;
        const std::string path = (tmp.path() + "/a.txt").toStdString();
        writeFileAtomically(path, "one");
        writeFileAtomically(path, "two");
        QCOMPARE(readFile(path), std::string("two"));
        QCOMPARE(static_cast<int>(std::distance(fs::directory_iterator(tmp.path().toStdString()),
                                                fs::directory_iterator())),
                 1);
        QVERIFY_THROWS_EXCEPTION(
            IoError, writeFileAtomically((tmp.path() + "/no/such/dir/a.txt").toStdString(), "x"));
    }

    // The app's path (objective cache, methods taken from the previous result) gives exactly
    // what a fresh run gives, and reruns only the methods an edit affects.
    void cachedAndReusedRunsEqualAFreshRun() {
        json j = baseConfig();
        j["methods"][0]["step_size"] = {{"grid", {-4, -2}}};
        const ExperimentConfig first = configOf(j);
        ObjectiveCache cache;
        RunOptions o = twoThreads();
        o.objectives = &cache;
        const ExperimentResult before = runExperiment(first, o);
        const auto cachedObjective = cache.get(first);
        j["methods"][1]["step_size"] = 0.04;  // only RPD changes
        const ExperimentConfig edited = configOf(j);
        std::vector<ChunkPosition> chunks;
        std::mutex chunksMutex;
        o.previous = &before;
        o.onChunk = [&](const ChunkPosition& at, const RunResult&) {
            std::lock_guard<std::mutex> lock(chunksMutex);
            chunks.push_back(at);
        };
        const ExperimentResult reused = runExperiment(edited, o);
        QVERIFY(cache.get(edited) == cachedObjective);  // same data: not built again
        const ExperimentResult fresh = runExperiment(edited, twoThreads());
        QCOMPARE(reused.methods.size(), fresh.methods.size());
        for (size_t i = 0; i < fresh.methods.size(); ++i) {
            const RunResult& a = reused.methods[i].result;
            const RunResult& b = fresh.methods[i].result;
            QCOMPARE(a.objectivePerUpdate, b.objectivePerUpdate);
            QCOMPARE(a.objectivePerSlot, b.objectivePerSlot);
            QCOMPARE(a.stepSize, b.stepSize);
            QCOMPARE(reused.methods[i].sweep.size(), fresh.methods[i].sweep.size());
        }
        QCOMPARE(reused.optimum, fresh.optimum);
        // PD's grid (3 points) was taken whole from `before`: one call, as a finished single
        // point; RPD ran again, chunk by chunk.
        auto of = [&](size_t method) {
            std::vector<ChunkPosition> out;
            for (const ChunkPosition& p : chunks) {
                if (p.method == method) out.push_back(p);
            }
            return out;
        };
        QCOMPARE(of(0).size(), size_t(1));
        QCOMPARE(of(0)[0].gridPoints, 1);
        QCOMPARE(of(0)[0].fraction, 1.0);
        QVERIFY(!of(1).empty());
    }

    // Live hooks name the method and the grid point; the plan comes before any chunk.
    void liveHooksReceiveMethodAndGridIndex() {
        json j = baseConfig();
        j["methods"] = json::array({{{"method", "pd"}, {"step_size", {{"grid", {-5, -3}}}}},
                                    {{"method", "rpd"}, {"step_size", 0.05}}});
        std::mutex mutex;
        bool planned = false;
        bool chunkBeforePlan = false;
        std::map<size_t, std::set<int>> gridPoints;
        std::map<size_t, double> stepOfPoint;
        RunOptions o = twoThreads();
        o.onPlanned = [&](const ExperimentResult& r) {
            std::lock_guard<std::mutex> lock(mutex);
            planned = r.methods.size() == 2 && !r.methods[0].result.finished;
        };
        o.onChunk = [&](const ChunkPosition& at, const RunResult& r) {
            std::lock_guard<std::mutex> lock(mutex);
            if (!planned) chunkBeforePlan = true;
            gridPoints[at.method].insert(at.gridIndex);
            if (at.method == 0) {
                QCOMPARE(at.gridPoints, 3);
                QCOMPARE(r.stepSize, std::ldexp(1.0, -5 + at.gridIndex));
            } else {
                QCOMPARE(at.gridPoints, 1);
            }
            QVERIFY(at.methodFraction() >= 0.0 && at.methodFraction() <= 1.0);
        };
        runExperiment(configOf(j), o);
        QVERIFY(!chunkBeforePlan);
        QCOMPARE(gridPoints[0], (std::set<int>{0, 1, 2}));
        QCOMPARE(gridPoints[1], (std::set<int>{0}));
    }

    void cancelStopsAnExperiment() {
        std::atomic<bool> cancel{true};
        RunOptions o = twoThreads();
        o.cancel = &cancel;
        const ExperimentResult res = runExperiment(configOf(baseConfig()), o);
        QVERIFY(res.cancelled);
        for (const MethodRun& m : res.methods) QVERIFY(!m.result.finished);
    }

    // The results' tables are built with to_chars: every number must read as the ostream with
    // setprecision(17) wrote it before (17 significant digits, exact round trip), integers and
    // the non-finite spellings included.
    void tableNumbersMatchStreamFormatting() {
        const double values[] = {0.0,         -0.0,      1.0,
                                 0.1,         1e-5,      -2.5e-300,
                                 1e300,       4.9e-324,  0.00470672169612345,
                                 123456789.0, 1.0 / 3.0, -7.25e22};
        for (double v : values) {
            std::ostringstream stream;
            stream << std::setprecision(17) << v;
            const std::string built = TextBuilder().number(v).take();
            QCOMPARE(built, stream.str());
            QCOMPARE(std::strtod(built.c_str(), nullptr), v);  // stod refuses subnormals
        }
        QCOMPARE(TextBuilder().number(std::nan("")).take(), std::string("nan"));
        QCOMPARE(TextBuilder().number(-INFINITY).take(), std::string("-inf"));
        TextBuilder row;
        row << 9600LL << ',' << -3 << ',' << std::string("B") << ',' << 4294967296LL;
        QCOMPARE(row.take(), std::string("9600,-3,B,4294967296"));
    }

    void summaryTextHasOneLinePerMethod() {
        const ExperimentResult res = runExperiment(configOf(baseConfig()), twoThreads());
        auto text = lines(summaryText(res));
        QCOMPARE(text.size(), 1 + res.methods.size());
        for (size_t i = 0; i < res.methods.size(); ++i) {
            QVERIFY(text[i + 1].find(res.methods[i].label) != std::string::npos);
        }
    }
};

QTEST_APPLESS_MAIN(TestExperiment)
#include "tst_experiment.moc"

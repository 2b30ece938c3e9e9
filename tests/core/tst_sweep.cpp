// Sweeps (docs/sweeps.md) and what they stand on: a sweep equals its points run one by one, a
// cancelled and resumed sweep leaves the same folder as an uninterrupted one, point results read
// back exactly, seeds average separate runs, the truncate budget rule against fit on a
// hand-checked PipeDream timeline, and RPD's final value without per-update sampling.
#include <QtTest>

#include <QTemporaryDir>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "errors.hpp"
#include "experiment/run/budget.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "experiment/sweep/sweep.hpp"
#include "experiment/sweep/sweep_folder.hpp"

using namespace pipelens;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json smallExperiment() {
    return {{"name", "small"},
            {"seed", 1},
            {"objective", {{"kind", "quadratic"}}},
            {"data",
             {{"source", "synthetic"}, {"kind", "random"}, {"rows", 40}, {"dim", 8}, {"seed", 2}}},
            {"stages", 2},
            {"batch_size", 4},
            {"shuffle", true},
            {"budget", {{"epochs", 3}}},
            {"sampling", {{"objective_per_update", false}}},
            {"backend", "cpu"},
            {"methods", json::array({{{"method", "pd"}, {"step_size", {{"grid", {-5, -2}}}}},
                                     {{"method", "rpd"},
                                      {"step_size", {{"grid", {-5, -2}}, {"rule", "stable"}}},
                                      {"delta", 1}}})}};
}

json smallSweep() {
    return {{"name", "tiny"},
            {"experiment", smallExperiment()},
            {"axis", {{"name", "delta"}, {"values", {0, 2, 5}}}},
            {"seeds", 2}};
}

std::string readFile(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Every file under a folder, by relative path, with its bytes.
std::map<std::string, std::string> folderFiles(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = readFile(e.path());
    }
    return out;
}

void writeSweepTo(const std::string& dir, const SweepSpec& spec, bool resume,
                  const std::atomic<bool>* cancel, std::function<void()> afterPoint = {}) {
    SweepFolder folder = SweepFolder::open(dir, spec, resume);
    SweepRunOptions o;
    o.threads = 2;
    o.cancel = cancel;
    o.onPoint = [&](const PointResult& p) {
        folder.writePoint(p);
        if (afterPoint) afterPoint();
    };
    SweepOutcome r = runSweep(spec, folder.finished(), o);
    folder.writeSummary(spec, r.points);
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

class TestSweep : public QObject {
    Q_OBJECT
  private slots:
    void sweepEqualsItsPointsRunOneByOne() {
        const SweepSpec spec = SweepSpec::fromJson(smallSweep());
        SweepRunOptions o;
        o.threads = 3;
        size_t progressCalls = 0;
        o.onProgress = [&](const SweepProgress& p) {
            ++progressCalls;
            QVERIFY(p.fractionDone > 0.0 && p.fractionDone <= 1.0);
            QVERIFY(p.remainingSeconds >= 0.0);
        };
        const SweepOutcome all = runSweep(spec, {}, o);
        QVERIFY(!all.cancelled);
        QCOMPARE(progressCalls, size_t(6));  // 3 points x 2 methods
        for (size_t i = 0; i < spec.points(); ++i) {
            QVERIFY(all.points[i].has_value());
            // The unit of work alone, on this thread ...
            const auto alone = runSweepPoint(spec, i);
            QVERIFY(alone.has_value());
            QCOMPARE(pointResultToJson(*alone).dump(), pointResultToJson(*all.points[i]).dump());
            // ... and the experiment of that point run the ordinary way.
            const ExperimentConfig c = spec.pointConfig(i);
            QCOMPARE(c.methods[1].delta, static_cast<long long>(spec.values[i]));
            const ExperimentResult r = runExperiment(c);
            const PointResult p = makePointResult(spec, i, r.optimum, r.methods);
            QCOMPARE(pointResultToJson(p).dump(), pointResultToJson(*all.points[i]).dump());
        }
        // RPD's final value differs across delta (not f(w0) for every grid point).
        QVERIFY(all.points[0]->methods[1].finalGap.mean != all.points[2]->methods[1].finalGap.mean);
    }

    // The language model sweeps through the same engine (one ObjectiveRun per point): each point
    // is its experiment run the ordinary way, and its "final gap" is the final training loss
    // (the language model has no f*).
    void languageModelSweepEqualsItsExperiments() {
        const SweepSpec spec = SweepSpec::fromJson(nlohmann::json::parse(R"({
            "name": "lm-h",
            "experiment": {"name": "lm", "stages": 3, "batch_size": 4, "backend": "cpu",
                "objective": {"kind": "char_transformer", "width": 16, "heads": 2, "context": 8,
                              "corpus_characters": 5000, "sample_lines": 0},
                "budget": {"slots": 90},
                "methods": [{"method": "pd", "step_size": 0.5},
                            {"method": "localsgd", "step_size": 0.5, "local_steps": 2}]},
            "axis": {"name": "local_steps", "values": [1, 4]}})"));
        SweepRunOptions o;
        o.threads = 2;
        const SweepOutcome all = runSweep(spec, {}, o);
        QVERIFY(!all.cancelled);
        for (size_t i = 0; i < spec.points(); ++i) {
            QVERIFY(all.points[i].has_value());
            const ExperimentResult r = runExperiment(spec.pointConfig(i));
            QVERIFY(r.lmProblem);
            QCOMPARE(r.optimum, 0.0);
            const PointResult p = makePointResult(spec, i, r.optimum, r.methods);
            QCOMPARE(pointResultToJson(p).dump(), pointResultToJson(*all.points[i]).dump());
            for (size_t m = 0; m < r.methods.size(); ++m) {
                QVERIFY(r.methods[m].lm);
                QCOMPARE(all.points[i]->methods[m].finalGap.mean, r.methods[m].lm->finalLoss);
            }
        }
        // H changes LocalSGD's run, not PD's.
        QCOMPARE(all.points[0]->methods[0].finalGap.mean, all.points[1]->methods[0].finalGap.mean);
        QVERIFY(all.points[0]->methods[1].finalGap.mean != all.points[1]->methods[1].finalGap.mean);
    }

    void cancelledThenResumedEqualsUninterrupted() {
        const SweepSpec spec = SweepSpec::fromJson(smallSweep());
        QTemporaryDir tmp;
        const std::string whole = tmp.filePath("whole").toStdString();
        const std::string parts = tmp.filePath("parts").toStdString();
        writeSweepTo(whole, spec, false, nullptr);
        std::atomic<bool> cancel{false};
        writeSweepTo(parts, spec, false, &cancel, [&] { cancel.store(true); });
        const auto partial = SweepFolder::open(parts, spec, true).finished();
        const auto done = std::count_if(partial.begin(), partial.end(),
                                        [](const auto& p) { return p.has_value(); });
        QVERIFY2(done >= 1 && done < 3, qPrintable(QString("%1 points kept").arg(done)));
        QVERIFY(readFile(fs::path(parts) / "summary.json").find("\"complete\": false") !=
                std::string::npos);
        writeSweepTo(parts, spec, true, nullptr);
        const auto a = folderFiles(whole);
        const auto b = folderFiles(parts);
        QCOMPARE(a.size(), size_t(7));  // sweep.json, marker, 3 points, 2 summaries
        QVERIFY(a == b);
    }

    void folderRules() {
        const SweepSpec spec = SweepSpec::fromJson(smallSweep());
        QTemporaryDir tmp;
        const std::string user = tmp.filePath("user").toStdString();
        fs::create_directories(user);
        std::ofstream(fs::path(user) / "notes.txt") << "mine";
        QVERIFY(errorOf([&] {
                    SweepFolder::open(user, spec, false);
                }).find("is not a PipeLens sweep folder") != std::string::npos);
        QVERIFY(errorOf([&] {
                    SweepFolder::open(user, spec, true);
                }).find("is not a PipeLens sweep folder") != std::string::npos);
        QCOMPARE(readFile(fs::path(user) / "notes.txt"), std::string("mine"));
        const std::string mine = tmp.filePath("sweep").toStdString();
        SweepFolder::open(mine, spec, false);
        QVERIFY(fs::exists(fs::path(mine) / "sweep.json"));
        QVERIFY(errorOf([&] { SweepFolder::open(mine, spec, false); }).find("--resume") !=
                std::string::npos);
        json other = smallSweep();
        other["axis"]["values"] = {0, 2};
        QVERIFY(errorOf([&] {
                    SweepFolder::open(mine, SweepSpec::fromJson(other), true);
                }).find("holds a different sweep") != std::string::npos);
        // The stored sweep.json is itself a sweep file describing the same sweep.
        const SweepSpec again = SweepSpec::fromFile(mine + "/sweep.json");
        QCOMPARE(again.toJson(), spec.toJson());
    }

    void pointResultReadsBackExactly() {
        PointResult p;
        p.index = 4;
        p.value = 0.1;
        p.seeds = 3;
        p.optimum = 1.0 / 3.0;
        MethodPoint m;
        m.label = "RPD \"quoted\"";
        m.method = "rpd";
        m.rule = StepRule::Stable;
        m.tuned = true;
        m.chosen = 1;
        m.stepSize = 0.125;
        m.finalGap = {std::nextafter(0.2, 1.0), 1e-300};
        m.finalObjective = {std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
        m.updates = 77;
        m.curveAxis = "update";
        m.curveMean = {1.0, 0.1 + 0.2, -std::numeric_limits<double>::infinity()};
        m.curveSd = {0.0, 0.0, 0.0};
        GridStep g;
        g.stepSize = 0.0625;
        g.tail = checkTail(std::vector<double>{3.0, 2.0, 1.5, 1.25, 1.2});
        m.grid = {g, g};
        p.methods = {m};
        const json j = pointResultToJson(p);
        const PointResult back = pointResultFromJson(json::parse(j.dump(2)));
        QCOMPARE(pointResultToJson(back).dump(), j.dump());
        QCOMPARE(back.methods[0].curveMean[1], 0.1 + 0.2);
        QVERIFY(std::isnan(back.methods[0].finalObjective.sd));
        QCOMPARE(back.methods[0].grid[1].tail.stable(), g.tail.stable());
        json broken = j;
        broken["methods"][0]["chosen"] = 5;
        QVERIFY(errorOf([&] { pointResultFromJson(broken); }).find("chosen = 5") !=
                std::string::npos);
    }

    void specErrorsNameTheProblem() {
        json bad = smallSweep();
        bad["axis"]["name"] = "gamma";
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("axis.name = \"gamma\"") !=
                std::string::npos);
        bad = smallSweep();
        bad["axis"] = {{"name", "local_steps"}, {"values", {1, 2}}};
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("no localsgd method") !=
                std::string::npos);
        bad = smallSweep();
        bad["axis"] = {{"name", "stages"}, {"values", {2, 2.5}}};
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("axis.values[1] = 2.5") !=
                std::string::npos);
        bad = smallSweep();
        bad["axis"] = {{"name", "stages"}, {"values", {2, 9}}};  // d = 8
        const std::string e = errorOf([&] { SweepSpec::fromJson(bad); });
        QVERIFY2(e.find("point 1 (stages = 9)") != std::string::npos, e.c_str());
        bad = smallSweep();
        bad["seeds"] = 0;
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("seeds = 0") != std::string::npos);
        bad = smallSweep();
        bad["colour"] = 1;
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("unknown key colour") !=
                std::string::npos);
        // The sweep's step_rule overrides every method's rule.
        json rule = smallSweep();
        rule["step_rule"] = "stable";
        const SweepSpec s = SweepSpec::fromJson(rule);
        for (const MethodSpec& m : s.pointConfig(0).methods)
            QCOMPARE(m.step.rule, StepRule::Stable);
    }

    void seedsAverageSeparateRuns() {
        ExperimentConfig c = ExperimentConfig::fromJson(smallExperiment());
        c.seeds = 3;
        c.methods.resize(1);  // PD, with a shuffled batch order that each seed changes
        const ExperimentResult r = runExperiment(c);
        const MethodRun& o = r.methods[0];
        QCOMPARE(o.grid.size(), size_t(4));
        const GridStep& g = o.grid[1];
        std::vector<double> gaps;
        for (int s = 0; s < 3; ++s) {
            const RunResult one = runOne(seededConfig(c, s), seededPlan(o, s), g.stepSize,
                                         buildObjective(c), cpuBackendProvider());
            gaps.push_back(one.finalObjective() - r.optimum);
        }
        QVERIFY(gaps[0] != gaps[1]);
        const MeanSd want = meanAndSd(gaps);
        QCOMPARE(g.finalGap.mean, want.mean);
        QCOMPARE(g.finalGap.sd, want.sd);
        QVERIFY(g.finalGap.sd > 0.0);
        // The reported run is seed 0 at the chosen step; its curve is the seed mean.
        QCOMPARE(o.curve.mean.size(), o.result.objectivePerSlot.size());
        QCOMPARE(o.result.stepSize, o.grid[static_cast<size_t>(o.chosen)].stepSize);
    }

    void stableRulePicksFromTheSeedMeanCurves() {
        json j = smallExperiment();
        j["methods"] = json::array({{{"method", "rpd"},
                                     {"step_size", {{"grid", {-6, 0}}, {"rule", "stable"}}},
                                     {"delta", 1}}});
        j["seeds"] = 2;
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        const MethodRun& o = r.methods[0];
        std::vector<GridCandidate> grid;
        for (const GridStep& g : o.grid)
            grid.push_back({g.stepSize, g.finalGap.mean, g.diverged, g.tail});
        QCOMPARE(o.chosen, pickStable(grid));
        // RPD's curve is after every update even though sampling said not to record it.
        QCOMPARE(o.curve.mean.size(), static_cast<size_t>(o.result.updates) + 1);
    }

    void rpdFinalValueWithoutPerUpdateSampling() {
        // Before the fix, RPD kept no objective without objective_per_update, its final value
        // was f(w0) for every step size and every grid point tied.
        json j = smallExperiment();
        j["methods"] =
            json::array({{{"method", "rpd"}, {"step_size", {{"grid", {-6, -1}}}}, {"delta", 1}}});
        const ExperimentResult sparse = runExperiment(ExperimentConfig::fromJson(j));
        j["sampling"]["objective_per_update"] = true;
        const ExperimentResult dense = runExperiment(ExperimentConfig::fromJson(j));
        const RunResult& a = sparse.methods[0].result;
        const RunResult& b = dense.methods[0].result;
        QVERIFY(a.objectivePerUpdate.empty());
        QVERIFY(a.finalObjective() < a.initialObjective);
        QCOMPARE(a.finalObjective(), b.objectivePerUpdate.back());
        QCOMPARE(sparse.methods[0].chosen, dense.methods[0].chosen);
        for (size_t i = 0; i < sparse.methods[0].grid.size(); ++i) {
            QCOMPARE(sparse.methods[0].grid[i].finalGap.mean,
                     dense.methods[0].grid[i].finalGap.mean);
        }
    }

    void truncateAgainstFit() {
        // PD, S = 4, 18 slots. fit: N = 6 (2N + 2(S-1) = 18), 24 updates, the last 6 slots
        // draining. truncate: the endless run's first 18 slots (pipelens-cli schedule --kind pd
        // --stages 4 --microbatches 16): F8 starts at slot 16, microbatches 0-5 complete and
        // B(6, 3), B(6, 2) end at slots 16 and 17: 26 updates; 6, 7, 8 never finish.
        ScheduleParams pd;
        pd.kind = ScheduleKind::PipeDream;
        pd.stages = 4;
        const Timeline cut = truncatedTimeline(pd, 18);
        QCOMPARE(cut.totalSlots, 18);
        QCOMPARE(updatesWithin(cut, 18), 26LL);
        QVERIFY(cut.params.microbatches > 9);
        int started = 0;
        for (const TimelineCell& c : cut.cells) {
            QVERIFY(c.endSlot < 18);
            if (c.stage == 0 && c.op == OpKind::Forward) ++started;
        }
        QCOMPARE(started, 9);

        json j = smallExperiment();
        j["stages"] = 4;
        j["budget"] = {{"slots", 18}};
        j["methods"] = json::array({{{"method", "pd"}, {"step_size", 0.05}},
                                    {{"method", "rpd"}, {"step_size", 0.05}, {"delta", 2}}});
        const ExperimentResult fit = runExperiment(ExperimentConfig::fromJson(j));
        j["budget"]["rule"] = "truncate";
        const ExperimentResult trunc = runExperiment(ExperimentConfig::fromJson(j));
        QCOMPARE(fit.methods[0].result.updates, 24LL);
        QCOMPARE(trunc.methods[0].result.updates, 26LL);
        QCOMPARE(fit.methods[0].result.totalSlots, 18);
        QCOMPARE(trunc.methods[0].result.totalSlots, 18);
        QCOMPARE(trunc.methods[0].result.objectivePerSlot.size(), size_t(19));
        // Until slot 12, where the truncated run starts F(6, 0) instead of idling, both walk
        // the same cells.
        for (size_t t = 0; t <= 12; ++t) {
            QCOMPARE(trunc.methods[0].result.objectivePerSlot[t],
                     fit.methods[0].result.objectivePerSlot[t]);
        }
        QVERIFY(trunc.methods[0].result.finalObjective() != fit.methods[0].result.finalObjective());
        // RPD gets PD's block updates inside the budget.
        QCOMPARE(fit.methods[1].result.updates, 24LL);
        QCOMPARE(trunc.methods[1].result.updates, 26LL);
    }
};

QTEST_APPLESS_MAIN(TestSweep)
#include "tst_sweep.moc"

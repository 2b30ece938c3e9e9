// A language-model experiment from its JSON config to results (core, no CLI): PD, RPD and
// LocalSGD each lower the loss at equal simulated time, a huge step size is reported as diverged
// with its step, a grid picks by its rule, and the results folder holds what docs/results.md lists.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compute/lm_cpu_pipeline_executor.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/lm_experiment.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

json tinyLm() {
    return json::parse(R"({
        "name": "tiny-lm", "stages": 4, "batch_size": 8, "backend": "cpu",
        "objective": {"kind": "char_transformer", "width": 32, "heads": 4, "context": 16,
                      "corpus_characters": 40000, "held_out_fraction": 0.1, "held_out_every": 200,
                      "sample_lines": 1, "sample_length": 40},
        "budget": {"slots": 500},
        "methods": [{"method": "pd", "step_size": 0.5},
                    {"method": "rpd", "step_size": 0.5, "delta": 6},
                    {"method": "localsgd", "step_size": 0.5, "replicas": 4, "local_steps": 2}]
    })");
}

std::string readFile(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

class TestLmExperiment : public QObject {
    Q_OBJECT
  private slots:
    void everyMethodLowersTheLossAtEqualTime() {
        const ExperimentConfig c = ExperimentConfig::fromJson(tinyLm());
        const ExperimentResult r = runExperiment(c);
        QCOMPARE(r.methods.size(), std::size_t(3));
        const double logV = std::log(static_cast<double>(r.lmProblem->corpus.vocabSize()));
        for (const MethodRun& m : r.methods) {
            QVERIFY2(m.result.finished, m.label.c_str());
            QVERIFY(!m.result.divergence.diverged);
            const double first = lmOf(m).log.forwardLosses.front().loss;
            qInfo("%s: forward loss %.3f -> final %.3f (log V %.3f), held-out %.3f",
                  m.label.c_str(), first, lmOf(m).finalLoss, logV,
                  lmOf(m).log.heldOutLoss.back().second);
            QVERIFY(lmOf(m).finalLoss < 0.75 * first);
            QVERIFY(lmOf(m).finalLoss < 0.8 * logV);
            QVERIFY(!lmOf(m).log.heldOutLoss.empty());
            QVERIFY(lmOf(m).log.heldOutLoss.back().second < first);
            QCOMPARE(lmOf(m).samples.size(), std::size_t(1));
            QCOMPARE(static_cast<int>(lmOf(m).memory.size()), 4);
            if (m.pipeline()) QVERIFY(m.result.totalSlots <= 500);  // equal simulated time
            for (const LmStageMemory& s : lmOf(m).memory) {
                QVERIFY(s.stashedWeights >= 1 && s.stashedWeights <= s.predictedStash);
                if (!m.pipeline()) QCOMPARE(s.keptInputs, 0);
            }
        }
        // RPD gets PD's block updates; PD's stash equals SPEC section 3's prediction.
        QCOMPARE(r.methods[1].result.updates, r.budget.updateBudget);
        for (const LmStageMemory& s : lmOf(r.methods[0]).memory)
            QCOMPARE(s.stashedWeights, s.predictedStash);
        QCOMPARE(lmOf(r.methods[0]).memory[0].predictedStash, 4);
        QCOMPARE(lmOf(r.methods[1]).memory[0].predictedStash,
                 7);                  // RPD: delta + 1 versions at most
        QVERIFY(r.warnings.empty());  // backend cpu: nothing to say
    }

    void hugeStepSizeIsReportedAsDivergedWithItsStep() {
        json j = tinyLm();
        j["methods"] = json::parse(R"([{"method": "pd", "step_size": 1e6},
                                       {"method": "rpd", "step_size": 1e6},
                                       {"method": "localsgd", "step_size": 1e6, "local_steps": 2}])");
        j["backend"] = "auto";
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        for (const MethodRun& m : r.methods) {
            const Divergence& d = m.result.divergence;
            QVERIFY2(d.diverged, m.label.c_str());
            QVERIFY(d.update > 0);
            QVERIFY2(d.reason.find("block update " + std::to_string(d.update)) != std::string::npos,
                     d.reason.c_str());
            QVERIFY(std::isinf(lmOf(m).finalLoss));
            if (m.pipeline()) {
                QVERIFY(d.slot >= 0);
                QVERIFY(d.reason.find("(slot " + std::to_string(d.slot) + ")") !=
                        std::string::npos);
            }
        }
        // No executor was given: every method ran on the CPU engine. With backend auto the
        // choice is selectLmBackend's to explain (tests/gpu/tst_lm_auto_backend.cpp).
        QVERIFY(r.warnings.empty());
        QCOMPARE(r.backendName, std::string("cpu"));
    }

    void gridPicksByItsRuleAndSkipsDivergedSteps() {
        json j = tinyLm();
        j["budget"] = {{"slots", 200}};
        j["methods"] = json::parse(R"([{"method": "pd", "step_size": {"grid": [-2, 20]}}])");
        j["objective"]["held_out_fraction"] = 0;
        j["objective"]["held_out_every"] = 0;
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        const MethodRun& run = r.methods[0];
        QCOMPARE(run.grid.size(), std::size_t(23));
        QVERIFY(run.grid.back().diverged);  // 2^20
        QVERIFY(!run.grid.front().diverged);
        QVERIFY(!run.allDiverged);
        // best_final: the lowest final loss among the steps that did not diverge.
        double best = INFINITY;
        for (const GridStep& g : run.grid) {
            if (!g.diverged) best = std::min(best, g.finalObjective.mean);
        }
        QCOMPARE(run.grid[static_cast<std::size_t>(run.chosen)].finalObjective.mean, best);
        QCOMPARE(lmOf(r.methods[0]).finalLoss, best);
        QCOMPARE(run.result.stepSize, run.grid[static_cast<std::size_t>(run.chosen)].stepSize);
    }

    // The linear models' data set builder refuses the language model with the reason (every run
    // reaches the model through runExperiment's ObjectiveRun instead).
    void linearPathRefusesTheLanguageModel() {
        try {
            buildObjective(ExperimentConfig::fromJson(tinyLm()));
            QFAIL("buildObjective must refuse a char_transformer config");
        } catch (const ConfigError& e) {
            QVERIFY2(
                std::string(e.what()).find("needs a linear model's data set") != std::string::npos,
                e.what());
        }
    }

    void resultsFolderHoldsTheCurvesAndNoLinearFields() {
        json j = tinyLm();
        // Small enough for the sanitizer job: the full objective is a pass over every training
        // batch after each slot and each block update (1000 characters: 6 batches).
        j["budget"] = {{"slots", 60}};
        j["objective"]["full_objective"] = true;
        j["objective"]["corpus_characters"] = 1000;
        j["objective"]["held_out_fraction"] = 0.15;
        j["objective"]["held_out_every"] = 40;
        j["methods"][1]["step_size"] = {{"grid", {-2, -1}}, {"rule", "stable"}};
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        QTemporaryDir dir;
        const std::filesystem::path out = dir.filePath("res").toStdString();
        writeResults(r, out.string());
        for (const char* f :
             {"summary.json", "config.json", "loss_per_slot.csv", "loss_per_update.csv",
              "forward_losses.csv", "memory.csv", "samples.txt", "held_out.csv", "sweep.csv",
              "full_objective_per_slot.csv", "full_objective_per_update.csv"}) {
            QVERIFY2(std::filesystem::is_regular_file(out / f), f);
        }
        const json s = json::parse(readFile(out / "summary.json"));
        for (const char* absent : {"optimum", "smoothness", "theorem", "f_star"}) {
            QVERIFY(!s.contains(absent));
            for (const auto& m : s.at("methods")) QVERIFY(!m.contains(absent));
        }
        QCOMPARE(s.at("methods")[1].at("step_rule").get<std::string>(), std::string("stable"));
        QCOMPARE(s.at("methods")[1].at("grid").size(), std::size_t(2));
        QVERIFY(s.at("methods")[0].contains("full_objective_final"));
        // The per-slot curve: empty cells before PD's first last-stage forward (rows 0 .. S-1).
        const std::string perSlot = readFile(out / "loss_per_slot.csv");
        QVERIFY(perSlot.starts_with("slot,\"PipeDream\",\"LocalSGD"));
        QVERIFY(perSlot.find("\n0,,\n") != std::string::npos);
        // config.json reads back to the same experiment.
        const ExperimentConfig back =
            ExperimentConfig::fromJson(json::parse(readFile(out / "config.json")));
        QCOMPARE(back.toJson().dump(), r.config.toJson().dump());
    }

    // The summary's head line names the engine PD and LocalSGD ran on.
    // (RunOptions::engine, which selectLmBackend's choice fills; tst_opencl_lm_runs checks the
    // CLI's line for a real OpenCL run).
    void summarySaysWhichEngineRan() {
        json j = tinyLm();
        j["budget"] = {{"slots", 12}};
        const ExperimentConfig config = ExperimentConfig::fromJson(j);
        const ExperimentResult r = runExperiment(config);
        QCOMPARE(r.engine, std::string("CPU engine"));
        const std::string text = summaryText(r);
        QVERIFY2(text.find("block updates, CPU engine in double\n") != std::string::npos,
                 text.c_str());
        // An executor given with its name: the summary names that engine, not the CPU's.
        RunOptions options;
        options.lmExecutor = [](std::shared_ptr<const CharTransformerProblem> p, int replicas) {
            return makeLmCpuPipelineExecutor(std::move(p), replicas);
        };
        options.backendName = "test executor";
        options.engine = "the test's executor";
        const ExperimentResult given = runExperiment(config, options);
        QCOMPARE(given.backendName, std::string("test executor"));
        const std::string named = summaryText(given);
        QVERIFY2(named.find("block updates, the test's executor in double\n") != std::string::npos,
                 named.c_str());
        QVERIFY2(named.find("CPU engine in") == std::string::npos, named.c_str());
    }

    // The schedule family (1F1B with flush, ZB-H1, 2BW, an imported PyTorch CSV with update =
    // sync and async) from a config to the results folder: every run finishes within the slot
    // budget and lowers the loss, a step applies gamma / M, the imported 1F1B file trains exactly
    // as the built 1F1B, and each run's measured weight stash is the timeline's.
    void scheduleFamilyRunsFromConfigToResults() {
        json j = tinyLm();
        j["budget"] = {{"slots", 400}};
        j["costs"] = {{"forward_slots", 1}, {"backward_slots", 2}, {"weight_slots", 1}};
        j["objective"]["held_out_every"] = 0;
        j["methods"] = json::parse(R"([
            {"method": "1f1b", "flush_group": 8, "step_size": 1.0},
            {"method": "zb-h1", "flush_group": 8, "step_size": 1.0},
            {"method": "2bw", "accumulation": 8, "step_size": 1.0},
            {"method": "imported", "schedule_file": "1f1b_s4_m8.csv", "update": "sync",
             "step_size": 1.0, "label": "imported sync"},
            {"method": "imported", "schedule_file": "1f1b_s4_m8.csv", "update": "async",
             "step_size": 0.5, "label": "imported async"}])");
        const ExperimentResult r =
            runExperiment(ExperimentConfig::fromJson(j, PIPELENS_SOURCE_DIR "/examples/schedules"));
        QCOMPARE(r.methods.size(), std::size_t(5));
        for (const MethodRun& m : r.methods) {
            QVERIFY2(m.result.finished, m.label.c_str());
            QVERIFY2(!m.result.divergence.diverged, m.result.divergence.reason.c_str());
            QVERIFY(m.result.totalSlots <= 400);
            const double first = lmOf(m).log.forwardLosses.front().loss;
            qInfo("%s: %lld block updates in %d slots, gamma per update %g, loss %.3f -> %.3f",
                  m.label.c_str(), m.result.updates, m.result.totalSlots, m.result.stepSize, first,
                  lmOf(m).finalLoss);
            QVERIFY2(lmOf(m).finalLoss < 0.85 * first, m.label.c_str());
            QCOMPARE(static_cast<int>(lmOf(m).memory.size()), 4);
            const bool async = m.spec.asyncUpdate;
            for (const LmStageMemory& s : lmOf(m).memory) {
                // Synchronous steps and 2BW stash one copy per forward until the step lands.
                if (!async) QCOMPARE(s.stashedWeights, s.predictedStash);
                QVERIFY(s.stashedWeights >= 1 && s.stashedWeights <= s.predictedStash);
            }
        }
        for (int i : {0, 1, 2, 3}) QCOMPARE(r.methods[i].result.stepSize, 1.0 / 8);
        QCOMPARE(r.methods[4].result.stepSize, 0.5);
        QCOMPARE(lmOf(r.methods[2]).memory[0].predictedStash, 16);  // 2BW: two groups of m
        // The file is the built 1F1B's step: the same run, bit for bit.
        QCOMPARE(r.methods[3].result.updates, r.methods[0].result.updates);
        QCOMPARE(lmOf(r.methods[3]).weights, lmOf(r.methods[0]).weights);
        QVERIFY(lmOf(r.methods[4]).weights != lmOf(r.methods[3]).weights);

        QTemporaryDir dir;
        const std::filesystem::path out = dir.filePath("res").toStdString();
        writeResults(r, out.string());
        const json s = json::parse(readFile(out / "summary.json"));
        QCOMPARE(s.at("methods").size(), std::size_t(5));
        const std::string memory = readFile(out / "memory.csv");
        const std::string perSlot = readFile(out / "loss_per_slot.csv");
        for (const MethodRun& m : r.methods) {
            const std::string quoted = "\"" + m.label + "\"";
            QVERIFY2(memory.find(quoted + ",3,") != std::string::npos, m.label.c_str());
            QVERIFY2(perSlot.find(quoted) != std::string::npos, m.label.c_str());
        }
    }

    // The example ZB-H1 file with update = async runs W(m, 0) before W(m, 1): the language
    // model's backward cannot, so the experiment is refused before any method has run, naming
    // the method's field, the file and the blocks.
    void asyncSplitBackwardFromTheFirstStageUpIsRefusedBeforeRunning() {
        json j = tinyLm();
        j["budget"] = {{"slots", 100}};
        j["methods"] = json::parse(R"([
            {"method": "pd", "step_size": 0.5},
            {"method": "imported", "schedule_file": "zb_h1_s4_m8.csv", "update": "async",
             "step_size": 0.5}])");
        const ExperimentConfig c =
            ExperimentConfig::fromJson(j, PIPELENS_SOURCE_DIR "/examples/schedules");
        RunOptions options;
        int chunks = 0;
        options.onChunk = [&](const ChunkPosition&, const RunResult&) { ++chunks; };
        try {
            runExperiment(c, options);
            QFAIL("an asynchronous ZB-H1 file was accepted for the language model");
        } catch (const ConfigError& e) {
            const QString what = e.what();
            qInfo("%s", e.what());
            QVERIFY2(what.startsWith("methods[1].update = \"async\" is not allowed with "
                                     "schedule_file \"zb_h1_s4_m8.csv\""),
                     e.what());
            QVERIFY2(what.contains("the update of block 0 by microbatch 0") &&
                         what.contains("allowed: update = \"sync\""),
                     e.what());
        }
        QCOMPARE(chunks, 0);
        // update = sync: the same file trains.
        j["methods"][1]["update"] = "sync";
        const ExperimentResult r =
            runExperiment(ExperimentConfig::fromJson(j, PIPELENS_SOURCE_DIR "/examples/schedules"));
        QVERIFY(r.methods[1].result.finished);
    }
};

QTEST_APPLESS_MAIN(TestLmExperiment)
#include "tst_lm_experiment.moc"

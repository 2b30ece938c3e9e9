// The results folder (issue 7, defects 1, 4 and 7): only a folder PipeLens wrote (or an empty
// one) is replaced, the path is checked and normalised before a run, the swap is atomic, a
// cancelled write leaves nothing behind, and temporaries of dead runs are removed.
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/expect_error.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"
#include "schedule/delay_units.hpp"

using namespace pipelens;
namespace fs = std::filesystem;

namespace {

const ExperimentResult& tinyResult() {
    static const ExperimentResult result = [] {
        nlohmann::json j = {
            {"stages", 2},
            {"batch_size", 5},
            {"data", {{"rows", 20}, {"dim", 4}}},
            {"budget", {{"microbatches", 4}}},
            {"methods", nlohmann::json::array({{{"method", "pd"}, {"step_size", 0.1}}})}};
        RunOptions o;
        o.threads = 1;
        return runExperiment(ExperimentConfig::fromJson(j), o);
    }();
    return result;
}

void write(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
}

// PD, 2BW and 1F1B side by side on S = 4: the delay units and the schedule family's keys.
const ExperimentResult& familyResult() {
    static const ExperimentResult result = [] {
        nlohmann::json j = {
            {"stages", 4},
            {"batch_size", 5},
            {"data", {{"rows", 40}, {"dim", 4}}},
            {"budget", {{"microbatches", 16}}},
            {"methods", nlohmann::json::array(
                            {{{"method", "pd"}, {"step_size", 0.05}},
                             {{"method", "2bw"}, {"step_size", 0.05}},
                             {{"method", "1f1b"}, {"step_size", 0.05}, {"flush_group", 8}}})}};
        RunOptions o;
        o.threads = 1;
        return runExperiment(ExperimentConfig::fromJson(j), o);
    }();
    return result;
}

// The cells of a CSV line (no quoted commas in these files but the label's).
std::vector<std::string> cellsOf(const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) out.push_back(cell);
    return out;
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

class TestResultsFolder : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    fs::path dir() const { return fs::path(tmp_.path().toStdString()); }

  private slots:
    void refusesWhatPipeLensDidNotWrite() {
        const fs::path notes = dir() / "notes.txt";
        write(notes, "my notes");
        expectError<ConfigError>([&] { prepareResultsFolder(notes.string()); },
                                 {"--out = \"", "notes.txt", "it is a file"});
        expectError<IoError>([&] { writeResults(tinyResult(), notes.string()); }, {"refusing"});
        QCOMPARE(read(notes), std::string("my notes"));

        const fs::path mine = dir() / "mine";
        fs::create_directory(mine);
        write(mine / "thesis.tex", "chapter 1");
        expectError<ConfigError>([&] { prepareResultsFolder(mine.string()); },
                                 {"did not write", kResultsMarker});
        expectError<IoError>([&] { writeResults(tinyResult(), mine.string()); }, {"refusing"});
        QCOMPARE(read(mine / "thesis.tex"), std::string("chapter 1"));
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    void replacesEmptyAndOwnFolders() {
        const fs::path out = dir() / "runs";
        fs::create_directory(out);  // empty: nothing to lose
        QCOMPARE(prepareResultsFolder(out.string()), out.string());
        QVERIFY(writeResults(tinyResult(), out.string()).empty());
        QVERIFY(fs::exists(out / kResultsMarker));
        QVERIFY(fs::exists(out / "summary.json"));
        write(out / "extra.txt", "from the first run");
        QVERIFY(writeResults(tinyResult(), out.string()).empty());  // marked: replaced
        QVERIFY(!fs::exists(out / "extra.txt"));
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    // "DIR/" always failed after the whole run and left an empty DIR; "" failed the same way.
    void pathNormalisedAndCheckedFirst() {
        const fs::path out = dir() / "slash";
        QCOMPARE(prepareResultsFolder(out.string() + "/"), out.string());
        QCOMPARE(prepareResultsFolder(out.string() + "//./"), out.string());
        writeResults(tinyResult(), out.string() + "/");
        QVERIFY(fs::exists(out / "summary.json"));
        expectError<ConfigError>([&] { prepareResultsFolder(""); }, {"--out = \"\"", "not empty"});
        expectError<ConfigError>([&] { prepareResultsFolder("/"); }, {"--out = \"/\""});
        expectError<ConfigError>(
            [&] { prepareResultsFolder((dir() / "notes.txt" / "x").string()); },
            {"is not a folder"});
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    void cancelledWriteLeavesNothing() {
        const fs::path out = dir() / "kept";
        writeResults(tinyResult(), out.string());
        const std::string before = read(out / "summary.json");
        std::atomic<bool> cancel{true};
        expectError<Interrupted>([&] { writeResults(tinyResult(), out.string(), &cancel); },
                                 {"kept"});
        QCOMPARE(read(out / "summary.json"), before);
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    void delaysInThreeUnitsAndFamilyKeys() {
        const fs::path out = dir() / "family";
        QVERIFY(writeResults(familyResult(), out.string()).empty());
        const auto summary = nlohmann::json::parse(read(out / "summary.json"));
        const auto& methods = familyResult().methods;
        QCOMPARE(methods.size(), size_t(3));
        for (size_t i = 0; i < methods.size(); ++i) {
            const RunResult& r = methods[i].result;
            const auto& m = summary["methods"][i];
            QVERIFY(r.timeline && r.delays);
            const Timeline& tl = *r.timeline;
            const bool family = isProgramKind(tl.params.kind);
            QCOMPARE(m.contains("stage_rank"), family);
            QCOMPARE(m.contains("weight_versions"), family);
            QCOMPARE(m.contains("peak_activations"), family);
            QCOMPARE(m.contains("optimizer_steps"), family);
            if (family) {
                QCOMPARE(m["stage_rank"].get<std::vector<int>>(), tl.stageRank);
                QCOMPARE(m["weight_versions"].get<std::vector<int>>(), tl.weightVersions);
                QCOMPARE(m["peak_activations"].get<std::vector<int>>(), tl.peakActivations);
                QCOMPARE(m["optimizer_steps"].get<size_t>(), tl.stepEndSlots.size());
            }
            const auto most = maxDelayByUnit(*r.delays);
            QCOMPARE(m["max_delay_by_unit"]["block_updates"].get<long long>(), most[0]);
            QCOMPARE(m["max_delay_by_unit"]["optimizer_steps"].get<long long>(), most[1]);
            QCOMPARE(m["max_delay_by_unit"]["slots"].get<long long>(), most[2]);
            QCOMPARE(m["microbatches_per_step"].get<int>(), r.delays->stepMicrobatches());

            // delay_units_<i>.csv: a column per unit and block, named by its unit.
            std::istringstream csv(read(out / ("delay_units_" + std::to_string(i) + ".csv")));
            std::string line;
            std::getline(csv, line);
            QCOMPARE(line, std::string("method,block_update,updated_stage,microbatch,slot,"
                                       "block_updates_block1,block_updates_block2,"
                                       "block_updates_block3,block_updates_block4,"
                                       "optimizer_steps_block1,optimizer_steps_block2,"
                                       "optimizer_steps_block3,optimizer_steps_block4,"
                                       "slots_block1,slots_block2,slots_block3,slots_block4"));
            long long k = 0;
            for (; std::getline(csv, line); ++k) {
                const auto cs = cellsOf(line);
                QCOMPARE(cs.size(), size_t(5 + 3 * 4));
                QCOMPARE(std::stoll(cs[1]), k);
                for (int u = 0; u < 3; ++u) {
                    for (int j = 0; j < 4; ++j) {
                        QCOMPARE(std::stoll(cs[static_cast<size_t>(5 + 4 * u + j)]),
                                 r.delays->delayIn(static_cast<DelayUnit>(u), k, j));
                    }
                }
            }
            QCOMPARE(k, r.delays->updates());
        }
        // PD: up to 4 steps, a start-up read (F(3, 2) before block 2's first update, used by
        // B(3, 1) after four of them); 2BW's reads lag one step, 1F1B's none.
        QCOMPARE(summary["methods"][0]["max_delay_by_unit"]["optimizer_steps"].get<int>(), 4);
        QCOMPARE(summary["methods"][1]["max_delay_by_unit"]["optimizer_steps"].get<int>(), 1);
        QCOMPARE(summary["methods"][2]["max_delay_by_unit"]["optimizer_steps"].get<int>(), 0);
        QCOMPARE(summary["methods"][2]["optimizer_steps"].get<int>(), 2);  // 16 / M = 8
        QCOMPARE(summary["methods"][1]["weight_versions"], nlohmann::json::array({2, 2, 2, 2}));
    }

    // A run killed while writing left DIR.tmp-PID forever.
    // accumulate's effective delays are written beside the schedule's, in the same columns;
    // a method without it has no such file.
    void effectiveDelaysWritten() {
        nlohmann::json j = {
            {"stages", 3},
            {"batch_size", 5},
            {"data", {{"rows", 30}, {"dim", 6}}},
            {"budget", {{"microbatches", 12}}},
            {"methods",
             nlohmann::json::array({{{"method", "pd"}, {"step_size", 0.05}},
                                    {{"method", "pd"},
                                     {"step_size", 0.05},
                                     {"correctors", {{{"kind", "accumulate"}, {"k", 2}}}}}})}};
        RunOptions o;
        o.threads = 1;
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j), o);
        const fs::path out = dir() / "effective";
        QVERIFY(writeResults(r, out.string()).empty());
        QVERIFY(!fs::exists(out / "effective_delays_0.csv"));
        const RunResult& acc = r.methods[1].result;
        QVERIFY(acc.effectiveDelays && acc.delays);
        std::istringstream csv(read(out / "effective_delays_1.csv"));
        std::string line;
        std::getline(csv, line);
        QCOMPARE(line, std::string("method,block_update,updated_stage,microbatch,slot,"
                                   "delay_block1,delay_block2,delay_block3"));
        long long k = 0;
        bool differs = false;
        for (; std::getline(csv, line); ++k) {
            const auto cs = cellsOf(line);
            for (int b = 0; b < 3; ++b) {
                const long long v = std::stoll(cs[static_cast<size_t>(5 + b)]);
                QCOMPARE(v, acc.effectiveDelays->delay(k, b));
                differs = differs || v != acc.delays->delay(k, b);
            }
        }
        QCOMPARE(k, acc.delays->updates());
        QVERIFY(differs);
    }

    void staleTemporariesOfDeadRunsRemoved() {
        const fs::path out = dir() / "stale";
        const fs::path dead = dir() / "stale.tmp-999999999";
        const fs::path deadOld = dir() / "stale.old-999999998";
        const fs::path alive = dir() / ("stale.tmp-" + std::to_string(::getpid()));
        const fs::path foreign = dir() / "stale.tmp-999999997";
        // Markers as a dead run (no such PID) and this live process would have written them.
        for (const fs::path& p : {dead, deadOld}) {
            const std::string name = p.filename().string();
            fs::create_directory(p);
            write(p / kResultsMarker, std::string(kResultsTitle) + "\nstate: temporary\nfolder: " +
                                          name + "\npid: " + name.substr(name.rfind('-') + 1) +
                                          "\nboot_id: another-boot\nstart_time: 1\n");
        }
        fs::create_directory(alive);
        write(alive / kResultsMarker, temporaryMarker(kResultsTitle, alive));
        fs::create_directory(foreign);
        write(foreign / "user.txt", "not ours");
        prepareResultsFolder(out.string());
        QVERIFY(!fs::exists(dead));
        QVERIFY(!fs::exists(deadOld));
        QVERIFY(fs::exists(alive));    // a live run's
        QVERIFY(fs::exists(foreign));  // not marked: not ours to delete
        fs::remove_all(alive);
        fs::remove_all(foreign);
    }
};

QTEST_GUILESS_MAIN(TestResultsFolder)
#include "tst_results_folder.moc"

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

#include "core/expect_error.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"

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

    // A run killed while writing left DIR.tmp-PID forever.
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

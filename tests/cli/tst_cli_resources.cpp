// pipelens-cli refuses work that would not fit in memory or would run for hours, before it
// starts (issue 28): each case is a reproducer of a defect the hostile-input campaign found,
// driven through the real binary with PIPELENS_MEMORY_LIMIT lowering the limit.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Exit code 1, nothing on standard output, and every fragment in the last line of stderr (the
// refusal; set-up lines may come before it, unlike expectRefused's single line).
void expectRefusedAfterSetup(const CliResult& r, const QStringList& fragments) {
    QVERIFY2(!r.crashed, qPrintable("crashed: " + r.err));
    QVERIFY2(r.exitCode == 1,
             qPrintable(QString("exit %1: %2").arg(r.exitCode).arg(r.err.left(500))));
    QVERIFY2(r.out.isEmpty(), qPrintable("stdout: " + r.out.left(300)));
    const QString last = r.err.trimmed().section('\n', -1);
    for (const QString& f : fragments) {
        QVERIFY2(last.contains(f), qPrintable("\"" + f + "\" missing from: " + last.left(500)));
    }
}

const QStringList kSmallLimit{"PIPELENS_MEMORY_LIMIT=100M"};

}  // namespace

class TestCliResources : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    QString config(const std::string& name, const json& j) const {
        const fs::path p = fs::path(tmp_.path().toStdString()) / name;
        std::ofstream(p, std::ios::binary) << j.dump();
        return QString::fromStdString(p.string());
    }
    QString path(const std::string& name) const {
        return tmp_.filePath(QString::fromStdString(name));
    }

  private slots:
    // `schedule` built a 0.5 GB timeline (1.9 GB at larger sizes) under a 100 MB limit.
    void scheduleChecksMemoryFirst() {
        expectRefusedAfterSetup(
            runCli({"schedule", "--kind", "pd", "--stages", "512", "--microbatches", "20000",
                    "--summary"},
                   kSmallLimit),
            {"the pd schedule (stages = 512, microbatches = 20000)", "needs about",
             "100.0 MiB available", "fewer stages or microbatches"});
        // The same command within the limit still works.
        const CliResult ok = runCli(
            {"schedule", "--kind", "pd", "--stages", "4", "--microbatches", "8", "--summary"},
            kSmallLimit);
        QCOMPARE(ok.exitCode, 0);
        QVERIFY(ok.out.contains("slots: "));
    }

    // `delays` likewise ignored the limit.
    void delaysChecksMemoryFirst() {
        expectRefusedAfterSetup(
            runCli({"delays", "--stages", "1024", "--microbatches", "20000"}, kSmallLimit),
            {"delay statistics for stages = 1024 with 20000 microbatches", "needs about",
             "100.0 MiB available"});
        expectRefusedAfterSetup(
            runCli({"delays", "--stages", "1000:1024", "--microbatches", "20000"}, kSmallLimit),
            {"stages = 1000:1024", "needs about"});
        QCOMPARE(runCli({"delays", "--stages", "2:8"}, kSmallLimit).exitCode, 0);
    }

    // S = 4096, d = 4096 with 10 methods (56.6 GiB) was refused only after the data set had been
    // made (34-80 s of set-up): synthetic sizes are in the config, so the plan's check comes first.
    void syntheticPlanCheckedBeforeTheData() {
        json methods = json::array();
        for (int i = 0; i < 10; ++i) methods.push_back({{"method", "pd"}, {"step_size", 1e-3}});
        const json c = {{"name", "big"},
                        {"stages", 4096},
                        {"batch_size", 1},
                        {"backend", "cpu"},
                        {"data", {{"rows", 4096}, {"dim", 4096}}},
                        {"budget", {{"microbatches", 20000}}},
                        {"methods", methods}};
        // Set-up steps are printed at once, so making the data set first would show.
        const CliResult r = runCli({"run", config("big.json", c), "--out", path("big")},
                                   {"PIPELENS_PROGRESS_AFTER_MS=0"});
        expectRefusedAfterSetup(r, {"this experiment (budget.microbatches = 20000, stages = 4096, "
                                    "10 methods side by side) needs about"});
        QVERIFY2(!r.err.contains("data set"), qPrintable("the data set was made first: " + r.err));
        QVERIFY(!fs::exists(path("big").toStdString()));
    }

    // A wide language model allocated 1.5 GB before running out, naming no cause.
    void languageModelMemoryNamesItsSizes() {
        const json c = json::parse(R"({
            "name": "wide", "stages": 4, "batch_size": 4, "backend": "cpu",
            "objective": {"kind": "char_transformer", "width": 2048, "heads": 8, "context": 64,
                          "corpus_characters": 5000, "sample_lines": 0},
            "budget": {"microbatches": 4},
            "methods": [{"method": "pd", "step_size": 0.1},
                        {"method": "localsgd", "step_size": 0.1, "local_steps": 2}]
        })");
        expectRefusedAfterSetup(
            runCli({"run", config("wide.json", c), "--out", path("wide")}, kSmallLimit),
            {"the language model (objective.width = 2048, objective.context = 64", "stages = 4",
             "2 methods side by side", "needs about", "a smaller objective.width"});
        QVERIFY(!fs::exists(path("wide").toStdString()));
    }

    // 100 lines of 100000 sampled characters ran for an hour per method after a run of seconds.
    void samplingBoundedByTheRun() {
        json c = json::parse(R"({
            "name": "talkative", "stages": 3, "batch_size": 4, "backend": "cpu",
            "objective": {"kind": "char_transformer", "width": 16, "heads": 2, "context": 8,
                          "corpus_characters": 5000, "sample_lines": 100, "sample_length": 100000},
            "budget": {"microbatches": 8},
            "methods": [{"method": "pd", "step_size": 0.1}]
        })");
        expectRefusedAfterSetup(
            runCli({"run", config("talk.json", c), "--out", path("talk")}, {}, 60000),
            {"objective.sample_lines x objective.sample_length = 100 x 100000",
             "10000000 characters", "at most 20000 characters"});
        // Within the allowance it runs and announces the sampling.
        c["objective"]["sample_lines"] = 2;
        c["objective"]["sample_length"] = 50;
        const CliResult ok = runCli({"run", config("talk2.json", c), "--out", path("talk2")},
                                    {"PIPELENS_PROGRESS_AFTER_MS=0"});
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
        QVERIFY2(ok.err.contains("then sampling 2 lines of 50 characters per method"),
                 qPrintable(ok.err));
    }
};

QTEST_GUILESS_MAIN(TestCliResources)
#include "tst_cli_resources.moc"

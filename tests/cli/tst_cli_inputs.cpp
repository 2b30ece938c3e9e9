// pipelens-cli on bad and extreme inputs (issue 7): each case is a reproducer of a defect the
// reliability campaign found, driven through the real binary as a user would.
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "core/expect_error.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {}  // namespace

class TestCliInputs : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    fs::path dir() const { return fs::path(tmp_.path().toStdString()); }
    QString config(const std::string& name, const json& j) const {
        writeFile(dir() / name, j.dump());
        return QString::fromStdString((dir() / name).string());
    }
    QString path(const std::string& name) const {
        return QString::fromStdString((dir() / name).string());
    }

  private slots:
    // 1. `--out notes.txt` turned the file into a results folder; a user's folder was wiped.
    void outNeverReplacesTheUsersFiles() {
        const QString cfg = config("ok.json", smallConfig());
        writeFile(dir() / "notes.txt", "x\n");
        expectRefused(runCli({"run", cfg, "--out", path("notes.txt")}),
                      {"--out", "notes.txt", "it is a file"});
        QCOMPARE(readFile(dir() / "notes.txt"), std::string("x\n"));
        fs::create_directory(dir() / "papers");
        writeFile(dir() / "papers" / "draft.tex", "draft");
        expectRefused(runCli({"run", cfg, "--out", path("papers")}), {"did not write"});
        QCOMPARE(readFile(dir() / "papers" / "draft.tex"), std::string("draft"));
        // Its own folder is replaced.
        QCOMPARE(runCli({"run", cfg, "--out", path("res"), "--quiet"}).exitCode, 0);
        QVERIFY(fs::exists(dir() / "res" / ".pipelens-results"));
        QCOMPARE(runCli({"run", cfg, "--out", path("res"), "--quiet"}).exitCode, 0);
    }

    // 4. `--out DIR/` failed after the whole run and left an empty DIR; `--out ""` likewise.
    void outPathNormalisedBeforeTheRun() {
        const QString cfg = config("ok.json", smallConfig());
        const CliResult r = runCli({"run", cfg, "--out", path("slash") + "/"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(fs::exists(dir() / "slash" / "summary.json"));
        const CliResult empty = runCli({"run", cfg, "--out", ""});
        expectRefused(empty, {"--out = \"\""});
        QVERIFY(!empty.err.contains("setup:"));  // refused before the run started
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    // 2. A config nested ~58,000 deep exited 139 with no message.
    void deeplyNestedConfigRefused() {
        writeFile(dir() / "deep.json",
                  "{\"name\": " + std::string(58000, '[') + std::string(58000, ']') + "}");
        expectRefused(runCli({"run", path("deep.json"), "--out", path("deep")}),
                      {"deep.json", "64 deep"});
    }

    // 9. Duplicate keys were accepted, the last one winning.
    void duplicateKeysRefused() {
        writeFile(dir() / "dup.json", R"({"stages": 2, "stages": 64, "methods": []})");
        expectRefused(runCli({"run", path("dup.json"), "--out", path("dup")}),
                      {"key \"stages\" appears twice"});
    }

    // 3. 15 bytes of LIBSVM asked for a 16 GiB dense matrix.
    void tinyFileHugeMatrixRefused() {
        writeFile(dir() / "huge.svm", "1 2147483647:1\n");
        json j = smallConfig();
        j["data"] = {{"source", "libsvm"}, {"x", "huge.svm"}};
        j["batch_size"] = 1;
        // The limit is set so the outcome does not depend on this machine's memory.
        expectRefused(runCli({"run", config("huge.json", j), "--out", path("huge")},
                             {"PIPELENS_MEMORY_LIMIT=8G"}),
                      {"needs about", "GiB of memory", "8.0 GiB available"});
    }

    // 8. 64-bit values were cast to int: --stages 4294967297 ran with S = 1; unbounded costs
    // overflowed the simulator ("did not finish within -103079215040 slots").
    void integerArgumentsNeverWrap() {
        expectRefused(
            runCli({"schedule", "--kind", "pd", "--stages", "4294967297", "--microbatches", "4"}),
            {"--stages = \"4294967297\"", "[1, 4096]"});
        expectRefused(runCli({"schedule", "--kind", "pd", "--stages", "4", "--microbatches", "4",
                              "--forward-slots", "2147483647"}),
                      {"--forward-slots", "[1, 1000]"});
        expectRefused(runCli({"run", config("ok.json", smallConfig()), "--out", path("t"),
                              "--threads", "4294967297"}),
                      {"--threads"});
    }

    // 9. `delays` printed its header to standard output before failing on a bad --from.
    void delaysChecksArgumentsBeforePrinting() {
        expectRefused(runCli({"delays", "--stages", "4", "--from", "2"}),
                      {"--from = \"2\"", "[0, 1)"});
        expectRefused(runCli({"delays", "--stages", "4", "--from", "nan"}), {"--from"});
    }

    // 9. A folder as config gave "basic_filebuf::underflow error"; an unreadable one no reason.
    void configPathMessagesSayWhy() {
        expectRefused(runCli({"run", path(""), "--out", path("f")}), {"is a folder, not a file"});
        writeFile(dir() / "plain.json", "{}");
        expectRefused(runCli({"run", path("plain.json") + "/x.json", "--out", path("f")}),
                      {"cannot open config file", "Not a directory"});
    }

    // 9. Raw bytes of a bad data file (escape sequences included) reached the terminal.
    void badDataBytesEscaped() {
        writeFile(dir() / "esc.csv", "1,2\n3,\x1b[2J\x1b]0;title\x07\n");
        json j = smallConfig();
        j["data"] = {{"source", "csv"}, {"x", "esc.csv"}};
        const CliResult r = runCli({"run", config("esc.json", j), "--out", path("esc")});
        expectRefused(r, {"line 2, column 2", "\\x1b"});
        QVERIFY(!r.err.contains(QChar(0x1b)));
        QVERIFY(!r.err.contains(QChar(0x07)));
    }

    // 7. A run killed while writing left DIR.tmp-PID forever: the next run removes it.
    void staleTemporariesRemoved() {
        // What an earlier PipeLens wrote (its marker names the folder and a process that is gone).
        fs::create_directory(dir() / "st.tmp-999999999");
        writeFile(dir() / "st.tmp-999999999" / ".pipelens-results",
                  "PipeLens results\nstate: temporary\nfolder: st.tmp-999999999\npid: 999999999\n"
                  "boot_id: another-boot\nstart_time: 1\n");
        QCOMPARE(runCli({"run", config("ok.json", smallConfig()), "--out", path("st"), "--quiet"})
                     .exitCode,
                 0);
        QVERIFY(!fs::exists(dir() / "st.tmp-999999999"));
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    // 7. SIGTERM while the results are written: no debris, the earlier results intact.
    void signalWhileWritingLeavesNoDebris() {
        json j = smallConfig();
        j["budget"] = {{"microbatches", 40000}};
        j["stages"] = 4;
        const QString cfg = config("big.json", j);
        QCOMPARE(runCli({"run", config("ok.json", smallConfig()), "--out", path("sig"), "--quiet"})
                     .exitCode,
                 0);
        const std::string before = readFile(dir() / "sig" / "summary.json");
        QProcess p;
        p.start(QString(PIPELENS_CLI_PATH), {"run", cfg, "--out", path("sig")});
        QVERIFY(p.waitForStarted(10000));
        QString err;
        QElapsedTimer timer;
        timer.start();
        while (!err.contains("writing results") && timer.elapsed() < 120000 &&
               p.state() == QProcess::Running) {
            p.waitForReadyRead(100);
            err += QString::fromUtf8(p.readAllStandardError());
        }
        QVERIFY2(err.contains("writing results"), qPrintable(err));
        ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(resultsTemporaries(dir()), 0);
        // Either the signal came in time (old results kept) or after the swap (new ones whole).
        const std::string after = readFile(dir() / "sig" / "summary.json");
        QVERIFY(after == before || after.find("\"pd_microbatches\": 40000") != std::string::npos);
        QVERIFY(fs::exists(dir() / "sig" / ".pipelens-results"));
    }

    // 11. Slow but sound runs say what they are doing on standard error. A step is shown once it
    // has lasted PIPELENS_PROGRESS_AFTER_MS (default 1000), so a quick failure still prints one
    // line; 0 shows every step at once, which makes this check independent of machine speed.
    void setupStepsReportedOnStderr() {
        const QString cfg = config("ok.json", smallConfig());
        const CliResult r =
            runCli({"run", cfg, "--out", path("p")}, {"PIPELENS_PROGRESS_AFTER_MS=0"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains("setup: building the data set"), qPrintable(r.err));
        QVERIFY2(r.err.contains("setup: computing f* and L (n = 20, d = 4)"), qPrintable(r.err));
        QVERIFY(r.err.contains("running 1 method over"));
        QVERIFY(r.err.contains("writing results to"));
        const CliResult quick = runCli({"run", cfg, "--out", path("p")});
        QCOMPARE(quick.exitCode, 0);
        QVERIFY2(!quick.err.contains("setup:"), qPrintable(quick.err));
    }
};

QTEST_GUILESS_MAIN(TestCliInputs)
#include "tst_cli_inputs.moc"

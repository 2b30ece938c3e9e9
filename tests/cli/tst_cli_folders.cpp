// Results folders and file writers on hostile targets (issue 28, "nothing is lost"): the user's
// copies beside a results folder, FIFOs and device nodes as targets, links, `.`, names at the
// length limit, failed and interrupted writes, a full disk. Through the real binaries
// (pipelens-cli, pipelens-reproduce, pipelens) and the writers in-process.
#include <QTemporaryDir>
#include <QtTest>

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "core/expect_error.hpp"
#include "errors.hpp"
#include "experiment/output/results.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// pipelens-cli started in the folder `cwd`.
CliResult runIn(const QString& cwd, const QStringList& args) {
    return runProgram(QString(PIPELENS_CLI_PATH), args, RunSettings().inFolder(cwd));
}

json smallSweep() {
    json e = smallConfig();
    e["objective"] = {{"kind", "quadratic"}};
    return {{"name", "tiny"},
            {"experiment", e},
            {"axis", {{"name", "gradient_noise"}, {"values", {0, 0.1}}}},
            {"seeds", 1}};
}

// The app: the same, less Qt's own notices (e.g. "QStandardPaths: XDG_RUNTIME_DIR not set").
void expectAppRefused(CliResult r, const QStringList& fragments) {
    QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
    lines.removeIf([](const QString& l) { return l.startsWith("QStandardPaths:"); });
    r.err = lines.join('\n') + '\n';
    expectRefused(r, fragments);
}

std::string bootId() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string line;
    std::getline(in, line);
    return line;
}

// A temporary's marker as a PipeLens that has died would have left it.
std::string deadWritersMarker(const std::string& folderName, const std::string& pid,
                              const std::string& boot) {
    return std::string(pipelens::kResultsTitle) + "\nstate: temporary\nfolder: " + folderName +
           "\npid: " + pid + "\nboot_id: " + boot + "\nstart_time: 99999999999999999999\n";
}

bool isFifo(const fs::path& p) {
    return fs::is_fifo(fs::symlink_status(p));
}

}  // namespace

class TestCliFolders : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> tmp_;  // a fresh one per test: the folder counts stay its own
    fs::path dir() const { return fs::path(tmp_->path().toStdString()); }
    QString config(const std::string& name, const json& j) const {
        writeFile(dir() / name, j.dump());
        return QString::fromStdString((dir() / name).string());
    }
    QString path(const std::string& name) const {
        return QString::fromStdString((dir() / name).string());
    }

  private slots:
    void init() { tmp_ = std::make_unique<QTemporaryDir>(); }
    // 1. The user's copies named DIR.old-<digits> / DIR.tmp-<digits> (a dated backup, a `cp -r`
    // of the results, even of a temporary) were deleted by the next run into DIR.
    void usersCopiesBesideTheFolderKept() {
        const QString cfg = config("ok.json", smallConfig());
        QCOMPARE(runCli({"run", cfg, "--out", path("res"), "--quiet"}).exitCode, 0);
        fs::copy(dir() / "res", dir() / "res.old-20241201", fs::copy_options::recursive);
        fs::copy(dir() / "res", dir() / "res.tmp-4000000", fs::copy_options::recursive);
        // A copy of a dead writer's temporary under another name is not that temporary.
        fs::create_directory(dir() / "res.tmp-4000001");
        writeFile(dir() / "res.tmp-4000001" / ".pipelens-results",
                  deadWritersMarker("res.tmp-4000002", "4000002", "another-boot"));
        fs::create_directory(dir() / "res.old-4000003");  // an empty folder of the user's
        QCOMPARE(runCli({"run", cfg, "--out", path("res"), "--quiet"}).exitCode, 0);
        QVERIFY(fs::exists(dir() / "res.old-20241201" / "summary.json"));
        QVERIFY(fs::exists(dir() / "res.tmp-4000000" / "summary.json"));
        QVERIFY(fs::exists(dir() / "res.tmp-4000001"));
        QVERIFY(fs::exists(dir() / "res.old-4000003"));
        // The finished folder's marker names no process and no temporary.
        const std::string marker = readFile(dir() / "res" / ".pipelens-results");
        QVERIFY2(marker.find("state: final") != std::string::npos, marker.c_str());
        QVERIFY2(marker.find("pid:") == std::string::npos, marker.c_str());
    }

    // 1. What a dead PipeLens left is still removed: its marker names the folder, and the
    // writer is gone (another boot, or no such process).
    void deadWritersTemporariesRemoved() {
        const QString cfg = config("ok.json", smallConfig());
        fs::create_directory(dir() / "dw.tmp-4000004");
        writeFile(dir() / "dw.tmp-4000004" / ".pipelens-results",
                  deadWritersMarker("dw.tmp-4000004", "4000004", bootId()));
        fs::create_directory(dir() / "dw.old-1");  // PID 1 is alive, but in another boot
        writeFile(dir() / "dw.old-1" / ".pipelens-results",
                  deadWritersMarker("dw.old-1", "1", "another-boot"));
        fs::create_directory(dir() / "dw.tmp-1");  // PID 1 of this boot, started at another time
        writeFile(dir() / "dw.tmp-1" / ".pipelens-results",
                  deadWritersMarker("dw.tmp-1", "1", bootId()));
        QCOMPARE(runCli({"run", cfg, "--out", path("dw"), "--quiet"}).exitCode, 0);
        QVERIFY(!fs::exists(dir() / "dw.tmp-4000004"));
        QVERIFY(!fs::exists(dir() / "dw.old-1"));
        QVERIFY(!fs::exists(dir() / "dw.tmp-1"));
    }

    // 2. A FIFO, a device node or a folder as the target of a file writer was replaced by a
    // regular file (as root: /dev/full). A link to a regular file is written through.
    void fileWritersRefuseWhatIsNotAFile() {
        const fs::path fifo = dir() / "pipe";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        expectError<pipelens::IoError>(
            [&] { pipelens::writeFileAtomically(fifo.string(), "x"); },
            {QString::fromStdString(fifo.string()), "a FIFO (named pipe)"});
        QVERIFY(isFifo(fifo));
        expectError<pipelens::IoError>([&] { pipelens::writeFileAtomically("/dev/null", "x"); },
                                       {"/dev/null", "a character device"});
        QVERIFY(fs::is_character_file("/dev/null"));
        QCOMPARE(resultsTemporaries(dir()), 0);
        writeFile(dir() / "real.txt", "old");
        fs::create_symlink("real.txt", dir() / "link.txt");
        pipelens::writeFileAtomically((dir() / "link.txt").string(), "new");
        QVERIFY(fs::is_symlink(dir() / "link.txt"));
        QCOMPARE(readFile(dir() / "real.txt"), std::string("new"));
    }

    // 2. `pipelens --screenshot FIFO` rendered the window and replaced the FIFO.
    void screenshotRefusesAFifoBeforeRendering() {
        const fs::path fifo = dir() / "shot.png";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const CliResult r = runProgram(siblingBinary("pipelens"),
                                       {"--preset", "default", "--screenshot", path("shot.png")},
                                       RunSettings().timeout(60000));
        expectAppRefused(r, {QString::fromStdString(fifo.string()), "a FIFO (named pipe)",
                             "not a regular file"});
        QVERIFY(isFifo(fifo));
    }

    // 7. `--size 10000x10000 --scale 8` asked for a 25.6 GB image without a check.
    void screenshotSizeLimited() {
        const CliResult r = runProgram(siblingBinary("pipelens"),
                                       {"--preset", "default", "--screenshot", path("big.png"),
                                        "--size", "10000x10000", "--scale", "8"},
                                       RunSettings().timeout(60000));
        expectAppRefused(
            r, {"--size 10000x10000", "--scale 8", "80000 x 80000", "16384", "268435456"});
        QVERIFY(!fs::exists(dir() / "big.png"));
    }

    // 3. `sweep --out LINK` removed the user's link and put a folder there; run refused it.
    void sweepRefusesALinkAsRunDoes() {
        fs::create_directory(dir() / "target");
        fs::create_directory_symlink("target", dir() / "link");
        const QString sweep = config("tiny-sweep.json", smallSweep());
        const CliResult s = runCli({"sweep", sweep, "--out", path("link"), "--quiet"});
        expectRefused(s,
                      {"--out = \"" + path("link") + "\" is not allowed: it is a symbolic link"});
        QVERIFY(fs::is_symlink(dir() / "link"));
        const CliResult r =
            runCli({"run", config("ok.json", smallConfig()), "--out", path("link"), "--quiet"});
        QCOMPARE(r.err, s.err);
        QVERIFY(fs::is_empty(dir() / "target"));
    }

    // 1. The same rules for a sweep's temporaries: a dead sweep's is removed, a copy kept.
    void sweepTemporariesFollowTheSameRules() {
        fs::create_directory(dir() / "sw.tmp-4000006");
        writeFile(dir() / "sw.tmp-4000006" / ".pipelens-sweep",
                  deadWritersMarker("sw.tmp-4000006", "4000006", bootId()));
        fs::create_directory(dir() / "sw.old-20241201");
        writeFile(dir() / "sw.old-20241201" / ".pipelens-sweep", "PipeLens sweep folder\n");
        const CliResult r = runCli(
            {"sweep", config("tiny-sweep.json", smallSweep()), "--out", path("sw"), "--quiet"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(!fs::exists(dir() / "sw.tmp-4000006"));
        QVERIFY(fs::exists(dir() / "sw.old-20241201"));
        const std::string marker = readFile(dir() / "sw" / ".pipelens-sweep");
        QVERIFY2(marker.find("state: final") != std::string::npos, marker.c_str());
    }

    // 4. `sweep --out DIR/` failed ("Directory not empty") and left an empty DIR.
    void sweepTrailingSlashNormalised() {
        const QString sweep = config("tiny-sweep.json", smallSweep());
        const CliResult r = runCli({"sweep", sweep, "--out", path("slash") + "/", "--quiet"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(fs::exists(dir() / "slash" / "sweep.json"));
        QVERIFY(fs::exists(dir() / "slash" / "points" / "point-0001.json"));
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    // 4. `run --out .` in an empty folder swapped the shell's current folder away; the same for
    // its ancestors, in all three commands.
    void currentFolderAndAncestorsRefused() {
        fs::create_directories(dir() / "here" / "deeper");
        const QString here = path("here");
        const QString deeper = path("here/deeper");
        const QString cfg = config("ok.json", smallConfig());
        const QString sweep = config("tiny-sweep.json", smallSweep());
        expectRefused(runIn(deeper, {"run", cfg, "--out", "."}),
                      {"--out = \".\" is not allowed: it is the current folder"});
        expectRefused(runIn(deeper, {"run", cfg, "--out", here}), {"it holds the current folder"});
        expectRefused(runIn(deeper, {"sweep", sweep, "--out", "."}), {"the current folder"});
        expectRefused(runIn(deeper, {"sweep", sweep, "--out", ".."}), {"holds the current folder"});
        expectRefused(runProgram(siblingBinary("pipelens-reproduce"),
                                 {"reproduce", "E1", "--quick", "--out", "."},
                                 RunSettings().inFolder(deeper)),
                      {"the current folder"});
        QVERIFY(fs::is_directory(dir() / "here" / "deeper"));
        QVERIFY(fs::is_empty(dir() / "here" / "deeper"));
    }

    // 4. A legal 250-byte name failed only after the whole run (".tmp-PID" passes NAME_MAX).
    void longNameRefusedBeforeTheRun() {
        const std::string name(250, 'n');
        const CliResult r = runCli({"run", config("ok.json", smallConfig()), "--out", path(name)});
        expectRefused(r, {"its name is 250 bytes long", "255", "at most 243 bytes"});
        QVERIFY(!r.err.contains("setup:"));
        const CliResult s =
            runCli({"sweep", config("tiny-sweep.json", smallSweep()), "--out", path(name)});
        expectRefused(s, {"its name is 250 bytes long"});
        QCOMPARE(resultsTemporaries(dir()), 0);
        QVERIFY(!fs::exists(dir() / name));
    }

    // 5. A sweep that failed on bad data left a folder that blocked the rerun and --resume.
    void failedSweepLeavesNoFolder() {
        writeFile(dir() / "bad.csv", "1,2\n3,x\n");
        json s = smallSweep();
        s["experiment"]["data"] = {{"source", "csv"}, {"x", (dir() / "bad.csv").string()}};
        const QString sweep = config("bad-sweep.json", s);
        const CliResult r = runCli({"sweep", sweep, "--out", path("bad-sweep"), "--quiet"});
        QVERIFY2(r.exitCode != 0 && !r.crashed, qPrintable(r.err));
        QVERIFY2(!fs::exists(dir() / "bad-sweep"), qPrintable(r.err));
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    // 5, 6. A failed write left `file.tmp-PID` behind and said only "cannot write X". Here the
    // file size limit makes the write fail (EFBIG): the reason is the system's, no debris.
    void failedWriteRemovesItsTemporaryAndSaysWhy() {
        struct rlimit old {};
        QCOMPARE(::getrlimit(RLIMIT_FSIZE, &old), 0);
        const auto previous = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit small = old;
        small.rlim_cur = 1024;
        QCOMPARE(::setrlimit(RLIMIT_FSIZE, &small), 0);
        const fs::path target = dir() / "point-0000.json";
        QString message;
        try {
            pipelens::writeFileAtomically(target.string(), std::string(4096, 'x'));
        } catch (const pipelens::IoError& e) {
            message = e.what();
        }
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, previous);
        QVERIFY2(message.contains(QString::fromUtf8(std::strerror(EFBIG))), qPrintable(message));
        QVERIFY(!fs::exists(target));
        QCOMPARE(resultsTemporaries(dir()), 0);
    }

    // 6. A full disk said "cannot write X" without the reason. A 64 KiB tmpfs, filled up.
    void fullDiskSaysNoSpaceLeft() {
        const fs::path mnt = dir() / "small-disk";
        fs::create_directory(mnt);
        if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
            QSKIP(
                "mounting a tmpfs needs root: failedWriteRemovesItsTemporaryAndSaysWhy covers "
                "the reason with EFBIG");
        }
        {
            std::ofstream fill(mnt / "filler", std::ios::binary);
            const std::string block(4096, 'f');
            for (int i = 0; i < 64 && fill; ++i) fill << block;
        }
        const CliResult r = runCli({"run", config("ok.json", smallConfig()), "--out",
                                    QString::fromStdString((mnt / "res").string()), "--quiet"});
        const bool noTemporaries = resultsTemporaries(mnt) == 0;
        const bool noFolder = !fs::exists(mnt / "res");
        ::umount(mnt.c_str());
        QVERIFY2(r.exitCode != 0 && !r.crashed, qPrintable(r.err));
        QVERIFY2(r.err.contains("No space left on device"), qPrintable(r.err));
        QVERIFY(noTemporaries);
        QVERIFY(noFolder);
    }

    // 5. reproduce left DIR.tmp-PID after Ctrl-C, and never cleaned it up.
    void reproduceInterruptedLeavesNoTemporary() {
        fs::create_directory(dir() / "fig.tmp-4000005");
        writeFile(dir() / "fig.tmp-4000005" / ".pipelens-results",
                  deadWritersMarker("fig.tmp-4000005", "4000005", bootId()));
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(e);
        p.start(siblingBinary("pipelens-reproduce"),
                {"reproduce", "all", "--quick", "--out", path("fig"), "--quiet"});
        QVERIFY(p.waitForStarted(10000));
        const fs::path tmp = dir() / ("fig.tmp-" + std::to_string(p.processId()));
        QElapsedTimer timer;
        timer.start();
        while (!fs::exists(tmp) && timer.elapsed() < 60000 && p.state() == QProcess::Running) {
            QTest::qWait(5);
        }
        QVERIFY2(fs::exists(tmp), "reproduce never started writing");
        QVERIFY(!fs::exists(dir() / "fig.tmp-4000005"));  // the stale one went first
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);  // ended by the signal, as run does
        QVERIFY(!fs::exists(tmp));
        QVERIFY(!fs::exists(dir() / "fig"));
        QCOMPARE(resultsTemporaries(dir()), 0);
    }
};

QTEST_GUILESS_MAIN(TestCliFolders)
#include "tst_cli_folders.moc"

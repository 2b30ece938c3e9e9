#pragma once
// Runs the real pipelens-cli (or a binary built beside it: pipelens, pipelens-reproduce) as a
// user would: a process of its own, an environment, a working folder and a time limit; and the
// small fixtures the suites that drive the tools with bad and extreme inputs share.
#include <QByteArray>
#include <QFileInfo>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

struct CliResult {
    int exitCode = -1;
    bool crashed = false;
    bool finished = false;  // false: it could not start or ran past its time limit
    QString out;
    QString err;
    QByteArray rawErr;  // stderr's bytes, to check that no control byte got through
};

// How a program is started: RunSettings().withEnv({"NAME=VALUE"}).inFolder(dir).timeout(ms).
struct RunSettings {
    QStringList env;  // NAME=VALUE entries added to this process's environment
    QString cwd;      // empty: this process's working folder
    int timeoutMs = 120000;
    QString stdoutFile;  // non-empty: standard output goes to this file (e.g. /dev/full)
    long memoryKb = 0;   // > 0: started through `sh -c 'ulimit -v KB; exec ...'`, so a reader
                         // that reads without end fails fast instead of eating the machine

    RunSettings& withEnv(const QStringList& entries) {
        env = entries;
        return *this;
    }
    RunSettings& inFolder(const QString& folder) {
        cwd = folder;
        return *this;
    }
    RunSettings& timeout(int ms) {
        timeoutMs = ms;
        return *this;
    }
    RunSettings& stdoutTo(const QString& file) {
        stdoutFile = file;
        return *this;
    }
    RunSettings& addressSpace(long kb) {
        memoryKb = kb;
        return *this;
    }
};

// A binary built beside pipelens-cli.
inline QString siblingBinary(const QString& name) {
    return QFileInfo(QString(PIPELENS_CLI_PATH)).absolutePath() + "/" + name;
}

// The app's binaries run with the offscreen platform. A run past the time limit is killed and
// reported in `err` (exit code -1), so a hang fails its test instead of the suite.
inline CliResult runProgram(const QString& program, const QStringList& args,
                            const RunSettings& settings = RunSettings()) {
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert("QT_QPA_PLATFORM", "offscreen");
    for (const QString& kv : settings.env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(e);
    if (!settings.cwd.isEmpty()) p.setWorkingDirectory(settings.cwd);
    if (!settings.stdoutFile.isEmpty()) p.setStandardOutputFile(settings.stdoutFile);
    if (settings.memoryKb > 0) {
        p.start(
            "/bin/sh",
            QStringList{"-c", "ulimit -v " + QString::number(settings.memoryKb) + "; exec \"$@\"",
                        "sh", program} +
                args);
    } else {
        p.start(program, args);
    }
    CliResult r;
    if (!p.waitForStarted(10000) || !p.waitForFinished(settings.timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "did not finish within " + QString::number(settings.timeoutMs) + " ms: " + program +
                " " + args.join(' ');
        return r;
    }
    r.finished = true;
    r.crashed = p.exitStatus() != QProcess::NormalExit;
    r.exitCode = r.crashed ? -1 : p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.rawErr = p.readAllStandardError();
    r.err = QString::fromUtf8(r.rawErr);
    return r;
}

inline CliResult runCli(const QStringList& args, const QStringList& env = {},
                        int timeoutMs = 120000) {
    return runProgram(QString(PIPELENS_CLI_PATH), args,
                      RunSettings().withEnv(env).timeout(timeoutMs));
}

inline void writeFile(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

inline std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A valid experiment that runs in milliseconds.
inline nlohmann::json smallConfig() {
    return {{"name", "small"},
            {"stages", 2},
            {"batch_size", 5},
            {"backend", "cpu"},
            {"data", {{"rows", 20}, {"dim", 4}}},
            {"budget", {{"microbatches", 6}}},
            {"methods", nlohmann::json::array({{{"method", "pd"}, {"step_size", 0.1}}})}};
}

// A refusal: it finished with exit code `code`, nothing on standard output, one line on
// standard error holding every fragment.
inline void expectRefused(const CliResult& r, const QStringList& fragments, int code = 1) {
    QVERIFY2(r.finished, qPrintable(r.err));
    QVERIFY2(!r.crashed, qPrintable("crashed: " + r.err.left(500)));
    QVERIFY2(r.exitCode == code,
             qPrintable("exit code " + QString::number(r.exitCode) + ": " + r.err.left(500)));
    QVERIFY2(r.out.isEmpty(), qPrintable("stdout: " + r.out.left(300)));
    QVERIFY2(r.err.count('\n') == 1, qPrintable("not one line: " + r.err.left(500)));
    for (const QString& f : fragments) {
        QVERIFY2(r.err.contains(f), qPrintable("\"" + f + "\" missing from: " + r.err.left(500)));
    }
}

#pragma once
// Runs the real pipelens-cli as a user would (a process of its own, an environment, a time
// limit), for the suites that drive it with bad and extreme inputs.
#include <QProcess>
#include <QString>
#include <QStringList>

struct CliResult {
    int exitCode = -1;
    bool crashed = false;
    QString out;
    QString err;
};

// `env` entries are NAME=VALUE added to this process's environment. A run past `timeoutMs` is
// killed and reported in `err` (exit code -1), so a hang fails its test instead of the suite.
inline CliResult runCli(const QStringList& args, const QStringList& env = {},
                        int timeoutMs = 120000) {
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(e);
    p.start(QString(PIPELENS_CLI_PATH), args);
    CliResult r;
    if (!p.waitForStarted(10000) || !p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "did not finish: pipelens-cli " + args.join(' ');
        return r;
    }
    r.crashed = p.exitStatus() != QProcess::NormalExit;
    r.exitCode = r.crashed ? -1 : p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

#pragma once
// Starting a program under mpirun from a test, as a person would on this machine: as root Open
// MPI needs --allow-run-as-root, and more ranks than cores need --oversubscribe.
#include <QProcess>
#include <QString>
#include <QStringList>
#include <thread>

namespace pipelens::test {

struct ProcessResult {
    int exitCode = -1;  // -1: crashed, timed out or did not start
    QString out;
    QString err;
};

inline ProcessResult runProcess(const QString& program, const QStringList& args,
                                int timeoutMs = 120000) {
    QProcess p;
    p.start(program, args);
    ProcessResult r;
    if (!p.waitForStarted(10000)) {
        r.err = "could not start " + program;
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out after " + QString::number(timeoutMs) + " ms: " + program + " " +
                args.join(' ') + "\n" + QString::fromUtf8(p.readAllStandardError());
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

inline QStringList mpirunArgs(int ranks) {
    QStringList a{"--allow-run-as-root"};
    if (static_cast<unsigned>(ranks) > std::thread::hardware_concurrency()) a << "--oversubscribe";
    a << "-np" << QString::number(ranks);
    return a;
}

// `program args` on `ranks` processes through mpirun.
inline ProcessResult runMpi(int ranks, const QString& program, const QStringList& args,
                            int timeoutMs = 120000) {
    return runProcess(PIPELENS_MPIEXEC, mpirunArgs(ranks) << program << args, timeoutMs);
}

}  // namespace pipelens::test

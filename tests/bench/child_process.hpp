#pragma once
// A benchmark's child process: the real command run as a person runs it, timed. Wall time and
// the child's CPU time (user + system, from RUSAGE_CHILDREN), its exit code, and optionally its
// standard output (read whole through a pipe; standard error passes through).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace pipelens::bench {

struct ChildRun {
    int exitCode = -1;  // -1: it could not start, or a signal ended it
    double wall = 0;    // seconds
    double cpu = 0;     // seconds, user + system
    std::string out;    // standard output, when captured
};

inline double childCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Runs `args` (args[0] the program's path) and waits for it.
inline ChildRun runChild(const std::vector<std::string>& args, bool captureStdout) {
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ChildRun m;
    int pipeFds[2] = {-1, -1};
    if (captureStdout && pipe(pipeFds) != 0) return m;
    const double cpu0 = childCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        if (captureStdout) {
            dup2(pipeFds[1], STDOUT_FILENO);
            close(pipeFds[0]);
            close(pipeFds[1]);
        }
        execv(argv[0], argv.data());
        _exit(127);
    }
    if (captureStdout) {
        close(pipeFds[1]);
        char buffer[4096];
        for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) > 0;) {
            m.out.append(buffer, static_cast<std::size_t>(n));
        }
        close(pipeFds[0]);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return m;
    m.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.cpu = childCpuSeconds() - cpu0;
    m.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return m;
}

}  // namespace pipelens::bench

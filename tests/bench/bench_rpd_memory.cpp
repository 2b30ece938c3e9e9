// Memory of Randomized PipeDream: it must grow with delta * d (a ring of the last delta + 1
// iterates), never with K * d (a copy of every iterate). Each case runs in a fresh child process
// on logistic data (n = 600, d = 512, b = 10, S = 32): after the data set is built the child
// resets its peak RSS (/proc/self/clear_refs, "5"), runs RPD to the end and reports the peak RSS
// growth (VmHWM - VmRSS at the start) and the heap in use at the end (mallinfo2, replay alive).
// Two sweeps: delta = 1008 fixed with K = 10^3 ... 10^6, and K = 10^4 fixed with growing delta.
// The verdict compares the fitted slopes with d * 8 bytes, the cost of one stored iterate.
//
// Usage: bench_rpd_memory [--quick]   (--quick stops the K sweep at 10^5)
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "compute/cpu_backend.hpp"
#include "data/synthetic.hpp"
#include "objective/linear_objective.hpp"
#include "replay/rpd_replay.hpp"

namespace {

using namespace pipelens;

constexpr int kDim = 512;
constexpr int kStages = 32;
constexpr double kIterateBytes = kDim * 8.0;  // one stored copy of w

struct Case {
    long long updates = 0;
    long long delta = 0;
};

struct Measurement {
    long long peakGrowthKb = 0;  // VmHWM after the run - VmRSS before the replay
    long long heapBytes = 0;     // mallinfo2 in use after the run minus before the replay
    int ok = 0;                  // ran to the end
};

long long statusKb(const std::string& field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
    }
    return -1;
}

long long heapInUse() {
    const struct mallinfo2 mi = mallinfo2();
    return static_cast<long long>(mi.uordblks + mi.hblkhd);  // arena + mmapped blocks
}

Measurement measureInChild(const Case& c) {
    SyntheticSpec spec;
    spec.kind = "logistic";
    spec.rows = 600;
    spec.dim = kDim;
    spec.seed = 1;
    auto objective =
        std::make_shared<LinearObjective>(makeSynthetic(spec), LossKind::Logistic, 1e-4, 10);
    // Known values, so no solver allocates inside the measured region (they only label curves).
    objective->setOptimum(0.0);
    objective->setSmoothness(1.0);

    {
        std::ofstream reset("/proc/self/clear_refs");
        reset << "5";  // resets VmHWM to the current RSS (Linux >= 4.0)
    }
    Measurement m;
    const long long rssBefore = statusKb("VmRSS");
    const long long heapBefore = heapInUse();
    RpdReplayConfig cfg;
    cfg.stages = kStages;
    cfg.updates = c.updates;
    cfg.stepSize = 0.05;
    cfg.delayMode = DelayMode::Uniform;
    cfg.maxDelay = c.delta;
    cfg.order = StageOrder::Uniform;
    cfg.seed = 1;
    cfg.sampling.objectivePerUpdate = true;
    RpdReplay replay(objective, std::make_unique<CpuBackend>(), cfg);
    replay.runToEnd();
    m.ok = replay.result().finished && replay.result().updates == c.updates ? 1 : 0;
    m.peakGrowthKb = statusKb("VmHWM") - rssBefore;
    m.heapBytes = heapInUse() - heapBefore;
    return m;
}

bool runCase(const Case& c, Measurement& out) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    std::cout.flush();
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        close(fds[0]);
        Measurement m;
        try {
            m = measureInChild(c);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "case K=%lld delta=%lld: %s\n", c.updates, c.delta, e.what());
        }
        const ssize_t written = write(fds[1], &m, sizeof m);
        _exit(written == static_cast<ssize_t>(sizeof m) ? 0 : 1);
    }
    close(fds[1]);
    const ssize_t got = read(fds[0], &out, sizeof out);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return got == static_cast<ssize_t>(sizeof out) && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0 && out.ok == 1;
}

double mib(double bytes) {
    return bytes / (1024.0 * 1024.0);
}

// Least-squares slope of y against x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
    double mx = 0, my = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        mx += x[i];
        my += y[i];
    }
    mx /= static_cast<double>(x.size());
    my /= static_cast<double>(y.size());
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    return sxy / sxx;
}

struct SweepResult {
    double peakSlope = 0;  // bytes of peak RSS per unit of the swept variable
    double heapSlope = 0;
    bool ok = true;
};

SweepResult sweep(const std::vector<Case>& cases, bool overK) {
    std::printf(
        "| K | delta | ring (delta+1)*d*8 | K*d*8 (a full history) | peak RSS growth | "
        "heap in use after |\n|---|---|---|---|---|---|\n");
    std::vector<double> x, peak, heap;
    SweepResult r;
    for (const Case& c : cases) {
        Measurement m;
        if (!runCase(c, m)) {
            std::printf("| %lld | %lld | failed to run |||\n", c.updates, c.delta);
            r.ok = false;
            continue;
        }
        std::printf("| %lld | %lld | %.2f MiB | %.1f MiB | %.2f MiB | %.2f MiB |\n", c.updates,
                    c.delta, mib(static_cast<double>(c.delta + 1) * kIterateBytes),
                    mib(static_cast<double>(c.updates) * kIterateBytes),
                    mib(static_cast<double>(m.peakGrowthKb) * 1024.0),
                    mib(static_cast<double>(m.heapBytes)));
        std::fflush(stdout);
        x.push_back(static_cast<double>(overK ? c.updates : c.delta));
        peak.push_back(static_cast<double>(m.peakGrowthKb) * 1024.0);
        heap.push_back(static_cast<double>(m.heapBytes));
    }
    if (x.size() >= 2) {
        r.peakSlope = slope(x, peak);
        r.heapSlope = slope(x, heap);
    } else {
        r.ok = false;
    }
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    std::printf("# RPD memory (d = %d, S = %d, objective after every update)\n\n", kDim, kStages);

    std::printf("## fixed delta = 1008, growing K\n\n");
    std::vector<Case> overK = {{1000, 1008}, {10000, 1008}, {100000, 1008}};
    if (!quick) overK.push_back({1000000, 1008});
    const SweepResult k = sweep(overK, true);

    std::printf("\n## fixed K = 10000, growing delta\n\n");
    const std::vector<Case> overDelta = {
        {10000, 0}, {10000, 1008}, {10000, 4000}, {10000, 16000}, {10000, 64000}};
    const SweepResult d = sweep(overDelta, false);

    // Flat in K: far below one iterate per update (the per-update logs, f and ||g||^2, cost 16 B).
    const bool flatInK =
        k.ok && k.peakSlope < 0.05 * kIterateBytes && k.heapSlope < 0.05 * kIterateBytes;
    // Linear in delta * d: one iterate (d * 8 bytes) per unit of delta, within 25 %.
    const bool linearInDelta =
        d.ok && d.peakSlope > 0.75 * kIterateBytes && d.peakSlope < 1.25 * kIterateBytes &&
        d.heapSlope > 0.75 * kIterateBytes && d.heapSlope < 1.25 * kIterateBytes;
    std::printf(
        "\nslope in K:     %.1f B/update peak RSS, %.1f B/update heap "
        "(one iterate d*8 = %.0f B): %s\n",
        k.peakSlope, k.heapSlope, kIterateBytes, flatInK ? "flat in K" : "NOT flat in K");
    std::printf(
        "slope in delta: %.1f B/unit peak RSS, %.1f B/unit heap "
        "(expected d*8 = %.0f B): %s\n",
        d.peakSlope, d.heapSlope, kIterateBytes,
        linearInDelta ? "linear in delta*d" : "NOT linear in delta*d");
    return flatInK && linearInDelta ? 0 : 1;
}

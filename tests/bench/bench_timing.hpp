#pragma once
// Timing helpers shared by the CPU benchmarks: wall and process CPU time of repeated calls,
// the load average, and a short duration format.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace pipelens::bench {

using Clock = std::chrono::steady_clock;

struct Timing {
    double median = 0;
    double min = 0;
    double max = 0;
    double cpuMedian = 0;  // process CPU time: close to the unloaded wall time (one thread)
};

inline double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// `prepare`, if given, runs before each repetition outside the timed region.
inline Timing timeIt(const std::function<void()>& fn, int reps,
                     const std::function<void()>& prepare = {}) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < reps; ++r) {
        if (prepare) prepare();
        const double c0 = cpuSeconds();
        const auto t0 = Clock::now();
        fn();
        wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        cpu.push_back(cpuSeconds() - c0);
    }
    Timing t;
    t.min = *std::min_element(wall.begin(), wall.end());
    t.max = *std::max_element(wall.begin(), wall.end());
    t.median = median(wall);
    t.cpuMedian = median(cpu);
    return t;
}

inline std::string loadAverage() {
    std::ifstream in("/proc/loadavg");
    std::string one, five;
    in >> one >> five;
    return one + " (1 min), " + five + " (5 min)";
}

inline std::string seconds(double s) {
    char buf[32];
    if (s < 1.0) {
        std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%.3f s", s);
    }
    return buf;
}

}  // namespace pipelens::bench

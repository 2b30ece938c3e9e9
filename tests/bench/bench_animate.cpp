// Time of `pipelens-cli animate --default` (the default experiment, 614 slots of PipeDream at
// S = 8: one frame per slot) at 960 x 540 and 10 fps, run as the real command in a child process:
// wall time and the child's CPU time (user + system). Target: each output under 10 s on a
// 2-core machine. A run must prove it did the work: the file is read back with libavformat and
// libavcodec (video::probeVideo) and must decode to as many frames as the command reports, all
// slots of the run, at 960 x 540, lasting frames / fps seconds; otherwise the benchmark fails.
//
// Usage: bench_animate [--reps N] [--panels gantt|gantt+loss|all] [--keep DIR]
//   prints one row per format (GIF, MP4): the median wall time over N runs (default 3), the
//   CPU time, frames decoded, duration and file size; exits 1 if a run failed, its output did
//   not decode to the frames it should, or the target was missed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "animation/video_encoder.hpp"
#include "child_process.hpp"

namespace fs = std::filesystem;

namespace {

constexpr double kTargetSeconds = 10.0;
constexpr int kFps = 10;
constexpr int kWidth = 960;
constexpr int kHeight = 540;

// The command in a child process, timed (its standard output read for the summary line).
using Measured = pipelens::bench::ChildRun;

Measured runCommand(const std::vector<std::string>& args) {
    return pipelens::bench::runChild(args, true);
}

// "... N frames (slots A:B of T, ..." from the command's summary line; -1 if absent.
int reportedFrames(const std::string& out, int* totalSlots) {
    const auto at = out.find(" frames (slots ");
    const auto of = out.find(" of ", at);
    if (at == std::string::npos || of == std::string::npos) return -1;
    const auto start = out.rfind(' ', at - 1);
    *totalSlots = std::atoi(out.c_str() + of + 4);
    return std::atoi(out.c_str() + start + 1);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 3;
    std::string panels = "gantt";
    std::string keep;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(1, std::atoi(argv[i + 1]));
        if (std::strcmp(argv[i], "--panels") == 0) panels = argv[i + 1];
        if (std::strcmp(argv[i], "--keep") == 0) keep = argv[i + 1];
    }
    const fs::path dir =
        keep.empty() ? fs::temp_directory_path() / ("bench_animate." + std::to_string(getpid()))
                     : fs::path(keep);
    fs::create_directories(dir);
    std::printf("pipelens-cli animate --default --panels %s, %dx%d at %d fps, %d runs each\n",
                panels.c_str(), kWidth, kHeight, kFps, reps);
    std::printf("%-6s %10s %10s %8s %10s %12s  %s\n", "format", "wall (s)", "CPU (s)", "frames",
                "length (s)", "bytes", "target < 10 s");
    bool ok = true;
    for (const char* format : {"gif", "mp4"}) {
        const std::string out = (dir / (std::string("default.") + format)).string();
        std::vector<double> walls;
        std::vector<double> cpus;
        int frames = -1;
        int total = -1;
        for (int r = 0; r < reps; ++r) {
            const Measured m =
                runCommand({PIPELENS_CLI_PATH, "animate", "--default", "--out", out, "--panels",
                            panels, "--fps", std::to_string(kFps), "--size", "960x540"});
            if (m.exitCode != 0) {
                std::printf("%-6s failed: exit code %d\n", format, m.exitCode);
                ok = false;
                break;
            }
            walls.push_back(m.wall);
            cpus.push_back(m.cpu);
            frames = reportedFrames(m.out, &total);
        }
        if (walls.empty()) continue;
        pipelens::video::VideoInfo info;
        try {
            info = pipelens::video::probeVideo(out);
        } catch (const std::exception& e) {
            std::printf("%-6s cannot be read back: %s\n", format, e.what());
            ok = false;
            continue;
        }
        const double wall = median(walls);
        const bool did = frames > 0 && frames == total && info.frames == frames &&
                         info.width == kWidth && info.height == kHeight &&
                         std::abs(info.durationSeconds - frames / static_cast<double>(kFps)) < 0.2;
        const bool met = wall < kTargetSeconds;
        std::printf("%-6s %10.2f %10.2f %8d %10.1f %12lld  %s\n", format, wall, median(cpus),
                    info.frames, info.durationSeconds, static_cast<long long>(fs::file_size(out)),
                    met ? "met" : "MISSED");
        if (!did) {
            std::printf(
                "%-6s did not hold the run: reported %d of %d slots, decoded %d frames of "
                "%dx%d lasting %.2f s\n",
                format, frames, total, info.frames, info.width, info.height, info.durationSeconds);
        }
        ok = ok && did && met;
    }
    if (keep.empty()) fs::remove_all(dir);
    return ok ? 0 : 1;
}

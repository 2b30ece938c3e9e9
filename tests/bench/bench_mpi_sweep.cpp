// Sweep throughput over MPI ranks against the threaded single process, and the cost per point.
// Runs the real pipelens-cli as a person would and times the whole command:
//   threaded   pipelens-cli sweep SWEEP --out DIR --threads T   (one process, T threads)
//   mpi P      mpirun -np P pipelens-cli sweep SWEEP --out DIR   (P ranks, one point at a time)
// on two sweeps written here:
//   moderate   16 points (S = 2..17), PD tuned over a 5-step grid, RPD and LocalSGD fixed,
//              2 seeds, logistic-free random data n = 1000, d = 64, 6 epochs
//   tiny       120 points of a 1-method SGD run on 20 rows (the step size is the axis): what
//              remains is the per-point cost of handing out, sending and writing a point
// Every MPI folder must equal the threaded one file for file, byte for byte (the benchmark fails
// otherwise). Each mode also runs a sweep of the first point alone: the fixed cost of a run
// (process start, MPI_Init on every rank, sending the sweep, the folder); the cost per point is
// (wall of the sweep - wall of the one-point sweep) / (points - 1), the same for CPU time.
//
// Usage: bench_mpi_sweep [--reps N] [--ranks 1,2,4] [--only moderate,tiny] [--keep DIR]
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "folder_snapshot.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Timing {
    double wallSeconds = 0;
    double cpuSeconds = 0;  // user + system of every process the command started
};

double childCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    auto s = [](const timeval& t) { return t.tv_sec + 1e-6 * t.tv_usec; };
    return s(u.ru_utime) + s(u.ru_stime);
}

Timing runTimed(const std::string& command) {
    const double cpu0 = childCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    const int status = std::system((command + " >/dev/null 2>&1").c_str());
    Timing t;
    t.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t.cpuSeconds = childCpuSeconds() - cpu0;
    if (status != 0)
        throw std::runtime_error("failed (" + std::to_string(status) + "): " + command);
    return t;
}

void requireSameFolder(const fs::path& expected, const fs::path& actual, std::size_t points) {
    const auto a = pipelens::test::snapshotFolder(expected);
    const auto b = pipelens::test::snapshotFolder(actual);
    if (a.size() != points + 4) {
        throw std::runtime_error(expected.string() + " holds " + std::to_string(a.size()) +
                                 " files, not the " + std::to_string(points + 4) + " of a sweep");
    }
    if (a != b) throw std::runtime_error(actual.string() + " differs from " + expected.string());
}

json moderateSweep() {
    json values = json::array();
    for (int s = 2; s <= 17; ++s) values.push_back(s);
    return {{"name", "bench-moderate"},
            {"seeds", 2},
            {"experiment", json::parse(R"({"name": "bench-moderate", "backend": "cpu", "stages": 4,
                "batch_size": 10, "data": {"kind": "random", "rows": 1000, "dim": 64, "seed": 3},
                "budget": {"epochs": 6},
                "methods": [{"method": "pd", "step_size": {"grid": [-6, -2]}},
                            {"method": "rpd", "step_size": 0.05, "delta": 6},
                            {"method": "localsgd", "step_size": 0.05, "local_steps": 2}]})")},
            {"axis", {{"name", "stages"}, {"values", values}}}};
}

json tinySweep() {
    json values = json::array();
    for (int i = 1; i <= 120; ++i) values.push_back(1e-4 * i);
    return {{"name", "bench-tiny"},
            {"experiment", json::parse(R"({"name": "bench-tiny", "backend": "cpu", "stages": 2,
                "batch_size": 5, "data": {"kind": "random", "rows": 20, "dim": 4, "seed": 1},
                "budget": {"epochs": 1}, "methods": [{"method": "sgd", "step_size": 0.01}]})")},
            {"axis", {{"name", "step_size"}, {"values", values}}}};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    for (std::string t; std::getline(s, t, ',');) out.push_back(t);
    return out;
}

struct Row {
    std::string sweep, mode;
    std::size_t points = 0;
    double wall = 0, cpu = 0, wallOne = 0, cpuOne = 0;  // medians; "One": the first point alone
};

json firstPointOnly(json sweep) {
    sweep["axis"]["values"] = json::array({sweep["axis"]["values"][0]});
    return sweep;
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 3;
    std::vector<int> ranks{1, 2, 4};
    std::vector<std::string> only{"moderate", "tiny"};
    fs::path work = fs::temp_directory_path() / "pipelens-bench-mpi";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--reps")
            reps = std::max(1, std::stoi(v));
        else if (k == "--ranks") {
            ranks.clear();
            for (const auto& r : split(v)) ranks.push_back(std::stoi(r));
        } else if (k == "--only")
            only = split(v);
        else if (k == "--keep")
            work = v;
        else {
            std::cerr << "unknown option " << k << "\n";
            return 1;
        }
    }
    const std::string cli = PIPELENS_CLI_PATH;
    const std::string mpirun = std::string(PIPELENS_MPIEXEC) + " --allow-run-as-root";
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    auto mpiPrefix = [&](int p) {
        return mpirun + (static_cast<unsigned>(p) > cores ? " --oversubscribe" : "") + " -np " +
               std::to_string(p) + " ";
    };
    fs::remove_all(work);
    fs::create_directories(work);
    std::vector<Row> rows;
    for (const std::string& name : only) {
        const json sweep = name == "tiny" ? tinySweep() : moderateSweep();
        const std::size_t points = sweep["axis"]["values"].size();
        const fs::path file = work / (name + "-sweep.json");
        const fs::path fileOne = work / (name + "-one-sweep.json");
        std::ofstream(file) << sweep.dump(2);
        std::ofstream(fileOne) << firstPointOnly(sweep).dump(2);
        struct Mode {
            std::string label;
            std::string command;  // without the sweep file
        };
        std::vector<Mode> modes{{"threaded, 1 thread", cli + " sweep --threads 1 "},
                                {"threaded, " + std::to_string(cores) + " threads",
                                 cli + " sweep --threads " + std::to_string(cores) + " "}};
        for (int p : ranks) {
            modes.push_back({"mpirun -np " + std::to_string(p), mpiPrefix(p) + cli + " sweep "});
        }
        const fs::path reference = work / (name + "-reference");
        for (std::size_t m = 0; m < modes.size(); ++m) {
            std::vector<double> wall, cpu, wallOne, cpuOne;
            for (int r = 0; r < reps; ++r) {
                const fs::path one = work / (name + "-one-" + std::to_string(m));
                const Timing t1 =
                    runTimed(modes[m].command + fileOne.string() + " --out " + one.string());
                requireSameFolder(one, one, 1);  // a complete one-point folder
                fs::remove_all(one);
                wallOne.push_back(t1.wallSeconds);
                cpuOne.push_back(t1.cpuSeconds);
                const fs::path out =
                    work / (name + "-" + std::to_string(m) + "-" + std::to_string(r));
                const Timing t =
                    runTimed(modes[m].command + file.string() + " --out " + out.string());
                if (m == 0 && r == 0) {
                    fs::rename(out, reference);
                } else {
                    requireSameFolder(reference, out, points);
                    fs::remove_all(out);
                }
                wall.push_back(t.wallSeconds);
                cpu.push_back(t.cpuSeconds);
            }
            rows.push_back({name, modes[m].label, points, median(wall), median(cpu),
                            median(wallOne), median(cpuOne)});
            std::cerr << name << " / " << modes[m].label << ": " << median(wall) << " s\n";
        }
    }
    std::printf("%-9s %-20s %6s %8s %8s %10s %8s %8s %11s %11s\n", "sweep", "mode", "points",
                "wall s", "cpu s", "points/s", "1-pt wall", "1-pt cpu", "ms/pt wall", "ms/pt cpu");
    for (const Row& r : rows) {
        const double n = static_cast<double>(r.points - 1);
        std::printf("%-9s %-20s %6zu %8.2f %8.2f %10.2f %8.2f %8.2f %11.2f %11.2f\n",
                    r.sweep.c_str(), r.mode.c_str(), r.points, r.wall, r.cpu, r.points / r.wall,
                    r.wallOne, r.cpuOne, 1000.0 * (r.wall - r.wallOne) / n,
                    1000.0 * (r.cpu - r.cpuOne) / n);
    }
    std::printf(
        "medians of %d runs; cpu: user + system of every process; 1-pt: the sweep of its "
        "first point alone; ms/pt: (sweep - 1-pt) / (points - 1); every MPI folder "
        "equals the threaded one byte for byte\n",
        reps);
    fs::remove_all(work);
    return 0;
}

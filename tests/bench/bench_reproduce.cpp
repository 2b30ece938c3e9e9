// Time of `pipelens-cli reproduce all`, the full protocol (one seed) and `--quick`, run as the
// real command in a child process: wall time and the child's CPU time (user + system). Each run
// must finish (exit 0) and its summaries must hold the findings the docs report (the notebook
// protocol: E3's four printed values and E4's at S = 2, 8, 32 in both modes, E2's printed RPD
// values in full), so a fast run that did less work fails. Targets: full under 10 minutes, quick
// under 2 minutes (2-core machine).
//
// Usage: bench_reproduce [--only full|quick] [--keep DIR]
//   prints one row per mode: wall, CPU, the per-experiment seconds from DIR/summary.json and
//   whether the findings held; exits 1 if a run failed or a finding did not hold.
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Measured = pipelens::bench::ChildRun;

Measured runCommand(const std::vector<std::string>& args) {
    return pipelens::bench::runChild(args, false);
}

json readJson(const fs::path& path) {
    std::ifstream in(path);
    if (!in) return json();
    return json::parse(in, nullptr, false);
}

// The findings docs/reproduction.md reports, read from the summaries; each failure is named.
std::vector<std::string> missingFindings(const fs::path& out, bool full) {
    std::vector<std::string> missing;
    auto need = [&](bool ok, const char* what) {
        if (!ok) missing.emplace_back(what);
    };
    const json e1 = readJson(out / "E1" / "summary.json");
    need(e1.value("max_equals_floor_formula", false), "E1 max = S^2 - S/2");
    const json e2 = readJson(out / "E2" / "summary.json");
    auto gap2 = [&](std::size_t i) { return e2.at("methods").at(i).at("final_gap").get<double>(); };
    need(e2.contains("methods") && gap2(1) < gap2(3) && gap2(2) < gap2(3) && gap2(3) < gap2(4) &&
             gap2(4) < gap2(5),
         "E2 stable rule: delta = 8, 30 < 60 < 180 < 420");
    if (full) {
        // The notebook's printed best-final values of RPD at delta = 8 ... 420 (SPEC 7.1).
        const double printed[] = {1.199891e-11, 2.478714e-11, 7.466453e-08, 2.526915e-03,
                                  1.354332e-01};
        bool same = e2.contains("methods");
        for (std::size_t i = 0; same && i < 5; ++i) {
            const double v = e2["methods"].at(i + 1).at("best_final").at("final_gap").get<double>();
            same = std::abs(v / printed[i] - 1) < 5e-7;
        }
        need(same, "E2 RPD best-final = the notebook's printed values");
    }
    const json e3 = readJson(out / "E3" / "summary.json");
    const double notebook3[] = {2.731247, 19.51762, 22.50372, 268.6527};
    bool near = e3.contains("quadratic");
    for (std::size_t i = 0; near && i < 4; ++i) {
        const double r =
            e3["quadratic"]["methods"].at(i).at("final_gap").get<double>() / notebook3[i];
        near = std::abs(r - 1) < 5e-7;
    }
    need(near, "E3 quadratic = the notebook's printed values");
    need(e3.contains("logistic") &&
             e3["logistic"]["methods"].at(1).at("final_gap").get<double>() <
                 e3["logistic"]["methods"].at(0).at("final_gap").get<double>(),
         "E3 logistic: LocalSGD below PD");
    const json e4 = readJson(out / "E4" / "summary.json");
    // The notebook's printed final f (PD, RPD, LocalSGD) at the S both modes run, and its winner
    // (SPEC 7.1's E4 driver); the full mode runs S = 2 ... 128, --quick S = 2, 8, 32.
    const std::map<int, std::array<double, 3>> printed4{
        {2, {1.078025e-02, 1.515086e-02, 1.312029e-02}},
        {8, {1.312390e-02, 7.977902e-03, 5.784089e-03}},
        {32, {1.609685e-02, 1.178882e-02, 1.552319e-03}}};
    bool same4 = e4.contains("per_stage");
    int seen = 0;
    for (const json& row : e4.value("per_stage", json::array())) {
        const auto at = printed4.find(static_cast<int>(row.at("stages").get<double>()));
        if (at == printed4.end()) continue;
        ++seen;
        for (std::size_t k = 0; k < 3; ++k) {
            const double v = row.at("methods").at(k).at("final_objective").at("mean").get<double>();
            same4 = same4 && std::abs(v / at->second[k] - 1) < 5e-7;
        }
        same4 = same4 && row.at("winner") == (at->first == 2 ? "pd" : "localsgd");
    }
    need(same4 && seen == 3, "E4 = the notebook's printed values and winners at S = 2, 8, 32");
    return missing;
}

}  // namespace

int main(int argc, char** argv) {
    std::string only;
    fs::path keep;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--only" && i + 1 < argc) {
            only = argv[++i];
        } else if (a == "--keep" && i + 1 < argc) {
            keep = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bench_reproduce [--only full|quick] [--keep DIR]\n");
            return 2;
        }
    }
    const fs::path base =
        keep.empty() ? fs::temp_directory_path() / ("bench_reproduce_" + std::to_string(getpid()))
                     : keep;
    fs::create_directories(base);
    bool ok = true;
    std::printf(
        "| mode | wall | CPU | E1 / E2 / E3 / E4 wall (s) | findings | target "
        "|\n|---|---|---|---|---|---|\n");
    for (const std::string mode : {"quick", "full"}) {
        if (!only.empty() && only != mode) continue;
        const fs::path out = base / mode;
        std::vector<std::string> args{PIPELENS_CLI_PATH, "reproduce",  "all",
                                      "--out",           out.string(), "--quiet"};
        if (mode == "quick") args.push_back("--quick");
        const Measured m = runCommand(args);
        std::string perExperiment;
        for (const json& e : readJson(out / "summary.json").value("experiments", json::array())) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%s%.1f", perExperiment.empty() ? "" : " / ",
                          e.value("wall_seconds", 0.0));
            perExperiment += buf;
        }
        const std::vector<std::string> missing = m.exitCode == 0
                                                     ? missingFindings(out, mode == "full")
                                                     : std::vector<std::string>{"the run failed"};
        std::string findings = missing.empty() ? "all hold" : "MISSING:";
        for (const std::string& s : missing) findings += " [" + s + "]";
        const double target = mode == "full" ? 600.0 : 120.0;
        std::printf("| %s | %.1f s | %.1f s | %s | %s | < %.0f s: %s |\n", mode.c_str(), m.wall,
                    m.cpu, perExperiment.c_str(), findings.c_str(), target,
                    m.wall < target ? "met" : "not met");
        ok = ok && missing.empty();
    }
    if (keep.empty()) fs::remove_all(base);
    return ok ? 0 : 1;
}

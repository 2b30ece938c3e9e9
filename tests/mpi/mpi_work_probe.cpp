// A stand-in for real work, for tst_mpi_distributor: run under mpirun, it hands items of chosen
// durations out with distributeWork and rank 0 prints, as JSON, who computed which item, what
// came back and in which order results were passed on.
//   mpi_work_probe --durations-ms 800,20,20 [--fail ITEM] [--payload-bytes N]
//                  [--coordinator-only] [--status-dir DIR]
// Each rank writes its exit code to DIR/rank-R (so a test sees that every rank failed).
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mpi_world.hpp"
#include "work_distributor.hpp"

namespace {

struct ProbeArgs {
    std::vector<int> durationsMs;
    long long failItem = -1;
    std::size_t payloadBytes = 0;
    bool coordinatorOnly = false;
    std::string statusDir;
};

ProbeArgs parse(int argc, char** argv) {
    ProbeArgs a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        const std::string v = i + 1 < argc ? argv[i + 1] : "";
        if (k == "--durations-ms") {
            std::stringstream s(v);
            for (std::string t; std::getline(s, t, ',');) a.durationsMs.push_back(std::stoi(t));
            ++i;
        } else if (k == "--fail") {
            a.failItem = std::stoll(v), ++i;
        } else if (k == "--payload-bytes") {
            a.payloadBytes = std::stoull(v), ++i;
        } else if (k == "--coordinator-only") {
            a.coordinatorOnly = true;
        } else if (k == "--status-dir") {
            a.statusDir = v, ++i;
        } else {
            throw std::invalid_argument("unknown argument " + k);
        }
    }
    return a;
}

// What an item's work yields: `bytes` characters that depend on the item.
std::string payloadOf(std::size_t item, std::size_t bytes) {
    std::string p(bytes, ' ');
    for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<char>('a' + (item + i) % 26);
    return p;
}

// The result sent back: "item I rank R|" and the payload.
std::string headOf(std::size_t item, int rank) {
    return "item " + std::to_string(item) + " rank " + std::to_string(rank) + "|";
}

int probe(const ProbeArgs& a, const pipelens::MpiWorld& world) {
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < a.durationsMs.size(); ++i) todo.push_back(i);
    auto compute = [&](std::size_t item) {
        std::this_thread::sleep_for(std::chrono::milliseconds(a.durationsMs.at(item)));
        if (static_cast<long long>(item) == a.failItem) {
            throw std::runtime_error("probe item " + std::to_string(item) + " throws");
        }
        return headOf(item, world.rank()) + payloadOf(item, a.payloadBytes);
    };
    nlohmann::json finished = nlohmann::json::array();
    auto onFinish = [&](std::size_t item, const std::string& result) {
        // The payload is checked here, so the JSON stays small.
        const std::size_t bar = result.find('|');
        const std::string head = result.substr(0, bar + 1);
        const bool intact =
            bar != std::string::npos && result.substr(bar + 1) == payloadOf(item, a.payloadBytes);
        finished.push_back({{"item", item}, {"head", head}, {"payload_intact", intact}});
    };
    pipelens::DistributorOptions options;
    options.coordinatorComputes = !a.coordinatorOnly;
    try {
        const auto report = pipelens::distributeWork(world, todo, compute, onFinish, options);
        if (world.isCoordinator()) {
            nlohmann::json out;
            out["size"] = world.size();
            out["finished"] = finished;
            out["rank_of_item"] = report.rankOfItem;
            out["computed_on_rank0"] = report.computedHere;
            std::cout << out.dump() << std::endl;
        }
        return 0;
    } catch (const pipelens::WorkItemFailed& e) {
        if (world.isCoordinator()) {
            std::cerr << "probe: " << e.what() << " (finished " << finished.size() << ")\n";
        }
        return 3;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const ProbeArgs args = parse(argc, argv);
    pipelens::MpiWorld world;
    const int code = probe(args, world);
    if (!args.statusDir.empty()) {
        std::ofstream(args.statusDir + "/rank-" + std::to_string(world.rank())) << code << '\n';
    }
    world.waitForAll();  // mpirun ends every process once one exits non-zero
    return code;
}

// How long `reproduce E5` takes at full size (S = 16, C = 256, T = 32, b = 16, float, 2080 slots),
// estimated without running it for an hour: PipeDream at the paper's step 0.125 runs two short
// budgets (default 40 and 80 slots, past the pipeline's fill) on one thread; the difference gives
// the CPU seconds per block update in steady state, which times the block updates every E5 method
// makes in 2080 slots (from the plan, nothing run) gives the protocol's CPU time. It proves the
// work: both runs must finish, their loss must fall, and the second must do more updates.
//   cmake --build build -j2 --target bench_e5_estimate
//   build/tests/bench/bench_e5_estimate [--short 40] [--long 80] [--corpus FILE]
// (default corpus: ../shared/corpora/tinyshakespeare.txt, else the built-in text)
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "experiment/config/config.hpp"
#include "experiment/run/budget.hpp"
#include "experiment/run/lm_experiment.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

json e5(int slots, const std::string& corpus, bool onlyPd) {
    json objective = {{"kind", "char_transformer"},
                      {"width", 256},
                      {"heads", 4},
                      {"context", 32},
                      {"init_seed", 1},
                      {"sample_lines", 0}};
    if (corpus.empty()) {
        objective["corpus_characters"] = 1'000'000;
    } else {
        objective["corpus"] = corpus;
    }
    json methods = json::array({{{"method", "pd"}, {"step_size", 0.125}}});
    if (!onlyPd) {
        for (int h : {1, 4, 8}) {
            methods.push_back({{"method", "localsgd"},
                               {"replicas", 16},
                               {"local_steps", h},
                               {"step_size", 0.125}});
        }
    }
    return {{"name", "E5-estimate"},
            {"stages", 16},
            {"batch_size", 16},
            {"backend", "cpu"},
            {"precision", "float"},
            {"objective", objective},
            {"budget", {{"slots", slots}, {"compare", "time"}, {"rule", "truncate"}}},
            {"methods", methods}};
}

struct Timed {
    long long updates = 0;
    double cpuSeconds = 0.0;
};

Timed runPd(int slots, const std::string& corpus) {
    RunOptions options;
    options.threads = 1;
    const std::clock_t c0 = std::clock();
    const ExperimentResult r =
        runExperiment(ExperimentConfig::fromJson(e5(slots, corpus, true)), options);
    Timed t{r.methods[0].result.updates, static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC};
    const MethodRun& m = r.methods[0];
    if (!m.result.finished || lmOf(m).log.forwardLosses.empty() ||
        !(lmOf(m).finalLoss < lmOf(m).log.forwardLosses.front().loss)) {
        std::fprintf(stderr, "FAIL: PD over %d slots did not finish with a falling loss\n", slots);
        std::exit(1);
    }
    std::printf(
        "PD, %d slots: %lld block updates, loss %.3f -> %.3f, %.1f CPU s (set-up included)\n",
        slots, t.updates, lmOf(m).log.forwardLosses.front().loss, lmOf(m).finalLoss, t.cpuSeconds);
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    int shortSlots = 40;
    int longSlots = 80;
    std::string corpus =
        std::string(PIPELENS_SOURCE_DIR) + "/../shared/corpora/tinyshakespeare.txt";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--short")
            shortSlots = std::atoi(argv[i + 1]);
        else if (a == "--long")
            longSlots = std::atoi(argv[i + 1]);
        else if (a == "--corpus")
            corpus = argv[i + 1];
    }
    if (!std::filesystem::exists(corpus)) corpus.clear();
    std::printf("corpus: %s\n", corpus.empty() ? "built-in (10^6 characters)" : corpus.c_str());
    const Timed a = runPd(shortSlots, corpus);
    const Timed b = runPd(longSlots, corpus);
    if (b.updates <= a.updates) {
        std::fprintf(stderr, "FAIL: the longer run did no more updates\n");
        return 1;
    }
    const double perUpdate =
        (b.cpuSeconds - a.cpuSeconds) / static_cast<double>(b.updates - a.updates);
    std::printf("steady state: %.4f CPU s per block update (forward share included)\n", perUpdate);
    // The plan of the whole protocol: how many block updates each method makes in 2080 slots.
    const ExperimentConfig full = ExperimentConfig::fromJson(e5(2080, corpus, false));
    const ExperimentPlan plan = planExperiment(full, PlanSizes{1000, 0, 0});
    double total = 0.0;
    for (const MethodRun& run : plan.runs) {
        const Timeline tl = plannedTimeline(run);
        const long long updates = updatesWithin(tl, 2080);
        std::printf("  %-24s %6lld block updates -> %7.0f CPU s\n", run.label.c_str(), updates,
                    updates * perUpdate);
        total += static_cast<double>(updates) * perUpdate;
    }
    std::printf(
        "E5 --paper-step: %.0f CPU s = %.1f min; on 2 free cores (methods in parallel) about "
        "%.1f min wall\n",
        total, total / 60, total / 120);
    std::printf("E5 tuned (5 step sizes): %.1f CPU hours, about %.1f h wall on 2 cores\n",
                5 * total / 3600, 5 * total / 7200);
    return 0;
}

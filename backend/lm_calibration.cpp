#include "lm_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cmdline/environment.hpp"
#include "experiment/config/lm_config.hpp"
#include "experiment/output/results.hpp"
#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_threads.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {
namespace {

// Pipeline microbatches of one method run: the budget's, or one per two slots.
double pipelineMicrobatches(const ExperimentConfig& c, long long trainBatches) {
    const BudgetSpec& b = c.budget;
    if (b.totalSlots > 0) return b.totalSlots / 2.0;
    if (b.microbatches > 0) return b.microbatches;
    return std::max(1.0, b.epochs * static_cast<double>(trainBatches));
}

double gridPoints(const StepSpec& s) {
    return s.grid ? static_cast<double>(s.gridMax - s.gridMin + 1) : 1.0;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Seconds per microbatch of a PipeDream run of `stages` stages on the config's model shape, on
// `factory`'s executor (empty: the CPU engine) with `threads` threads for the CPU engine's ops:
// a real pipeline, so an engine that overlaps the stages' work (the OpenCL executor's queue per
// stage) is timed doing so. One short run first (kernels built, buffers allocated, a first
// estimate), then one long enough to fill `seconds`.
double timeCycles(const ExperimentConfig& config, int stages, const LmExecutorFactory& factory,
                  double seconds, int threads) {
    CharTransformerParams p = charTransformerParams(config);
    p.stages = stages;
    p.heldOutFraction = 0.0;
    p.w0Path.clear();  // the shape is what counts, not the weights
    if (p.corpusPath.empty()) {
        p.builtInCharacters =
            std::min<long long>(p.builtInCharacters, 4LL * p.batch * p.context + 1);
    }
    auto problem = std::make_shared<const CharTransformerProblem>(makeCharTransformerProblem(p));
    const lmk::ScopedThreads team(threads);
    const auto timed = [&](int microbatches) {
        LmPipelineConfig cfg;
        cfg.timeline = buildTimeline(ScheduleParams{
            ScheduleKind::PipeDream, stages, microbatches, 0, 0, 1, 0, {}, nullptr, false});
        cfg.stepSize = 1e-3;
        auto run = makeLmPipelineReplay(problem, cfg, factory);
        const auto t0 = std::chrono::steady_clock::now();
        run->runToEnd();
        (void)run->weights();  // reads back: the device has finished
        return secondsSince(t0) / microbatches;
    };
    const int first = 2 * stages;
    const double estimate = timed(first);
    const double wanted = std::ceil(seconds / std::max(estimate, 1e-9));
    return timed(static_cast<int>(std::clamp(wanted, static_cast<double>(first), 4096.0)));
}

std::string cacheDir() {
    if (const auto d = checkedEnvironment("PIPELENS_CACHE_DIR")) return *d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/pipelens";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/pipelens";
    return ".pipelens-cache";
}

nlohmann::json readCache() {
    std::ifstream in(lmCalibrationCachePath());
    if (!in) return nlohmann::json::object();
    try {
        nlohmann::json j = nlohmann::json::parse(in);
        if (j.is_object()) return j;
    } catch (const nlohmann::json::exception&) {
        // A damaged cache is measured anew and rewritten.
    }
    return nlohmann::json::object();
}

}  // namespace

double lmRunCycles(const ExperimentConfig& c, long long trainBatches) {
    const double mb = pipelineMicrobatches(c, trainBatches);
    double cycles = 0.0;
    for (const MethodSpec& m : c.methods) {
        const double perRun = m.method == Method::RandomizedPipeDream ? 0.75 * c.stages * mb : mb;
        cycles += perRun * gridPoints(m.step);
    }
    return cycles * std::max(1, c.seeds);
}

double lmRunFlops(const ExperimentConfig& c, long long trainBatches, long long parameters) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    const double tokens = static_cast<double>(c.batchSize) * m.context;
    return lmRunCycles(c, trainBatches) * 6.0 * static_cast<double>(parameters) * tokens;
}

LmCycleCost measureLmCycles(const ExperimentConfig& config, const LmExecutorFactory& executor,
                            double seconds, int threads) {
    const double three = timeCycles(config, 3, executor, seconds, threads);
    const double four = timeCycles(config, 4, executor, seconds, threads);
    LmCycleCost cost;
    // Timing noise can make the block look free or the base negative: keep both positive.
    cost.block = std::max(four - three, 0.05 * three);
    cost.base = std::max(three - cost.block, 0.05 * three);
    return cost;
}

std::string lmCalibrationCachePath() {
    return cacheDir() + "/lm-calibration.json";
}

std::string lmCalibrationKey(const ExperimentConfig& c, const std::string& backend) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    std::ostringstream k;
    // The corpus decides the vocabulary, so the head's size.
    k << "engines r" << kLmEngineRevision << " | " << backend << " | "
      << enumName(kPrecisions, c.precision) << " C=" << m.width << " heads=" << m.heads
      << " T=" << m.context << " b=" << c.batchSize
      << " corpus=" << (m.corpus.empty() ? "built-in" : m.corpus);
    return k.str();
}

std::optional<LmCycleCost> cachedLmCycles(const std::string& key) {
    const nlohmann::json j = readCache();
    const auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return std::nullopt;
    try {
        LmCycleCost c{it->at("base").get<double>(), it->at("block").get<double>()};
        if (c.base > 0.0 && c.block > 0.0 && std::isfinite(c.base) && std::isfinite(c.block)) {
            return c;
        }
    } catch (const nlohmann::json::exception&) {
    }
    return std::nullopt;
}

bool storeLmCycles(const std::string& key, const LmCycleCost& cost, std::string* error) {
    try {
        nlohmann::json j = readCache();
        j[key] = {{"base", cost.base}, {"block", cost.block}};
        std::filesystem::create_directories(cacheDir());
        writeFileAtomically(lmCalibrationCachePath(), j.dump(2) + "\n");
        return true;
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        return false;
    }
}

}  // namespace pipelens

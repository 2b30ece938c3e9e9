// Training throughput of the character transformer on the CPU engine, in tokens per second, for
// the small preset (S = 4, C = 64) and the paper's configuration (S = 16, C = 256), T = 32,
// b = 16, 4 heads, in float and double. The loops: plain sequential SGD (forward through every
// stage, backward, update: what PyTorch's loop does) on one thread and with each op's products,
// attention heads and rows split over --threads threads (lm_threads.hpp), and the PipeDream
// replay (weight stashing and activation recomputation, so about 4/3 of the work per token) on
// one thread, with the stages of each slot run side by side ("slot thr"), and with each op split
// ("op thr"). It proves the work was done: every run must finish, its training loss must fall,
// every threaded loop must end on the same weights and losses bit for bit as its one-thread
// loop, and every stage's weight stash must peak at the depth SPEC section 3 predicts (printed
// with the bytes it takes).
//   cmake --build build -j2 --target bench_lm_cpu
//   build/tests/bench/bench_lm_cpu [--steps-small 60] [--steps-paper 6] [--threads 2]
//       [--corpus FILE] [--precision float|double|both] [--write-w0 DIR] [--torch DIR]
//       [--json FILE] [--optimizer sgd|momentum|nesterov|adam|adamw]
//       [--corrector KIND[,KIND...]] [--repeat N]
// (default corpus: ../shared/corpora/tinyshakespeare.txt, else the built-in text)
// --optimizer KIND (not sgd) adds the PipeDream loops with that optimizer (defaults of
// docs/config.md; step 0.003 for adam/adamw, 0.125 (1 - beta) for momentum/nesterov, as plain
// SGD's 0.125 would blow them up) and prints their tokens/s over plain SGD's (issue #33: Adam
// within 1.2x SGD's tokens/s). Threaded runs with the optimizer must be bit-identical too.
// --corrector KINDS (delay_adaptive, prediction, dc, lookahead, accumulate; comma-separated) adds
// the PipeDream loop with each corrector alone (delay_adaptive tau_ref = S, prediction exact s,
// dc lambda = 0.5, lookahead beta = 0.9 with step 0.125 (1 - beta), accumulate k = 2) and prints
// the time per token (so per block update) of PD + KIND over plain PD's, each the best of
// --repeat N runs (default 3), alternating (issue #33: within 1.3x). Threaded runs with the
// corrector must be bit-identical too.
// --write-w0 DIR writes DIR/small_w0.npy and DIR/paper_w0.npy (float64, layout order) and stops;
// --torch DIR reads DIR/{small,paper}_torch.csv (step,loss: PyTorch float32 sequential SGD from
// that w0 on the same batches, scripts/compare_torch_lm.py) and fails unless the first steps'
// losses agree with the float sequential loop's to a float tolerance.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "compute/corrector.hpp"
#include "compute/optimizer.hpp"
#include "data/loaders.hpp"
#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_kernels.hpp"
#include "objective/lm/lm_model.hpp"
#include "objective/lm/lm_threads.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using Clock = std::chrono::steady_clock;

namespace {

struct Measured {
    double wallSeconds = 0.0;
    double cpuSeconds = 0.0;  // the process's CPU time: every thread of the run
    double tokens = 0.0;
    double firstLoss = 0.0;
    double lastLoss = 0.0;
    std::vector<double> losses;
    std::vector<double> weights;  // at the end of the run
};

double seconds(Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
}

double processCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double meanOf(const std::vector<double>& v, std::size_t from, std::size_t to) {
    double s = 0.0;
    for (std::size_t i = from; i < to; ++i) s += v[i];
    return s / static_cast<double>(to - from);
}

void summarise(Measured& m) {
    const std::size_t q = std::max<std::size_t>(1, m.losses.size() / 4);
    m.firstLoss = meanOf(m.losses, 0, q);
    m.lastLoss = meanOf(m.losses, m.losses.size() - q, m.losses.size());
}

template <typename Real>
Measured sequential(const CharTransformerProblem& p, int steps, double step, int threads) {
    lmk::ScopedThreads team(threads);  // the stages' products, heads and rows split over threads
    CharTransformer<Real> model(p.layout);
    std::vector<Real> w(static_cast<std::size_t>(p.w0.size()));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<Real>(p.w0[static_cast<Eigen::Index>(i)]);
    std::vector<Real> g(w.size());
    Measured m;
    m.losses.reserve(static_cast<std::size_t>(steps));
    const auto start = Clock::now();
    const double cpu0 = processCpuSeconds();
    for (int k = 0; k < steps; ++k) {
        const int b = k % p.train.batches();
        m.losses.push_back(
            model.lossAndGradient(w.data(), p.train.tokens(b), p.train.targets(b), g.data()));
        const auto s = static_cast<Real>(step);
        for (std::size_t i = 0; i < w.size(); ++i) w[i] -= s * g[i];
    }
    m.wallSeconds = seconds(start);
    m.cpuSeconds = processCpuSeconds() - cpu0;
    m.tokens = static_cast<double>(steps) * p.train.tokensPerBatch();
    m.weights.assign(w.begin(), w.end());
    summarise(m);
    return m;
}

struct PdRun {
    Measured measured;
    Eigen::VectorXd weights;
    std::vector<int> peakStash, predictedStash, keptInputs;
};

// slotThreads: the stages of a slot side by side; opThreads: each op's products, heads and rows
// split (lm_threads.hpp). One of the two is 1.
PdRun pipeDream(const std::shared_ptr<const CharTransformerProblem>& p, int microbatches,
                double step, int slotThreads, int opThreads, const OptimizerSpec& optimizer = {},
                const CorrectorSpec& correctors = {}) {
    lmk::ScopedThreads team(opThreads);
    LmPipelineConfig cfg;
    cfg.timeline = buildTimeline(ScheduleParams{
        ScheduleKind::PipeDream, p->params.stages, microbatches, 0, 0, 1, 0, {}, nullptr, false});
    cfg.stepSize = step;
    cfg.slotThreads = slotThreads;
    cfg.optimizer = optimizer;
    cfg.correctors = correctors;
    auto run = makeLmPipelineReplay(p, cfg);
    const auto start = Clock::now();
    const double cpu0 = processCpuSeconds();
    run->runToEnd();
    PdRun out;
    Measured& m = out.measured;
    m.wallSeconds = seconds(start);
    m.cpuSeconds = processCpuSeconds() - cpu0;
    if (!run->result().finished) {
        std::fprintf(stderr, "PD run did not finish: %s\n",
                     run->result().divergence.reason.c_str());
        std::exit(1);
    }
    for (const auto& f : run->log().forwardLosses) m.losses.push_back(f.loss);
    m.tokens = static_cast<double>(microbatches) * p->train.tokensPerBatch();
    summarise(m);
    out.weights = run->weights();
    out.peakStash = run->log().peakStashedWeights;
    out.keptInputs = run->log().peakKeptInputs;
    out.predictedStash = cfg.timeline.peakStash;
    return out;
}

bool report(const std::string& config, const char* precision, const std::string& how,
            const Measured& m, nlohmann::json& rows) {
    const bool fell = m.lastLoss < m.firstLoss;
    std::printf("| %-28s | %-6s | %-22s | %10.0f | %10.0f | %8.2f | %8.2f | %.3f -> %.3f %s |\n",
                config.c_str(), precision, how.c_str(), m.tokens / m.wallSeconds,
                m.tokens / m.cpuSeconds, m.wallSeconds, m.cpuSeconds, m.firstLoss, m.lastLoss,
                fell ? "" : "(DID NOT FALL)");
    std::fflush(stdout);
    rows.push_back({{"config", config},
                    {"real", precision},
                    {"loop", how},
                    {"tokens", m.tokens},
                    {"wall_s", m.wallSeconds},
                    {"cpu_s", m.cpuSeconds},
                    {"tokens_per_s", m.tokens / m.wallSeconds},
                    {"tokens_per_cpu_s", m.tokens / m.cpuSeconds},
                    {"loss_first_quarter", m.firstLoss},
                    {"loss_last_quarter", m.lastLoss},
                    {"losses", m.losses}});
    return fell;
}

// The stash and kept activations per stage against SPEC section 3's prediction (the timeline's
// stash depth); false if any stage's stash differs from it.
bool reportMemory(const std::string& name, const CharTransformerProblem& p, const PdRun& r,
                  int realBytes, nlohmann::json& out) {
    const LmDims& d = p.layout.dims();
    std::printf(
        "\nPD stashes, %s (%s), per stage: weight copies held at once (SPEC 3 predicts the "
        "timeline's stash depth) and kept input activations\n",
        name.c_str(), realBytes == 4 ? "float" : "double");
    std::printf(
        "| stage | stash peak | predicted | weight stash MiB | kept inputs | activations MiB |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|\n");
    bool ok = r.peakStash.size() == static_cast<std::size_t>(p.layout.stages());
    double totalW = 0.0;
    double totalA = 0.0;
    for (int s = 0; ok && s < p.layout.stages(); ++s) {
        const auto i = static_cast<std::size_t>(s);
        const double wBytes = static_cast<double>(r.peakStash[i]) *
                              static_cast<double>(p.layout.stage(s).size) * realBytes;
        const double aBytes = static_cast<double>(r.keptInputs[i]) * d.tokens() *
                              (s == 0 ? 4.0 : static_cast<double>(d.width) * realBytes);
        totalW += wBytes;
        totalA += aBytes;
        const bool match = i < r.predictedStash.size() && r.peakStash[i] == r.predictedStash[i];
        ok = ok && match;
        std::printf("| %d | %d | %d%s | %.2f | %d | %.2f |\n", s, r.peakStash[i],
                    i < r.predictedStash.size() ? r.predictedStash[i] : -1,
                    match ? "" : " (MISMATCH)", wBytes / 1048576.0, r.keptInputs[i],
                    aBytes / 1048576.0);
        out.push_back({{"config", name},
                       {"real", realBytes == 4 ? "float" : "double"},
                       {"stage", s},
                       {"stash_peak", r.peakStash[i]},
                       {"stash_predicted", i < r.predictedStash.size() ? r.predictedStash[i] : -1},
                       {"weight_stash_bytes", wBytes},
                       {"kept_inputs", r.keptInputs[i]},
                       {"activation_bytes", aBytes}});
    }
    std::printf("| all | | | %.2f | | %.2f |\n\n", totalW / 1048576.0, totalA / 1048576.0);
    return ok;
}

// step,loss rows of the PyTorch run; empty if the file is missing.
std::vector<double> readTorchLosses(const std::string& path) {
    std::vector<double> out;
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        const auto comma = line.find(',');
        if (comma == std::string::npos) continue;
        out.push_back(std::stod(line.substr(comma + 1)));
    }
    return out;
}

// PyTorch and PipeLens in float32 from the same w0 on the same batches: the first steps agree
// to float rounding (it grows slowly along a run, so only the first few are compared).
bool checkTorch(const std::string& name, const std::vector<double>& ours,
                const std::vector<double>& torch, nlohmann::json& out) {
    constexpr std::size_t kSteps = 5;
    constexpr double kRelTol = 1e-4;
    if (torch.size() < kSteps || ours.size() < kSteps) {
        std::printf("%s: no PyTorch losses to compare (need %zu steps)\n", name.c_str(), kSteps);
        return false;
    }
    double worst = 0.0;
    for (std::size_t k = 0; k < kSteps; ++k) {
        worst = std::max(worst, std::abs(ours[k] - torch[k]) / std::abs(torch[k]));
    }
    const bool ok = worst <= kRelTol;
    std::printf(
        "%s: first %zu losses, PipeLens float vs PyTorch float32: largest relative "
        "difference %.2e (tolerance %.0e) %s\n",
        name.c_str(), kSteps, worst, kRelTol, ok ? "ok" : "FAILED");
    out[name] = {{"steps", kSteps}, {"max_rel_diff", worst}, {"tolerance", kRelTol}, {"ok", ok}};
    return ok;
}

// One corrector alone, with the bench's settings (the header comment).
CorrectorSpec benchCorrector(CorrectorKind kind) {
    CorrectorSpec c;
    switchOn(c, kind);
    if (kind == CorrectorKind::Lookahead) c.beta = 0.9;
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    int stepsSmall = 60;
    int stepsPaper = 6;
    int threads = 2;
    std::string precisionArg = "both";
    std::string writeW0;
    std::string torchDir;
    std::string jsonPath;
    OptimizerSpec optimizer;
    std::vector<CorrectorKind> correctorKinds;
    int repeats = 3;
    std::string corpus =
        std::string(PIPELENS_SOURCE_DIR) + "/../shared/corpora/tinyshakespeare.txt";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--steps-small") {
            stepsSmall = std::atoi(v.c_str());
        } else if (a == "--steps-paper") {
            stepsPaper = std::atoi(v.c_str());
        } else if (a == "--threads") {
            threads = std::atoi(v.c_str());
        } else if (a == "--corpus") {
            corpus = v;
        } else if (a == "--precision") {
            precisionArg = v;
        } else if (a == "--write-w0") {
            writeW0 = v;
        } else if (a == "--torch") {
            torchDir = v;
        } else if (a == "--json") {
            jsonPath = v;
        } else if (a == "--optimizer") {
            const auto kind = parseEnum(kOptimizerKinds, v);
            if (!kind) {
                std::fprintf(stderr, "--optimizer %s is not allowed: one of %s\n", v.c_str(),
                             enumNameList(kOptimizerKinds).c_str());
                return 2;
            }
            optimizer.kind = *kind;
        } else if (a == "--corrector") {
            std::stringstream list(v);
            std::string name;
            while (std::getline(list, name, ',')) {
                const auto kind = parseEnum(kCorrectorKinds, name);
                if (!kind) {
                    std::fprintf(stderr, "--corrector %s is not allowed: one or more of %s\n",
                                 name.c_str(), enumNameList(kCorrectorKinds).c_str());
                    return 2;
                }
                correctorKinds.push_back(*kind);
            }
        } else if (a == "--repeat") {
            repeats = std::atoi(v.c_str());
            if (repeats < 1) {
                std::fprintf(stderr, "--repeat %s is not allowed: at least 1\n", v.c_str());
                return 2;
            }
        } else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    const bool haveShakespeare = std::filesystem::exists(corpus);
    std::printf("corpus: %s\n", haveShakespeare ? corpus.c_str() : "built-in text");
    std::printf("kernels: %s; threads for the threaded loops: %d\n",
                lmk::fastKernels() ? "AVX2+FMA (run-time dispatch)" : "portable (Eigen, SSE2)",
                threads);
    struct Config {
        const char* key;
        const char* name;
        int stages, width, steps;
    };
    const std::vector<Config> configs = {
        Config{"small", "small: S=4 C=64 T=32 b=16", 4, 64, stepsSmall},
        Config{"paper", "paper: S=16 C=256 T=32 b=16", 16, 256, stepsPaper}};
    auto paramsFor = [&](const Config& c, LmPrecision precision) {
        CharTransformerParams params;
        params.stages = c.stages;
        params.width = c.width;
        params.heads = 4;
        params.context = 32;
        params.batch = 16;
        if (haveShakespeare) params.corpusPath = corpus;
        params.precision = precision;
        return params;
    };
    if (!writeW0.empty()) {
        std::filesystem::create_directories(writeW0);
        for (const Config& c : configs) {
            const auto p = makeCharTransformerProblem(paramsFor(c, LmPrecision::Float));
            saveNpy(writeW0 + "/" + c.key + "_w0.npy", p.w0);
            std::printf("wrote %s/%s_w0.npy (%lld parameters)\n", writeW0.c_str(), c.key,
                        static_cast<long long>(p.w0.size()));
        }
        return 0;
    }
    std::vector<LmPrecision> precisions;
    if (precisionArg != "double") precisions.push_back(LmPrecision::Float);
    if (precisionArg != "float") precisions.push_back(LmPrecision::Double);

    nlohmann::json json;
    json["kernels"] = lmk::fastKernels() ? "avx2-fma" : "portable";
    json["threads"] = threads;
    json["rows"] = nlohmann::json::array();
    json["memory"] = nlohmann::json::array();
    std::printf("| %-28s | %-6s | %-22s | %10s | %10s | %8s | %8s | %-20s |\n", "configuration",
                "real", "loop", "tokens/s", "tokens/CPU-s", "wall s", "CPU s",
                "loss first -> last quarter");
    std::printf("|---|---|---|---:|---:|---:|---:|---|\n");
    bool ok = true;
    std::vector<std::string> failures;
    for (const Config& c : configs) {
        if (c.steps < 2) continue;  // --steps-... 0 skips a configuration
        for (LmPrecision precision : precisions) {
            auto problem = std::make_shared<const CharTransformerProblem>(
                makeCharTransformerProblem(paramsFor(c, precision)));
            const bool isFloat = precision == LmPrecision::Float;
            const char* pn = isFloat ? "float" : "double";
            const double step = 0.125;
            const Measured seq = isFloat ? sequential<float>(*problem, c.steps, step, 1)
                                         : sequential<double>(*problem, c.steps, step, 1);
            if (!report(c.name, pn, "sequential SGD, 1 thr", seq, json["rows"])) {
                failures.push_back(std::string(c.key) + " " + pn +
                                   " sequential: loss did not fall");
            }
            const std::string tn = std::to_string(threads);
            if (threads > 1) {
                const Measured seqN = isFloat
                                          ? sequential<float>(*problem, c.steps, step, threads)
                                          : sequential<double>(*problem, c.steps, step, threads);
                if (!report(c.name, pn, "sequential SGD, " + tn + " thr", seqN, json["rows"])) {
                    failures.push_back(std::string(c.key) + " " + pn +
                                       " sequential threads: loss did not fall");
                }
                if (seqN.weights != seq.weights || seqN.losses != seq.losses) {
                    failures.push_back(
                        std::string(c.key) + " " + pn +
                        ": threaded sequential SGD is not bit-identical to one thread");
                }
            }
            const PdRun one = pipeDream(problem, c.steps, step, 1, 1);
            if (!report(c.name, pn, "PipeDream, 1 thread", one.measured, json["rows"])) {
                failures.push_back(std::string(c.key) + " " + pn + " PD: loss did not fall");
            }
            if (!optimizer.plain()) {
                const bool adam =
                    optimizer.kind == OptimizerKind::Adam || optimizer.kind == OptimizerKind::AdamW;
                const double optStep = adam ? 0.003 : step * (1.0 - optimizer.beta);
                const std::string on = std::string(enumName(kOptimizerKinds, optimizer.kind));
                const PdRun opt = pipeDream(problem, c.steps, optStep, 1, 1, optimizer);
                if (!report(c.name, pn, "PD + " + on + ", 1 thr", opt.measured, json["rows"])) {
                    failures.push_back(std::string(c.key) + " " + pn + " PD + " + on +
                                       ": loss did not fall");
                }
                const double ratio = (one.measured.tokens / one.measured.wallSeconds) /
                                     (opt.measured.tokens / opt.measured.wallSeconds);
                std::printf("%s %s: PipeDream 1 thread, tokens/s of sgd / %s = %.3f\n", c.key, pn,
                            on.c_str(), ratio);
                json["optimizer_ratio"].push_back(
                    {{"config", c.key}, {"real", pn}, {"optimizer", on}, {"sgd_over", ratio}});
                if (threads > 1) {
                    const PdRun slots = pipeDream(problem, c.steps, optStep, threads, 1, optimizer);
                    report(c.name, pn, "PD + " + on + ", " + std::to_string(threads) + " slot thr",
                           slots.measured, json["rows"]);
                    if (slots.weights != opt.weights) {
                        failures.push_back(std::string(c.key) + " " + pn + " PD + " + on +
                                           ": slot threads not bit-identical to one thread");
                    }
                }
            }
            for (const CorrectorKind kind : correctorKinds) {
                const CorrectorSpec spec = benchCorrector(kind);
                const double cStep = spec.lookahead ? step * (1.0 - spec.beta) : step;
                const std::string kn = std::string(enumName(kCorrectorKinds, kind));
                // Alternating, the best of each: the machine's drift hits both alike.
                // Wall and CPU seconds (one thread: the CPU time is the run's own, steadier on
                // a shared machine).
                double plainBest = one.measured.wallSeconds;
                double plainCpu = one.measured.cpuSeconds;
                PdRun corrected = pipeDream(problem, c.steps, cStep, 1, 1, {}, spec);
                double correctedBest = corrected.measured.wallSeconds;
                double correctedCpu = corrected.measured.cpuSeconds;
                for (int r = 1; r < repeats; ++r) {
                    const Measured plain = pipeDream(problem, c.steps, step, 1, 1).measured;
                    plainBest = std::min(plainBest, plain.wallSeconds);
                    plainCpu = std::min(plainCpu, plain.cpuSeconds);
                    const PdRun again = pipeDream(problem, c.steps, cStep, 1, 1, {}, spec);
                    correctedBest = std::min(correctedBest, again.measured.wallSeconds);
                    correctedCpu = std::min(correctedCpu, again.measured.cpuSeconds);
                    if (again.weights != corrected.weights) {
                        failures.push_back(std::string(c.key) + " " + pn + " PD + " + kn +
                                           ": a rerun gave other weights");
                    }
                }
                corrected.measured.wallSeconds = correctedBest;
                corrected.measured.cpuSeconds = correctedCpu;
                if (!report(c.name, pn, "PD + " + kn + ", 1 thr", corrected.measured,
                            json["rows"])) {
                    failures.push_back(std::string(c.key) + " " + pn + " PD + " + kn +
                                       ": loss did not fall");
                }
                const double ratio = correctedBest / plainBest;
                const double cpuRatio = correctedCpu / plainCpu;
                std::printf(
                    "%s %s: PipeDream 1 thread, best of %d, time per block update of PD + %s / "
                    "plain PD = %.3f wall (%.3f s / %.3f s), %.3f CPU (%.3f s / %.3f s)\n",
                    c.key, pn, repeats, kn.c_str(), ratio, correctedBest, plainBest, cpuRatio,
                    correctedCpu, plainCpu);
                json["corrector_ratio"].push_back({{"config", c.key},
                                                   {"real", pn},
                                                   {"corrector", kn},
                                                   {"repeats", repeats},
                                                   {"corrected_over_plain", ratio},
                                                   {"cpu_corrected_over_plain", cpuRatio}});
                if (threads > 1) {
                    const PdRun slots = pipeDream(problem, c.steps, cStep, threads, 1, {}, spec);
                    if (slots.weights != corrected.weights) {
                        failures.push_back(std::string(c.key) + " " + pn + " PD + " + kn +
                                           ": slot threads not bit-identical to one thread");
                    }
                }
            }
            if (threads > 1) {
                const PdRun slots = pipeDream(problem, c.steps, step, threads, 1);
                const PdRun ops = pipeDream(problem, c.steps, step, 1, threads);
                const std::pair<const PdRun*, std::string> runs[] = {
                    {&slots, "PipeDream, " + tn + " slot thr"},
                    {&ops, "PipeDream, " + tn + " op thr"}};
                for (const auto& [r, how] : runs) {
                    if (!report(c.name, pn, how, r->measured, json["rows"])) {
                        failures.push_back(std::string(c.key) + " " + pn + " " + how +
                                           ": loss did not fall");
                    }
                    if (r->weights != one.weights || r->measured.losses != one.measured.losses) {
                        failures.push_back(std::string(c.key) + " " + pn + " " + how +
                                           ": not bit-identical to one thread");
                    }
                }
            }
            if (!reportMemory(c.key, *problem, one, isFloat ? 4 : 8, json["memory"])) {
                failures.push_back(std::string(c.key) + " " + pn + ": stash differs from SPEC 3");
            }
            if (isFloat && !torchDir.empty()) {
                const auto torch = readTorchLosses(torchDir + "/" + c.key + "_torch.csv");
                if (!checkTorch(c.key, seq.losses, torch, json["torch_agreement"])) {
                    failures.push_back(std::string(c.key) + ": PyTorch losses disagree");
                }
            }
        }
    }
    std::printf("parameters: small %lld, paper %lld\n",
                LmLayout(LmDims{4, 64, 4, 32, 16, 65}).size(),
                LmLayout(LmDims{16, 256, 4, 32, 16, 65}).size());
    for (const auto& f : failures) std::printf("FAILED: %s\n", f.c_str());
    ok = failures.empty();
    json["ok"] = ok;
    if (!jsonPath.empty()) std::ofstream(jsonPath) << json.dump(1) << "\n";
    return ok ? 0 : 1;
}

// Training throughput of the character transformer on the CPU engine, in tokens per second, for
// the small preset (S = 4, C = 64) and the paper's configuration (S = 16, C = 256), T = 32,
// b = 16, 4 heads, in float and double. Two ways: plain sequential SGD (forward through every
// stage, backward, update: what PyTorch's loop does) and the PipeDream replay (weight stashing
// and activation recomputation, so about 4/3 of the work per token). It proves the work was done:
// every run must finish and its training loss must fall.
//   cmake --build build -j2 --target bench_lm_cpu
//   build/tests/bench/bench_lm_cpu [--steps-small 60] [--steps-paper 6] [--corpus FILE]
// (default corpus: ../shared/corpora/tinyshakespeare.txt, else the built-in text)
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_model.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using Clock = std::chrono::steady_clock;

namespace {

struct Measured {
    double tokensPerSecond = 0.0;     // per wall-clock second
    double tokensPerCpuSecond = 0.0;  // per second of this thread's CPU time (robust to a busy machine)
    double firstLoss = 0.0;
    double lastLoss = 0.0;
};

double seconds(Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
}

double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double meanOf(const std::vector<double>& v, std::size_t from, std::size_t to) {
    double s = 0.0;
    for (std::size_t i = from; i < to; ++i) s += v[i];
    return s / static_cast<double>(to - from);
}

template <typename Real>
Measured sequential(const CharTransformerProblem& p, int steps, double step) {
    CharTransformer<Real> model(p.layout);
    std::vector<Real> w(static_cast<std::size_t>(p.w0.size()));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<Real>(p.w0[static_cast<Eigen::Index>(i)]);
    std::vector<Real> g(w.size());
    std::vector<double> losses;
    const auto start = Clock::now();
    const double cpu0 = threadCpuSeconds();
    for (int k = 0; k < steps; ++k) {
        const int b = k % p.train.batches();
        losses.push_back(model.lossAndGradient(w.data(), p.train.tokens(b), p.train.targets(b), g.data()));
        const auto s = static_cast<Real>(step);
        for (std::size_t i = 0; i < w.size(); ++i) w[i] -= s * g[i];
    }
    const double t = seconds(start);
    const double cpu = threadCpuSeconds() - cpu0;
    const std::size_t q = std::max<std::size_t>(1, losses.size() / 4);
    const double tokens = static_cast<double>(steps) * p.train.tokensPerBatch();
    return {tokens / t, tokens / cpu, meanOf(losses, 0, q),
            meanOf(losses, losses.size() - q, losses.size())};
}

Measured pipeDream(std::shared_ptr<const CharTransformerProblem> p, int microbatches, double step) {
    LmPipelineConfig cfg;
    cfg.timeline = buildTimeline(ScheduleParams{ScheduleKind::PipeDream, p->params.stages,
                                                microbatches, 0, 0, 1, 0, {}});
    cfg.stepSize = step;
    auto run = makeLmPipelineReplay(p, cfg);
    const auto start = Clock::now();
    const double cpu0 = threadCpuSeconds();
    run->runToEnd();
    const double t = seconds(start);
    const double cpu = threadCpuSeconds() - cpu0;
    if (!run->result().finished) {
        std::fprintf(stderr, "PD run did not finish: %s\n", run->result().divergence.reason.c_str());
        std::exit(1);
    }
    std::vector<double> losses;
    for (const auto& f : run->log().forwardLosses) losses.push_back(f.loss);
    const std::size_t q = std::max<std::size_t>(1, losses.size() / 4);
    const double tokens = static_cast<double>(microbatches) * p->train.tokensPerBatch();
    return {tokens / t, tokens / cpu, meanOf(losses, 0, q),
            meanOf(losses, losses.size() - q, losses.size())};
}

bool report(const char* config, const char* precision, const char* how, const Measured& m) {
    const bool fell = m.lastLoss < m.firstLoss;
    std::printf("| %-28s | %-6s | %-16s | %10.0f | %10.0f | %.3f -> %.3f %s |\n", config, precision,
                how, m.tokensPerSecond, m.tokensPerCpuSecond, m.firstLoss, m.lastLoss,
                fell ? "" : "(DID NOT FALL)");
    return fell;
}

}  // namespace

int main(int argc, char** argv) {
    int stepsSmall = 60;
    int stepsPaper = 6;
    std::string corpus = std::string(PIPELENS_SOURCE_DIR) + "/../shared/corpora/tinyshakespeare.txt";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--steps-small") stepsSmall = std::atoi(argv[i + 1]);
        if (a == "--steps-paper") stepsPaper = std::atoi(argv[i + 1]);
        if (a == "--corpus") corpus = argv[i + 1];
    }
    const std::string shakespeare = corpus;
    const bool haveShakespeare = std::filesystem::exists(shakespeare);
    std::printf("corpus: %s\n", haveShakespeare ? shakespeare.c_str() : "built-in text");
    std::printf("| %-28s | %-6s | %-16s | %10s | %10s | %-20s |\n", "configuration", "real", "loop",
                "tokens/s", "tokens/cpu-s", "loss first -> last quarter");
    std::printf("|---|---|---|---:|---:|---|\n");
    bool ok = true;
    struct Config {
        const char* name;
        int stages, width, steps;
    };
    for (const Config& c : {Config{"small: S=4 C=64 T=32 b=16", 4, 64, stepsSmall},
                            Config{"paper: S=16 C=256 T=32 b=16", 16, 256, stepsPaper}}) {
        if (c.steps < 2) continue;  // --steps-... 0 skips a configuration
        for (LmPrecision precision : {LmPrecision::Float, LmPrecision::Double}) {
            CharTransformerParams params;
            params.stages = c.stages;
            params.width = c.width;
            params.heads = 4;
            params.context = 32;
            params.batch = 16;
            if (haveShakespeare) params.corpusPath = shakespeare;
            params.precision = precision;
            auto problem = std::make_shared<const CharTransformerProblem>(makeCharTransformerProblem(params));
            const char* pn = precision == LmPrecision::Float ? "float" : "double";
            const double step = 0.125;
            const Measured seq = precision == LmPrecision::Float
                                     ? sequential<float>(*problem, c.steps, step)
                                     : sequential<double>(*problem, c.steps, step);
            ok = report(c.name, pn, "sequential SGD", seq) && ok;
            ok = report(c.name, pn, "PipeDream replay", pipeDream(problem, c.steps, step)) && ok;
        }
    }
    std::printf("parameters: small %lld, paper %lld\n",
                LmLayout(LmDims{4, 64, 4, 32, 16, 65}).size(),
                LmLayout(LmDims{16, 256, 4, 32, 16, 65}).size());
    return ok ? 0 : 1;
}

// The language model on OpenCL (docs/benchmarks.md, "Language model on OpenCL"):
//  1. CLBlast GEMM throughput on the device for the small model's shapes (and 1024^3), asked as
//     A B^T and in the copy-free form A^T B the model's blocks use, next to Eigen's on one host
//     thread and the host's peak (cores x FMA width x clock).
//  2. PipeDream training throughput, tokens per second, on the OpenCL executor against the CPU
//     executor for the small model (S = 4, C = 64, T = 32, b = 16, 4 heads), in double and
//     float; the CPU engine on one thread and on every core (as a lone method runs in the app
//     and the CLI), the ratio against the latter. It proves the work was done: every run must
//     finish with a falling loss, the CPU's two runs must end on the same weights bit for bit,
//     and the OpenCL run's final weights must agree with the CPU's (1e-9 relative in double,
//     1e-3 in float).
//   cmake --build build -j2 --target bench_opencl_lm
//   POCL_CACHE_DIR=build/pocl-cache build/tests/bench/bench_opencl_lm [--microbatches 48]
//       [--gemm-reps 20] [--corpus FILE] [--only-opencl double|float] [--model small|paper]
//       [--repeat 1] [--optimizer sgd|momentum|nesterov|adam|adamw]
// --optimizer trains every PD run with that optimizer (default values; docs/correctors.md) at a
//   step size it trains at (Adam's γ/100, momentum's γ/10 of plain sgd's): the cost of its
//   state next to plain sgd's (docs/benchmarks.md, "Optimizers on OpenCL").
// --model paper trains the paper's configuration (S = 16, C = 256, 11.1M parameters) instead of
//   the small one, and skips the GEMM table.
// --repeat N runs the three PD runs of each precision N times in turn and reports each one's
//   fastest round (the machine's figures vary 10-20 % from run to run); every round is checked.
// --only-opencl runs just the OpenCL PD run in that precision (for a profiler, e.g.
//   perf record ... --only-opencl float), still checking that its loss fell; with --repeat N
//   the fastest of N runs.
// The project's OpenCL configuration before CLBlast's header, which includes the C headers and
// would otherwise default (and say so) to OpenCL 3.0 on its own.
#include "cl_headers.hpp"

#include <clblast.h>

#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cl_error.hpp"
#include "compute/optimizer.hpp"
#include "lm_opencl_executor.hpp"
#include "lm_opencl_stages.hpp"
#include "objective/lm/char_transformer.hpp"
#include "objective/lm/lm_threads.hpp"
#include "opencl_context.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
}

// The host's nominal clock in GHz (the first "cpu MHz" line), 0 when unknown.
double cpuGhz() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("cpu MHz", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return std::atof(line.c_str() + colon + 1) / 1000.0;
        }
    }
    return 0.0;
}

struct GemmFigures {
    double device = 0.0;    // GFLOP/s, C = A B^T as the model asked before 2026-12-04
    double copyFree = 0.0;  // GFLOP/s, the same product as A^T B from transposed operands
    double eigen = 0.0;
    double maxError = 0.0;  // of either form against Eigen's
};

// C[m, n] = A[m, k] B[n, k]^T (the linear layer's forward) both ways, `reps` times after one
// warm-up each: as A B^T (CLBlast transposes its operands itself) and as At^T Bt with At = A^T
// and Bt = B^T stored (the form the model's blocks ask, which CLBlast's kernel reads in place).
template <typename Real>
GemmFigures gemm(gpu::LmOpenClOps<Real>& ops, int m, int n, int k, int reps) {
    using Mat = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Mat a = Mat::Random(m, k), b = Mat::Random(n, k);
    const Mat at = a.transpose(), bt = b.transpose();
    Mat c(m, n);
    const cl::Buffer A = ops.reals(a.size(), "A"), B = ops.reals(b.size(), "B");
    const cl::Buffer At = ops.reals(a.size(), "A^T"), Bt = ops.reals(b.size(), "B^T");
    const cl::Buffer C = ops.reals(c.size(), "C"), C2 = ops.reals(c.size(), "C copy-free");
    ops.write(A, 0, a.data(), a.size());
    ops.write(B, 0, b.data(), b.size());
    ops.write(At, 0, at.data(), at.size());
    ops.write(Bt, 0, bt.data(), bt.size());
    const double flops = 2.0 * m * n * k * reps;
    const auto timed = [&](const auto& product) {
        product();  // warm-up: PoCL compiles the kernel for this shape
        ops.finish();
        const auto start = Clock::now();
        for (int r = 0; r < reps; ++r) product();
        ops.finish();
        return flops / seconds(start) / 1e9;
    };
    GemmFigures f;
    f.device = timed([&] {
        ops.gemm(false, true, m, n, k, {&A, 0}, k, {&B, 0}, k, Real(0), {&C, 0}, n);
    });
    f.copyFree = timed([&] {
        ops.gemm(true, false, m, n, k, {&At, 0}, m, {&Bt, 0}, n, Real(0), {&C2, 0}, n);
    });
    std::vector<Real> got(static_cast<std::size_t>(c.size())), got2(got.size());
    ops.read({&C, 0}, got.data(), got.size());
    ops.read({&C2, 0}, got2.data(), got2.size());
    c.noalias() = a * b.transpose();  // warm-up and reference
    const auto start = Clock::now();
    for (int r = 0; r < reps; ++r) c.noalias() = a * b.transpose();
    f.eigen = flops / seconds(start) / 1e9;
    for (Eigen::Index i = 0; i < c.size(); ++i) {
        const auto at2 = static_cast<std::size_t>(i);
        const double want = static_cast<double>(c.data()[i]);
        f.maxError = std::max({f.maxError, std::abs(static_cast<double>(got[at2]) - want),
                               std::abs(static_cast<double>(got2[at2]) - want)});
    }
    return f;
}

struct GemmShape {
    int m, n, k;
};

// One GEMM table's rows in one precision; false when a product disagrees with Eigen's.
template <typename Real>
bool gemmRows(const std::shared_ptr<gpu::OpenClContext>& context, const char* real, int reps,
              double tolerancePerK) {
    const GemmShape shapes[] = {{512, 192, 64}, {512, 256, 64}, {512, 64, 256}, {1024, 1024, 1024}};
    gpu::LmOpenClOps<Real> ops(context);
    bool ok = true;
    for (const GemmShape& s : shapes) {
        const auto f = gemm<Real>(ops, s.m, s.n, s.k, s.m >= 1024 ? 3 : reps);
        std::printf("| %d x %d x %d | %s | %.2f | %.2f | %.2f | %.1e |\n", s.m, s.n, s.k, real,
                    f.device, f.copyFree, f.eigen, f.maxError);
        ok = ok && f.maxError < tolerancePerK * s.k;
    }
    return ok;
}

struct RunFigures {
    double tokensPerSecond = 0.0;
    double firstLoss = 0.0, lastLoss = 0.0;
    Eigen::VectorXd weights;
};

// The optimizer of every PD run (--optimizer; plain sgd by default).
OptimizerSpec gOptimizer;

RunFigures pipeDream(const std::shared_ptr<const CharTransformerProblem>& p, int microbatches,
                     const LmExecutorFactory& executor, int threads = 1) {
    const lmk::ScopedThreads team(threads);  // the CPU engine's split of each op
    LmPipelineConfig cfg;
    cfg.timeline = buildTimeline(ScheduleParams{
        ScheduleKind::PipeDream, p->params.stages, microbatches, 0, 0, 1, 0, {}, nullptr, false});
    // The small model's γ and the paper's (SPEC §7), at which each trains without diverging.
    cfg.stepSize = p->params.stages > 4 ? 0.125 : 0.5;
    cfg.optimizer = gOptimizer;
    if (gOptimizer.kind == OptimizerKind::Adam || gOptimizer.kind == OptimizerKind::AdamW) {
        cfg.stepSize /= 100;
    } else if (gOptimizer.kind != OptimizerKind::Sgd) {
        cfg.stepSize /= 10;
    }
    auto run = makeLmPipelineReplay(p, cfg, executor);
    const auto start = Clock::now();
    run->runToEnd();
    RunFigures f;
    const Eigen::VectorXd w = run->weights();  // reads the device: part of the timed work
    f.tokensPerSecond =
        static_cast<double>(microbatches) * p->train.tokensPerBatch() / seconds(start);
    if (!run->result().finished) {
        std::fprintf(stderr, "PD run did not finish: %s\n",
                     run->result().divergence.reason.c_str());
        std::exit(1);
    }
    const auto& losses = run->log().forwardLosses;
    const std::size_t q = std::max<std::size_t>(1, losses.size() / 4);
    for (std::size_t i = 0; i < q; ++i) {
        f.firstLoss += losses[i].loss / static_cast<double>(q);
        f.lastLoss += losses[losses.size() - 1 - i].loss / static_cast<double>(q);
    }
    f.weights = w;
    return f;
}

// The small preset's model (S = 4, C = 64, T = 32, b = 16, 4 heads), or with `paper` the paper's
// (S = 16, C = 256), on `corpus` if it exists.
std::shared_ptr<const CharTransformerProblem> benchModel(LmPrecision precision,
                                                         const std::string& corpus, bool paper) {
    CharTransformerParams params;
    params.stages = paper ? 16 : 4;
    params.width = paper ? 256 : 64;
    params.heads = 4;
    params.context = 32;
    params.batch = 16;
    if (std::filesystem::exists(corpus)) params.corpusPath = corpus;
    params.precision = precision;
    return std::make_shared<const CharTransformerProblem>(makeCharTransformerProblem(params));
}

}  // namespace

int main(int argc, char** argv) {
    int microbatches = 48;
    int reps = 20;
    std::string corpus =
        std::string(PIPELENS_SOURCE_DIR) + "/../shared/corpora/tinyshakespeare.txt";
    std::string onlyOpenCl;
    std::string model = "small";
    int repeat = 1;
    std::string optimizer = "sgd";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--microbatches") microbatches = std::atoi(argv[i + 1]);
        if (a == "--gemm-reps") reps = std::atoi(argv[i + 1]);
        if (a == "--corpus") corpus = argv[i + 1];
        if (a == "--only-opencl") onlyOpenCl = argv[i + 1];
        if (a == "--model") model = argv[i + 1];
        if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
        if (a == "--optimizer") optimizer = argv[i + 1];
    }
    if (const auto kind = parseEnum(kOptimizerKinds, optimizer)) {
        gOptimizer = normalizedOptimizer(OptimizerSpec{*kind});
        gOptimizer.weightDecay = defaultWeightDecay(*kind);
    } else {
        std::fprintf(stderr,
                     "--optimizer = \"%s\": allowed are sgd, momentum, nesterov, adam and adamw\n",
                     optimizer.c_str());
        return 2;
    }
    if (repeat < 1) {
        std::fprintf(stderr, "--repeat = %d: allowed is a whole number of rounds, 1 or more\n",
                     repeat);
        return 2;
    }
    if (model != "small" && model != "paper") {
        std::fprintf(stderr, "--model = \"%s\": allowed are small and paper\n", model.c_str());
        return 2;
    }
    const bool paper = model == "paper";
    if (!onlyOpenCl.empty() && onlyOpenCl != "double" && onlyOpenCl != "float") {
        std::fprintf(stderr, "--only-opencl = \"%s\": allowed are double and float\n",
                     onlyOpenCl.c_str());
        return 2;
    }
    try {
        auto context = std::make_shared<gpu::OpenClContext>();
        if (!onlyOpenCl.empty()) {
            const auto p = benchModel(
                onlyOpenCl == "double" ? LmPrecision::Double : LmPrecision::Float, corpus, paper);
            RunFigures cl;
            bool fell = true;
            for (int round = 0; round < repeat; ++round) {
                const RunFigures r =
                    pipeDream(p, microbatches, gpu::lmOpenClExecutorFactory(context));
                fell = fell && r.lastLoss < r.firstLoss;
                if (round == 0 || r.tokensPerSecond > cl.tokensPerSecond) cl = r;
            }
            std::printf(
                "OpenCL, %s, %s, %d microbatches, best of %d: %.0f tokens/s, loss %.3f -> %.3f\n",
                onlyOpenCl.c_str(), optimizer.c_str(), microbatches, repeat, cl.tokensPerSecond,
                cl.firstLoss, cl.lastLoss);
            return fell ? 0 : 1;
        }
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        const double ghz = cpuGhz();
        // AVX2 + FMA: two 4-wide double (8-wide float) FMAs per cycle per core, at the clock
        // /proc/cpuinfo names. A boost clock runs above it: products measured here have.
        std::printf(
            "device: %s\nhost: %u cores at %.2f GHz, peak at that clock %.0f GFLOP/s double, "
            "%.0f float (AVX2 + FMA; a boost clock goes above it)\n\n",
            context->describe(gpu::Precision::Double).c_str(), cores, ghz, cores * ghz * 16.0,
            cores * ghz * 32.0);
        std::printf("%s\n\n", gpu::LmOpenClOps<float>(context).clblastTuning().c_str());
        bool ok = true;
        if (!paper) {
            std::printf(
                "| GEMM m x n x k (A B^T) | real | CLBlast GFLOP/s, as A B^T | as A^T B "
                "(copy-free) | Eigen GFLOP/s, 1 thread | max |error| |\n");
            std::printf("|---|---|---:|---:|---:|---:|\n");
            ok = gemmRows<double>(context, "double", reps, 1e-9) && ok;
            ok = gemmRows<float>(context, "float", reps, 1e-4) && ok;
        }
        std::printf(
            "\nPipeDream with %s, %s model S=%d C=%d T=32 b=16 4 heads, %d microbatches (corpus "
            "%s), best of %d round%s\n",
            optimizer.c_str(), paper ? "the paper's" : "small", paper ? 16 : 4, paper ? 256 : 64,
            microbatches, std::filesystem::exists(corpus) ? corpus.c_str() : "built-in", repeat,
            repeat == 1 ? "" : "s");
        std::printf(
            "| real | CPU, 1 thread, tokens/s | CPU, %u threads | OpenCL | OpenCL / CPU %u threads "
            "| loss first -> last quarter | w_final rel. difference |\n"
            "|---|---:|---:|---:|---:|---|---:|\n",
            cores, cores);
        for (LmPrecision precision : {LmPrecision::Double, LmPrecision::Float}) {
            const auto p = benchModel(precision, corpus, paper);
            // Rounds of the three runs in turn; each column keeps its fastest round, and every
            // round's runs are checked.
            RunFigures cpu1, cpu, cl;
            bool fell = true, same = true;
            double diff = 0.0;
            for (int round = 0; round < repeat; ++round) {
                const RunFigures a = pipeDream(p, microbatches, {});
                const RunFigures b = pipeDream(p, microbatches, {}, static_cast<int>(cores));
                const RunFigures c =
                    pipeDream(p, microbatches, gpu::lmOpenClExecutorFactory(context));
                diff = std::max(diff, (c.weights - b.weights).cwiseAbs().maxCoeff() /
                                          b.weights.cwiseAbs().maxCoeff());
                // Splitting an op over threads keeps every sum's order: the same weights bit
                // for bit.
                same = same && a.weights == b.weights;
                fell = fell && c.lastLoss < c.firstLoss && b.lastLoss < b.firstLoss;
                if (round == 0 || a.tokensPerSecond > cpu1.tokensPerSecond) cpu1 = a;
                if (round == 0 || b.tokensPerSecond > cpu.tokensPerSecond) cpu = b;
                if (round == 0 || c.tokensPerSecond > cl.tokensPerSecond) cl = c;
            }
            const double tol = precision == LmPrecision::Double ? 1e-9 : 1e-3;
            std::printf("| %s | %.0f | %.0f%s | %.0f | %.2f | %.3f -> %.3f%s | %.1e%s |\n",
                        precision == LmPrecision::Double ? "double" : "float", cpu1.tokensPerSecond,
                        cpu.tokensPerSecond, same ? "" : " (DIFFERS FROM 1 THREAD)",
                        cl.tokensPerSecond, cl.tokensPerSecond / cpu.tokensPerSecond, cl.firstLoss,
                        cl.lastLoss, fell ? "" : " (DID NOT FALL)", diff,
                        diff <= tol ? "" : " (DISAGREES)");
            ok = ok && fell && same && diff <= tol;
        }
        if (!ok) {
            std::fprintf(stderr, "a check failed: see the table\n");
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}

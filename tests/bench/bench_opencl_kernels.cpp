// Each OpenCL kernel's achieved bandwidth next to the device's measured peak (a copy kernel on
// the same device), as a fraction (docs/benchmarks.md, "OpenCL"). Times are device times from
// OpenCL profiling events, best of --repeats launches. Bytes are what the kernel must move at
// least (X read once, vectors read/written once), so the fraction is a lower bound.
// After timing, each kernel's output is read back and checked against a CPU reference (inputs
// are constant fills, so the reference is a closed form); the stateful slot kernels, whose output
// depends on how often they ran, must at least have written finite values that differ from
// their fill. A failed check fails the benchmark (exit 2).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cl_error.hpp"
#include "cl_headers.hpp"
#include "kernel_args.hpp"
#include "objective/linear_objective.hpp"
#include "opencl_context.hpp"

using namespace pipelens;
using namespace pipelens::gpu;

namespace {

struct Bench {
    OpenClContext& ctx;
    cl::CommandQueue queue;
    cl::Program program;
    Precision precision;
    int repeats;

    std::size_t real() const { return precision == Precision::Double ? 8 : 4; }

    cl::Buffer filled(std::size_t count, double value) {
        cl::Buffer b = ctx.buffer(count * real(), "bench");
        if (precision == Precision::Double) {
            checkCl(queue.enqueueFillBuffer(b, value, 0, count * real()), "clEnqueueFillBuffer");
        } else {
            checkCl(queue.enqueueFillBuffer(b, static_cast<float>(value), 0, count * real()),
                    "clEnqueueFillBuffer");
        }
        return b;
    }
    cl::Buffer ints(const std::vector<int>& v) {
        cl::Buffer b = ctx.buffer(v.size() * sizeof(int), "bench");
        checkCl(queue.enqueueWriteBuffer(b, CL_TRUE, 0, v.size() * sizeof(int), v.data()),
                "clEnqueueWriteBuffer");
        return b;
    }
    std::vector<double> read(const cl::Buffer& b, std::size_t count) {
        std::vector<double> out(count);
        if (precision == Precision::Double) {
            checkCl(queue.enqueueReadBuffer(b, CL_TRUE, 0, count * 8, out.data()),
                    "clEnqueueReadBuffer");
        } else {
            std::vector<float> f(count);
            checkCl(queue.enqueueReadBuffer(b, CL_TRUE, 0, count * 4, f.data()),
                    "clEnqueueReadBuffer");
            out.assign(f.begin(), f.end());
        }
        return out;
    }
    // Every element of `b` within the precision's margin of want(i); throws naming the first miss.
    template <typename Want>
    void expect(const char* kernel, const cl::Buffer& b, std::size_t count, Want want) {
        const double rel = precision == Precision::Double ? 1e-12 : 1e-5;
        const std::vector<double> got = read(b, count);
        for (std::size_t i = 0; i < count; ++i) {
            const double w = want(i);
            if (!(std::abs(got[i] - w) <= rel * (std::abs(w) + 1e-30) * 16)) {
                throw std::runtime_error(std::string(kernel) + ": element " + std::to_string(i) +
                                         " is " + std::to_string(got[i]) + ", the CPU reference " +
                                         std::to_string(w));
            }
        }
    }
    // The kernel wrote finite values, not all equal to the fill `unchanged`.
    void expectWritten(const char* kernel, const cl::Buffer& b, std::size_t count,
                       double unchanged) {
        const std::vector<double> got = read(b, count);
        bool changed = false;
        for (double v : got) {
            if (!std::isfinite(v)) {
                throw std::runtime_error(std::string(kernel) + ": non-finite output");
            }
            changed = changed || v != unchanged;
        }
        if (!changed) throw std::runtime_error(std::string(kernel) + ": wrote nothing");
    }
    // Best device time in seconds of `repeats` launches.
    template <typename... Args>
    double time(const char* name, cl::NDRange global, cl::NDRange local, Args... args) {
        cl::Kernel k = makeKernel(program, name);
        KernelArgs set(k, name, precision);
        (set(args), ...);
        double best = 1e300;
        for (int r = 0; r < repeats; ++r) {
            cl::Event e;
            checkCl(queue.enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr, &e),
                    "clEnqueueNDRangeKernel", name);
            checkCl(e.wait(), "clWaitForEvents", name);
            cl_ulong a = 0, b = 0;
            e.getProfilingInfo(CL_PROFILING_COMMAND_START, &a);
            e.getProfilingInfo(CL_PROFILING_COMMAND_END, &b);
            best = std::min(best, static_cast<double>(b - a) * 1e-9);
        }
        return best;
    }
};

void row(const char* kernel, const char* what, double seconds, double bytes, double flops,
         double peak) {
    const double gbs = bytes / seconds * 1e-9;
    std::printf("| %-18s | %-34s | %9.3f | %7.2f | %5.2f | %7.2f |\n", kernel, what, seconds * 1e3,
                gbs, gbs / peak, flops / seconds * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
    int n = 32768;
    int d = 2048;
    int repeats = 5;
    Precision precision = Precision::Double;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--rows") && i + 1 < argc)
            n = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--dim") && i + 1 < argc)
            d = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--float"))
            precision = Precision::Float;
        else {
            std::fprintf(stderr,
                         "usage: bench_opencl_kernels [--rows N] [--dim D] [--repeats R] "
                         "[--float]\n");
            return 1;
        }
    }
    try {
        OpenClContext ctx;
        cl_int err = CL_SUCCESS;
        Bench B{ctx, cl::CommandQueue(ctx.context(), ctx.device(), CL_QUEUE_PROFILING_ENABLE, &err),
                ctx.program(precision), precision, repeats};
        checkCl(err, "clCreateCommandQueue");
        const int S = 16;
        const int b = 256;
        const auto blocks = splitBlocks(d, S);
        const std::size_t wg = static_cast<std::size_t>(ctx.workGroupSize());
        const double R = static_cast<double>(B.real());
        const double nd = static_cast<double>(n) * d;
        std::printf("device: %s, %s, n = %d, d = %d, S = %d, b = %d, best of %d\n",
                    ctx.info().name.c_str(), precisionName(precision).c_str(), n, d, S, b, repeats);

        cl::Buffer X = B.filled(static_cast<std::size_t>(n) * d, 0.001);
        cl::Buffer copyOut = B.filled(static_cast<std::size_t>(n) * d, 0.0);
        cl::Buffer y = B.filled(n, 0.5), z = B.filled(n, 0.1), zOut = B.filled(n, 0.0);
        cl::Buffer w = B.filled(d, 0.01), delta = B.filled(d, 1e-4), gsq = B.filled(d, 1.0);
        cl::Buffer avg = B.filled(d, 0.01), weights = B.filled(static_cast<std::size_t>(d), 0.01);
        cl::Buffer stash = B.filled(static_cast<std::size_t>(d) * 2, 0.0);
        cl::Buffer act = B.filled(static_cast<std::size_t>(b) * 2 * S, 0.0);
        cl::Buffer grad = B.filled(static_cast<std::size_t>(b) * 2 * S, 1e-3);

        // The peak: a copy of X (read + write).
        const std::size_t elements = static_cast<std::size_t>(n) * d;
        const double copy =
            B.time("copy_vector", cl::NDRange((elements + wg - 1) / wg * wg), cl::NDRange(wg), X,
                   copyOut, static_cast<cl_long>(static_cast<long long>(n) * d));
        const double peak = 2 * nd * R / copy * 1e-9;
        std::printf(
            "\n| kernel             | work                               | time (ms) "
            "|  GB/s   | of peak | GFLOP/s |\n|---|---|---:|---:|---:|---:|\n");
        row("copy_vector", "copy n*d (the peak)", copy, 2 * nd * R, 0, peak);
        B.expect("copy_vector", copyOut, elements, [](std::size_t) { return 0.001; });

        const double mv = B.time("matvec_rows", cl::NDRange((n + wg - 1) / wg * wg),
                                 cl::NDRange(wg), X, w, n, d, zOut);
        row("matvec_rows", "z = X w", mv, nd * R, 2 * nd, peak);
        B.expect("matvec_rows", zOut, static_cast<std::size_t>(n),
                 [&](std::size_t) { return d * 0.001 * 0.01; });

        // A slot's 16 updates covering every block, objective after each.
        std::vector<int> table;
        for (int s = 0; s < S; ++s) {
            table.insert(table.end(), {s, 0, 0, 0, 0, blocks[s].offset, blocks[s].size, 1});
        }
        cl::Buffer ops = B.ints(table);
        const int rowsPerItem = 16;
        const int items = ((n + rowsPerItem - 1) / rowsPerItem + 15) / 16 * 16;
        cl::Buffer partial = B.filled(static_cast<std::size_t>(S) * items, 0.0);
        const double su = B.time("sample_updates", cl::NDRange(items), cl::NDRange(16), X, y, n, d,
                                 0, ops, S, delta, z, rowsPerItem, partial);
        row("sample_updates", "16 updates over all blocks, all rows", su, nd * R + 2 * n * R,
            2 * nd + 3.0 * n * S, peak);
        const double fu = B.time("finish_updates", cl::NDRange(S * wg), cl::NDRange(wg), partial,
                                 items, ops, gsq, avg, zOut, Local{wg * B.real()});
        row("finish_updates", "16 per-update reductions", fu,
            (static_cast<double>(S) * items + 2.0 * d) * R, S * items + 4.0 * d, peak);
        B.expectWritten("sample_updates", partial, static_cast<std::size_t>(S) * items, 0.0);

        // A steady-state slot: 8 forwards and 8 backwards of b rows.
        std::vector<int> slot;
        for (int s = 0; s < S; ++s) {
            slot.insert(slot.end(), {s, s, 0, blocks[s].offset, s % 2 ? 0 : 1, blocks[s].offset,
                                     blocks[s].size, s % 2});
        }
        cl::Buffer slotOps = B.ints(slot);
        const double ps = B.time("pipeline_slot",
                                 cl::NDRange((std::max(b, blocks[0].size) + wg - 1) / wg * wg, S),
                                 cl::NDRange(wg, 1), X, y, d, b, S - 1, 0, Real{0.0}, Real{0.01},
                                 Real{1.0}, slotOps, weights, stash, act, grad, avg, zOut, gsq);
        row("pipeline_slot", "8 F + 8 B, b rows each", ps, static_cast<double>(b) * d * R,
            2.0 * b * d, peak);
        B.expectWritten("pipeline_slot", act, static_cast<std::size_t>(b) * 2 * S, 0.0);

        const int chunk = 256;
        const int chunks = (n + chunk - 1) / chunk;
        cl::Buffer gp = B.filled(static_cast<std::size_t>(chunks) * d, 0.0);
        const double gpart =
            B.time("gradient_partials", cl::NDRange((d + wg - 1) / wg * wg, chunks),
                   cl::NDRange(wg, 1), X, y, n, d, chunk, gp);
        row("gradient_partials", "X^T r (full gradient)", gpart, nd * R, 2 * nd, peak);
        B.expect("gradient_partials", gp, static_cast<std::size_t>(chunks) * d, [&](std::size_t i) {
            const int c = static_cast<int>(i / static_cast<std::size_t>(d));
            return 0.001 * 0.5 * (std::min(n, (c + 1) * chunk) - c * chunk);
        });
        // A fresh z: sample_updates above moved z by X delta.
        cl::Buffer zFill = B.filled(n, 0.1);
        const double lp = B.time("loss_partials", cl::NDRange((n + wg - 1) / wg * wg),
                                 cl::NDRange(wg), zFill, y, n, 1, partial, Local{wg * B.real()});
        row("loss_partials", "logistic loss of z, all rows", lp, 2.0 * n * R, 5.0 * n, peak);
        {
            // z = 0.1, y = 0.5 everywhere: one group's partial is its rows times one row's loss.
            const double rowLoss = 0.1 + std::log1p(std::exp(-0.1)) - 0.5 * 0.1;
            const int groups = static_cast<int>((static_cast<std::size_t>(n) + wg - 1) / wg);
            const int group = static_cast<int>(wg);
            B.expect("loss_partials", partial, static_cast<std::size_t>(groups),
                     [&](std::size_t g) {
                         const int first = static_cast<int>(g) * group;
                         return rowLoss * (std::min(n, first + group) - first);
                     });
        }

        std::vector<int> blockTable;
        std::vector<int> stepTable = {3, 5, 0, 0, 0, blocks[3].offset, blocks[3].size, 1};
        for (int s = 0; s < S; ++s) {
            blockTable.insert(blockTable.end(), {blocks[s].offset, blocks[s].size});
            stepTable.push_back(0);
        }
        cl::Buffer bt = B.ints(blockTable), st = B.ints(stepTable);
        const double rf = B.time("rpd_forward", cl::NDRange((b + wg - 1) / wg * wg),
                                 cl::NDRange(wg), X, y, d, b, 5, S, bt, st, avg, 1, grad);
        row("rpd_forward", "forward at z_k, b rows", rf, static_cast<double>(b) * d * R,
            2.0 * b * d, peak);
        B.expectWritten("rpd_forward", grad, static_cast<std::size_t>(b) * 2 * S, 1e-3);
        std::printf("\nevery kernel's output read back and checked\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_opencl_kernels: %s\n", e.what());
        return 2;
    }
    return 0;
}

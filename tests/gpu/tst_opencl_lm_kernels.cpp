// The language model's OpenCL stages and kernels (gpu/lm_opencl_stages.*, gpu/kernels/lm.cl)
// against the CPU stage code (core/objective/lm/lm_stages.*), on sizes that are not multiples of
// the work-group size (128 on PoCL) nor of 4 or 16, in double and float.
#include <QRegularExpression>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "clblast_tuning.hpp"
#include "lm_opencl_stages.hpp"
#include "objective/lm/lm_layout.hpp"
#include "objective/lm/lm_random.hpp"
#include "objective/lm/lm_stages.hpp"
#include "opencl_test_support.hpp"

using namespace pipelens;
using gpu::DeviceRef;

namespace {

// N = b T = 7 * 9 = 63 rows, C = 20 (4 heads of 5), 4C = 80, V = 29.
LmDims oddDims() {
    return LmDims{4, 20, 4, 9, 7, 29};
}
// A second shape: 3 heads of 4, T = 5, b = 3 (N = 15), V = 7.
LmDims smallDims() {
    return LmDims{4, 12, 3, 5, 3, 7};
}
// Heads of 11 columns (one vector of 8 and a tail of 3 in the attention kernels), T = 10 (rows
// with eight or more keys take the vector exp), b = 3 (N = 30), V = 13.
LmDims wideHeadDims() {
    return LmDims{4, 22, 2, 10, 3, 13};
}
// An odd width: C = 21 (3 heads of 7), so 4C = 84 leaves a partial group of four in the fused
// bias + GELU kernel; T = 4, b = 3 (N = 12), V = 11.
LmDims oddWidthDims() {
    return LmDims{4, 21, 3, 4, 3, 11};
}
// Sizes that are multiples of the tuned CLBlast tiles on PoCL (64 x 64, k in 32s): N = 64,
// C = 64 (2 heads of 32), 3C, 4C; with the weights at an aligned offset every block product runs
// on its operands in place (no copies), so that path is checked too.
LmDims tiledDims() {
    return LmDims{4, 64, 2, 32, 2, 13};
}
// More rows than the row kernels' groups hold (N = 5 * 37 = 185: 23 whole groups of eight rows
// in LayerNorm and a partial one), a width that is a multiple of eight (LayerNorm's vector path),
// T = 37 (the attention's last block of eight keys runs past T), 3 heads of 8, V = 17.
LmDims manyRowsDims() {
    return LmDims{4, 24, 3, 37, 5, 17};
}
LmDims shapeNamed(int shape) {
    return shape == 0   ? oddDims()
           : shape == 1 ? smallDims()
           : shape == 2 ? wideHeadDims()
           : shape == 3 ? oddWidthDims()
           : shape == 4 ? tiledDims()
                        : manyRowsDims();
}
bool isTiled(const LmDims& d) {
    return d.width == tiledDims().width && d.tokens() == tiledDims().tokens();
}

template <typename Real>
std::vector<Real> seeded(std::size_t n, std::uint64_t seed, double scale) {
    LmRandom rng(seed);
    std::vector<Real> v(n);
    for (Real& x : v) x = static_cast<Real>(scale * rng.normal());
    return v;
}

std::vector<int> seededTokens(int n, int vocab, std::uint64_t seed) {
    LmRandom rng(seed);
    std::vector<int> t(static_cast<std::size_t>(n));
    for (int& v : t) v = static_cast<int>(rng.below(static_cast<std::uint64_t>(vocab)));
    return t;
}

template <typename Real>
double tolerance() {
    return sizeof(Real) == sizeof(double) ? 1e-12 : 2e-5;
}

// max |got - want| <= tol max |want|, reporting the worst entry.
template <typename Real>
bool closeArrays(const std::vector<Real>& got, const std::vector<Real>& want, const char* what,
                 QString& report) {
    if (got.size() != want.size()) {
        report += QString("%1: %2 values, want %3\n").arg(what).arg(got.size()).arg(want.size());
        return false;
    }
    double diff = 0, scale = 0;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double d = std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
        if (!(d <= diff) || !std::isfinite(static_cast<double>(got[i]))) {
            diff = std::isfinite(d) ? d : INFINITY;
            worst = i;
        }
        scale = std::max(scale, std::abs(static_cast<double>(want[i])));
    }
    const double rel = diff / std::max(scale, 1e-300);
    const bool ok = rel <= tolerance<Real>();
    if (!ok) {
        report += QString("%1: relative error %2 at [%3] (got %4, want %5)\n")
                      .arg(what)
                      .arg(rel, 0, 'g', 3)
                      .arg(worst)
                      .arg(static_cast<double>(got[worst]), 0, 'g', 17)
                      .arg(static_cast<double>(want[worst]), 0, 'g', 17);
    }
    return ok;
}

// The device and host copies of the buffers one test needs.
template <typename Real>
struct Bench {
    gpu::LmOpenClOps<Real> ops{opencl_test::context()};
    cl::Buffer upload(const std::vector<Real>& v) {
        cl::Buffer b = ops.reals(v.size(), "test");
        ops.write(b, 0, v.data(), v.size());
        return b;
    }
    cl::Buffer uploadInts(const std::vector<int>& v) {
        cl::Buffer b = ops.ints(v.size(), "test tokens");
        ops.writeInts(b, v.data(), v.size());
        return b;
    }
    std::vector<Real> download(const cl::Buffer& b, std::size_t n, long long offset = 0) {
        std::vector<Real> v(n);
        ops.read({&b, offset}, v.data(), n);
        return v;
    }
};

// A weight block inside a larger buffer, at an offset that is not a multiple of anything useful,
// so every kernel's and GEMM's offset handling is exercised.
constexpr long long kOffset = 37;
// An offset any device's base-address alignment allows (4 KiB in float), so that gemm can hand
// CLBlast a sub-buffer starting there instead of a copy.
constexpr long long kAlignedOffset = 1024;

// True when the device runs the tuned CLBlast parameters (PoCL's CPU device), whose tiles the
// tiled shape is made for.
bool tunedTiles() {
    return !gpu::clblastOverridesFor(opencl_test::context()->info(),
                                     qgetenv("PIPELENS_CLBLAST_TUNING").toStdString())
                .empty();
}

template <typename Real>
void embeddingMatchesCpu(const LmDims& d) {
    Bench<Real> t;
    const auto size = static_cast<std::size_t>(LmLayout::embeddingSize(d));
    const auto nc = static_cast<std::size_t>(d.tokens() * d.width);
    auto wHost = seeded<Real>(size + kOffset, 1, 0.5);
    const auto tokens = seededTokens(d.tokens(), d.vocab, 2);
    const auto gradOut = seeded<Real>(nc, 3, 1.0);
    EmbeddingStage<Real> cpu(d);
    std::vector<Real> outCpu(nc), gwCpu(size);
    cpu.forward(wHost.data() + kOffset, tokens.data(), outCpu.data());
    cpu.backward(gradOut.data(), gwCpu.data());

    const cl::Buffer w = t.upload(wHost), tok = t.uploadInts(tokens), g = t.upload(gradOut);
    const cl::Buffer out = t.ops.reals(nc, "out"), gw = t.ops.reals(size + kOffset, "gw");
    gpu::LmOpenClStage<Real> stage(t.ops, LmLayout(d), 0);
    stage.forward({&w, kOffset}, {&tok, 0}, {}, {&out, 0});
    stage.backward({&w, kOffset}, {&g, 0}, {&gw, kOffset}, {});
    QString report;
    bool ok = closeArrays(t.download(out, nc), outCpu, "forward", report);
    ok = closeArrays(t.download(gw, size, kOffset), gwCpu, "weight gradient", report) && ok;
    QVERIFY2(ok, qPrintable(report));
}

template <typename Real>
void blockMatchesCpu(const LmDims& d) {
    Bench<Real> t;
    const long long off = isTiled(d) ? kAlignedOffset : kOffset;
    const LmLayout layout(d);
    const auto size = static_cast<std::size_t>(LmLayout::blockSize(d));
    const auto nc = static_cast<std::size_t>(d.tokens() * d.width);
    auto wHost = seeded<Real>(size + off, 4, 0.3);
    // LayerNorm gains near 1, as trained models have them.
    const LmBlockOffsets at(d.width);
    for (long long g : {at.ln1Weight, at.ln2Weight}) {
        for (int i = 0; i < d.width; ++i) wHost[static_cast<std::size_t>(off + g + i)] += 1;
    }
    const auto x = seeded<Real>(nc, 5, 1.0);
    const auto gradOut = seeded<Real>(nc, 6, 1.0);
    BlockStage<Real> cpu(d);
    std::vector<Real> outCpu(nc), gwCpu(size), ginCpu(nc);
    cpu.forward(wHost.data() + off, x.data(), outCpu.data());

    const cl::Buffer w = t.upload(wHost), xin = t.upload(x), g = t.upload(gradOut);
    const cl::Buffer out = t.ops.reals(nc + off, "out");
    const cl::Buffer gw = t.ops.reals(size + off, "gw"), gin = t.ops.reals(nc, "gin");
    gpu::LmOpenClStage<Real> stage(t.ops, layout, 1);
    stage.forward({&w, off}, {}, {&xin, 0}, {&out, off});
    QString report;
    bool ok = closeArrays(t.download(out, nc, off), outCpu, "forward", report);
    const std::pair<const char*, const std::vector<Real>*> internals[] = {
        {"ln1_out", &cpu.ln1Out()},
        {"qkv", &cpu.qkv()},
        {"attn_heads_merged", &cpu.headsMerged()},
        {"attn_out", &cpu.attnOut()},
        {"ln2_in", &cpu.ln2In()},
        {"ln2_out", &cpu.ln2Out()},
        {"mlp_pre_gelu", &cpu.mlpPreGelu()},
        {"mlp_gelu_out", &cpu.mlpGeluOut()},
        {"mlp_out", &cpu.mlpOut()}};
    for (const auto& [name, want] : internals) {
        ok = closeArrays(stage.internal(name), *want, name, report) && ok;
    }
    cpu.backward(wHost.data() + off, gradOut.data(), gwCpu.data(), ginCpu.data());
    stage.backward({&w, off}, {&g, 0}, {&gw, off}, {&gin, 0});
    ok = closeArrays(t.download(gw, size, off), gwCpu, "weight gradient", report) && ok;
    ok = closeArrays(t.download(gin, nc), ginCpu, "input gradient", report) && ok;
    // The block's eight products (four forward, four input gradients; the weight gradients
    // write at offsets) plus its four weight gradients: on the tiled shape with the tuned tiles
    // not one of them may need CLBlast to copy an operand.
    QCOMPARE(t.ops.products(), 12LL);
    if (isTiled(d) && tunedTiles()) QCOMPARE(t.ops.copiedProducts(), 0LL);
    // The other shapes' sizes are not multiples of the tiles: CLBlast pads, and the count says so.
    if (!isTiled(d) && tunedTiles()) QVERIFY(t.ops.copiedProducts() > 0);
    // Each tensor separately too, so a wrong bias or gain gradient cannot hide behind a large
    // matrix's scale.
    const auto gwDev = t.download(gw, size, off);
    for (const auto& tensor : layout.stage(1).tensors) {
        const long long in = tensor.offset - layout.stage(1).offset;
        std::vector<Real> a(gwDev.begin() + in, gwDev.begin() + in + tensor.numel);
        std::vector<Real> b(gwCpu.begin() + in, gwCpu.begin() + in + tensor.numel);
        ok = closeArrays(a, b, tensor.name.c_str(), report) && ok;
    }
    QVERIFY2(ok, qPrintable(report));
}

template <typename Real>
void headMatchesCpu(const LmDims& d) {
    Bench<Real> t;
    const LmLayout layout(d);
    const int S = d.stages;
    const auto size = static_cast<std::size_t>(LmLayout::headSize(d));
    const auto nc = static_cast<std::size_t>(d.tokens() * d.width);
    const auto nv = static_cast<std::size_t>(d.tokens() * d.vocab);
    auto wHost = seeded<Real>(size + kOffset, 7, 0.4);
    for (int i = 0; i < d.width; ++i) wHost[static_cast<std::size_t>(kOffset + i)] += 1;
    const auto x = seeded<Real>(nc, 8, 1.0);
    const auto targets = seededTokens(d.tokens(), d.vocab, 9);
    HeadStage<Real> cpu(d);
    std::vector<Real> logitsCpu(nv), gradLogitsCpu(nv), gwCpu(size), ginCpu(nc);
    cpu.forward(wHost.data() + kOffset, x.data(), logitsCpu.data());
    const double lossCpu = crossEntropy<Real>(logitsCpu.data(), targets.data(), d.tokens(), d.vocab,
                                              gradLogitsCpu.data());
    cpu.backward(wHost.data() + kOffset, gradLogitsCpu.data(), gwCpu.data(), ginCpu.data());

    const cl::Buffer w = t.upload(wHost), xin = t.upload(x), tg = t.uploadInts(targets);
    const cl::Buffer logits = t.ops.reals(nv + kOffset, "logits");
    const cl::Buffer gradLogits = t.ops.reals(nv + kOffset, "grad logits");
    const cl::Buffer gw = t.ops.reals(size, "gw"), gin = t.ops.reals(nc + kOffset, "gin");
    gpu::LmOpenClStage<Real> stage(t.ops, layout, S - 1);
    stage.forward({&w, kOffset}, {}, {&xin, 0}, {&logits, kOffset});
    const DeviceRef gl{&gradLogits, kOffset};
    const double lossNoGrad =
        t.ops.crossEntropy({&logits, kOffset}, {&tg, 0}, d.tokens(), d.vocab, nullptr);
    const double loss = t.ops.crossEntropy({&logits, kOffset}, {&tg, 0}, d.tokens(), d.vocab, &gl);
    stage.backward({&w, kOffset}, gl, {&gw, 0}, {&gin, kOffset});
    QString report;
    bool ok = closeArrays(t.download(logits, nv, kOffset), logitsCpu, "logits", report);
    ok =
        closeArrays(t.download(gradLogits, nv, kOffset), gradLogitsCpu, "logit gradient", report) &&
        ok;
    ok = closeArrays(t.download(gw, size), gwCpu, "weight gradient", report) && ok;
    ok = closeArrays(t.download(gin, nc, kOffset), ginCpu, "input gradient", report) && ok;
    QVERIFY2(ok, qPrintable(report));
    QVERIFY2(opencl_test::close(loss, lossCpu, tolerance<Real>()),
             qPrintable(QString("loss %1, CPU %2").arg(loss, 0, 'g', 17).arg(lossCpu, 0, 'g', 17)));
    QCOMPARE(lossNoGrad, loss);
}

// SGD on a block in the middle of a vector, and the replica average.
template <typename Real>
void updatesMatchCpu() {
    Bench<Real> t;
    const long long P = 1001;  // odd, not a multiple of the group
    const int R = 3;
    const long long off = 123, count = 517;
    auto reps = seeded<Real>(static_cast<std::size_t>(R * P), 10, 1.0);
    const auto g = seeded<Real>(static_cast<std::size_t>(count + 5), 11, 1.0);
    const double step = 0.37;
    const cl::Buffer repsDev = t.upload(reps), gDev = t.upload(g);
    const cl::Buffer avg = t.ops.reals(static_cast<std::size_t>(P), "avg");
    t.ops.sgd({&repsDev, P + off}, {&gDev, 5}, count, step);
    for (long long i = 0; i < count; ++i) {
        reps[static_cast<std::size_t>(P + off + i)] -=
            static_cast<Real>(step) * g[static_cast<std::size_t>(5 + i)];
    }
    t.ops.average(repsDev, R, P, avg);
    std::vector<Real> want(static_cast<std::size_t>(P), Real(0));
    for (int r = 0; r < R; ++r) {
        for (long long i = 0; i < P; ++i)
            want[static_cast<std::size_t>(i)] += reps[static_cast<std::size_t>(r * P + i)];
    }
    for (Real& v : want) v /= static_cast<Real>(R);
    QString report;
    bool ok = closeArrays(t.download(repsDev, reps.size()), reps, "sgd", report);
    ok = closeArrays(t.download(avg, want.size()), want, "average", report) && ok;
    QVERIFY2(ok, qPrintable(report));
}

// The MLP's bias + GELU forward (lm_bias_gelu_forward) and GELU backward (lm_transpose_sum with
// the GELU's slope) against the formula in long double, on rows of lengths around the kernels'
// eight elements (a lone partial group, whole groups, a partial last group) and past one
// work-group of tiles; nine rows each (one whole tile of eight rows and a row past it), the bias
// read at an offset. One length takes evenly spaced inputs over [-9, 9] instead of normal ones,
// so that every branch of lm.cl's float erf (|x| < 1, above, the clamp at 4) and the points
// between them are hit. The forward must hold element by element, not only relative to the
// largest value: |error| <= 4 eps (|GELU(u)| + |u|), what an erf within a few units in the last
// place gives. Both transposed outputs must be the row-major ones transposed, exactly.
template <typename Real>
void geluMatchesFormula() {
    Bench<Real> t;
    constexpr int rows = 9;
    constexpr int spread = 2001;
    for (const int n : {1, 7, 8, 9, 1003, spread, 8 * 128 + 5}) {
        const auto count = static_cast<std::size_t>(rows * n);
        const auto seed = static_cast<std::uint64_t>(n);
        auto u = seeded<Real>(count, 40 + seed, 2.5);
        if (n == spread) {
            for (std::size_t i = 0; i < count; ++i)
                u[i] = static_cast<Real>(-9.0 + 18.0 * static_cast<double>(i) / (count - 1));
        }
        const auto bias = seeded<Real>(static_cast<std::size_t>(n) + kOffset, 60 + seed, 0.5);
        const auto d0 = seeded<Real>(count, 50 + seed, 1.0);
        std::vector<Real> biased(count), act(count), d(count);
        for (std::size_t i = 0; i < count; ++i) {
            biased[i] = u[i] + bias[kOffset + i % static_cast<std::size_t>(n)];
            const long double x = biased[i];
            const long double cdf = 0.5L * (1 + std::erf(x / std::sqrt(2.0L)));
            act[i] = static_cast<Real>(x * cdf);
            const long double pdf =
                std::exp(-0.5L * x * x) / std::sqrt(2 * 3.14159265358979323846L);
            d[i] = static_cast<Real>(d0[i] * (cdf + x * pdf));
        }
        const cl::Buffer pre = t.upload(u), out = t.upload(std::vector<Real>(count, Real(-7)));
        const cl::Buffer outT = t.upload(std::vector<Real>(count, Real(-7)));
        const cl::Buffer b = t.upload(bias), grad = t.upload(d0);
        const cl::Buffer gradT = t.upload(std::vector<Real>(count, Real(-7)));
        const cl::Buffer sums = t.upload(std::vector<Real>(static_cast<std::size_t>(n), Real(-7)));
        t.ops.biasGeluForward(pre, {&b, kOffset}, out, rows, n, &outT);
        t.ops.transposeSum({&grad, 0}, rows, n, gradT, {&sums, 0}, &pre);
        QString report;
        const QByteArray sum = QString("pre + bias, n = %1").arg(n).toUtf8();
        const QByteArray fwd = QString("gelu forward, n = %1").arg(n).toUtf8();
        const QByteArray bwd = QString("gelu backward, n = %1").arg(n).toUtf8();
        const auto got = t.download(out, count);
        const auto gotGrad = t.download(grad, count);
        bool ok = closeArrays(t.download(pre, count), biased, sum.constData(), report);
        ok = closeArrays(got, act, fwd.constData(), report) && ok;
        ok = closeArrays(gotGrad, d, bwd.constData(), report) && ok;
        const double eps = std::numeric_limits<Real>::epsilon();
        for (std::size_t i = 0; i < count && ok; ++i) {
            const double x = biased[i], want = act[i];
            const double bound = 4 * eps * (std::abs(want) + std::abs(x));
            if (!(std::abs(got[i] - want) <= bound)) {
                report += QString("gelu forward, n = %1, at u = %2: got %3, want %4 (bound %5)\n")
                              .arg(n)
                              .arg(x, 0, 'g', 9)
                              .arg(static_cast<double>(got[i]), 0, 'g', 9)
                              .arg(want, 0, 'g', 9)
                              .arg(bound, 0, 'g', 3);
                ok = false;
            }
        }
        QVERIFY2(ok, qPrintable(report));
        const auto gotT = t.download(outT, count), gotGradT = t.download(gradT, count);
        const auto gotSums = t.download(sums, static_cast<std::size_t>(n));
        for (int c = 0; c < n; ++c) {
            Real colSum = 0;  // in row order, as the kernel must add them
            for (int r = 0; r < rows; ++r) {
                const auto rc = static_cast<std::size_t>(r * n + c);
                const auto cr = static_cast<std::size_t>(c * rows + r);
                if (gotT[cr] != got[rc] || gotGradT[cr] != gotGrad[rc]) {
                    QFAIL(qPrintable(QString("n = %1: transposed output differs at (%2, %3)")
                                         .arg(n)
                                         .arg(r)
                                         .arg(c)));
                }
                colSum += gotGrad[rc];
            }
            if (gotSums[static_cast<std::size_t>(c)] != colSum) {
                QFAIL(qPrintable(
                    QString("n = %1: column %2 sums to %3, want %4")
                        .arg(n)
                        .arg(c)
                        .arg(static_cast<double>(gotSums[static_cast<std::size_t>(c)]), 0, 'g', 17)
                        .arg(static_cast<double>(colSum), 0, 'g', 17)));
            }
        }
    }
}

// lm_transpose_sum without the GELU (a linear layer's output gradient, read at an offset and left
// as it is): the transpose exactly, and the column sums bit for bit against the host adding the
// rows in order, on whole tiles, edge rows and columns, one row or column, and more groups of
// columns than one work-group holds.
template <typename Real>
void transposeSumsMatchHost() {
    Bench<Real> t;
    struct Shape {
        int rows, cols;
    };
    const Shape shapes[] = {{1, 1}, {7, 9}, {8, 8}, {17, 64}, {130, 3}, {64, 200}, {9, 8 * 129}};
    for (const Shape s : shapes) {
        const auto n = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
        const auto src = seeded<Real>(n + kOffset, 90 + static_cast<std::uint64_t>(s.cols), 1.0);
        const cl::Buffer in = t.upload(src);
        const cl::Buffer out = t.upload(std::vector<Real>(n, Real(-7)));
        const cl::Buffer sums =
            t.upload(std::vector<Real>(static_cast<std::size_t>(s.cols) + 3, Real(-7)));
        t.ops.transposeSum({&in, kOffset}, s.rows, s.cols, out, {&sums, 3});
        const auto got = t.download(out, n);
        const auto gotSums = t.download(sums, static_cast<std::size_t>(s.cols), 3);
        QVERIFY(t.download(in, src.size()) == src);
        for (int c = 0; c < s.cols; ++c) {
            Real colSum = 0;
            for (int r = 0; r < s.rows; ++r) {
                const Real want = src[static_cast<std::size_t>(kOffset + r * s.cols + c)];
                colSum += want;
                if (got[static_cast<std::size_t>(c * s.rows + r)] != want) {
                    QFAIL(qPrintable(QString("transposeSum %1 x %2 at (%3, %4)")
                                         .arg(s.rows)
                                         .arg(s.cols)
                                         .arg(r)
                                         .arg(c)));
                }
            }
            if (gotSums[static_cast<std::size_t>(c)] != colSum) {
                QFAIL(qPrintable(
                    QString("transposeSum %1 x %2: column %3 sum").arg(s.rows).arg(s.cols).arg(c)));
            }
        }
    }
}

// The transposes the block products' operands come from (lm_transpose, lm_transpose_four):
// element for element against the host, on whole 8 x 8 tiles, edge tiles, single rows and
// columns and more than one work-group of tiles, the source at an offset.
template <typename Real>
void transposesMatchHost() {
    Bench<Real> t;
    struct Shape {
        int rows, cols;
    };
    const Shape shapes[] = {{1, 1}, {7, 9}, {8, 8}, {17, 64}, {130, 3}, {64, 200}};
    for (const Shape s : shapes) {
        const auto n = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
        const auto src = seeded<Real>(n + kOffset, 70 + static_cast<std::uint64_t>(s.rows), 1.0);
        const cl::Buffer in = t.upload(src);
        const cl::Buffer out = t.upload(std::vector<Real>(n, Real(-7)));
        t.ops.transpose({&in, kOffset}, s.rows, s.cols, out);
        const auto got = t.download(out, n);
        for (int r = 0; r < s.rows; ++r) {
            for (int c = 0; c < s.cols; ++c) {
                const Real want = src[static_cast<std::size_t>(kOffset + r * s.cols + c)];
                const Real have = got[static_cast<std::size_t>(c * s.rows + r)];
                if (have != want) {
                    QFAIL(qPrintable(QString("transpose %1 x %2 at (%3, %4): got %5, want %6")
                                         .arg(s.rows)
                                         .arg(s.cols)
                                         .arg(r)
                                         .arg(c)
                                         .arg(static_cast<double>(have))
                                         .arg(static_cast<double>(want))));
                }
            }
        }
    }
    // Four of those matrices, one after another in one buffer, in one launch.
    const int rows[4] = {7, 8, 17, 130}, cols[4] = {9, 8, 64, 3};
    long long offsets[4];
    long long total = kOffset;
    for (int q = 0; q < 4; ++q) {
        offsets[q] = total;
        total += static_cast<long long>(rows[q]) * cols[q];
    }
    const auto src = seeded<Real>(static_cast<std::size_t>(total), 80, 1.0);
    const cl::Buffer in = t.upload(src);
    std::vector<cl::Buffer> outs;
    outs.reserve(4);
    for (int q = 0; q < 4; ++q) {
        outs.push_back(
            t.upload(std::vector<Real>(static_cast<std::size_t>(rows[q] * cols[q]), Real(-7))));
    }
    const cl::Buffer* const dst[4] = {&outs[0], &outs[1], &outs[2], &outs[3]};
    const long long relative[4] = {offsets[0] - 5, offsets[1] - 5, offsets[2] - 5, offsets[3] - 5};
    t.ops.transposeFour({&in, 5}, relative, rows, cols, dst);
    for (int q = 0; q < 4; ++q) {
        const auto got = t.download(outs[static_cast<std::size_t>(q)],
                                    static_cast<std::size_t>(rows[q] * cols[q]));
        for (int r = 0; r < rows[q]; ++r) {
            for (int c = 0; c < cols[q]; ++c) {
                const Real want = src[static_cast<std::size_t>(offsets[q] + r * cols[q] + c)];
                if (got[static_cast<std::size_t>(c * rows[q] + r)] != want) {
                    QFAIL(qPrintable(
                        QString("transposeFour matrix %1 at (%2, %3)").arg(q).arg(r).arg(c)));
                }
            }
        }
    }
}

// C = op(A) op(B) + beta C0 through LmOpenClOps::gemm (CLBlast with the parameters in force on
// the test device) against a triple loop in long double, every transpose, shapes that are not
// multiples of CLBlast's 64 x 64 tiles or its vector width and one that is (128 x 64 x 96, which
// in the copy-free form A^T B runs on the operands in place), every operand at offset 0, at an
// offset gemm hands over as a sub-buffer, and at one it cannot.
template <typename Real>
void productsMatchLoop(double tolerance) {
    gpu::LmOpenClOps<Real> ops(opencl_test::context());
    struct Shape {
        int m, n, k;
    };
    for (const long long off : {0LL, kAlignedOffset, kOffset})
        for (const Shape s :
             {Shape{67, 45, 33}, Shape{130, 70, 129}, Shape{5, 3, 2}, Shape{128, 64, 96}}) {
            for (int t = 0; t < 4; ++t) {
                const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
                const int lda = ta ? s.m : s.k, ldb = tb ? s.k : s.n;
                const auto A = seeded<Real>(std::size_t(s.m) * s.k, 11 + t, 1.0);
                const auto B = seeded<Real>(std::size_t(s.k) * s.n, 23 + t, 1.0);
                const auto C0 = seeded<Real>(std::size_t(s.m) * s.n, 37 + t, 1.0);
                const auto u = static_cast<std::size_t>(off);
                auto a = ops.reals(A.size() + u, "A"), b = ops.reals(B.size() + u, "B");
                auto c = ops.reals(C0.size() + u, "C");
                ops.write(a, off, A.data(), A.size());
                ops.write(b, off, B.data(), B.size());
                ops.write(c, off, C0.data(), C0.size());
                const Real beta = t == 3 ? Real(1) : Real(0);
                const long long copiedBefore = ops.copiedProducts();
                ops.gemm(ta, tb, s.m, s.n, s.k, {&a, off}, lda, {&b, off}, ldb, beta, {&c, off},
                         s.n);
                std::vector<Real> got(C0.size());
                ops.read({&c, off}, got.data(), got.size());
                // A^T B on tile multiples at offset 0 or an aligned one: no copies with the tuned
                // tiles.
                if (s.m == 128 && ta && !tb && off != kOffset && tunedTiles()) {
                    QCOMPARE(ops.copiedProducts(), copiedBefore);
                }
                double worst = 0.0;
                for (int i = 0; i < s.m; ++i) {
                    for (int j = 0; j < s.n; ++j) {
                        long double want = beta * C0[std::size_t(i) * s.n + j];
                        for (int q = 0; q < s.k; ++q) {
                            const Real x =
                                ta ? A[std::size_t(q) * lda + i] : A[std::size_t(i) * lda + q];
                            const Real y =
                                tb ? B[std::size_t(j) * ldb + q] : B[std::size_t(q) * ldb + j];
                            want += static_cast<long double>(x) * y;
                        }
                        worst = std::max(
                            worst,
                            std::abs(static_cast<double>(got[std::size_t(i) * s.n + j] - want)));
                    }
                }
                if (worst > tolerance * s.k) {
                    QFAIL(
                        qPrintable(QString("gemm %1x%2x%3 transA %4 transB %5 offset %6: error %7")
                                       .arg(s.m)
                                       .arg(s.n)
                                       .arg(s.k)
                                       .arg(ta)
                                       .arg(tb)
                                       .arg(off)
                                       .arg(worst)));
                }
            }
        }
}

}  // namespace

class TestOpenClLmKernels : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void embedding_data() { shapes(); }
    void embedding() {
        QFETCH(int, shape);
        QFETCH(bool, fp64);
        const LmDims d = shapeNamed(shape);
        if (fp64)
            embeddingMatchesCpu<double>(d);
        else
            embeddingMatchesCpu<float>(d);
    }
    void block_data() { shapes(); }
    void block() {
        QFETCH(int, shape);
        QFETCH(bool, fp64);
        const LmDims d = shapeNamed(shape);
        if (fp64)
            blockMatchesCpu<double>(d);
        else
            blockMatchesCpu<float>(d);
    }
    void headAndCrossEntropy_data() { shapes(); }
    void headAndCrossEntropy() {
        QFETCH(int, shape);
        QFETCH(bool, fp64);
        const LmDims d = shapeNamed(shape);
        if (fp64)
            headMatchesCpu<double>(d);
        else
            headMatchesCpu<float>(d);
    }
    void sgdAndAverage_data() { precisions(); }
    void sgdAndAverage() {
        QFETCH(bool, fp64);
        if (fp64)
            updatesMatchCpu<double>();
        else
            updatesMatchCpu<float>();
    }

    void transposes_data() { precisions(); }
    void transposes() {
        QFETCH(bool, fp64);
        if (fp64)
            transposesMatchHost<double>();
        else
            transposesMatchHost<float>();
    }

    void transposeSums_data() { precisions(); }
    void transposeSums() {
        QFETCH(bool, fp64);
        if (fp64)
            transposeSumsMatchHost<double>();
        else
            transposeSumsMatchHost<float>();
    }

    void geluEveryLength_data() { precisions(); }
    void geluEveryLength() {
        QFETCH(bool, fp64);
        if (fp64)
            geluMatchesFormula<double>();
        else
            geluMatchesFormula<float>();
    }

    // PoCL's CPU device gets the measured Xgemm parameters (gpu/clblast_tuning.hpp), other
    // devices and PIPELENS_CLBLAST_TUNING=off keep CLBlast's own; the parameters must satisfy
    // the divisibility rules CLBlast checks, or every product would fail at run time.
    // PIPELENS_CL_PROFILE=1 (docs/opencl.md): a block's forward and backward are reported
    // command by command, counted right, with their device time inside the queue's span; without
    // it the report is empty.
    void profileReport() {
        const QByteArray before = qgetenv("PIPELENS_CL_PROFILE");
        qputenv("PIPELENS_CL_PROFILE", "1");
        gpu::LmOpenClOps<double> ops(opencl_test::context());
        if (before.isNull())
            qunsetenv("PIPELENS_CL_PROFILE");
        else
            qputenv("PIPELENS_CL_PROFILE", before);
        const LmDims d = oddDims();
        const auto nc = static_cast<std::size_t>(d.tokens() * d.width);
        const auto size = static_cast<std::size_t>(LmLayout::blockSize(d));
        auto wHost = seeded<double>(size, 4, 0.3);
        const cl::Buffer w = ops.reals(size, "w"), x = ops.reals(nc, "x"),
                         out = ops.reals(nc, "out");
        const cl::Buffer gw = ops.reals(size, "gw"), gin = ops.reals(nc, "gin");
        ops.write(w, 0, wHost.data(), size);
        ops.write(x, 0, seeded<double>(nc, 5, 1.0).data(), nc);
        gpu::LmOpenClStage<double> stage(ops, LmLayout(d), 1);
        stage.forward({&w, 0}, {}, {&x, 0}, {&out, 0});
        stage.backward({&w, 0}, {&out, 0}, {&gw, 0}, {&gin, 0});
        const QString report = QString::fromStdString(ops.profileReport());
        // Four attention launches: forward, backward rows and columns are one each; four
        // output gradients prepared by lm_transpose_sum; eight products forward and backward
        // of the 20-wide shape plus the weight gradients, all named by their sizes.
        QVERIFY2(report.contains(QRegularExpression("lm_attention_forward +1 commands")),
                 qPrintable(report));
        QVERIFY2(report.contains(QRegularExpression("lm_transpose_sum +4 commands")),
                 qPrintable(report));
        QVERIFY2(report.contains(QRegularExpression("Gemm 63 x 60 x 20 \\(copies\\) +1 commands")),
                 qPrintable(report));
        const auto total = QRegularExpression(
                               "PIPELENS_CL_PROFILE (\\d+) commands: ([0-9.]+) ms device "
                               "time in a span of ([0-9.]+) ms")
                               .match(report);
        QVERIFY2(total.hasMatch(), qPrintable(report));
        // Every kernel and product of the two passes, and the two uploads.
        QVERIFY2(report.contains(QRegularExpression("write +2 commands")), qPrintable(report));
        QCOMPARE(total.captured(1).toLongLong(), ops.kernelEnqueues() + 2);
        QVERIFY(total.captured(2).toDouble() > 0);
        QVERIFY(total.captured(2).toDouble() <= total.captured(3).toDouble() + 1e-3);
        gpu::LmOpenClOps<double> quiet(opencl_test::context());
        if (before.isNull() || before != "1") QVERIFY(quiet.profileReport().empty());
    }

    void clblastTuningChoice() {
        gpu::DeviceInfo pocl;
        pocl.platform = "Portable Computing Language";
        pocl.type = "cpu";
        const auto tuned = gpu::clblastOverridesFor(pocl, "");
        QCOMPARE(tuned.size(), std::size_t(3));
        QVERIFY(gpu::clblastOverridesFor(pocl, "off").empty());
        QVERIFY(gpu::clblastOverridesFor(pocl, "0").empty());
        gpu::DeviceInfo gpuDevice = pocl;
        gpuDevice.platform = "NVIDIA CUDA";
        gpuDevice.type = "gpu";
        QVERIFY(gpu::clblastOverridesFor(gpuDevice, "").empty());
        gpu::DeviceInfo otherCpu = pocl;
        otherCpu.platform = "Intel(R) OpenCL";
        QVERIFY(gpu::clblastOverridesFor(otherCpu, "").empty());
        // One Xgemm set per precision, then the routine's threshold for both.
        QCOMPARE(tuned[0].precision, std::string("float"));
        QCOMPARE(tuned[1].precision, std::string("double"));
        for (int i : {0, 1}) {
            const auto& p = tuned[static_cast<std::size_t>(i)].params;
            QCOMPARE(tuned[static_cast<std::size_t>(i)].kernel, std::string("Xgemm"));
            QCOMPARE(p.at("MWG") % (p.at("MDIMC") * p.at("VWM")), std::size_t(0));
            QCOMPARE(p.at("NWG") % (p.at("NDIMC") * p.at("VWN")), std::size_t(0));
            QCOMPARE(p.at("MWG") % (p.at("MDIMA") * p.at("VWM")), std::size_t(0));
            QCOMPARE(p.at("NWG") % (p.at("NDIMB") * p.at("VWN")), std::size_t(0));
            QCOMPARE(p.at("KWG") % (p.at("MDIMC") * p.at("NDIMC") / p.at("MDIMA")), std::size_t(0));
            QCOMPARE(p.at("KWG") % (p.at("MDIMC") * p.at("NDIMC") / p.at("NDIMB")), std::size_t(0));
            QCOMPARE(p.at("KWG") % p.at("KWI"), std::size_t(0));
            // CLBlast's kernel takes vectors of 1, 2, 4, 8 or 16 only.
            for (const char* v : {"VWM", "VWN"}) {
                QVERIFY(p.at(v) == 1 || p.at(v) == 2 || p.at(v) == 4 || p.at(v) == 8 ||
                        p.at(v) == 16);
            }
        }
        QCOMPARE(tuned[2].kernel, std::string("GemmRoutine"));
        QVERIFY(tuned[2].precision.empty());
    }

    // The products with the parameters in force on the test device, which on PoCL are the tuned
    // ones unless PIPELENS_CLBLAST_TUNING turns them off (the line LmOpenClOps reports says so).
    void productsWithDeviceParameters() {
        gpu::LmOpenClOps<float> ops(opencl_test::context());
        const bool tuned =
            !gpu::clblastOverridesFor(opencl_test::context()->info(),
                                      qgetenv("PIPELENS_CLBLAST_TUNING").toStdString())
                 .empty();
        QCOMPARE(ops.clblastTuning().find("tuned for PoCL") != std::string::npos, tuned);
        productsMatchLoop<float>(2e-6);
        if (opencl_test::context()->supports(gpu::Precision::Double)) {
            productsMatchLoop<double>(1e-14);
        }
    }

  private:
    static void precisions() {
        QTest::addColumn<bool>("fp64");
        QTest::newRow("double") << true;
        QTest::newRow("float") << false;
    }
    static void shapes() {
        QTest::addColumn<int>("shape");
        QTest::addColumn<bool>("fp64");
        QTest::newRow("N63-C20-H4/double") << 0 << true;
        QTest::newRow("N15-C12-H3/double") << 1 << true;
        QTest::newRow("N30-C22-H2/double") << 2 << true;
        QTest::newRow("N12-C21-H3/double") << 3 << true;
        QTest::newRow("N63-C20-H4/float") << 0 << false;
        QTest::newRow("N15-C12-H3/float") << 1 << false;
        QTest::newRow("N30-C22-H2/float") << 2 << false;
        QTest::newRow("N12-C21-H3/float") << 3 << false;
        QTest::newRow("N64-C64-H2-tiled/double") << 4 << true;
        QTest::newRow("N64-C64-H2-tiled/float") << 4 << false;
        QTest::newRow("N185-C24-H3/double") << 5 << true;
        QTest::newRow("N185-C24-H3/float") << 5 << false;
    }
};

QTEST_APPLESS_MAIN(TestOpenClLmKernels)
#include "tst_opencl_lm_kernels.moc"

// Each kernel of gpu/kernels against a plain CPU reference (Eigen), on sizes that are not
// multiples of the work-group size, with absolute and relative margins, in double and float.
#include <QtTest>

#include <Eigen/Dense>
#include <cstdlib>

#include "cl_error.hpp"
#include "cl_headers.hpp"
#include "kernel_args.hpp"
#include "objective/linear_objective.hpp"
#include "opencl_test_support.hpp"

using namespace pipelens;
using pipelens::gpu::Precision;

namespace {

// n = 1000 rows of b = 8 (M = 125 batches), d = 203 cut into S = 5 blocks (41, 41, 41, 40, 40):
// none a multiple of the work-group size (128 on PoCL) or of 16.
constexpr int kRows = 1000;
constexpr int kDim = 203;
constexpr int kBatch = 8;
constexpr int kStages = 5;

using gpu::KernelArgs;
using gpu::Local;
using gpu::Real;

double sigmoid(double z) {
    const double e = std::exp(-std::abs(z));
    return z >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}
double rowLoss(double z, double y, bool logistic) {
    if (logistic) return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))) - y * z;
    return (z - y) * (z - y);
}
double outputGradient(double a, double y, bool logistic) {
    return (logistic ? sigmoid(a) - y : a - y) / kBatch;
}

// A queue and the program of one precision, with helpers to move data and launch kernels.
class Device {
  public:
    explicit Device(Precision p) : p_(p), ctx_(opencl_test::context()) {
        program_ = ctx_->program(p);
        cl_int err = CL_SUCCESS;
        queue_ = cl::CommandQueue(ctx_->context(), ctx_->device(), 0, &err);
        gpu::checkCl(err, "clCreateCommandQueue");
    }
    int wg() const { return ctx_->workGroupSize(); }
    std::size_t realBytes() const { return p_ == Precision::Double ? 8 : 4; }
    // Values rounded to the precision, so references see exactly what the device sees.
    Eigen::VectorXd rounded(const Eigen::VectorXd& v) const {
        return p_ == Precision::Double ? v : v.cast<float>().cast<double>();
    }
    cl::Buffer reals(const Eigen::VectorXd& v) {
        cl::Buffer b = ctx_->buffer(static_cast<std::size_t>(v.size()) * realBytes(), "test");
        if (p_ == Precision::Double) {
            gpu::checkCl(queue_.enqueueWriteBuffer(b, CL_TRUE, 0, v.size() * 8, v.data()),
                         "clEnqueueWriteBuffer");
        } else {
            Eigen::VectorXf f = v.cast<float>();
            gpu::checkCl(queue_.enqueueWriteBuffer(b, CL_TRUE, 0, f.size() * 4, f.data()),
                         "clEnqueueWriteBuffer");
        }
        return b;
    }
    cl::Buffer ints(const std::vector<int>& v) {
        cl::Buffer b = ctx_->buffer(v.size() * sizeof(int), "test");
        gpu::checkCl(queue_.enqueueWriteBuffer(b, CL_TRUE, 0, v.size() * sizeof(int), v.data()),
                     "clEnqueueWriteBuffer");
        return b;
    }
    Eigen::VectorXd read(const cl::Buffer& b, Eigen::Index count) {
        Eigen::VectorXd out(count);
        if (p_ == Precision::Double) {
            gpu::checkCl(queue_.enqueueReadBuffer(b, CL_TRUE, 0, count * 8, out.data()),
                         "clEnqueueReadBuffer");
        } else {
            Eigen::VectorXf f(count);
            gpu::checkCl(queue_.enqueueReadBuffer(b, CL_TRUE, 0, count * 4, f.data()),
                         "clEnqueueReadBuffer");
            out = f.cast<double>();
        }
        return out;
    }
    template <typename... Args>
    void run(const char* name, cl::NDRange global, cl::NDRange local, Args... args) {
        cl::Kernel k = gpu::makeKernel(program_, name);
        KernelArgs set(k, name, p_);
        (set(args), ...);
        gpu::checkCl(queue_.enqueueNDRangeKernel(k, cl::NullRange, global, local),
                     "clEnqueueNDRangeKernel", name);
        gpu::checkCl(queue_.finish(), "clFinish", name);
    }
    // Rounded up to whole work-groups of wg().
    cl::NDRange groups(std::size_t n, std::size_t m = 1) const {
        const auto w = static_cast<std::size_t>(wg());
        return {std::max(w, (n + w - 1) / w * w), m};
    }
    cl::NDRange local() const { return {static_cast<std::size_t>(wg()), 1}; }
    Local scratch() const { return {static_cast<std::size_t>(wg()) * realBytes()}; }
    // Margins: double to a few ulps of the sums' magnitude, float to 3e-5 of it.
    double tol() const { return p_ == Precision::Double ? 1e-12 : 3e-5; }

  private:
    Precision p_;
    std::shared_ptr<gpu::OpenClContext> ctx_;
    cl::Program program_;
    cl::CommandQueue queue_;
};

// |got - want| <= tol * (scale + |want|) element by element, reporting the first miss.
void expectClose(const Eigen::VectorXd& got, const Eigen::VectorXd& want, double tol, double scale,
                 const char* what) {
    QCOMPARE(got.size(), want.size());
    for (Eigen::Index i = 0; i < want.size(); ++i) {
        if (!opencl_test::close(got[i], want[i], tol, tol * scale) || !std::isfinite(got[i])) {
            QFAIL(qPrintable(QString("%1[%2]: got %3, want %4 (tolerance %5)")
                                 .arg(what)
                                 .arg(i)
                                 .arg(got[i], 0, 'g', 17)
                                 .arg(want[i], 0, 'g', 17)
                                 .arg(tol)));
        }
    }
}

// Row-major X as the backend stores it.
Eigen::VectorXd rowMajor(const Eigen::MatrixXd& X) {
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = X;
    return Eigen::Map<const Eigen::VectorXd>(r.data(), r.size());
}

struct Problem {
    Eigen::MatrixXd X;
    Eigen::VectorXd y;
    std::vector<BlockRange> blocks = splitBlocks(kDim, kStages);
    bool logistic = false;
};

Problem makeProblem(const Device& dev, bool logistic, unsigned seed) {
    std::srand(seed);
    Problem p;
    p.logistic = logistic;
    p.X = Eigen::MatrixXd::Random(kRows, kDim);
    p.y = Eigen::VectorXd::Random(kRows);
    if (logistic) p.y = (p.y.array() > 0.0).cast<double>().matrix();
    // Round the inputs once, so the reference computes with exactly the device's inputs.
    p.X = dev.rounded(rowMajor(p.X)).reshaped<Eigen::RowMajor>(kRows, kDim);
    p.y = dev.rounded(p.y);
    return p;
}

Eigen::VectorXd randomVector(const Device& dev, Eigen::Index n) {
    return dev.rounded(Eigen::VectorXd::Random(n));
}

std::vector<int> opEntry(int kind, int stage, int batch, int replica, int stash, int act,
                         const BlockRange& blk) {
    return {stage, batch, replica, stash, act, blk.offset, blk.size, kind};
}

void addCases() {
    QTest::addColumn<int>("precision");
    QTest::addColumn<bool>("logistic");
    QTest::newRow("double/quadratic") << static_cast<int>(Precision::Double) << false;
    QTest::newRow("double/logistic") << static_cast<int>(Precision::Double) << true;
    QTest::newRow("float/quadratic") << static_cast<int>(Precision::Float) << false;
    QTest::newRow("float/logistic") << static_cast<int>(Precision::Float) << true;
}

}  // namespace

class TestOpenClKernels : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    // Three forwards (first, middle and last stage) and two backwards in one launch.
    void pipelineSlot_data() { addCases(); }
    void pipelineSlot() {
        QFETCH(int, precision);
        QFETCH(bool, logistic);
        Device dev(static_cast<Precision>(precision));
        const Problem pr = makeProblem(dev, logistic, 11);
        const int R = 2;
        const int actSlots = 5;
        const double l2 = logistic ? 0.05 : 0.0;
        const double step = 0.3;
        const double avgWeight = 1.0 / R;
        std::vector<int> stashBase;
        int stashTotal = 0;
        for (const auto& blk : pr.blocks) {
            stashBase.push_back(stashTotal);
            stashTotal += 2 * blk.size;
        }
        Eigen::VectorXd weights = randomVector(dev, R * kDim);
        Eigen::VectorXd stash = randomVector(dev, stashTotal);
        Eigen::VectorXd act = randomVector(dev, actSlots * kBatch);
        Eigen::VectorXd grad = randomVector(dev, actSlots * kBatch);
        Eigen::VectorXd avg = randomVector(dev, kDim);
        struct Op {
            int kind, stage, batch, replica, slot, act;
        };
        const std::vector<Op> ops = {{1, 1, 5, 0, 0, 3},
                                     {1, 3, 9, 1, 1, 4},
                                     {0, 0, 3, 1, 1, 0},
                                     {0, 2, 7, 0, 0, 1},
                                     {0, 4, 11, 1, 1, 2}};
        std::vector<int> table;
        for (const Op& o : ops) {
            auto e = opEntry(o.kind, o.stage, o.batch, o.replica,
                             stashBase[o.stage] + o.slot * pr.blocks[o.stage].size, o.act,
                             pr.blocks[o.stage]);
            table.insert(table.end(), e.begin(), e.end());
        }
        // The reference, op by op (they are independent).
        Eigen::VectorXd wantW = weights, wantStash = stash, wantAct = act, wantGrad = grad;
        Eigen::VectorXd wantAvg = avg, wantDelta = Eigen::VectorXd::Zero(kDim);
        Eigen::VectorXd wantGsq = Eigen::VectorXd::Zero(kDim);
        for (const Op& o : ops) {
            const BlockRange& blk = pr.blocks[o.stage];
            auto Xb = pr.X.block(o.batch * kBatch, blk.offset, kBatch, blk.size);
            auto w = weights.segment(o.replica * kDim + blk.offset, blk.size);
            const int st = stashBase[o.stage] + o.slot * blk.size;
            if (o.kind == 0) {
                wantStash.segment(st, blk.size) = w;
                Eigen::VectorXd a = Xb * w;
                if (o.stage != 0) a += act.segment(o.act * kBatch, kBatch);
                wantAct.segment(o.act * kBatch, kBatch) = a;
                if (o.stage == kStages - 1) {
                    for (int r = 0; r < kBatch; ++r) {
                        wantGrad[o.act * kBatch + r] =
                            outputGradient(a[r], pr.y[o.batch * kBatch + r], logistic);
                    }
                }
            } else {
                Eigen::VectorXd g = Xb.transpose() * grad.segment(o.act * kBatch, kBatch);
                g += l2 * stash.segment(st, blk.size);
                wantW.segment(o.replica * kDim + blk.offset, blk.size) -= step * g;
                wantAvg.segment(blk.offset, blk.size) += avgWeight * (-step * g);
                wantDelta.segment(blk.offset, blk.size) = avgWeight * (-step * g);
                wantGsq.segment(blk.offset, blk.size) = g.array().square().matrix();
            }
        }
        cl::Buffer X = dev.reals(rowMajor(pr.X)), y = dev.reals(pr.y), bw = dev.reals(weights),
                   bs = dev.reals(stash), ba = dev.reals(act), bg = dev.reals(grad),
                   bavg = dev.reals(avg), bd = dev.reals(Eigen::VectorXd::Zero(kDim)),
                   bq = dev.reals(Eigen::VectorXd::Zero(kDim)), bops = dev.ints(table);
        dev.run("pipeline_slot", dev.groups(41, ops.size()), dev.local(), X, y, kDim, kBatch,
                kStages - 1, logistic ? 1 : 0, Real{l2}, Real{step}, Real{avgWeight}, bops, bw, bs,
                ba, bg, bavg, bd, bq);
        const double t = dev.tol();
        expectClose(dev.read(bw, R * kDim), wantW, t, 10, "weights");
        expectClose(dev.read(bs, stashTotal), wantStash, 0, 0, "stash");
        expectClose(dev.read(ba, actSlots * kBatch), wantAct, t, 50, "act");
        expectClose(dev.read(bg, actSlots * kBatch), wantGrad, t, 10, "grad");
        expectClose(dev.read(bavg, kDim), wantAvg, t, 10, "average");
        expectClose(dev.read(bd, kDim), wantDelta, t, 10, "deltaAvg");
        expectClose(dev.read(bq, kDim), wantGsq, t, 100, "gradSq");
    }

    // The objective after each of a slot's updates (prefix sums over the rows), then the
    // per-update reduction with the block gradient and weight norms.
    void sampleAndFinishUpdates_data() { addCases(); }
    void sampleAndFinishUpdates() {
        QFETCH(int, precision);
        QFETCH(bool, logistic);
        Device dev(static_cast<Precision>(precision));
        const Problem pr = makeProblem(dev, logistic, 12);
        Eigen::VectorXd z = randomVector(dev, kRows);
        Eigen::VectorXd delta = dev.rounded(0.1 * Eigen::VectorXd::Random(kDim));
        Eigen::VectorXd gradSq = dev.rounded(Eigen::VectorXd::Random(kDim).cwiseAbs());
        Eigen::VectorXd avg = randomVector(dev, kDim);
        const std::vector<int> stages = {3, 0, 4};
        std::vector<int> table;
        for (int s : stages) {
            auto e = opEntry(1, s, 0, 0, 0, 0, pr.blocks[s]);
            table.insert(table.end(), e.begin(), e.end());
        }
        const int rowsPerItem = 3;
        const int items = ((kRows + rowsPerItem - 1) / rowsPerItem + 15) / 16 * 16;
        const auto U = static_cast<int>(stages.size());
        Eigen::VectorXd wantZ = z;
        Eigen::VectorXd wantOut(3 * U);
        for (int u = 0; u < U; ++u) {
            const BlockRange& blk = pr.blocks[stages[u]];
            wantZ += pr.X.middleCols(blk.offset, blk.size) * delta.segment(blk.offset, blk.size);
            double loss = 0.0;
            for (int i = 0; i < kRows; ++i) loss += rowLoss(wantZ[i], pr.y[i], logistic);
            wantOut[3 * u] = loss;
            wantOut[3 * u + 1] = gradSq.segment(blk.offset, blk.size).sum();
            wantOut[3 * u + 2] = avg.segment(blk.offset, blk.size).squaredNorm();
        }
        cl::Buffer X = dev.reals(rowMajor(pr.X)), y = dev.reals(pr.y), bz = dev.reals(z),
                   bd = dev.reals(delta), bq = dev.reals(gradSq), bavg = dev.reals(avg),
                   bops = dev.ints(table), partial = dev.reals(Eigen::VectorXd::Zero(U * items)),
                   out = dev.reals(Eigen::VectorXd::Zero(3 * U));
        dev.run("sample_updates", cl::NDRange(items), cl::NDRange(16), X, y, kRows, kDim,
                logistic ? 1 : 0, bops, U, bd, bz, rowsPerItem, partial);
        dev.run("finish_updates", cl::NDRange(U * dev.wg()), cl::NDRange(dev.wg()), partial, items,
                bops, bq, bavg, out, dev.scratch());
        expectClose(dev.read(bz, kRows), wantZ, dev.tol(), 10, "z");
        expectClose(dev.read(out, 3 * U), wantOut, dev.tol(), 100, "per-update sums");
    }

    void matvecAndLoss_data() { addCases(); }
    void matvecAndLoss() {
        QFETCH(int, precision);
        QFETCH(bool, logistic);
        Device dev(static_cast<Precision>(precision));
        const Problem pr = makeProblem(dev, logistic, 13);
        Eigen::VectorXd w = randomVector(dev, kDim);
        Eigen::VectorXd wantZ = pr.X * w;
        cl::Buffer X = dev.reals(rowMajor(pr.X)), y = dev.reals(pr.y), bw = dev.reals(w),
                   z = dev.reals(Eigen::VectorXd::Zero(kRows));
        dev.run("matvec_rows", dev.groups(kRows), dev.local(), X, bw, kRows, kDim, z);
        expectClose(dev.read(z, kRows), wantZ, dev.tol(), 30, "X w");
        // The loss of the device's own z, so this checks the reduction alone.
        const Eigen::VectorXd zDev = dev.read(z, kRows);
        double wantLoss = 0.0;
        for (int i = 0; i < kRows; ++i) wantLoss += rowLoss(zDev[i], pr.y[i], logistic);
        const int groups = (kRows + dev.wg() - 1) / dev.wg();
        cl::Buffer partial = dev.reals(Eigen::VectorXd::Zero(groups)),
                   out = dev.reals(Eigen::VectorXd::Zero(2));
        dev.run("loss_partials", dev.groups(kRows), dev.local(), z, y, kRows, logistic ? 1 : 0,
                partial, dev.scratch());
        dev.run("reduce_sum", dev.groups(1), dev.local(), partial, groups, out, 1, dev.scratch());
        expectClose(dev.read(out, 2).tail(1), Eigen::VectorXd::Constant(1, wantLoss), dev.tol(),
                    100, "loss sum");
    }

    // The full gradient: residuals, per-chunk column sums, squares with the l2 term, sum.
    void gradientNorm_data() { addCases(); }
    void gradientNorm() {
        QFETCH(int, precision);
        QFETCH(bool, logistic);
        Device dev(static_cast<Precision>(precision));
        const Problem pr = makeProblem(dev, logistic, 14);
        Eigen::VectorXd z = randomVector(dev, kRows);
        Eigen::VectorXd w = randomVector(dev, kDim);
        const double l2 = logistic ? 0.01 : 0.0;
        Eigen::VectorXd r(kRows);
        for (int i = 0; i < kRows; ++i) r[i] = logistic ? sigmoid(z[i]) - pr.y[i] : z[i] - pr.y[i];
        Eigen::VectorXd g = pr.X.transpose() * r / kRows + l2 * w;
        const int rowsPerChunk = 96;
        const int chunks = (kRows + rowsPerChunk - 1) / rowsPerChunk;
        cl::Buffer X = dev.reals(rowMajor(pr.X)), y = dev.reals(pr.y), bz = dev.reals(z),
                   bw = dev.reals(w), partial = dev.reals(Eigen::VectorXd::Zero(chunks * kDim)),
                   gsq = dev.reals(Eigen::VectorXd::Zero(kDim)),
                   out = dev.reals(Eigen::VectorXd::Zero(1));
        dev.run("residuals", dev.groups(kRows), dev.local(), bz, y, kRows, logistic ? 1 : 0);
        expectClose(dev.read(bz, kRows), r, dev.tol(), 1, "residuals");
        dev.run("gradient_partials", dev.groups(kDim, chunks), dev.local(), X, bz, kRows, kDim,
                rowsPerChunk, partial);
        dev.run("gradient_squares", dev.groups(kDim), dev.local(), partial, chunks, kRows, kDim,
                Real{l2}, bw, gsq);
        expectClose(dev.read(gsq, kDim), g.array().square().matrix(), dev.tol(), 1, "g^2");
        dev.run("reduce_sum", dev.groups(1), dev.local(), gsq, kDim, out, 0, dev.scratch());
        expectClose(dev.read(out, 1), Eigen::VectorXd::Constant(1, g.squaredNorm()), dev.tol(), 1,
                    "||g||^2");
    }

    void blockSquaresAndReplicas_data() { addCases(); }
    void blockSquaresAndReplicas() {
        QFETCH(int, precision);
        Device dev(static_cast<Precision>(precision));
        const auto blocks = splitBlocks(kDim, kStages);
        std::srand(15);
        const int R = 3;
        Eigen::VectorXd v = randomVector(dev, kDim);
        std::vector<int> table;
        Eigen::VectorXd want(kStages);
        for (int s = 0; s < kStages; ++s) {
            table.push_back(blocks[s].offset);
            table.push_back(blocks[s].size);
            want[s] = v.segment(blocks[s].offset, blocks[s].size).squaredNorm();
        }
        cl::Buffer bv = dev.reals(v), bt = dev.ints(table),
                   out = dev.reals(Eigen::VectorXd::Zero(kStages));
        dev.run("block_squares", cl::NDRange(kStages * dev.wg()), cl::NDRange(dev.wg()), bv, bt,
                out, dev.scratch());
        expectClose(dev.read(out, kStages), want, dev.tol(), 1, "block squares");

        Eigen::VectorXd replicas = randomVector(dev, R * kDim);
        Eigen::VectorXd mean = replicas.reshaped(kDim, R).rowwise().mean();
        cl::Buffer br = dev.reals(replicas), avg = dev.reals(Eigen::VectorXd::Zero(kDim));
        dev.run("average_replicas", dev.groups(kDim), dev.local(), br, R, kDim, avg);
        expectClose(dev.read(avg, kDim), mean, dev.tol(), 1, "average");
        expectClose(dev.read(br, R * kDim), mean.replicate(R, 1), dev.tol(), 1, "replicas");

        cl::Buffer copies = dev.reals(Eigen::VectorXd::Zero(4 * kDim));
        dev.run("broadcast_vector", dev.groups(kDim), dev.local(), bv, kDim, 4, copies);
        expectClose(dev.read(copies, 4 * kDim), v.replicate(4, 1), 0, 0, "broadcast");

        cl::Buffer copied = dev.reals(Eigen::VectorXd::Zero(kDim));
        dev.run("copy_vector", dev.groups(kDim), dev.local(), bv, copied, cl_long{kDim});
        expectClose(dev.read(copied, kDim), v, 0, 0, "copy");
    }

    // RPD: the forward over mixed ring columns, the block gradient, and the ring's advance.
    void rpdStep_data() { addCases(); }
    void rpdStep() {
        QFETCH(int, precision);
        QFETCH(bool, logistic);
        Device dev(static_cast<Precision>(precision));
        const Problem pr = makeProblem(dev, logistic, 16);
        const int depth = 4;
        const int batch = 17;
        const int stage = 2;
        const double l2 = logistic ? 0.02 : 0.0;
        const double step = 0.4;
        Eigen::VectorXd ring = randomVector(dev, depth * kDim);
        Eigen::VectorXd current = ring.segment(1 * kDim, kDim);  // column cur = 1
        const std::vector<int> cols = {1, 0, 3, 2, 1};
        std::vector<int> blockTable;
        Eigen::VectorXd point(kDim);
        for (int j = 0; j < kStages; ++j) {
            const BlockRange& blk = pr.blocks[j];
            blockTable.push_back(blk.offset);
            blockTable.push_back(blk.size);
            point.segment(blk.offset, blk.size) =
                ring.segment(cols[j] * kDim + blk.offset, blk.size);
        }
        std::vector<int> step_table = opEntry(1, stage, batch, 0, 0, 0, pr.blocks[stage]);
        step_table.insert(step_table.end(), cols.begin(), cols.end());
        auto Xb = pr.X.middleRows(batch * kBatch, kBatch);
        Eigen::VectorXd a = Xb * point;
        Eigen::VectorXd og(kBatch);
        for (int r = 0; r < kBatch; ++r) {
            og[r] = outputGradient(a[r], pr.y[batch * kBatch + r], logistic);
        }
        const BlockRange& blk = pr.blocks[stage];
        Eigen::VectorXd g = Xb.middleCols(blk.offset, blk.size).transpose() * og +
                            l2 * point.segment(blk.offset, blk.size);
        Eigen::VectorXd wantDelta = Eigen::VectorXd::Zero(kDim);
        wantDelta.segment(blk.offset, blk.size) = -step * g;
        Eigen::VectorXd wantRing = ring;
        wantRing.segment(2 * kDim, kDim) = current + wantDelta;  // next = 2
        cl::Buffer X = dev.reals(rowMajor(pr.X)), y = dev.reals(pr.y), br = dev.reals(ring),
                   bcur = dev.reals(current), bt = dev.ints(blockTable), bst = dev.ints(step_table),
                   bg = dev.reals(Eigen::VectorXd::Zero(kBatch)),
                   bd = dev.reals(Eigen::VectorXd::Zero(kDim)),
                   bq = dev.reals(Eigen::VectorXd::Zero(kDim));
        dev.run("rpd_forward", dev.groups(kBatch), dev.local(), X, y, kDim, kBatch, batch, kStages,
                bt, bst, br, logistic ? 1 : 0, bg);
        expectClose(dev.read(bg, kBatch), og, dev.tol(), 1, "output gradient");
        dev.run("rpd_backward", dev.groups(blk.size), dev.local(), X, kDim, kBatch, batch,
                blk.offset, blk.size, cols[stage], br, bg, Real{l2}, Real{step}, bd, bq);
        Eigen::VectorXd gotDelta = dev.read(bd, kDim);
        expectClose(gotDelta.segment(blk.offset, blk.size), wantDelta.segment(blk.offset, blk.size),
                    dev.tol(), 1, "delta");
        expectClose(dev.read(bq, kDim).segment(blk.offset, blk.size), g.array().square().matrix(),
                    dev.tol(), 1, "g^2");
        dev.run("rpd_advance", dev.groups(kDim), dev.local(), br, kDim, 1, 2, blk.offset, blk.size,
                bd, bcur);
        expectClose(dev.read(br, depth * kDim), wantRing, dev.tol(), 1, "ring");
        expectClose(dev.read(bcur, kDim), current + wantDelta, dev.tol(), 1, "current iterate");
    }
};

QTEST_APPLESS_MAIN(TestOpenClKernels)
#include "tst_opencl_kernels.moc"

#include "opencl_backend.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <thread>

#include "cl_error.hpp"
#include "cmdline/environment.hpp"
#include "errors.hpp"
#include "kernel_args.hpp"

namespace pipelens::gpu {
namespace {

// Rebuild z = X w from scratch this often, as CpuBackend does.
constexpr long long kResyncUpdates = 4096;
constexpr int kOpFields = 8;  // OP_FIELDS in kernels/common.cl
// With an optimizer the table carries two more ints per op after the ops (pipeline.cl,
// pipeline_slot_optimizer): whether it ends its step and the block's step count.
constexpr int kOptimizerFields = 2;
constexpr int kOpTableFields = kOpFields + kOptimizerFields;
enum OpField { kStage = 0, kBatch, kReplica, kStash, kAct, kOffset, kSize, kKind };
constexpr int kRowsPerGradientChunk = 256;
constexpr int kSampleGroup = 16;  // work-items per group of sample_updates

std::string mib(std::uint64_t bytes) {
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

}  // namespace

struct OpenClBackend::Kernels {
    cl::Kernel slot, average, broadcast, sample, finish, matvec, lossPartials, reduce, blockSquares,
        residuals, gradientPartials, gradientSquares, rpdForward, rpdBackward, rpdAdvance,
        slotOptimizer, rpdBackwardOptimizer, averageInPlace, slotCorrector, rpdBackwardCorrector;
};

struct OpenClBackend::Buffers {
    cl::Buffer X, y, z, average, deltaAvg, gradSq, partial, out, blocks, ops;
    cl::Buffer weights;  // replicas (pipelines) or the ring of iterates (RPD)
    cl::Buffer stash, act, grad;
    cl::Buffer gradRows, gradPartial, gradSquares;  // gradientNormSquared(), made on first use
    // The optimizer's state (v or m; s) and a synchronous step's pending sum, laid out like the
    // weights (replicas x d; d for RPD); a one-element stand-in where the optimizer has none.
    cl::Buffer first, second, pending;
    // Correctors: each block's last applied change d, accumulate's sums (replicas x d, or a
    // one-element stand-in) and the ops' reals (readShift, step size).
    cl::Buffer last, gradSum, opReals;
};

OpenClBackend::OpenClBackend(std::shared_ptr<OpenClContext> context, OpenClBackendOptions options)
    : context_(std::move(context)), options_(options) {
    if (!context_) throw std::invalid_argument("OpenClBackend needs a context");
    cl::Program program = context_->program(options_.precision);
    cl_int err = CL_SUCCESS;
    profile_ = checkedEnvironment("PIPELENS_CL_PROFILE").value_or("0") == "1";
    queue_ = cl::CommandQueue(context_->context(), context_->device(),
                              profile_ ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    checkCl(err, "clCreateCommandQueue", context_->info().name);
    kernels_ = std::make_unique<Kernels>();
    Kernels& k = *kernels_;
    k.slot = makeKernel(program, "pipeline_slot");
    k.average = makeKernel(program, "average_replicas");
    k.broadcast = makeKernel(program, "broadcast_vector");
    k.sample = makeKernel(program, "sample_updates");
    k.finish = makeKernel(program, "finish_updates");
    k.matvec = makeKernel(program, "matvec_rows");
    k.lossPartials = makeKernel(program, "loss_partials");
    k.reduce = makeKernel(program, "reduce_sum");
    k.blockSquares = makeKernel(program, "block_squares");
    k.residuals = makeKernel(program, "residuals");
    k.gradientPartials = makeKernel(program, "gradient_partials");
    k.gradientSquares = makeKernel(program, "gradient_squares");
    k.rpdForward = makeKernel(program, "rpd_forward");
    k.rpdBackward = makeKernel(program, "rpd_backward");
    k.rpdAdvance = makeKernel(program, "rpd_advance");
    k.slotOptimizer = makeKernel(program, "pipeline_slot_optimizer");
    k.rpdBackwardOptimizer = makeKernel(program, "rpd_backward_optimizer");
    k.averageInPlace = makeKernel(program, "average_in_place");
    k.slotCorrector = makeKernel(program, "pipeline_slot_corrector");
    k.rpdBackwardCorrector = makeKernel(program, "rpd_backward_corrector");
    buffers_ = std::make_unique<Buffers>();
}

OpenClBackend::~OpenClBackend() {
    // Outstanding work must end before the buffers go; errors here have nowhere to go.
    if (queue_()) queue_.finish();
    if (profile_) {
        for (const auto& [name, stat] : profileNs_) {
            std::fprintf(stderr, "PIPELENS_CL_PROFILE %-20s %8lld launches %10.3f ms device\n",
                         name.c_str(), stat.first, static_cast<double>(stat.second) * 1e-6);
        }
    }
}

std::string OpenClBackend::name() const {
    return context_->describe(options_.precision);
}

std::size_t OpenClBackend::realBytes() const {
    return options_.precision == Precision::Double ? sizeof(double) : sizeof(float);
}

void OpenClBackend::countCall() {
    if (options_.simulateDeviceLossAfter >= 0 && calls_ >= options_.simulateDeviceLossAfter) {
        throw ClError("clEnqueueNDRangeKernel", CL_DEVICE_NOT_AVAILABLE,
                      context_->info().name + " stopped answering (simulated device loss)");
    }
    ++calls_;
}

void OpenClBackend::enqueue(cl::Kernel& kernel, std::size_t global0, std::size_t global1,
                            const char* name, int localSize) {
    const auto wg = static_cast<std::size_t>(context_->workGroupSize());
    global1 = std::max<std::size_t>(1, global1);
    cl::Event event;
    cl::NDRange global(std::max<std::size_t>(1, global0), global1);
    cl::NDRange local = cl::NDRange(static_cast<std::size_t>(localSize), 1);
    if (localSize == 0) {
        // Kernels with work-group reductions run in groups of exactly WG.
        global = cl::NDRange(std::max<std::size_t>(wg, (global0 + wg - 1) / wg * wg), global1);
        local = cl::NDRange(wg, 1);
    }
    checkCl(queue_.enqueueNDRangeKernel(kernel, cl::NullRange, global, local, nullptr,
                                        profile_ ? &event : nullptr),
            "clEnqueueNDRangeKernel", name);
    ++enqueues_;
    if (profile_) {
        // Diagnostics only (PIPELENS_CL_PROFILE=1): serialises the queue.
        checkCl(event.wait(), "clWaitForEvents", name);
        cl_ulong start = 0, end = 0;
        event.getProfilingInfo(CL_PROFILING_COMMAND_START, &start);
        event.getProfilingInfo(CL_PROFILING_COMMAND_END, &end);
        auto& stat = profileNs_[name];
        ++stat.first;
        stat.second += static_cast<long long>(end - start);
    }
}

void OpenClBackend::readReals(const cl::Buffer& buffer, std::size_t count,
                              std::vector<double>& out) {
    out.resize(count);
    if (options_.precision == Precision::Double) {
        checkCl(queue_.enqueueReadBuffer(buffer, CL_TRUE, 0, count * sizeof(double), out.data()),
                "clEnqueueReadBuffer");
        return;
    }
    floatStaging_.resize(count);
    checkCl(
        queue_.enqueueReadBuffer(buffer, CL_TRUE, 0, count * sizeof(float), floatStaging_.data()),
        "clEnqueueReadBuffer");
    std::copy(floatStaging_.begin(), floatStaging_.end(), out.begin());
}

void OpenClBackend::writeInts(const cl::Buffer& buffer, const std::vector<int>& values) {
    // Not blocking, so a slot is one batch of commands: two staging copies alternate, and one
    // is reused only after its previous write has finished (normally long before).
    Staging& st = staging_[nextStaging_];
    nextStaging_ = 1 - nextStaging_;
    if (st.pending) {
        checkCl(st.written.wait(), "clWaitForEvents", "op table upload");
        st.pending = false;
    }
    st.values = values;
    checkCl(queue_.enqueueWriteBuffer(buffer, CL_FALSE, 0, st.values.size() * sizeof(int),
                                      st.values.data(), nullptr, &st.written),
            "clEnqueueWriteBuffer", "op table");
    st.pending = true;
}

void OpenClBackend::writeRealsAsync(const cl::Buffer& buffer, const std::vector<double>& values) {
    // As writeInts: a blocking write here drained the queue every slot, which cost a corrected
    // run up to a third more than a plain one where updates are cheap (n = 2000 on PoCL).
    RealStaging& st = realStaging_[nextRealStaging_];
    nextRealStaging_ = 1 - nextRealStaging_;
    if (st.pending) {
        checkCl(st.written.wait(), "clWaitForEvents", "op reals upload");
        st.pending = false;
    }
    const void* data = nullptr;
    std::size_t bytes = 0;
    if (options_.precision == Precision::Double) {
        st.doubles = values;
        data = st.doubles.data();
        bytes = values.size() * sizeof(double);
    } else {
        st.floats.assign(values.begin(), values.end());
        data = st.floats.data();
        bytes = values.size() * sizeof(float);
    }
    checkCl(queue_.enqueueWriteBuffer(buffer, CL_FALSE, 0, bytes, data, nullptr, &st.written),
            "clEnqueueWriteBuffer", "op reals");
    st.pending = true;
}

void OpenClBackend::writeReals(const cl::Buffer& buffer, std::size_t offsetElems,
                               const double* values, std::size_t count) {
    if (options_.precision == Precision::Double) {
        checkCl(queue_.enqueueWriteBuffer(buffer, CL_TRUE, offsetElems * sizeof(double),
                                          count * sizeof(double), values),
                "clEnqueueWriteBuffer");
        return;
    }
    floatStaging_.assign(values, values + count);
    checkCl(queue_.enqueueWriteBuffer(buffer, CL_TRUE, offsetElems * sizeof(float),
                                      count * sizeof(float), floatStaging_.data()),
            "clEnqueueWriteBuffer");
}

namespace {

// dst (rows [r0, r0 + count) of X, row-major, columns [c0, c1)) from column-major X, in tiles so
// that both the reads and the writes stay in cache.
template <typename T>
void transposeSlab(T* dst, const Eigen::MatrixXd& X, Eigen::Index r0, Eigen::Index count,
                   Eigen::Index c0, Eigen::Index c1) {
    constexpr Eigen::Index kTile = 32;
    const Eigen::Index n = X.rows();
    const Eigen::Index d = X.cols();
    const double* src = X.data();
    for (Eigen::Index ci = c0; ci < c1; ci += kTile) {
        const Eigen::Index ce = std::min(c1, ci + kTile);
        for (Eigen::Index ri = 0; ri < count; ri += kTile) {
            const Eigen::Index re = std::min(count, ri + kTile);
            for (Eigen::Index r = ri; r < re; ++r) {
                T* out = dst + r * d;
                for (Eigen::Index c = ci; c < ce; ++c) {
                    out[c] = static_cast<T>(src[c * n + r0 + r]);
                }
            }
        }
    }
}

}  // namespace

void OpenClBackend::uploadRowMajor(const Eigen::MatrixXd& X, const cl::Buffer& buffer) {
    // Straight into the mapped device buffer (no copy at all on a CPU device), a slab of rows at
    // a time, transposed by a few host threads.
    const std::size_t real = realBytes();
    const auto d = static_cast<std::size_t>(X.cols());
    const auto n = static_cast<std::size_t>(X.rows());
    const std::size_t slabRows = std::max<std::size_t>(1, (std::size_t{64} << 20) / (real * d));
    const unsigned threads = n * d > (std::size_t{1} << 22)
                                 ? std::clamp(std::thread::hardware_concurrency(), 1u, 4u)
                                 : 1u;
    for (std::size_t r0 = 0; r0 < n; r0 += slabRows) {
        const std::size_t count = std::min(slabRows, n - r0);
        cl_int err = CL_SUCCESS;
        void* mapped =
            queue_.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, r0 * d * real,
                                    count * d * real, nullptr, nullptr, &err);
        checkCl(err, "clEnqueueMapBuffer", "uploading X");
        auto work = [&](std::size_t part, std::size_t parts) {
            const auto c0 = static_cast<Eigen::Index>(d * part / parts);
            const auto c1 = static_cast<Eigen::Index>(d * (part + 1) / parts);
            if (options_.precision == Precision::Double) {
                transposeSlab(static_cast<double*>(mapped), X, static_cast<Eigen::Index>(r0),
                              static_cast<Eigen::Index>(count), c0, c1);
            } else {
                transposeSlab(static_cast<float*>(mapped), X, static_cast<Eigen::Index>(r0),
                              static_cast<Eigen::Index>(count), c0, c1);
            }
        };
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
        work(0, threads);
        for (auto& t : pool) t.join();
        checkCl(queue_.enqueueUnmapMemObject(buffer, mapped), "clEnqueueUnmapMemObject",
                "uploading X");
    }
    checkCl(queue_.finish(), "clFinish", "uploading X");
}

void OpenClBackend::prepareCommon(const LinearObjective& objective,
                                  const std::vector<BlockRange>& blocks, const Eigen::VectorXd& w0,
                                  std::uint64_t extraBytes) {
    objective_ = &objective;
    blocks_ = blocks;
    rows_ = objective.rows();
    dim_ = objective.dim();
    batchSize_ = objective.batchSize();
    logistic_ = objective.loss() == LossKind::Logistic;
    l2_ = logistic_ ? objective.l2() : 0.0;
    const int wg = context_->workGroupSize();
    rowGroups_ = (rows_ + wg - 1) / wg;
    // Enough work-items over the rows to keep every compute unit busy, 8 or 16 rows each.
    const int wanted = static_cast<int>(std::max(1u, context_->info().computeUnits)) * 64;
    rowsPerItem_ = rows_ >= wanted * 16 ? 16 : 8;  // whole vectors of 8 (sample_updates)
    // Whole groups of kSampleGroup items, so the work spreads over the compute units.
    rowItems_ = ((rows_ + rowsPerItem_ - 1) / rowsPerItem_ + kSampleGroup - 1) / kSampleGroup *
                kSampleGroup;
    maxUpdatesPerGroup_ = static_cast<int>(blocks.size());
    const auto S = static_cast<std::uint64_t>(blocks.size());
    const std::uint64_t real = realBytes();
    const std::uint64_t xBytes = static_cast<std::uint64_t>(rows_) * dim_ * real;
    const std::uint64_t partials =
        std::max<std::uint64_t>(S * rowItems_, static_cast<std::uint64_t>(rowGroups_));
    const std::uint64_t total = xBytes + 2ull * rows_ * real + 3ull * dim_ * real +
                                partials * real + 3 * S * real + extraBytes;
    if (total > context_->memoryLimitBytes()) {
        throw ClError("clCreateBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE,
                      "device out of memory: the run needs " + mib(total) + " (X alone " +
                          mib(xBytes) + ") but " + context_->info().name + " has " +
                          mib(context_->memoryLimitBytes()) +
                          " (use precision float, a smaller data set, or the CPU backend)");
    }
    Buffers& b = *buffers_;
    b = Buffers{};
    optimizer_.reset();  // as CpuBackend: a prepare starts plain, setOptimizer follows
    correctors_.reset();
    auto make = [&](std::uint64_t bytes, const std::string& what) {
        return context_->buffer(bytes, what);
    };
    b.X = make(xBytes, "the data X (" + std::to_string(rows_) + " x " + std::to_string(dim_) + ")");
    b.y = make(rows_ * real, "the labels y");
    b.z = make(rows_ * real, "the activation X w");
    b.average = make(dim_ * real, "the average weights");
    b.deltaAvg = make(dim_ * real, "the update deltas");
    b.gradSq = make(dim_ * real, "the squared block gradients");
    b.partial = make(partials * real, "the row partial sums");
    b.out = make(3 * S * real, "the per-update results");
    b.blocks = make(2 * S * sizeof(int), "the block table");

    uploadRowMajor(objective.X(), b.X);
    writeReals(b.y, 0, objective.y().data(), static_cast<std::size_t>(rows_));
    writeReals(b.average, 0, w0.data(), static_cast<std::size_t>(dim_));
    std::vector<int> blockTable;
    for (const BlockRange& blk : blocks) {
        blockTable.push_back(blk.offset);
        blockTable.push_back(blk.size);
    }
    writeInts(b.blocks, blockTable);
    blockSq_.assign(blocks.size(), 0.0);
    calls_ = 0;
    recomputeActivation();
}

void OpenClBackend::recomputeActivation() {
    Buffers& b = *buffers_;
    Kernels& k = *kernels_;
    const auto local = Local{context_->workGroupSize() * realBytes()};
    KernelArgs(k.matvec, "matvec_rows", options_.precision)(b.X)(b.average)(rows_)(dim_)(b.z);
    enqueue(k.matvec, static_cast<std::size_t>(rows_), 1, "matvec_rows");
    KernelArgs(k.blockSquares, "block_squares",
               options_.precision)(b.average)(b.blocks)(b.out)(local);
    enqueue(k.blockSquares, blocks_.size() * context_->workGroupSize(), 1, "block_squares");
    readReals(b.out, blocks_.size(), blockSq_);
    cachedObjective_.reset();
    updatesSinceResync_ = 0;
}

double OpenClBackend::objectiveFrom(double lossSum) const {
    const double n = static_cast<double>(rows_);
    if (!logistic_) return 0.5 * lossSum / n;
    double wsq = 0.0;
    for (double v : blockSq_) wsq += v;
    return lossSum / n + 0.5 * l2_ * wsq;
}

void OpenClBackend::preparePipeline(const LinearObjective& objective, const PipelineLayout& layout,
                                    const Eigen::VectorXd& w0) {
    const auto S = static_cast<int>(layout.blocks.size());
    if (layout.replicas < 1 || static_cast<int>(layout.stashSlots.size()) != S ||
        layout.activationSlots < 1 || w0.size() != objective.dim()) {
        throw std::invalid_argument("OpenClBackend: inconsistent pipeline layout");
    }
    rpdMode_ = false;
    replicas_ = layout.replicas;
    activationSlots_ = layout.activationSlots;
    stashBase_.assign(static_cast<size_t>(S), 0);
    long long stashTotal = 0;
    for (int s = 0; s < S; ++s) {
        stashBase_[static_cast<size_t>(s)] = stashTotal;
        stashTotal += static_cast<long long>(layout.blocks[static_cast<size_t>(s)].size) *
                      std::max(1, layout.stashSlots[static_cast<size_t>(s)]);
    }
    if (stashTotal > INT_MAX) {
        throw ClError("clCreateBuffer", CL_INVALID_BUFFER_SIZE,
                      "the stash needs more than 2^31 entries");
    }
    const std::uint64_t real = realBytes();
    const auto b = static_cast<std::uint64_t>(objective.batchSize());
    const std::uint64_t extra = static_cast<std::uint64_t>(replicas_) * objective.dim() * real +
                                static_cast<std::uint64_t>(stashTotal) * real +
                                2 * b * activationSlots_ * real +
                                static_cast<std::uint64_t>(S) * kOpTableFields * sizeof(int);
    Buffers& buf = *buffers_;
    prepareCommon(objective, layout.blocks, w0, extra);
    auto make = [&](std::uint64_t bytes, const std::string& what) {
        return context_->buffer(bytes, what);
    };
    buf.weights = make(static_cast<std::uint64_t>(replicas_) * dim_ * real, "the replica weights");
    buf.stash = make(static_cast<std::uint64_t>(stashTotal) * real, "the stashed weights");
    buf.act = make(b * activationSlots_ * real, "the activations");
    buf.grad = make(b * activationSlots_ * real, "the output gradients");
    buf.ops = make(static_cast<std::uint64_t>(S) * kOpTableFields * sizeof(int), "the op table");
    KernelArgs(kernels_->broadcast, "broadcast_vector",
               options_.precision)(buf.average)(dim_)(replicas_)(buf.weights);
    enqueue(kernels_->broadcast, static_cast<std::size_t>(dim_), 1, "broadcast_vector");
    for (const cl::Buffer* zeroed : {&buf.stash, &buf.act, &buf.grad}) {
        std::size_t bytes = 0;
        checkCl(zeroed->getInfo(CL_MEM_SIZE, &bytes), "clGetMemObjectInfo");
        checkCl(queue_.enqueueFillBuffer(*zeroed, cl_uchar{0}, 0, bytes), "clEnqueueFillBuffer");
    }
    checkCl(queue_.finish(), "clFinish", "preparing the pipeline state");
}

void OpenClBackend::runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                           std::vector<UpdateSample>& samples) {
    if (!objective_ || rpdMode_) throw std::logic_error("runOps before preparePipeline");
    countCall();
    const int S = static_cast<int>(blocks_.size());
    for (const PipelineOp& op : ops) {
        if (op.stage < 0 || op.stage >= S || op.replica < 0 || op.replica >= replicas_ ||
            op.actSlot < 0 || op.actSlot >= activationSlots_ || op.batch < 0 ||
            op.batch >= objective_->batches() || op.stashSlot < 0 ||
            stashBase_[static_cast<size_t>(op.stage)] +
                    static_cast<long long>(op.stashSlot + 1) *
                        blocks_[static_cast<size_t>(op.stage)].size >
                (op.stage + 1 < S ? stashBase_[static_cast<size_t>(op.stage) + 1] : LLONG_MAX)) {
            throw std::out_of_range("OpenClBackend: op outside the prepared pipeline layout");
        }
    }
    // A slot's ops touch distinct stages, so they run as one group. Ops that would interfere
    // (a stage twice, an activation slot shared) start a new group, keeping the sequential
    // meaning for any list.
    std::size_t start = 0;
    std::vector<char> stageUsed(static_cast<size_t>(S), 0);
    std::vector<char> actWritten(static_cast<size_t>(activationSlots_), 0);
    std::vector<char> gradRead(static_cast<size_t>(activationSlots_), 0);
    for (std::size_t i = 0; i <= ops.size(); ++i) {
        bool split = i == ops.size();
        if (!split) {
            const PipelineOp& op = ops[i];
            const auto a = static_cast<size_t>(op.actSlot);
            if (op.op == OpKind::Forward) {
                split = stageUsed[static_cast<size_t>(op.stage)] || actWritten[a] ||
                        (op.stage == S - 1 && gradRead[a]);
            } else {
                split = stageUsed[static_cast<size_t>(op.stage)] || actWritten[a];
            }
        }
        if (split && i > start) {
            runGroup(ops.subspan(start, i - start), stepSize, sample, samples);
            std::fill(stageUsed.begin(), stageUsed.end(), 0);
            std::fill(actWritten.begin(), actWritten.end(), 0);
            std::fill(gradRead.begin(), gradRead.end(), 0);
            start = i;
        }
        if (i < ops.size()) {
            const PipelineOp& op = ops[i];
            stageUsed[static_cast<size_t>(op.stage)] = 1;
            if (op.op == OpKind::Forward)
                actWritten[static_cast<size_t>(op.actSlot)] = 1;
            else
                gradRead[static_cast<size_t>(op.actSlot)] = 1;
        }
    }
}

void OpenClBackend::runGroup(std::span<const PipelineOp> ops, double stepSize, bool sample,
                             std::vector<UpdateSample>& samples) {
    Buffers& b = *buffers_;
    Kernels& k = *kernels_;
    const int S = static_cast<int>(blocks_.size());
    int forwards = 0;
    int backwards = 0;
    int widestBackward = 0;
    for (const PipelineOp& op : ops) {
        if (op.op == OpKind::Forward) {
            ++forwards;
        } else {
            ++backwards;
            widestBackward = std::max(widestBackward, blocks_[static_cast<size_t>(op.stage)].size);
        }
    }
    // Backwards first (in order: the objective samples follow it), then forwards.
    const bool extended = optimizer_ || correctors_;
    table_.assign(ops.size() * (extended ? kOpTableFields : kOpFields), 0);
    if (correctors_) opReals_.assign(ops.size() * 2, 0.0);
    int next[2] = {0, backwards};
    for (const PipelineOp& op : ops) {
        const int row = next[op.op == OpKind::Forward ? 1 : 0]++;
        if (correctors_) {
            // The step size in double on the host, as CpuBackend forms it.
            opReals_[static_cast<size_t>(row) * 2] = op.readShift;
            opReals_[static_cast<size_t>(row) * 2 + 1] = stepSize * op.stepFactor;
            if (op.op == OpKind::Backward) {
                // Only a backward that applies its (accumulated) gradient steps the optimizer.
                int* info = &table_[ops.size() * kOpFields + static_cast<size_t>(row) * 2];
                info[0] = op.applies ? 1 : 0;
                info[1] = optimizer_ && op.applies ? nextOptimizerStep(op.replica, op.stage) : 0;
            }
        } else if (optimizer_ && op.op == OpKind::Backward) {
            // A synchronous step's partial backward only adds to the sum: no step is counted.
            const bool ends = !optimizer_->synchronous || op.endsStep;
            int* info = &table_[ops.size() * kOpFields + static_cast<size_t>(row) * 2];
            info[0] = ends ? 1 : 0;
            info[1] = ends ? nextOptimizerStep(op.replica, op.stage) : 0;
        }
        const BlockRange& blk = blocks_[static_cast<size_t>(op.stage)];
        int* e = &table_[static_cast<size_t>(row) * kOpFields];
        e[kStage] = op.stage;
        e[kBatch] = op.batch;
        e[kReplica] = op.replica;
        e[kStash] = static_cast<int>(stashBase_[static_cast<size_t>(op.stage)] +
                                     static_cast<long long>(op.stashSlot) * blk.size);
        e[kAct] = op.actSlot;
        e[kOffset] = blk.offset;
        e[kSize] = blk.size;
        e[kKind] = op.op == OpKind::Forward ? 0 : 1;
    }
    writeInts(b.ops, table_);
    const int logistic = logistic_ ? 1 : 0;
    const auto width =
        static_cast<std::size_t>(std::max(forwards > 0 ? batchSize_ : 1, widestBackward));
    if (correctors_) {
        const CorrectorSpec& c = *correctors_;
        const OptimizerSpec o = optimizer_ ? optimizer_->spec : OptimizerSpec{};
        writeRealsAsync(b.opReals, opReals_);
        KernelArgs(k.slotCorrector, "pipeline_slot_corrector", options_.precision)(b.X)(b.y)(
            dim_)(batchSize_)(S - 1)(logistic)(Real{l2_})(Real{1.0 / replicas_})(b.ops)(b.opReals)(
            static_cast<int>(ops.size()))(b.weights)(b.stash)(b.act)(b.grad)(b.average)(b.deltaAvg)(
            b.gradSq)(optimizer_ ? optimizerKernelKind() : 0)(Real{o.beta})(Real{o.beta1})(
            Real{o.beta2})(Real{o.eps})(Real{o.weightDecay})(b.first)(b.second)(b.last)(b.gradSum)(
            c.dc ? 1 : 0)(Real{c.lambda})(c.lookahead ? 1 : 0)(Real{c.beta})(
            c.prediction || c.lookahead ? 1 : 0)(c.accumulate);
        enqueue(k.slotCorrector, width, ops.size(), "pipeline_slot_corrector");
    } else if (optimizer_) {
        const OptimizerSpec& o = optimizer_->spec;
        KernelArgs(k.slotOptimizer, "pipeline_slot_optimizer", options_.precision)(b.X)(b.y)(
            dim_)(batchSize_)(S - 1)(logistic)(Real{l2_})(Real{stepSize})(Real{1.0 / replicas_})(
            b.ops)(static_cast<int>(ops.size()))(b.weights)(b.stash)(b.act)(b.grad)(b.average)(
            b.deltaAvg)(b.gradSq)(optimizerKernelKind())(Real{o.beta})(Real{o.beta1})(
            Real{o.beta2})(Real{o.eps})(Real{o.weightDecay})(Real{optimizer_->gradientScale})(
            optimizer_->synchronous ? 1 : 0)(b.first)(b.second)(b.pending);
        enqueue(k.slotOptimizer, width, ops.size(), "pipeline_slot_optimizer");
    } else {
        KernelArgs(k.slot, "pipeline_slot", options_.precision)(b.X)(b.y)(dim_)(batchSize_)(S - 1)(
            logistic)(Real{l2_})(Real{stepSize})(Real{1.0 / replicas_})(b.ops)(b.weights)(b.stash)(
            b.act)(b.grad)(b.average)(b.deltaAvg)(b.gradSq);
        enqueue(k.slot, width, ops.size(), "pipeline_slot");
    }
    if (backwards == 0) return;  // forwards change no weights: the cached objective stands
    const auto local = Local{context_->workGroupSize() * realBytes()};
    KernelArgs(k.sample, "sample_updates", options_.precision)(b.X)(b.y)(
        rows_)(dim_)(logistic)(b.ops)(backwards)(b.deltaAvg)(b.z)(rowsPerItem_)(b.partial);
    enqueue(k.sample, static_cast<std::size_t>(rowItems_), 1, "sample_updates", kSampleGroup);
    KernelArgs(k.finish, "finish_updates",
               options_.precision)(b.partial)(rowItems_)(b.ops)(b.gradSq)(b.average)(b.out)(local);
    enqueue(k.finish, static_cast<std::size_t>(backwards) * context_->workGroupSize(), 1,
            "finish_updates");
    readReals(b.out, 3 * static_cast<std::size_t>(backwards), scratch_);
    double f = 0.0;
    for (int u = 0; u < backwards; ++u) {
        const auto stage = static_cast<size_t>(table_[static_cast<size_t>(u) * kOpFields + kStage]);
        blockSq_[stage] = scratch_[3 * static_cast<size_t>(u) + 2];
        f = objectiveFrom(scratch_[3 * static_cast<size_t>(u)]);
        samples.push_back({sample ? f : 0.0, scratch_[3 * static_cast<size_t>(u) + 1]});
    }
    cachedObjective_ = f;
    updatesSinceResync_ += backwards;
    if (updatesSinceResync_ >= kResyncUpdates) recomputeActivation();
}

void OpenClBackend::averageReplicas() {
    if (!objective_ || rpdMode_) throw std::logic_error("averageReplicas before preparePipeline");
    countCall();
    if (optimizer_ && replicas_ > 1) {
        // The state is averaged with the weights; the step counts stay (CpuBackend).
        for (cl::Buffer* state : {&buffers_->first, &buffers_->second}) {
            std::size_t bytes = 0;
            checkCl(state->getInfo(CL_MEM_SIZE, &bytes), "clGetMemObjectInfo");
            if (bytes < static_cast<std::size_t>(replicas_) * dim_ * realBytes()) continue;
            KernelArgs(kernels_->averageInPlace, "average_in_place",
                       options_.precision) (*state)(replicas_)(dim_);
            enqueue(kernels_->averageInPlace, static_cast<std::size_t>(dim_), 1,
                    "average_in_place");
        }
    }
    KernelArgs(kernels_->average, "average_replicas",
               options_.precision)(buffers_->weights)(replicas_)(dim_)(buffers_->average);
    enqueue(kernels_->average, static_cast<std::size_t>(dim_), 1, "average_replicas");
    recomputeActivation();
}

void OpenClBackend::prepareRpd(const LinearObjective& objective,
                               const std::vector<BlockRange>& blocks, int depth,
                               const Eigen::VectorXd& w0) {
    if (depth < 1) throw std::invalid_argument("RPD ring depth must be >= 1");
    if (w0.size() != objective.dim()) throw std::invalid_argument("OpenClBackend: w0 size");
    rpdMode_ = true;
    depth_ = depth;
    rpdIndex_ = 0;
    replicas_ = 1;
    const std::uint64_t real = realBytes();
    const std::uint64_t ringBytes = static_cast<std::uint64_t>(depth) * objective.dim() * real;
    const std::uint64_t tableBytes = (kOpFields + blocks.size()) * sizeof(int);
    prepareCommon(
        objective, blocks, w0,
        ringBytes + static_cast<std::uint64_t>(objective.batchSize()) * real + tableBytes);
    Buffers& buf = *buffers_;
    buf.weights =
        context_->buffer(ringBytes, "RPD's ring of " + std::to_string(depth) + " iterates");
    buf.grad = context_->buffer(static_cast<std::size_t>(batchSize_) * real, "the output gradient");
    buf.ops = context_->buffer(tableBytes, "the step table");
    KernelArgs(kernels_->broadcast, "broadcast_vector",
               options_.precision)(buf.average)(dim_)(depth)(buf.weights);
    enqueue(kernels_->broadcast, static_cast<std::size_t>(dim_), 1, "broadcast_vector");
    checkCl(queue_.finish(), "clFinish", "preparing RPD's ring");
}

UpdateSample OpenClBackend::rpdStep(std::span<const int> delays, int stage, int batch,
                                    double stepSize, bool sample) {
    if (!objective_ || !rpdMode_) throw std::logic_error("rpdStep before prepareRpd");
    const int S = static_cast<int>(blocks_.size());
    if (static_cast<int>(delays.size()) != S || stage < 0 || stage >= S || batch < 0 ||
        batch >= objective_->batches()) {
        throw std::out_of_range("OpenClBackend: RPD step outside the prepared problem");
    }
    countCall();
    table_.assign(kOpFields + static_cast<size_t>(S), 0);
    for (int j = 0; j < S; ++j) {
        if (delays[static_cast<size_t>(j)] < 0 || delays[static_cast<size_t>(j)] >= depth_ ||
            delays[static_cast<size_t>(j)] > rpdIndex_) {
            throw std::logic_error("RPD delay out of range for the ring");
        }
        table_[kOpFields + static_cast<size_t>(j)] =
            static_cast<int>((rpdIndex_ - delays[static_cast<size_t>(j)]) % depth_);
    }
    const BlockRange& blk = blocks_[static_cast<size_t>(stage)];
    table_[kStage] = stage;
    table_[kBatch] = batch;
    table_[kOffset] = blk.offset;
    table_[kSize] = blk.size;
    const int col = table_[kOpFields + static_cast<size_t>(stage)];
    const int cur = static_cast<int>(rpdIndex_ % depth_);
    const int nextCol = static_cast<int>((rpdIndex_ + 1) % depth_);
    Buffers& b = *buffers_;
    Kernels& k = *kernels_;
    const int logistic = logistic_ ? 1 : 0;
    const auto local = Local{context_->workGroupSize() * realBytes()};
    writeInts(b.ops, table_);
    KernelArgs(k.rpdForward, "rpd_forward", options_.precision)(b.X)(b.y)(
        dim_)(batchSize_)(batch)(S)(b.blocks)(b.ops)(b.weights)(logistic)(b.grad);
    enqueue(k.rpdForward, static_cast<std::size_t>(batchSize_), 1, "rpd_forward");
    if (correctors_) {
        // dc against the newest version of the block (w_k's); delay_adaptive is in stepSize.
        const OptimizerSpec o = optimizer_ ? optimizer_->spec : OptimizerSpec{};
        KernelArgs(k.rpdBackwardCorrector, "rpd_backward_corrector",
                   options_.precision)(b.X)(dim_)(batchSize_)(batch)(blk.offset)(blk.size)(
            col)(cur)(b.weights)(b.grad)(Real{l2_})(Real{stepSize})(b.deltaAvg)(b.gradSq)(
            optimizer_ ? optimizerKernelKind() : 0)(Real{o.beta})(Real{o.beta1})(Real{o.beta2})(
            Real{o.eps})(Real{o.weightDecay})(optimizer_ ? nextOptimizerStep(0, stage) : 0)(
            b.first)(b.second)(correctors_->dc ? 1 : 0)(Real{correctors_->lambda});
        enqueue(k.rpdBackwardCorrector, static_cast<std::size_t>(blk.size), 1,
                "rpd_backward_corrector");
    } else if (optimizer_) {
        // One optimizer step per update, on the newest version of the block (w_k's).
        const OptimizerSpec& o = optimizer_->spec;
        KernelArgs(k.rpdBackwardOptimizer, "rpd_backward_optimizer",
                   options_.precision)(b.X)(dim_)(batchSize_)(batch)(blk.offset)(blk.size)(
            col)(cur)(b.weights)(b.grad)(Real{l2_})(Real{stepSize})(b.deltaAvg)(b.gradSq)(
            optimizerKernelKind())(Real{o.beta})(Real{o.beta1})(Real{o.beta2})(Real{o.eps})(
            Real{o.weightDecay})(nextOptimizerStep(0, stage))(b.first)(b.second);
        enqueue(k.rpdBackwardOptimizer, static_cast<std::size_t>(blk.size), 1,
                "rpd_backward_optimizer");
    } else {
        KernelArgs(k.rpdBackward, "rpd_backward",
                   options_.precision)(b.X)(dim_)(batchSize_)(batch)(blk.offset)(blk.size)(
            col)(b.weights)(b.grad)(Real{l2_})(Real{stepSize})(b.deltaAvg)(b.gradSq);
        enqueue(k.rpdBackward, static_cast<std::size_t>(blk.size), 1, "rpd_backward");
    }
    KernelArgs(k.rpdAdvance, "rpd_advance", options_.precision)(b.weights)(
        dim_)(cur)(nextCol)(blk.offset)(blk.size)(b.deltaAvg)(b.average);
    enqueue(k.rpdAdvance, static_cast<std::size_t>(dim_), 1, "rpd_advance");
    KernelArgs(k.sample, "sample_updates", options_.precision)(b.X)(b.y)(
        rows_)(dim_)(logistic)(b.ops)(1)(b.deltaAvg)(b.z)(rowsPerItem_)(b.partial);
    enqueue(k.sample, static_cast<std::size_t>(rowItems_), 1, "sample_updates", kSampleGroup);
    KernelArgs(k.finish, "finish_updates",
               options_.precision)(b.partial)(rowItems_)(b.ops)(b.gradSq)(b.average)(b.out)(local);
    enqueue(k.finish, static_cast<std::size_t>(context_->workGroupSize()), 1, "finish_updates");
    readReals(b.out, 3, scratch_);
    blockSq_[static_cast<size_t>(stage)] = scratch_[2];
    const double f = objectiveFrom(scratch_[0]);
    cachedObjective_ = f;
    ++rpdIndex_;
    if (++updatesSinceResync_ >= kResyncUpdates) recomputeActivation();
    return {sample ? f : 0.0, scratch_[1]};
}

int OpenClBackend::optimizerKernelKind() const {
    switch (optimizer_->spec.kind) {
        case OptimizerKind::Sgd:
            return 1;
        case OptimizerKind::Momentum:
            return 2;
        case OptimizerKind::Nesterov:
            return 3;
        case OptimizerKind::Adam:
            return 4;
        case OptimizerKind::AdamW:
            return 5;
    }
    return 1;
}

int OpenClBackend::nextOptimizerStep(int replica, int stage) {
    long long& t =
        optimizer_
            ->steps[static_cast<size_t>(replica) * blocks_.size() + static_cast<size_t>(stage)];
    ++t;
    if (t > INT_MAX) throw std::overflow_error("OpenClBackend: optimizer step count overflow");
    return static_cast<int>(t);
}

void OpenClBackend::setOptimizer(const OptimizerSpec& spec, double gradientScale) {
    if (!objective_) throw std::logic_error("setOptimizer before a prepare call");
    optimizer_.reset();
    if (spec.plain()) return;
    Optimizer o;
    o.spec = spec;
    o.gradientScale = gradientScale;
    // A pipeline's synchronous step (gradientScale != 1) sums its gradients before the update.
    o.synchronous = !rpdMode_ && gradientScale != 1.0;
    o.steps.assign(static_cast<size_t>(replicas_) * blocks_.size(), 0);
    const bool adam = spec.kind == OptimizerKind::Adam || spec.kind == OptimizerKind::AdamW;
    const bool momentum = spec.kind != OptimizerKind::Sgd;
    const std::size_t full = static_cast<std::size_t>(replicas_) * dim_ * realBytes();
    Buffers& b = *buffers_;
    auto zeroed = [&](bool needed, const std::string& what) {
        const std::size_t bytes = needed ? full : realBytes();
        cl::Buffer buffer = context_->buffer(bytes, what);
        checkCl(queue_.enqueueFillBuffer(buffer, cl_uchar{0}, 0, bytes), "clEnqueueFillBuffer");
        return buffer;
    };
    b.first = zeroed(momentum, "the optimizer state (momentum or Adam's m)");
    b.second = zeroed(adam, "the optimizer state (Adam's s)");
    b.pending = zeroed(o.synchronous, "the synchronous steps' gradient sums");
    checkCl(queue_.finish(), "clFinish", "preparing the optimizer state");
    optimizer_ = std::move(o);
}

void OpenClBackend::setCorrectors(const CorrectorSpec& spec) {
    if (!objective_) throw std::logic_error("setCorrectors before a prepare call");
    correctors_.reset();
    if (!spec.any()) return;
    if (rpdMode_ && (spec.prediction || spec.lookahead || spec.accumulate > 1)) {
        // The config refuses these for RPD (requireCorrectorsFit); a guard for direct callers.
        throw std::invalid_argument("RPD takes the correctors delay_adaptive and dc only, not " +
                                    correctorSummary(spec));
    }
    if (optimizer_ && optimizer_->synchronous) {
        // Synchronous steps read fresh weights; the replay refuses them too (CpuBackend).
        throw std::invalid_argument("correctors need every block update to be a step of its own");
    }
    const std::size_t full = static_cast<std::size_t>(replicas_) * dim_ * realBytes();
    Buffers& b = *buffers_;
    auto zeroed = [&](bool needed, const std::string& what) {
        const std::size_t bytes = needed ? full : realBytes();
        cl::Buffer buffer = context_->buffer(bytes, what);
        checkCl(queue_.enqueueFillBuffer(buffer, cl_uchar{0}, 0, bytes), "clEnqueueFillBuffer");
        return buffer;
    };
    b.last = zeroed(!rpdMode_ && (spec.prediction || spec.lookahead),
                    "the blocks' last changes (prediction, lookahead)");
    b.gradSum = zeroed(!rpdMode_ && spec.accumulate > 1, "accumulate's gradient sums");
    b.opReals = context_->buffer(std::max<std::size_t>(1, 2 * blocks_.size()) * realBytes(),
                                 "the ops' read shifts and steps");
    if (!optimizer_) {
        // The kernels take the optimizer's state buffers either way.
        b.first = zeroed(false, "the optimizer state stand-in");
        b.second = zeroed(false, "the optimizer state stand-in");
    }
    checkCl(queue_.finish(), "clFinish", "preparing the correctors' state");
    correctors_ = spec;
}

double OpenClBackend::objective() {
    if (!objective_) throw std::logic_error("objective() before a prepare call");
    if (cachedObjective_) return *cachedObjective_;
    Buffers& b = *buffers_;
    Kernels& k = *kernels_;
    const auto local = Local{context_->workGroupSize() * realBytes()};
    KernelArgs(k.lossPartials, "loss_partials",
               options_.precision)(b.z)(b.y)(rows_)(logistic_ ? 1 : 0)(b.partial)(local);
    enqueue(k.lossPartials, static_cast<std::size_t>(rows_), 1, "loss_partials");
    KernelArgs(k.reduce, "reduce_sum", options_.precision)(b.partial)(rowGroups_)(b.out)(0)(local);
    enqueue(k.reduce, static_cast<std::size_t>(context_->workGroupSize()), 1, "reduce_sum");
    readReals(b.out, 1, scratch_);
    cachedObjective_ = objectiveFrom(scratch_[0]);
    return *cachedObjective_;
}

double OpenClBackend::gradientNormSquared() {
    if (!objective_) throw std::logic_error("gradientNormSquared() before a prepare call");
    Buffers& b = *buffers_;
    Kernels& k = *kernels_;
    const std::size_t real = realBytes();
    const int chunks = (rows_ + kRowsPerGradientChunk - 1) / kRowsPerGradientChunk;
    if (!b.gradRows()) {
        b.gradRows = context_->buffer(static_cast<std::size_t>(rows_) * real, "gradient rows");
        b.gradPartial = context_->buffer(static_cast<std::size_t>(chunks) * dim_ * real,
                                         "gradient partial sums");
        b.gradSquares = context_->buffer(static_cast<std::size_t>(dim_) * real, "gradient squares");
    }
    // A fresh X w (not the incremental z), as CpuBackend's gradient(w) does.
    KernelArgs(k.matvec, "matvec_rows",
               options_.precision)(b.X)(b.average)(rows_)(dim_)(b.gradRows);
    enqueue(k.matvec, static_cast<std::size_t>(rows_), 1, "matvec_rows");
    KernelArgs(k.residuals, "residuals",
               options_.precision)(b.gradRows)(b.y)(rows_)(logistic_ ? 1 : 0);
    enqueue(k.residuals, static_cast<std::size_t>(rows_), 1, "residuals");
    KernelArgs(k.gradientPartials, "gradient_partials", options_.precision)(b.X)(b.gradRows)(
        rows_)(dim_)(kRowsPerGradientChunk)(b.gradPartial);
    enqueue(k.gradientPartials, static_cast<std::size_t>(dim_), static_cast<std::size_t>(chunks),
            "gradient_partials");
    KernelArgs(k.gradientSquares, "gradient_squares", options_.precision)(b.gradPartial)(
        chunks)(rows_)(dim_)(Real{l2_})(b.average)(b.gradSquares);
    enqueue(k.gradientSquares, static_cast<std::size_t>(dim_), 1, "gradient_squares");
    const auto local = Local{context_->workGroupSize() * real};
    KernelArgs(k.reduce, "reduce_sum", options_.precision)(b.gradSquares)(dim_)(b.out)(0)(local);
    enqueue(k.reduce, static_cast<std::size_t>(context_->workGroupSize()), 1, "reduce_sum");
    readReals(b.out, 1, scratch_);
    return scratch_[0];
}

Eigen::VectorXd OpenClBackend::weights() {
    if (!objective_) throw std::logic_error("weights() before a prepare call");
    readReals(buffers_->average, static_cast<std::size_t>(dim_), scratch_);
    return Eigen::Map<const Eigen::VectorXd>(scratch_.data(), dim_);
}

}  // namespace pipelens::gpu

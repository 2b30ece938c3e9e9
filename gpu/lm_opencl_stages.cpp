#include "lm_opencl_stages.hpp"

#include <clblast.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "cl_error.hpp"
#include "clblast_tuning.hpp"
#include "cmdline/environment.hpp"
#include "kernel_args.hpp"

namespace pipelens::gpu {

namespace {

// A real kernel argument (kernel_args.hpp); the templates' own Real is double or float.
using RealArg = pipelens::gpu::Real;

// Work-items for kernels that take eight elements each, the last one fewer (lm_gelu_*, and
// lm_bias_add per row).
long long byEights(long long count) {
    return (count + 7) / 8;
}

}  // namespace

template <typename Real>
struct LmOpenClOps<Real>::Kernels {
    explicit Kernels(const cl::Program& p)
        : embedForward(makeKernel(p, "lm_embed_forward")),
          embedBackward(makeKernel(p, "lm_embed_backward")),
          lnForward(makeKernel(p, "lm_ln_forward")),
          lnBackward(makeKernel(p, "lm_ln_backward")),
          biasAdd(makeKernel(p, "lm_bias_add")),
          biasResidual(makeKernel(p, "lm_bias_residual")),
          biasGeluForward(makeKernel(p, "lm_bias_gelu_forward")),
          transposeSum(makeKernel(p, "lm_transpose_sum")),
          transpose(makeKernel(p, "lm_transpose")),
          transposeFour(makeKernel(p, "lm_transpose_four")),
          attnForward(makeKernel(p, "lm_attention_forward")),
          attnBackwardRows(makeKernel(p, "lm_attention_backward_rows")),
          attnBackwardColumns(makeKernel(p, "lm_attention_backward_columns")),
          crossEntropy(makeKernel(p, "lm_cross_entropy")),
          sgd(makeKernel(p, "lm_sgd")),
          average(makeKernel(p, "lm_average")),
          optimizer(makeKernel(p, "lm_optimizer")),
          readShift(makeKernel(p, "lm_read_shift")),
          correctedUpdate(makeKernel(p, "lm_corrected_update")) {}
    cl::Kernel embedForward, embedBackward, lnForward, lnBackward, biasAdd, biasResidual,
        biasGeluForward, transposeSum, transpose, transposeFour, attnForward, attnBackwardRows,
        attnBackwardColumns, crossEntropy, sgd, average, optimizer, readShift, correctedUpdate;
};

template <typename Real>
LmOpenClOps<Real>::LmOpenClOps(std::shared_ptr<OpenClContext> context)
    : context_(std::move(context)) {
    const cl::Program program = context_->program(precision());
    cl_int err = CL_SUCCESS;
    profile_ = checkedEnvironment("PIPELENS_CL_PROFILE").value_or("0") == "1";
    queues_.push_back(cl::CommandQueue(context_->context(), context_->device(),
                                       profile_ ? CL_QUEUE_PROFILING_ENABLE : 0, &err));
    checkCl(err, "clCreateCommandQueue", "language model");
    lanes_.resize(1);
    k_ = std::make_unique<Kernels>(program);
    clblastTuning_ = applyClblastTuning(*context_);
    baseAlignBytes_ = context_->device().getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8;
}

template <typename Real>
LmOpenClOps<Real>::~LmOpenClOps() {
    if (!profile_ || events_.empty()) return;
    // Diagnostics only; errors here have nowhere to go.
    try {
        std::fputs(profileReport().c_str(), stderr);
    } catch (const std::exception&) {
    }
}

template <typename Real>
std::string LmOpenClOps<Real>::profileReport() {
    if (!profile_) return {};
    finishAll();
    std::map<std::string, std::pair<long long, double>> byName;  // count, device ns
    cl_ulong first = ~cl_ulong{0}, last = 0;
    std::vector<cl_ulong> previousEnd(queues_.size(), 0);  // per queue
    double busy = 0.0, gaps = 0.0, late = 0.0;
    for (auto& [name, queue, event] : events_) {
        cl_ulong queued = 0, start = 0, end = 0;
        if (event.getProfilingInfo(CL_PROFILING_COMMAND_QUEUED, &queued) != CL_SUCCESS ||
            event.getProfilingInfo(CL_PROFILING_COMMAND_START, &start) != CL_SUCCESS ||
            event.getProfilingInfo(CL_PROFILING_COMMAND_END, &end) != CL_SUCCESS) {
            continue;
        }
        auto& stat = byName[name];
        ++stat.first;
        stat.second += static_cast<double>(end - start);
        busy += static_cast<double>(end - start);
        cl_ulong& before = previousEnd[queue];
        if (before != 0 && start > before) {
            gaps += static_cast<double>(start - before);
            // The part of the gap before the host had even asked for the command.
            if (queued > before) late += static_cast<double>(std::min(queued, start) - before);
        }
        before = end;
        first = std::min(first, start);
        last = std::max(last, end);
    }
    std::vector<std::pair<double, std::string>> order;
    order.reserve(byName.size());
    for (const auto& [name, stat] : byName) order.emplace_back(stat.second, name);
    std::sort(order.rbegin(), order.rend());
    std::string out;
    char line[256];
    for (const auto& [ns, name] : order) {
        std::snprintf(line, sizeof line,
                      "PIPELENS_CL_PROFILE %-36s %8lld commands %10.3f ms device %5.1f %%\n",
                      name.c_str(), byName[name].first, ns * 1e-6,
                      100.0 * ns / std::max(busy, 1.0));
        out += line;
    }
    const double span = last > first ? static_cast<double>(last - first) : 0.0;
    std::snprintf(line, sizeof line,
                  "PIPELENS_CL_PROFILE %zu commands: %.3f ms device time in a span of %.3f ms; "
                  "%.3f ms between commands, %.3f ms of it before the host had enqueued the next "
                  "(%zu queue%s: device time and gaps summed over them)\n",
                  events_.size(), busy * 1e-6, span * 1e-6, gaps * 1e-6, late * 1e-6,
                  queues_.size(), queues_.size() == 1 ? "" : "s");
    return out + line;
}

template <typename Real>
void LmOpenClOps<Real>::setQueues(int count) {
    if (count < 1) throw std::invalid_argument("LmOpenClOps::setQueues: count must be at least 1");
    finishAll();
    const cl_command_queue_properties properties = profile_ ? CL_QUEUE_PROFILING_ENABLE : 0;
    while (static_cast<int>(queues_.size()) < count) {
        cl_int err = CL_SUCCESS;
        queues_.push_back(
            cl::CommandQueue(context_->context(), context_->device(), properties, &err));
        checkCl(err, "clCreateCommandQueue", "language model");
    }
    queues_.resize(toSize(count));
    lanes_.assign(toSize(count), Lane{});
    current_ = 0;
}

template <typename Real>
void LmOpenClOps<Real>::useQueue(int q) {
    if (q < 0 || q >= static_cast<int>(queues_.size())) {
        throw std::out_of_range("LmOpenClOps::useQueue: no queue " + std::to_string(q));
    }
    current_ = toSize(q);
}

template <typename Real>
void LmOpenClOps<Real>::waitFor(const cl::Event& event) {
    if (event()) lanes_[current_].waits.push_back(event);
}

template <typename Real>
cl::Event LmOpenClOps<Real>::lastEvent() const {
    return lanes_[current_].last;
}

template <typename Real>
const std::vector<cl::Event>* LmOpenClOps<Real>::takeWaits() {
    Lane& lane = lanes_[current_];
    lane.inUse.swap(lane.waits);
    lane.waits.clear();
    return lane.inUse.empty() ? nullptr : &lane.inUse;
}

template <typename Real>
bool LmOpenClOps<Real>::eventsWanted() const {
    // Events are made only where someone reads them: the profile, or a second queue that may
    // wait for this one.
    return profile_ || queues_.size() > 1;
}

template <typename Real>
cl::Event* LmOpenClOps<Real>::commandEvent() {
    if (!eventsWanted()) return nullptr;
    commandEvent_ = cl::Event();
    return &commandEvent_;
}

template <typename Real>
void LmOpenClOps<Real>::noteCommand(const std::string& name) {
    if (eventsWanted()) lanes_[current_].last = commandEvent_;
    if (profile_) events_.push_back({name, current_, commandEvent_});
}

template <typename Real>
cl::Buffer LmOpenClOps<Real>::reals(std::size_t count, const std::string& what) const {
    return context_->buffer(count * sizeof(Real), what);
}

template <typename Real>
cl::Buffer LmOpenClOps<Real>::ints(std::size_t count, const std::string& what) const {
    return context_->buffer(count * sizeof(int), what);
}

template <typename Real>
void LmOpenClOps<Real>::write(const cl::Buffer& b, long long offset, const Real* values,
                              std::size_t count) {
    checkCl(queue().enqueueWriteBuffer(b, CL_TRUE, toSize(offset) * sizeof(Real),
                                       count * sizeof(Real), values, takeWaits(), commandEvent()),
            "clEnqueueWriteBuffer", "language model reals");
    noteCommand("write");
}

template <typename Real>
void LmOpenClOps<Real>::writeInts(const cl::Buffer& b, const int* values, std::size_t count) {
    checkCl(queue().enqueueWriteBuffer(b, CL_TRUE, 0, count * sizeof(int), values, takeWaits(),
                                       commandEvent()),
            "clEnqueueWriteBuffer", "language model tokens");
    noteCommand("write");
}

template <typename Real>
void LmOpenClOps<Real>::read(DeviceRef from, Real* values, std::size_t count) {
    checkCl(queue().enqueueReadBuffer(*from.buffer, CL_TRUE, toSize(from.offset) * sizeof(Real),
                                      count * sizeof(Real), values, takeWaits(), commandEvent()),
            "clEnqueueReadBuffer", "language model reals");
    noteCommand("read");
}

template <typename Real>
void LmOpenClOps<Real>::copy(DeviceRef from, DeviceRef to, std::size_t count) {
    if (count == 0) return;
    checkCl(queue().enqueueCopyBuffer(*from.buffer, *to.buffer, toSize(from.offset) * sizeof(Real),
                                      toSize(to.offset) * sizeof(Real), count * sizeof(Real),
                                      takeWaits(), commandEvent()),
            "clEnqueueCopyBuffer", "language model");
    noteCommand("copy");
}

template <typename Real>
void LmOpenClOps<Real>::fill(DeviceRef to, std::size_t count, Real value) {
    if (count == 0) return;
    checkCl(queue().enqueueFillBuffer(*to.buffer, value, toSize(to.offset) * sizeof(Real),
                                      count * sizeof(Real), takeWaits(), commandEvent()),
            "clEnqueueFillBuffer", "language model");
    noteCommand("fill");
}

template <typename Real>
void LmOpenClOps<Real>::finish() {
    checkCl(queue().finish(), "clFinish", "language model");
}

template <typename Real>
void LmOpenClOps<Real>::finishAll() {
    for (cl::CommandQueue& q : queues_) checkCl(q.finish(), "clFinish", "language model");
}

template <typename Real>
void LmOpenClOps<Real>::launch(cl::Kernel& k, long long items, const char* name, bool spread) {
    if (items <= 0) return;
    auto wg = static_cast<long long>(context_->workGroupSize());
    const long long groups = 4LL * std::max(1u, context_->info().computeUnits);
    while (spread && wg > 1 && (items + wg - 1) / wg < groups) wg /= 2;
    const long long global = (items + wg - 1) / wg * wg;
    checkCl(queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(toSize(global)),
                                         cl::NDRange(toSize(wg)), takeWaits(), commandEvent()),
            "clEnqueueNDRangeKernel", name);
    noteCommand(name);
    ++enqueues_;
}

template <typename Real>
DeviceRef LmOpenClOps<Real>::fromStart(DeviceRef r) {
    if (r.offset == 0 || baseAlignBytes_ == 0) return r;
    const std::size_t origin = toSize(r.offset) * sizeof(Real);
    if (origin % baseAlignBytes_ != 0) return r;
    const auto key = std::make_pair((*r.buffer)(), origin);
    auto it = subBuffers_.find(key);
    if (it == subBuffers_.end()) {
        const auto total = r.buffer->getInfo<CL_MEM_SIZE>();
        if (origin >= total) return r;
        // A sub-buffer keeps its parent's memory alive, so a kept one can never alias a later
        // buffer that reuses the parent's handle. Bounded all the same.
        if (subBuffers_.size() >= 4096) subBuffers_.clear();
        cl_buffer_region region{origin, total - origin};
        cl_int err = CL_SUCCESS;
        cl_mem sub = clCreateSubBuffer((*r.buffer)(), CL_MEM_READ_WRITE,
                                       CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        // Not fatal: CLBlast then copies the operand, which is correct, only slower.
        if (err != CL_SUCCESS) return r;
        it = subBuffers_.emplace(key, cl::Buffer(sub, false)).first;
    }
    return {&it->second, 0};
}

template <typename Real>
void LmOpenClOps<Real>::gemm(bool transA, bool transB, int m, int n, int k, DeviceRef a, int lda,
                             DeviceRef b, int ldb, Real beta, DeviceRef c, int ldc) {
    a = fromStart(a);
    b = fromStart(b);
    c = fromStart(c);
    // CLBlast takes no list of events to wait for: a wait goes first as a barrier of its own.
    if (const auto* waits = takeWaits()) {
        checkCl(queue().enqueueBarrierWithWaitList(waits, commandEvent()),
                "clEnqueueBarrierWithWaitList", "language model product");
        noteCommand("barrier");
    }
    cl_command_queue q = queue()();
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T over the same buffers and
    // leading dimensions, with the same transpose flags. CLBlast's indirect kernel wants column-
    // major operands with A as is and B transposed, here: row-major C = A^T B with A stored
    // [k, m] and B stored [k, n]. Any other form, an operand at an offset, or sizes that are not
    // multiples of its tiles (or leading dimensions larger than the sizes), and it first copies
    // the operand into scratch, transposed or padded, and C back out. The block stages ask every
    // product in that form (linearForwardTransposed, linearBackward with dOutT).
    const auto op = [](bool t) { return t ? clblast::Transpose::kYes : clblast::Transpose::kNo; };
    // The scratch CLBlast needs depends on the call's shape only: asked once per shape (each
    // question is a host-side database lookup), from a dozen or so in a model.
    const ProductShape shape{transA ? 1u : 0u, transB ? 1u : 0u, toSize(m),   toSize(n),
                             toSize(k),        toSize(a.offset), toSize(lda), toSize(b.offset),
                             toSize(ldb),      toSize(c.offset), toSize(ldc)};
    std::size_t scratch = 0;
    auto status = clblast::StatusCode::kSuccess;
    if (const auto known = scratchByShape_.find(shape); known != scratchByShape_.end()) {
        scratch = known->second;
    } else {
        status = clblast::GemmTempBufferSize<Real>(
            clblast::Layout::kColMajor, op(transB), op(transA), toSize(n), toSize(m), toSize(k),
            toSize(b.offset), toSize(ldb), toSize(a.offset), toSize(lda), toSize(c.offset),
            toSize(ldc), &q, scratch);
        if (status == clblast::StatusCode::kSuccess) scratchByShape_.emplace(shape, scratch);
    }
    if (status == clblast::StatusCode::kSuccess && scratch > 0) {
        ++copiedProducts_;
        // Sized as if the figure counted elements: enough whether it counts bytes or elements.
        const std::size_t bytes = scratch * sizeof(Real);
        Lane& lane = lanes_[current_];
        if (bytes > lane.scratchBytes) {
            lane.scratch = context_->buffer(bytes, "CLBlast scratch");
            lane.scratchBytes = bytes;
        }
    }
    ++products_;
    cl_event done = nullptr;
    if (status == clblast::StatusCode::kSuccess) {
        status = clblast::Gemm<Real>(
            clblast::Layout::kColMajor, op(transB), op(transA), toSize(n), toSize(m), toSize(k),
            Real(1), (*b.buffer)(), toSize(b.offset), toSize(ldb), (*a.buffer)(), toSize(a.offset),
            toSize(lda), beta, (*c.buffer)(), toSize(c.offset), toSize(ldc), &q,
            eventsWanted() ? &done : nullptr, scratch > 0 ? lanes_[current_].scratch() : nullptr);
    }
    if (done != nullptr) {
        commandEvent_ = cl::Event(done);
        noteCommand("Gemm " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                    std::to_string(k) + (scratch > 0 ? " (copies)" : ""));
    }
    if (status != clblast::StatusCode::kSuccess) {
        throw ClError("clblast::Gemm", static_cast<int>(status),
                      "m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                          ", k = " + std::to_string(k) +
                          " (CLBlast status; negative values below -1000 are CLBlast's own)");
    }
    ++enqueues_;
}

template <typename Real>
void LmOpenClOps<Real>::linearForward(DeviceRef in, DeviceRef W, const DeviceRef* bias, int rows,
                                      int inDim, int outDim, DeviceRef out) {
    gemm(false, true, rows, outDim, inDim, in, inDim, W, inDim, Real(0), out, outDim);
    if (bias != nullptr) biasAdd(out, *bias, rows, outDim);
}

template <typename Real>
void LmOpenClOps<Real>::biasAdd(DeviceRef out, DeviceRef bias, int rows, int cols) {
    KernelArgs(k_->biasAdd, "lm_bias_add", precision()) (*out.buffer)(cl_long{out.offset}) (
        *bias.buffer)(cl_long{bias.offset})(rows)(cols);
    launch(k_->biasAdd, rows * byEights(cols), "lm_bias_add");
}

template <typename Real>
void LmOpenClOps<Real>::linearForwardTransposed(const cl::Buffer& inT, const cl::Buffer& WT,
                                                int rows, int inDim, int outDim, DeviceRef out) {
    gemm(true, false, rows, outDim, inDim, {&inT, 0}, rows, {&WT, 0}, outDim, Real(0), out, outDim);
}

template <typename Real>
void LmOpenClOps<Real>::transpose(DeviceRef src, int rows, int cols, const cl::Buffer& dst) {
    KernelArgs(k_->transpose, "lm_transpose",
               precision()) (*src.buffer)(cl_long{src.offset})(rows)(cols)(dst);
    launch(k_->transpose, byEights(rows) * byEights(cols), "lm_transpose");
}

template <typename Real>
void LmOpenClOps<Real>::transposeFour(DeviceRef w, const long long (&offsets)[4],
                                      const int (&rows)[4], const int (&cols)[4],
                                      const cl::Buffer* const (&dst)[4]) {
    KernelArgs args(k_->transposeFour, "lm_transpose_four", precision());
    args(*w.buffer);
    long long tiles = 0;
    for (int q = 0; q < 4; ++q) {
        args(cl_long{w.offset + offsets[q]})(rows[q])(cols[q])(*dst[q]);
        tiles += byEights(rows[q]) * byEights(cols[q]);
    }
    launch(k_->transposeFour, tiles, "lm_transpose_four");
}

template <typename Real>
void LmOpenClOps<Real>::linearBackward(DeviceRef in, DeviceRef W, DeviceRef dOut, int rows,
                                       int inDim, int outDim, DeviceRef dW, const DeviceRef* dIn,
                                       bool addToIn, const cl::Buffer* dOutT) {
    gemm(true, false, outDim, inDim, rows, dOut, outDim, in, inDim, Real(0), dW, inDim);
    const Real beta = addToIn ? Real(1) : Real(0);
    if (dIn != nullptr && dOutT != nullptr) {
        gemm(true, false, rows, inDim, outDim, {dOutT, 0}, rows, W, inDim, beta, *dIn, inDim);
    } else if (dIn != nullptr) {
        gemm(false, false, rows, inDim, outDim, dOut, outDim, W, inDim, beta, *dIn, inDim);
    }
}

template <typename Real>
void LmOpenClOps<Real>::transposeSum(DeviceRef g, int rows, int cols, const cl::Buffer& dst,
                                     DeviceRef sums, const cl::Buffer* geluPre) {
    KernelArgs(k_->transposeSum, "lm_transpose_sum",
               precision()) (*g.buffer)(cl_long{g.offset})(rows)(cols)(dst)(*sums.buffer)(
        cl_long{sums.offset})(geluPre != nullptr ? *geluPre : dst)(geluPre != nullptr ? 1 : 0);
    launch(k_->transposeSum, byEights(cols), "lm_transpose_sum", true);
}

template <typename Real>
void LmOpenClOps<Real>::embedForward(DeviceRef w, DeviceRef tokens, DeviceRef out,
                                     const LmDims& d) {
    KernelArgs(k_->embedForward, "lm_embed_forward", precision()) (*w.buffer)(cl_long{w.offset}) (
        *tokens.buffer)(cl_long{tokens.offset}) (*out.buffer)(cl_long{out.offset})(d.tokens())(
        d.width)(d.vocab)(d.context);
    launch(k_->embedForward, d.tokens() * byEights(d.width), "lm_embed_forward");
}

template <typename Real>
void LmOpenClOps<Real>::embedBackward(DeviceRef gradOut, DeviceRef tokens, DeviceRef gradW,
                                      const LmDims& d) {
    KernelArgs(k_->embedBackward, "lm_embed_backward", precision()) (*gradOut.buffer)(
        cl_long{gradOut.offset}) (*tokens.buffer)(cl_long{tokens.offset}) (*gradW.buffer)(
        cl_long{gradW.offset})(d.tokens())(d.width)(d.vocab)(d.context);
    launch(k_->embedBackward, static_cast<long long>(1 + d.context) * d.width, "lm_embed_backward");
}

template <typename Real>
void LmOpenClOps<Real>::layerNormForward(DeviceRef x, DeviceRef gain, DeviceRef bias,
                                         const cl::Buffer& xhat, const cl::Buffer& rstd,
                                         DeviceRef y, int rows, int C) {
    if (gain.buffer != bias.buffer) throw std::logic_error("LayerNorm gain and bias in one buffer");
    KernelArgs(k_->lnForward, "lm_ln_forward",
               precision()) (*x.buffer)(cl_long{x.offset}) (*gain.buffer)(cl_long{gain.offset})(
        cl_long{bias.offset})(xhat)(rstd)(*y.buffer)(cl_long{y.offset})(rows)(C);
    launch(k_->lnForward, rows, "lm_ln_forward");
}

template <typename Real>
void LmOpenClOps<Real>::layerNormBackward(const cl::Buffer& dy, const cl::Buffer& xhat,
                                          const cl::Buffer& rstd, DeviceRef gain, DeviceRef dx,
                                          bool accumulate, DeviceRef dGain, DeviceRef dBias,
                                          int rows, int C, const DeviceRef* base) {
    if (dGain.buffer != dBias.buffer) throw std::logic_error("LayerNorm gradients in one buffer");
    const DeviceRef from = base != nullptr ? *base : dx;
    KernelArgs(k_->lnBackward, "lm_ln_backward", precision())(dy)(xhat)(rstd)(*gain.buffer)(
        cl_long{gain.offset}) (*from.buffer)(cl_long{from.offset}) (*dx.buffer)(cl_long{dx.offset})(
        accumulate ? 1 : 0) (*dGain.buffer)(cl_long{dGain.offset})(cl_long{dBias.offset})(rows)(C);
    launch(k_->lnBackward, static_cast<long long>(rows) + C, "lm_ln_backward");
}

template <typename Real>
void LmOpenClOps<Real>::biasResidual(DeviceRef x, DeviceRef y, DeviceRef bias, DeviceRef out,
                                     int rows, int cols) {
    KernelArgs(k_->biasResidual, "lm_bias_residual",
               precision()) (*x.buffer)(cl_long{x.offset}) (*y.buffer)(cl_long{y.offset}) (
        *bias.buffer)(cl_long{bias.offset}) (*out.buffer)(cl_long{out.offset})(rows)(cols);
    launch(k_->biasResidual, rows * byEights(cols), "lm_bias_residual");
}

template <typename Real>
void LmOpenClOps<Real>::biasGeluForward(const cl::Buffer& pre, DeviceRef bias,
                                        const cl::Buffer& act, int rows, int cols,
                                        const cl::Buffer* actT) {
    KernelArgs(k_->biasGeluForward, "lm_bias_gelu_forward",
               precision())(pre) (*bias.buffer)(cl_long{bias.offset})(
        act)(rows)(cols)(actT != nullptr ? *actT : act)(actT != nullptr ? 1 : 0);
    launch(k_->biasGeluForward, byEights(rows) * byEights(cols), "lm_bias_gelu_forward");
}

namespace {
template <typename Real>
double attentionScale(const LmDims& d) {
    // The CPU's value in the same precision: Real(1) / sqrt(Real(hd)).
    return static_cast<double>(Real(1) / std::sqrt(static_cast<Real>(d.headDim())));
}
}  // namespace

template <typename Real>
void LmOpenClOps<Real>::attentionForward(const cl::Buffer& qkv, const cl::Buffer& probs,
                                         const cl::Buffer& merged, const LmDims& d) {
    KernelArgs(k_->attnForward, "lm_attention_forward", precision())(qkv)(probs)(merged)(d.batch)(
        d.heads)(d.context)(d.width)(RealArg{attentionScale<Real>(d)});
    launch(k_->attnForward, static_cast<long long>(d.batch) * d.heads * d.context,
           "lm_attention_forward");
}

template <typename Real>
void LmOpenClOps<Real>::attentionBackward(const cl::Buffer& qkv, const cl::Buffer& probs,
                                          const cl::Buffer& dMerged, const cl::Buffer& dScores,
                                          const cl::Buffer& dQkv, const LmDims& d) {
    const long long items = static_cast<long long>(d.batch) * d.heads * d.context;
    KernelArgs(k_->attnBackwardRows, "lm_attention_backward_rows",
               precision())(qkv)(probs)(dMerged)(dScores)(dQkv)(d.batch)(d.heads)(d.context)(
        d.width)(RealArg{attentionScale<Real>(d)});
    launch(k_->attnBackwardRows, items, "lm_attention_backward_rows");
    KernelArgs(k_->attnBackwardColumns, "lm_attention_backward_columns", precision())(qkv)(
        probs)(dMerged)(dScores)(dQkv)(d.batch)(d.heads)(d.context)(d.width);
    launch(k_->attnBackwardColumns, items, "lm_attention_backward_columns");
}

template <typename Real>
void LmOpenClOps<Real>::crossEntropyRows(DeviceRef logits, DeviceRef targets, int rows, int vocab,
                                         DeviceRef rowLosses, const DeviceRef* gradLogits) {
    const cl::Buffer& g = gradLogits != nullptr ? *gradLogits->buffer : *rowLosses.buffer;
    KernelArgs(k_->crossEntropy, "lm_cross_entropy", precision()) (*logits.buffer)(
        cl_long{logits.offset}) (*targets.buffer)(cl_long{targets.offset}) (*rowLosses.buffer)(
        cl_long{rowLosses.offset})(g)(cl_long{gradLogits != nullptr ? gradLogits->offset : 0})(
        rows)(vocab)(gradLogits != nullptr ? 1 : 0);
    launch(k_->crossEntropy, rows, "lm_cross_entropy");
}

template <typename Real>
double LmOpenClOps<Real>::crossEntropy(DeviceRef logits, DeviceRef targets, int rows, int vocab,
                                       const DeviceRef* gradLogits) {
    if (rowLossCount_ < toSize(rows)) {
        rowLoss_ = reals(toSize(rows), "cross-entropy row losses");
        rowLossCount_ = toSize(rows);
    }
    crossEntropyRows(logits, targets, rows, vocab, {&rowLoss_, 0}, gradLogits);
    rowLossHost_.resize(toSize(rows));
    read({&rowLoss_, 0}, rowLossHost_.data(), toSize(rows));
    double total = 0.0;
    for (Real v : rowLossHost_) total += static_cast<double>(v);
    return total / rows;
}

template <typename Real>
void LmOpenClOps<Real>::sgd(DeviceRef w, DeviceRef g, long long count, double step) {
    KernelArgs(k_->sgd, "lm_sgd", precision()) (*w.buffer)(cl_long{w.offset}) (*g.buffer)(
        cl_long{g.offset})(static_cast<int>(count))(RealArg{step});
    launch(k_->sgd, count, "lm_sgd");
}

template <typename Real>
void LmOpenClOps<Real>::optimizerStep(DeviceRef w, DeviceRef g, long long count,
                                      const cl::Buffer& first, const cl::Buffer& second,
                                      const cl::Buffer& pending, long long stateOffset,
                                      const OptimizerArgs& a) {
    KernelArgs(k_->optimizer, "lm_optimizer",
               precision()) (*w.buffer)(cl_long{w.offset}) (*g.buffer)(cl_long{g.offset})(
        first)(second)(pending)(cl_long{stateOffset})(static_cast<int>(count))(a.mode)(a.kind)(
        RealArg{a.step})(RealArg{a.beta})(RealArg{a.beta1})(RealArg{a.beta2})(RealArg{a.eps})(
        RealArg{a.wd})(RealArg{a.c1})(RealArg{a.c2})(RealArg{a.gradScale});
    launch(k_->optimizer, count, "lm_optimizer");
}

template <typename Real>
void LmOpenClOps<Real>::readShift(DeviceRef w, DeviceRef d, DeviceRef stash, long long count,
                                  double shift) {
    KernelArgs(k_->readShift, "lm_read_shift",
               precision()) (*w.buffer)(cl_long{w.offset}) (*d.buffer)(cl_long{d.offset}) (
        *stash.buffer)(cl_long{stash.offset})(static_cast<int>(count))(RealArg{shift});
    launch(k_->readShift, count, "lm_read_shift");
}

template <typename Real>
void LmOpenClOps<Real>::correctedStep(DeviceRef w, DeviceRef g, DeviceRef stash, long long count,
                                      const CorrectorBuffers& c, long long stateOffset,
                                      const CorrectorArgs& a) {
    const OptimizerArgs& o = a.optimizer;
    KernelArgs(k_->correctedUpdate, "lm_corrected_update", precision()) (*w.buffer)(
        cl_long{w.offset}) (*g.buffer)(cl_long{g.offset}) (*stash.buffer)(cl_long{stash.offset}) (
        *c.last) (*c.gradSum) (*c.first) (*c.second)(cl_long{stateOffset})(static_cast<int>(count))(
        a.dc ? 1 : 0)(RealArg{a.lambda})(a.accumulate)(a.applies ? 1 : 0)(a.keepLast ? 1 : 0)(
        a.lookahead ? 1 : 0)(RealArg{a.lookBeta})(a.plain ? 0 : o.kind)(RealArg{o.step})(
        RealArg{o.beta})(RealArg{o.beta1})(RealArg{o.beta2})(RealArg{o.eps})(RealArg{o.wd})(
        RealArg{o.c1})(RealArg{o.c2});
    launch(k_->correctedUpdate, count, "lm_corrected_update");
}

template <typename Real>
void LmOpenClOps<Real>::average(const cl::Buffer& replicas, int R, long long P,
                                const cl::Buffer& avg) {
    KernelArgs(k_->average, "lm_average", precision())(replicas)(R)(cl_long{P})(avg);
    launch(k_->average, P, "lm_average");
}

// ------------------------------------------------------------------------------ stages

template <typename Real>
LmOpenClStage<Real>::LmOpenClStage(LmOpenClOps<Real>& ops, const LmLayout& layout, int stage)
    : ops_(ops), dims_(layout.dims()), kind_(layout.stage(stage).kind) {
    const auto N = toSize(dims_.tokens());
    const auto C = toSize(dims_.width);
    const auto nc = N * C;
    outputSize_ = kind_ == LmStageKind::Head ? static_cast<long long>(N) * dims_.vocab
                                             : static_cast<long long>(nc);
    const std::string what = "language model stage " + std::to_string(stage) + " scratch";
    if (kind_ == LmStageKind::Embedding) return;
    xhat1_ = ops_.reals(nc, what);
    rstd1_ = ops_.reals(N, what);
    ln1Out_ = ops_.reals(nc, what);
    dLn1_ = ops_.reals(nc, what);
    if (kind_ == LmStageKind::Head) return;
    for (auto* b :
         {&merged_, &attnOut_, &hMid_, &xhat2_, &ln2Out_, &mlpOut_, &dLn2_, &dHMid_, &dMerged_}) {
        *b = ops_.reals(nc, what);
    }
    rstd2_ = ops_.reals(N, what);
    qkv_ = ops_.reals(3 * nc, what);
    dQkv_ = ops_.reals(3 * nc, what);
    for (auto* b : {&pre_, &act_, &dAct_}) *b = ops_.reals(4 * nc, what);
    for (auto* b : {&ln1OutT_, &mergedT_, &ln2OutT_, &dHMidT_}) *b = ops_.reals(nc, what);
    actT_ = ops_.reals(4 * nc, what);
    dActT_ = ops_.reals(4 * nc, what);
    dQkvT_ = ops_.reals(3 * nc, what);
    const auto cc = C * C;
    attnWT_ = ops_.reals(3 * cc, what);
    projWT_ = ops_.reals(cc, what);
    fcWT_ = ops_.reals(4 * cc, what);
    outWT_ = ops_.reals(4 * cc, what);
    const auto probs =
        toSize(dims_.batch) * toSize(dims_.heads) * toSize(dims_.context) * toSize(dims_.context);
    probs_ = ops_.reals(probs, what);
    dScores_ = ops_.reals(probs, what);
}

template <typename Real>
void LmOpenClStage<Real>::forward(DeviceRef w, DeviceRef tokens, DeviceRef input, DeviceRef out) {
    const int N = dims_.tokens();
    const int C = dims_.width;
    if (kind_ == LmStageKind::Embedding) {
        tokens_ = tokens;
        ops_.embedForward(w, tokens, out, dims_);
        return;
    }
    if (kind_ == LmStageKind::Head) {
        ops_.layerNormForward(input, w, w.at(C), xhat1_, rstd1_, {&ln1Out_, 0}, N, C);
        ops_.linearForward({&ln1Out_, 0}, w.at(2LL * C), nullptr, N, C, dims_.vocab, out);
        return;
    }
    const LmBlockOffsets at(C);
    const DeviceRef attnBias = w.at(at.attnBias), projBias = w.at(at.projBias);
    const DeviceRef fcBias = w.at(at.fcBias), outBias = w.at(at.outBias);
    // Every product is asked in gemm's copy-free form, out = inT^T WT: the weights are
    // transposed once here (they stay for the backward, which reads the same stash), and each
    // product's input is transposed after the kernel that writes it (the GELU writes it
    // transposed itself). Each bias after a product goes with the element-wise step that
    // follows it: one pass fewer over the activations each.
    ops_.transposeFour(w, {at.attnWeight, at.projWeight, at.fcWeight, at.outWeight},
                       {3 * C, C, 4 * C, C}, {C, C, C, 4 * C},
                       {&attnWT_, &projWT_, &fcWT_, &outWT_});
    ops_.layerNormForward(input, w.at(at.ln1Weight), w.at(at.ln1Bias), xhat1_, rstd1_,
                          {&ln1Out_, 0}, N, C);
    ops_.transpose({&ln1Out_, 0}, N, C, ln1OutT_);
    ops_.linearForwardTransposed(ln1OutT_, attnWT_, N, C, 3 * C, {&qkv_, 0});
    ops_.biasAdd({&qkv_, 0}, attnBias, N, 3 * C);
    ops_.attentionForward(qkv_, probs_, merged_, dims_);
    ops_.transpose({&merged_, 0}, N, C, mergedT_);
    ops_.linearForwardTransposed(mergedT_, projWT_, N, C, C, {&attnOut_, 0});
    ops_.biasResidual(input, {&attnOut_, 0}, projBias, {&hMid_, 0}, N, C);
    ops_.layerNormForward({&hMid_, 0}, w.at(at.ln2Weight), w.at(at.ln2Bias), xhat2_, rstd2_,
                          {&ln2Out_, 0}, N, C);
    ops_.transpose({&ln2Out_, 0}, N, C, ln2OutT_);
    ops_.linearForwardTransposed(ln2OutT_, fcWT_, N, C, 4 * C, {&pre_, 0});
    ops_.biasGeluForward(pre_, fcBias, act_, N, 4 * C, &actT_);
    ops_.linearForwardTransposed(actT_, outWT_, N, 4 * C, C, {&mlpOut_, 0});
    ops_.biasResidual({&hMid_, 0}, {&mlpOut_, 0}, outBias, out, N, C);
}

template <typename Real>
void LmOpenClStage<Real>::backward(DeviceRef w, DeviceRef gradOut, DeviceRef gradW,
                                   DeviceRef gradIn) {
    const int N = dims_.tokens();
    const int C = dims_.width;
    if (kind_ == LmStageKind::Embedding) {
        ops_.embedBackward(gradOut, tokens_, gradW, dims_);
        return;
    }
    if (kind_ == LmStageKind::Head) {
        const DeviceRef dLn{&dLn1_, 0};
        ops_.linearBackward({&ln1Out_, 0}, w.at(2LL * C), gradOut, N, C, dims_.vocab,
                            gradW.at(2LL * C), &dLn, false);
        ops_.layerNormBackward(dLn1_, xhat1_, rstd1_, w, gradIn, false, gradW, gradW.at(C), N, C);
        return;
    }
    const LmBlockOffsets at(C);
    // MLP: out = hMid + GELU(LN2(hMid) W0^T + b0) W2^T + b2.
    const DeviceRef dAct{&dAct_, 0}, dLn2{&dLn2_, 0}, dMerged{&dMerged_, 0}, dLn1{&dLn1_, 0};
    // Each output gradient goes through transposeSum first: its transpose (the input-gradient
    // product is asked as dOutT^T W, gemm's copy-free form) and its column sums (the bias
    // gradient) in one launch, with the GELU's backward folded into the MLP's.
    ops_.transposeSum(gradOut, N, C, dHMidT_, gradW.at(at.outBias));
    ops_.linearBackward({&act_, 0}, w.at(at.outWeight), gradOut, N, 4 * C, C,
                        gradW.at(at.outWeight), &dAct, false, &dHMidT_);
    ops_.transposeSum(dAct, N, 4 * C, dActT_, gradW.at(at.fcBias), &pre_);
    ops_.linearBackward({&ln2Out_, 0}, w.at(at.fcWeight), dAct, N, C, 4 * C, gradW.at(at.fcWeight),
                        &dLn2, false, &dActT_);
    // The residual passes the incoming gradient straight on: dHMid = gradOut + LN2's input
    // gradient.
    ops_.layerNormBackward(dLn2_, xhat2_, rstd2_, w.at(at.ln2Weight), {&dHMid_, 0}, true,
                           gradW.at(at.ln2Weight), gradW.at(at.ln2Bias), N, C, &gradOut);
    ops_.transposeSum({&dHMid_, 0}, N, C, dHMidT_, gradW.at(at.projBias));
    // Attention: hMid = x + (attention(LN1(x)) W_proj^T + b_proj).
    ops_.linearBackward({&merged_, 0}, w.at(at.projWeight), {&dHMid_, 0}, N, C, C,
                        gradW.at(at.projWeight), &dMerged, false, &dHMidT_);
    ops_.attentionBackward(qkv_, probs_, dMerged_, dScores_, dQkv_, dims_);
    ops_.transposeSum({&dQkv_, 0}, N, 3 * C, dQkvT_, gradW.at(at.attnBias));
    ops_.linearBackward({&ln1Out_, 0}, w.at(at.attnWeight), {&dQkv_, 0}, N, C, 3 * C,
                        gradW.at(at.attnWeight), &dLn1, false, &dQkvT_);
    // gradIn = dHMid (the residual's share) + LN1's input gradient, in one pass.
    const DeviceRef residual{&dHMid_, 0};
    ops_.layerNormBackward(dLn1_, xhat1_, rstd1_, w.at(at.ln1Weight), gradIn, true,
                           gradW.at(at.ln1Weight), gradW.at(at.ln1Bias), N, C, &residual);
}

template <typename Real>
std::vector<Real> LmOpenClStage<Real>::internal(const std::string& name) {
    if (kind_ != LmStageKind::Block) return {};
    const long long nc = static_cast<long long>(dims_.tokens()) * dims_.width;
    const cl::Buffer* b = nullptr;
    long long count = nc;
    if (name == "ln1_out")
        b = &ln1Out_;
    else if (name == "qkv")
        b = &qkv_, count = 3 * nc;
    else if (name == "attn_heads_merged")
        b = &merged_;
    else if (name == "attn_out")
        b = &attnOut_;
    else if (name == "ln2_in")
        b = &hMid_;
    else if (name == "ln2_out")
        b = &ln2Out_;
    else if (name == "mlp_pre_gelu")
        b = &pre_, count = 4 * nc;
    else if (name == "mlp_gelu_out")
        b = &act_, count = 4 * nc;
    else if (name == "mlp_out")
        b = &mlpOut_;
    if (b == nullptr) return {};
    std::vector<Real> out(toSize(count));
    ops_.read({b, 0}, out.data(), out.size());
    return out;
}

template class LmOpenClOps<double>;
template class LmOpenClOps<float>;
template class LmOpenClStage<double>;
template class LmOpenClStage<float>;

}  // namespace pipelens::gpu

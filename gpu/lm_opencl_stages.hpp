#pragma once
// The character transformer's stages on an OpenCL device: the same three stage kinds and the
// same equations as core/objective/lm/lm_stages.hpp, with every tensor in device buffers. The
// matrix products run through CLBlast (row-major GEMM on buffer offsets), the rest through
// gpu/kernels/lm.cl. Like the CPU stages, a stage object keeps what its backward needs from its
// last forward in its own device scratch, allocated once. Real is double or float and must
// match the precision the context builds the program for.
#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cl_headers.hpp"
#include "objective/lm/lm_layout.hpp"
#include "opencl_context.hpp"

namespace pipelens::gpu {

// Element counts and offsets are long long in the layout, size_t for OpenCL calls.
inline std::size_t toSize(long long v) {
    return static_cast<std::size_t>(v);
}

// A place in a device buffer: the buffer and an element offset.
struct DeviceRef {
    const cl::Buffer* buffer = nullptr;
    long long offset = 0;
    DeviceRef at(long long more) const { return {buffer, offset + more}; }
};

// The LM kernels and CLBlast calls on one in-order queue.
template <typename Real>
class LmOpenClOps {
  public:
    explicit LmOpenClOps(std::shared_ptr<OpenClContext> context);
    ~LmOpenClOps();
    LmOpenClOps(const LmOpenClOps&) = delete;
    LmOpenClOps& operator=(const LmOpenClOps&) = delete;

    static constexpr Precision precision() {
        return sizeof(Real) == sizeof(double) ? Precision::Double : Precision::Float;
    }
    OpenClContext& context() { return *context_; }
    // The queue commands go to now (useQueue).
    cl::CommandQueue& queue() { return queues_[current_]; }

    // In-order queues: one unless set here (which waits for all work first and selects queue
    // 0). Commands go to the selected one; commands on different queues may run side by side
    // on the device, ordered only through waitFor. Queue q has its own CLBlast scratch.
    void setQueues(int count);
    int queues() const { return static_cast<int>(queues_.size()); }
    void useQueue(int q);
    // The next command on the selected queue waits for `event` (a null event is ignored).
    void waitFor(const cl::Event& event);
    // The event of the last command on the selected queue (null before the first, and with one
    // queue and no profiling, where no events are made).
    cl::Event lastEvent() const;
    // Waits for every queue.
    void finishAll();
    // A device buffer of `count` reals (or ints), named for errors.
    cl::Buffer reals(std::size_t count, const std::string& what) const;
    cl::Buffer ints(std::size_t count, const std::string& what) const;
    void write(const cl::Buffer& b, long long offset, const Real* values, std::size_t count);
    void writeInts(const cl::Buffer& b, const int* values, std::size_t count);
    void read(DeviceRef from, Real* values, std::size_t count);
    void copy(DeviceRef from, DeviceRef to, std::size_t count);
    void fill(DeviceRef to, std::size_t count, Real value);
    void finish();  // waits for the selected queue

    // C[m, n] = alpha op(A) op(B) + beta C, all row-major with leading dimensions lda, ldb, ldc.
    // CLBlast's kernel reads C = A^T B (A stored [k, m], B stored [k, n]) in place when the
    // sizes are multiples of its tiles; any other form, or an operand at an offset, costs a
    // transposed or padded copy per operand. An operand at an offset the device's alignment
    // allows is passed as a sub-buffer starting there (kept, one per buffer and offset).
    void gemm(bool transA, bool transB, int m, int n, int k, DeviceRef a, int lda, DeviceRef b,
              int ldb, Real beta, DeviceRef c, int ldc);
    // out [rows, O] = in [rows, I] W^T (+ bias); W stored [O, I].
    void linearForward(DeviceRef in, DeviceRef W, const DeviceRef* bias, int rows, int inDim,
                       int outDim, DeviceRef out);
    // The same product from the transposed operands: out [rows, O] = inT^T WT, inT stored
    // [I, rows], WT stored [I, O] (gemm's copy-free form).
    void linearForwardTransposed(const cl::Buffer& inT, const cl::Buffer& WT, int rows, int inDim,
                                 int outDim, DeviceRef out);
    // dW = dOut^T in, dIn (=|+=) dOut W (if given); with dOutT (dOut transposed, [O, rows]) dIn
    // is asked as dOutT^T W, gemm's copy-free form. A bias gradient comes from transposeSum.
    void linearBackward(DeviceRef in, DeviceRef W, DeviceRef dOut, int rows, int inDim, int outDim,
                        DeviceRef dW, const DeviceRef* dIn, bool addToIn,
                        const cl::Buffer* dOutT = nullptr);
    // An output gradient g [rows, cols] made ready for its layer's backward in one launch: with
    // geluPre, first g *= GELU'(pre) in place (pre [rows, cols]); then dst [cols, rows] = g
    // transposed and sums = g's column sums in row order (the bias gradient, cols reals).
    void transposeSum(DeviceRef g, int rows, int cols, const cl::Buffer& dst, DeviceRef sums,
                      const cl::Buffer* geluPre = nullptr);
    // out [rows, cols] += bias (cols reals).
    void biasAdd(DeviceRef out, DeviceRef bias, int rows, int cols);
    // dst [cols, rows] = src [rows, cols] transposed.
    void transpose(DeviceRef src, int rows, int cols, const cl::Buffer& dst);
    // Four matrices of one buffer transposed in one launch: the one at w.offset + offsets[q],
    // [rows[q], cols[q]], into dst[q].
    void transposeFour(DeviceRef w, const long long (&offsets)[4], const int (&rows)[4],
                       const int (&cols)[4], const cl::Buffer* const (&dst)[4]);

    void embedForward(DeviceRef w, DeviceRef tokens, DeviceRef out, const LmDims& d);
    void embedBackward(DeviceRef gradOut, DeviceRef tokens, DeviceRef gradW, const LmDims& d);
    // LN of [rows, C] with gain at w.offset + gOff, bias at w.offset + bOff; xhat and rstd are
    // whole buffers of rows C and rows reals.
    void layerNormForward(DeviceRef x, DeviceRef gain, DeviceRef bias, const cl::Buffer& xhat,
                          const cl::Buffer& rstd, DeviceRef y, int rows, int C);
    // dx = LN's input gradient, plus (accumulate) what dx held or, given `base`, base's values;
    // dGain, dBias written. One launch.
    void layerNormBackward(const cl::Buffer& dy, const cl::Buffer& xhat, const cl::Buffer& rstd,
                           DeviceRef gain, DeviceRef dx, bool accumulate, DeviceRef dGain,
                           DeviceRef dBias, int rows, int C, const DeviceRef* base = nullptr);
    // y [rows, cols] += bias, then out = x + y (a linear layer's bias and the residual after it).
    void biasResidual(DeviceRef x, DeviceRef y, DeviceRef bias, DeviceRef out, int rows, int cols);
    // pre [rows, cols] += bias, then act = GELU(pre); given actT, act also transposed into it.
    void biasGeluForward(const cl::Buffer& pre, DeviceRef bias, const cl::Buffer& act, int rows,
                         int cols, const cl::Buffer* actT = nullptr);
    void attentionForward(const cl::Buffer& qkv, const cl::Buffer& probs, const cl::Buffer& merged,
                          const LmDims& d);
    void attentionBackward(const cl::Buffer& qkv, const cl::Buffer& probs,
                           const cl::Buffer& dMerged, const cl::Buffer& dScores,
                           const cl::Buffer& dQkv, const LmDims& d);
    // Mean next-character cross-entropy of logits [rows, V] (read back: one value per row,
    // summed on the host in row order, as the CPU does); with gradLogits, also
    // (softmax - onehot) / rows.
    double crossEntropy(DeviceRef logits, DeviceRef targets, int rows, int vocab,
                        const DeviceRef* gradLogits);
    // The rows' losses lse - z[target] into rowLosses (rows reals), nothing read back.
    void crossEntropyRows(DeviceRef logits, DeviceRef targets, int rows, int vocab,
                          DeviceRef rowLosses, const DeviceRef* gradLogits);
    void sgd(DeviceRef w, DeviceRef g, long long count, double step);
    // The arguments of lm_optimizer (kernels/lm.cl) past the buffers: the optimizer, its step
    // size and Adam's bias corrections, the pending sum's mode and scale.
    struct OptimizerArgs {
        int kind = 1;  // OPT_* in kernels/common.cl
        int mode = 0;  // 0: g applies; 1: g joins the pending sum; 2: the step's sum applies
        double step = 0.0, beta = 0.0, beta1 = 0.0, beta2 = 0.0, eps = 0.0, wd = 0.0;
        double c1 = 1.0, c2 = 1.0, gradScale = 1.0;
    };
    // w (count reals, in place) moves by the optimizer's change for g; first, second, pending
    // at stateOffset: the state and the synchronous step's sum of those weights.
    void optimizerStep(DeviceRef w, DeviceRef g, long long count, const cl::Buffer& first,
                       const cl::Buffer& second, const cl::Buffer& pending, long long stateOffset,
                       const OptimizerArgs& a);
    // Prediction or lookahead's read: stash = w + shift d (count reals each).
    void readShift(DeviceRef w, DeviceRef d, DeviceRef stash, long long count, double shift);
    // The buffers of lm_corrected_update (kernels/lm.cl): d, accumulate's sums and the
    // optimizer's state, each laid out like the replicas' weights or a one-element stand-in.
    struct CorrectorBuffers {
        const cl::Buffer* last = nullptr;
        const cl::Buffer* gradSum = nullptr;
        const cl::Buffer* first = nullptr;
        const cl::Buffer* second = nullptr;
    };
    // Its arguments: the correctors and, unless plain, the optimizer (mode unused; step is
    // stepSize * stepFactor).
    struct CorrectorArgs {
        bool dc = false, applies = true, keepLast = false, lookahead = false, plain = true;
        double lambda = 0.0, lookBeta = 0.0;
        int accumulate = 1;
        OptimizerArgs optimizer;
    };
    // One block's update with correctors: w (count reals, in place) from the gradient g at the
    // stash; the buffers of `c` at stateOffset.
    void correctedStep(DeviceRef w, DeviceRef g, DeviceRef stash, long long count,
                       const CorrectorBuffers& c, long long stateOffset, const CorrectorArgs& a);
    // avg = mean of R replicas stored one after the other (R P reals) in `replicas`.
    void average(const cl::Buffer& replicas, int R, long long P, const cl::Buffer& avg);

    long long kernelEnqueues() const { return enqueues_; }
    // With PIPELENS_CL_PROFILE=1 in the environment when this object was made: every command
    // so far by name (the kernel's, "Gemm m x n x k", "copy", "fill", "write", "read", and
    // "barrier" for a wait before a product), its count and device time, then the span from the
    // first command's start to the last one's end and the time between commands (summed over
    // the queues, each queue's from its own previous command; and how much of it the host had
    // not yet enqueued the next). A product that CLBlast runs on copies ("(copies)") is timed by
    // its last kernel only. Waits for every queue. Empty without profiling; printed to stderr
    // on destruction.
    std::string profileReport();
    // Products asked so far, and how many of them CLBlast ran on copies of its operands (it
    // asked for scratch): none, for products in the copy-free form on sizes that are multiples
    // of its tiles.
    long long products() const { return products_; }
    long long copiedProducts() const { return copiedProducts_; }
    // The CLBlast parameters in force on this device (gpu/clblast_tuning.hpp), in one line.
    const std::string& clblastTuning() const { return clblastTuning_; }

  private:
    struct Kernels;
    // The wait list of the selected queue's next command (null when empty), taken.
    const std::vector<cl::Event>* takeWaits();
    // Whether commands' events are kept (profiling, or more than one queue).
    bool eventsWanted() const;
    // Where the next command's event goes (commandEvent_), or nullptr when nobody will read it;
    // noteCommand then keeps it as the queue's last event and, profiling, under `name`.
    cl::Event* commandEvent();
    void noteCommand(const std::string& name);
    // `items` work-items in groups of the context's work-group size; with `spread`, in groups
    // small enough that there are at least four per compute unit (kernels with few, long
    // work-items, which one group would leave to one thread).
    void launch(cl::Kernel& k, long long items, const char* name, bool spread = false);
    // `r` as a reference at offset 0: a kept sub-buffer of r's buffer from its offset where the
    // device's base-address alignment allows one, else r itself.
    DeviceRef fromStart(DeviceRef r);

    std::shared_ptr<OpenClContext> context_;
    // Per queue: waits for its next command, its last command's event, and CLBlast's scratch
    // for the operands it pads or transposes, kept across products and grown to the largest
    // call (left to CLBlast, each product creates and frees its own, and a large one is fresh
    // memory every time: the kernel zeroing its pages was 15 % of the paper model).
    struct Lane {
        std::vector<cl::Event> waits, inUse;
        cl::Event last;
        cl::Buffer scratch;
        std::size_t scratchBytes = 0;
    };
    std::vector<cl::CommandQueue> queues_;
    std::vector<Lane> lanes_;
    std::size_t current_ = 0;
    cl::Event commandEvent_;
    std::unique_ptr<Kernels> k_;
    cl::Buffer rowLoss_;
    std::size_t rowLossCount_ = 0;
    std::vector<Real> rowLossHost_;
    // Sub-buffers made by fromStart, by parent buffer and byte offset; the device's alignment
    // for their origins in bytes.
    std::map<std::pair<cl_mem, std::size_t>, cl::Buffer> subBuffers_;
    std::size_t baseAlignBytes_ = 0;
    // CLBlast's scratch size by product shape: transposes, m, n, k, then each operand's offset
    // and leading dimension (A, B, C).
    using ProductShape = std::array<std::size_t, 11>;
    std::map<ProductShape, std::size_t> scratchByShape_;
    long long enqueues_ = 0;
    long long products_ = 0, copiedProducts_ = 0;
    bool profile_ = false;
    struct Profiled {
        std::string name;
        std::size_t queue = 0;
        cl::Event event;
    };
    std::vector<Profiled> events_;
    std::string clblastTuning_;
};

// One pipeline stage on the device: LmStageRunner's interface (core/objective/lm/lm_model.hpp)
// with device references. Scratch sized for one microbatch is allocated in the constructor.
template <typename Real>
class LmOpenClStage {
  public:
    LmOpenClStage(LmOpenClOps<Real>& ops, const LmLayout& layout, int stage);
    LmStageKind kind() const { return kind_; }
    long long outputSize() const { return outputSize_; }

    // w: this stage's block. Stage 0 reads `tokens` (ints), the others `input`.
    void forward(DeviceRef w, DeviceRef tokens, DeviceRef input, DeviceRef out);
    // Uses the last forward's state; gradIn ignored on stage 0. gradW is written.
    void backward(DeviceRef w, DeviceRef gradOut, DeviceRef gradW, DeviceRef gradIn);

    // A transformer block's internals of the last forward, by the golden stage check's names
    // (ln1_out, qkv, attn_heads_merged, attn_out, ln2_in, ln2_out, mlp_pre_gelu, mlp_gelu_out,
    // mlp_out); empty for other stages or names.
    std::vector<Real> internal(const std::string& name);

  private:
    LmOpenClOps<Real>& ops_;
    LmDims dims_;
    LmStageKind kind_;
    long long outputSize_ = 0;
    DeviceRef tokens_;
    // Block and head scratch (unused ones stay empty).
    cl::Buffer xhat1_, rstd1_, ln1Out_, qkv_, probs_, merged_, attnOut_, hMid_;
    cl::Buffer xhat2_, rstd2_, ln2Out_, pre_, act_, mlpOut_;
    cl::Buffer dAct_, dLn2_, dHMid_, dMerged_, dQkv_, dLn1_, dScores_;
    // A block's products take transposed operands (gemm's copy-free form): the last forward's
    // weights transposed (QKV, projection, MLP in, MLP out), the inputs of its four products
    // transposed, and in the backward the output gradients transposed.
    cl::Buffer attnWT_, projWT_, fcWT_, outWT_;
    cl::Buffer ln1OutT_, mergedT_, ln2OutT_, actT_;
    cl::Buffer dHMidT_, dActT_, dQkvT_;
};

}  // namespace pipelens::gpu

#pragma once
// The OpenCL compute backend: ComputeBackend (core/compute/compute.hpp) with everything
// device-resident. Data, replica weights, stashed copies, activations, RPD's ring and the
// incremental activation z = X w_avg live in device buffers; each slot's forwards run as one
// kernel, its backwards as another, and the objective after each of its updates as one pass over
// the rows plus one reduction. Only scalars (objectives, gradient norms) and weights() cross to the
// host. Numbers match CpuBackend to rounding in double precision (tests/gpu).
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "compute/compute.hpp"
#include "opencl_context.hpp"

namespace pipelens::gpu {

struct OpenClBackendOptions {
    Precision precision = Precision::Double;
    // Tests: after this many successful runOps / rpdStep / averageReplicas calls, the next one
    // fails as if the device was lost (ClError CL_DEVICE_NOT_AVAILABLE). -1: never.
    long long simulateDeviceLossAfter = -1;
};

class OpenClBackend final : public ComputeBackend {
  public:
    // Builds (or reuses) the context's program for the precision and makes this backend's queue
    // and kernels. Throws ClError (build log included) or ConfigError (no fp64).
    OpenClBackend(std::shared_ptr<OpenClContext> context, OpenClBackendOptions options = {});
    ~OpenClBackend() override;

    std::string name() const override;
    void preparePipeline(const LinearObjective& objective, const PipelineLayout& layout,
                         const Eigen::VectorXd& w0) override;
    void runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                std::vector<UpdateSample>& samples) override;
    void averageReplicas() override;
    void prepareRpd(const LinearObjective& objective, const std::vector<BlockRange>& blocks,
                    int depth, const Eigen::VectorXd& w0) override;
    UpdateSample rpdStep(std::span<const int> delays, int stage, int batch, double stepSize,
                         bool sample) override;
    // Momentum, Nesterov, Adam/AdamW and sgd with weight decay as CpuBackend applies them: the
    // state (replicas x d, or d for RPD) lives on the device beside the weights, the blocks'
    // step counts on the host (Adam's bias correction is computed in the kernels from them).
    void setOptimizer(const OptimizerSpec& spec, double gradientScale) override;
    // Every corrector as CpuBackend applies it: d and accumulate's sums live on the device
    // (replicas x d), the per-op read shifts and step sizes travel with the op table, and a run
    // with correctors takes the corrector kernels (plain runs keep the original ones).
    void setCorrectors(const CorrectorSpec& spec) override;
    double objective() override;
    double gradientNormSquared() override;
    Eigen::VectorXd weights() override;

    Precision precision() const { return options_.precision; }
    // Kernels enqueued since construction (tests check that a slot's count does not grow with S).
    long long kernelEnqueues() const { return enqueues_; }

  private:
    struct Kernels;
    struct Buffers;

    void prepareCommon(const LinearObjective& objective, const std::vector<BlockRange>& blocks,
                       const Eigen::VectorXd& w0, std::uint64_t extraBytes);
    void runGroup(std::span<const PipelineOp> ops, double stepSize, bool sample,
                  std::vector<UpdateSample>& samples);
    void uploadRowMajor(const Eigen::MatrixXd& X, const cl::Buffer& buffer);
    // z = X w_avg from scratch and every block's ||w_avg block||^2.
    void recomputeActivation();
    // The objective from the loss sum over rows and the host's per-block ||w||^2.
    double objectiveFrom(double lossSum) const;
    void countCall();
    void enqueue(cl::Kernel& kernel, std::size_t global0, std::size_t global1, const char* name,
                 int localSize = 0);  // 0: groups of the reduction width WG
    void readReals(const cl::Buffer& buffer, std::size_t count, std::vector<double>& out);
    void writeInts(const cl::Buffer& buffer, const std::vector<int>& values);
    // `values` into `buffer` without blocking (the per-slot op reals), from alternating copies.
    void writeRealsAsync(const cl::Buffer& buffer, const std::vector<double>& values);
    void writeReals(const cl::Buffer& buffer, std::size_t offsetElems, const double* values,
                    std::size_t count);
    std::size_t realBytes() const;
    // The optimizer's kind as the kernels number it (OPT_* in kernels/common.cl).
    int optimizerKernelKind() const;
    // The optimizer's step count of `replica`'s block `stage` after one more step.
    int nextOptimizerStep(int replica, int stage);

    std::shared_ptr<OpenClContext> context_;
    OpenClBackendOptions options_;
    cl::CommandQueue queue_;
    std::unique_ptr<Kernels> kernels_;
    std::unique_ptr<Buffers> buffers_;

    const LinearObjective* objective_ = nullptr;
    std::vector<BlockRange> blocks_;
    std::vector<long long> stashBase_;  // per stage: first element of its stash slots
    int replicas_ = 1;
    int activationSlots_ = 1;
    int rows_ = 0;
    int dim_ = 0;
    int batchSize_ = 0;
    bool logistic_ = false;
    double l2_ = 0.0;
    int rowGroups_ = 1;  // work-groups over the rows
    int maxUpdatesPerGroup_ = 1;
    // The optimizer of the run (unset: plain sgd). synchronous: a pipeline's steps sum into
    // the pending buffer (gradientScale != 1); steps: per replica * S + stage.
    struct Optimizer {
        OptimizerSpec spec;
        double gradientScale = 1.0;
        bool synchronous = false;
        std::vector<long long> steps;
    };
    std::optional<Optimizer> optimizer_;
    std::optional<CorrectorSpec> correctors_;  // unset: the original kernels
    std::vector<double> opReals_;              // per op: readShift, stepSize * stepFactor
    std::vector<double> blockSq_;  // ||w_avg block s||^2, kept on the host for the l2 term
    std::optional<double> cachedObjective_;
    long long updatesSinceResync_ = 0;
    bool rpdMode_ = false;
    int depth_ = 1;
    long long rpdIndex_ = 0;
    long long calls_ = 0;
    long long enqueues_ = 0;
    std::vector<int> table_;  // the op table being built
    struct Staging {
        std::vector<int> values;
        cl::Event written;
        bool pending = false;
    };
    Staging staging_[2];  // host copies that uploads read from
    int nextStaging_ = 0;
    // The same for the correctors' per-op reals (in the device's precision).
    struct RealStaging {
        std::vector<double> doubles;
        std::vector<float> floats;
        cl::Event written;
        bool pending = false;
    };
    RealStaging realStaging_[2];
    int nextRealStaging_ = 0;
    int rowsPerItem_ = 1;          // sample_updates: rows per work-item
    int rowItems_ = 1;             // sample_updates: work-items (partials per update)
    std::vector<double> scratch_;  // staging for reads
    std::vector<float> floatStaging_;
    bool profile_ = false;  // PIPELENS_CL_PROFILE=1: per-kernel device times on destruction
    std::map<std::string, std::pair<long long, long long>> profileNs_;
};

}  // namespace pipelens::gpu

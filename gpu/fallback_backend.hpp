#pragma once
// A backend that runs on a primary (OpenCL) backend and, when the primary fails with a ClError
// (device lost, out of memory, ...), switches to a fallback (the CPU engine) without losing the
// run: it keeps a log of the calls made so far and replays them on the fallback, then repeats
// the failed call there. Used only when the person allowed a CPU fallback.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compute/compute.hpp"

namespace pipelens::gpu {

class FallbackBackend final : public ComputeBackend {
  public:
    using Factory = std::function<std::unique_ptr<ComputeBackend>()>;
    using Notify = std::function<void(const std::string&)>;

    FallbackBackend(std::unique_ptr<ComputeBackend> primary, Factory fallback, Notify notify);

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
    // Forwarded, and set again on the fallback after its prepare call when it takes over.
    void setOptimizer(const OptimizerSpec& spec, double gradientScale) override;
    // Forwarded, and set again on the fallback after setOptimizer when it takes over.
    void setCorrectors(const CorrectorSpec& spec) override;
    double objective() override;
    double gradientNormSquared() override;
    Eigen::VectorXd weights() override;

  private:
    struct Call {
        enum Kind { Ops, Average, Rpd } kind = Ops;
        std::vector<PipelineOp> ops;
        std::vector<int> delays;
        int stage = 0;
        int batch = 0;
        double stepSize = 0.0;
    };
    // Runs `f` on the active backend; on a ClError from the primary, switches and retries.
    template <typename F>
    auto guarded(F&& f) -> decltype(f(std::declval<ComputeBackend&>()));
    void switchToFallback(const std::exception& why);

    std::unique_ptr<ComputeBackend> active_;
    Factory fallback_;
    Notify notify_;
    bool fellBack_ = false;
    std::string primaryName_;
    // What it takes to rebuild the state on the fallback.
    enum class Mode { None, Pipeline, Rpd } mode_ = Mode::None;
    const LinearObjective* objective_ = nullptr;
    PipelineLayout layout_;
    std::vector<BlockRange> blocks_;
    int depth_ = 1;
    Eigen::VectorXd w0_;
    std::optional<std::pair<OptimizerSpec, double>> optimizer_;  // spec, gradientScale
    std::optional<CorrectorSpec> correctors_;
    std::vector<Call> log_;
};

}  // namespace pipelens::gpu

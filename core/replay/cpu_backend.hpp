#pragma once
// The double-precision reference backend: Eigen on the host. Every other backend is tested
// against this one.
#include "compute.hpp"

namespace pipelens {

class CpuBackend final : public ComputeBackend {
public:
    std::string name() const override { return "cpu (Eigen, double)"; }
    void preparePipeline(const LinearObjective& objective, const PipelineLayout& layout,
                         const Eigen::VectorXd& w0) override;
    void runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                std::vector<UpdateSample>& samples) override;
    void averageReplicas() override;
    void prepareRpd(const LinearObjective& objective, const std::vector<BlockRange>& blocks,
                    int depth, const Eigen::VectorXd& w0) override;
    UpdateSample rpdStep(std::span<const int> delays, int stage, int batch, double stepSize,
                         bool sample) override;
    double objective() override;
    double gradientNormSquared() override;
    Eigen::VectorXd weights() override;

private:
    void applyBlockUpdate(int stage, const Eigen::VectorXd& delta, double averageWeight);
    double sampleObjective();
    double regularisation() const;

    const LinearObjective* objective_ = nullptr;
    std::vector<BlockRange> blocks_;
    bool rpdMode_ = false;
    // Pipelines: one column per replica. RPD: the ring of the last `depth` iterates.
    Eigen::MatrixXd weights_;
    Eigen::VectorXd average_;       // replica average (pipelines) or w_k (RPD)
    Eigen::VectorXd activationAll_; // X * average_, kept up to date incrementally
    std::vector<Eigen::MatrixXd> stash_;  // per stage: block size x stash slots
    Eigen::MatrixXd activation_;    // b x activation slots
    Eigen::MatrixXd outputGrad_;    // b x activation slots
    long long rpdIndex_ = 0;        // k of the newest iterate in the ring
    Eigen::VectorXd point_;         // RPD mixed point z_k
    Eigen::VectorXd scratchA_, scratchG_, blockGrad_;
    long long updatesSinceResync_ = 0;
};

}  // namespace pipelens

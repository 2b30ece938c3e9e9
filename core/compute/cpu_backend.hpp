#pragma once
// The double-precision reference backend: Eigen on the host. Every other backend is tested
// against this one.
#include <optional>

#include "compute/compute.hpp"
#include "objective/gradient_noise.hpp"

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
    void setGradientNoise(double sigma, const NumpyRandom& stream) override;
    void setOptimizer(const OptimizerSpec& spec, double gradientScale) override;
    void setCorrectors(const CorrectorSpec& spec) override;
    double objective() override;
    double gradientNormSquared() override;
    Eigen::VectorXd weights() override;

  private:
    void applyBlockUpdate(int stage, const Eigen::VectorXd& delta, double averageWeight);
    double sampleObjective();
    double regularisation() const;
    bool optimizerDelta(const PipelineOp& op, double stepSize);
    // The ops' shared parts: the forward from the stash the caller filled, and the backward's
    // block gradient at the stash (l2 and noise included) into blockGrad_.
    void forwardFromStash(const PipelineOp& op, int lastStage);
    void blockGradientAtStash(const PipelineOp& op, double l2);
    // runOps with correctors set: the same ops plus the corrections (docs/correctors.md).
    void runCorrectedOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                         std::vector<UpdateSample>& samples);

    const LinearObjective* objective_ = nullptr;
    std::vector<BlockRange> blocks_;
    bool rpdMode_ = false;
    // Pipelines: one column per replica.
    Eigen::MatrixXd weights_;
    Eigen::VectorXd average_;             // replica average (pipelines) or w_k (RPD)
    Eigen::VectorXd activationAll_;       // X * average_, kept up to date incrementally
    std::vector<Eigen::MatrixXd> stash_;  // per stage: block size x stash slots
    Eigen::MatrixXd activation_;          // b x activation slots
    Eigen::MatrixXd outputGrad_;          // b x activation slots
    // RPD: per block, the versions it took in the last delta+1 iterates and the iterate index
    // from which each is valid (a block changes only when updated, so most reads are shared).
    struct BlockRing {
        Eigen::MatrixXd values;       // block size x capacity
        std::vector<long long> from;  // capacity
        int start = 0;                // physical index of the oldest version
        int count = 0;
    };
    std::vector<BlockRing> rings_;
    long long rpdIndex_ = 0;  // k of the newest iterate
    int ringDepth_ = 1;
    Eigen::ArrayXd scratchRows_;
    Eigen::VectorXd point_;  // RPD mixed point z_k
    Eigen::VectorXd scratchA_, scratchG_, blockGrad_, delta_;
    long long updatesSinceResync_ = 0;
    std::optional<GradientNoise> noise_;
    // Set only for an optimizer that is not plain SGD (the plain update keeps its own path).
    std::optional<OptimizerState> optimizer_;
    double gradientScale_ = 1.0;
    Eigen::MatrixXd pending_;  // synchronous steps: the step's gradient sum so far, d x replicas
    Eigen::VectorXd stepGrad_;
    // Set only when a corrector is on (the corrector-free path never looks further).
    struct Correctors {
        CorrectorSpec spec;
        bool keepLastChange = false;  // prediction or lookahead read d
        Eigen::MatrixXd lastChange;   // d: each block's last applied change, d x replicas
        Eigen::MatrixXd gradSum;      // accumulate: the gradients summed so far, d x replicas
    };
    std::optional<Correctors> correctors_;
};

}  // namespace pipelens

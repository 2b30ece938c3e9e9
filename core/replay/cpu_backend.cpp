#include "replay/cpu_backend.hpp"

#include <stdexcept>

namespace pipelens {
namespace {
// Rebuild X*w from scratch this often, so incremental rounding never accumulates visibly.
constexpr long long kResyncUpdates = 4096;
}  // namespace

double CpuBackend::regularisation() const {
    return objective_->loss() == LossKind::Logistic ? objective_->l2() : 0.0;
}

void CpuBackend::preparePipeline(const LinearObjective& objective, const PipelineLayout& layout,
                                 const Eigen::VectorXd& w0) {
    objective_ = &objective;
    blocks_ = layout.blocks;
    rpdMode_ = false;
    const int b = objective.batchSize();
    weights_ = w0.replicate(1, layout.replicas);
    average_ = w0;
    activationAll_ = objective.X() * w0;
    stash_.clear();
    for (size_t s = 0; s < blocks_.size(); ++s) {
        stash_.emplace_back(Eigen::MatrixXd::Zero(blocks_[s].size, layout.stashSlots[s]));
    }
    activation_ = Eigen::MatrixXd::Zero(b, layout.activationSlots);
    outputGrad_ = Eigen::MatrixXd::Zero(b, layout.activationSlots);
    updatesSinceResync_ = 0;
}

void CpuBackend::applyBlockUpdate(int stage, const Eigen::VectorXd& delta, double averageWeight) {
    const BlockRange& blk = blocks_[stage];
    average_.segment(blk.offset, blk.size) += averageWeight * delta;
    if (++updatesSinceResync_ >= kResyncUpdates) {
        activationAll_.noalias() = objective_->X() * average_;
        updatesSinceResync_ = 0;
    } else {
        activationAll_.noalias() +=
            objective_->X().middleCols(blk.offset, blk.size) * (averageWeight * delta);
    }
}

double CpuBackend::sampleObjective() {
    return objective_->valueFromActivation(activationAll_, average_.squaredNorm());
}

void CpuBackend::runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                        std::vector<UpdateSample>& samples) {
    const int b = objective_->batchSize();
    const int lastStage = static_cast<int>(blocks_.size()) - 1;
    const double l2 = regularisation();
    const double replicaWeight = 1.0 / static_cast<double>(weights_.cols());
    for (const PipelineOp& op : ops) {
        const BlockRange& blk = blocks_[op.stage];
        auto Xb = objective_->X().block(static_cast<Eigen::Index>(op.batch) * b, blk.offset, b,
                                        blk.size);
        auto stash = stash_[op.stage].col(op.stashSlot);
        if (op.op == OpKind::Forward) {
            stash = weights_.col(op.replica).segment(blk.offset, blk.size);
            auto act = activation_.col(op.actSlot);
            if (op.stage == 0) {
                act.noalias() = Xb * stash;
            } else {
                act.noalias() += Xb * stash;
            }
            if (op.stage == lastStage) {
                scratchA_ = act;
                objective_->outputGradient(op.batch, scratchA_, scratchG_);
                outputGrad_.col(op.actSlot) = scratchG_;
            }
        } else {
            blockGrad_.noalias() = Xb.transpose() * outputGrad_.col(op.actSlot);
            if (l2 != 0.0) blockGrad_ += l2 * stash;
            Eigen::VectorXd delta = -stepSize * blockGrad_;
            weights_.col(op.replica).segment(blk.offset, blk.size) += delta;
            applyBlockUpdate(op.stage, delta, replicaWeight);
            samples.push_back({sample ? sampleObjective() : 0.0, blockGrad_.squaredNorm()});
        }
    }
}

void CpuBackend::averageReplicas() {
    Eigen::VectorXd mean = weights_.rowwise().mean();
    weights_.colwise() = mean;
    average_ = mean;
    activationAll_.noalias() = objective_->X() * average_;
}

void CpuBackend::prepareRpd(const LinearObjective& objective, const std::vector<BlockRange>& blocks,
                            int depth, const Eigen::VectorXd& w0) {
    if (depth < 1) throw std::invalid_argument("RPD ring depth must be >= 1");
    objective_ = &objective;
    blocks_ = blocks;
    rpdMode_ = true;
    weights_ = w0.replicate(1, depth);
    average_ = w0;
    activationAll_ = objective.X() * w0;
    point_ = w0;
    rpdIndex_ = 0;
    updatesSinceResync_ = 0;
}

UpdateSample CpuBackend::rpdStep(std::span<const int> delays, int stage, int batch,
                                 double stepSize, bool sample) {
    const int b = objective_->batchSize();
    const auto depth = weights_.cols();
    // z_k: block j of the iterate k - delays[j]; accumulate the activation stage by stage as a
    // pipeline would.
    scratchA_.setZero(b);
    for (size_t j = 0; j < blocks_.size(); ++j) {
        if (delays[j] < 0 || delays[j] >= depth || delays[j] > rpdIndex_) {
            throw std::logic_error("RPD delay out of range for the ring");
        }
        const BlockRange& blk = blocks_[j];
        auto col = static_cast<Eigen::Index>((rpdIndex_ - delays[j]) % depth);
        point_.segment(blk.offset, blk.size) = weights_.col(col).segment(blk.offset, blk.size);
        scratchA_.noalias() += objective_->X().block(static_cast<Eigen::Index>(batch) * b,
                                                     blk.offset, b, blk.size) *
                               point_.segment(blk.offset, blk.size);
    }
    objective_->outputGradient(batch, scratchA_, scratchG_);
    const BlockRange& blk = blocks_[stage];
    blockGrad_.noalias() =
        objective_->X().block(static_cast<Eigen::Index>(batch) * b, blk.offset, b, blk.size)
            .transpose() *
        scratchG_;
    if (regularisation() != 0.0) blockGrad_ += regularisation() * point_.segment(blk.offset, blk.size);
    Eigen::VectorXd delta = -stepSize * blockGrad_;
    auto current = static_cast<Eigen::Index>(rpdIndex_ % depth);
    auto next = static_cast<Eigen::Index>((rpdIndex_ + 1) % depth);
    if (next != current) weights_.col(next) = weights_.col(current);
    weights_.col(next).segment(blk.offset, blk.size) += delta;
    ++rpdIndex_;
    applyBlockUpdate(stage, delta, 1.0);
    UpdateSample out;
    out.blockGradNormSq = blockGrad_.squaredNorm();
    if (sample) out.objective = sampleObjective();
    return out;
}

double CpuBackend::objective() { return sampleObjective(); }

double CpuBackend::gradientNormSquared() { return objective_->gradient(average_).squaredNorm(); }

Eigen::VectorXd CpuBackend::weights() { return average_; }

}  // namespace pipelens

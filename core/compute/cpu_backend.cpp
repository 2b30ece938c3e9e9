#include "compute/cpu_backend.hpp"

#include <stdexcept>

#include "compute/block_product.hpp"

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
    noise_.reset();
    optimizer_.reset();
    correctors_.reset();
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
        if (averageWeight == 1.0) {
            addBlockProduct(objective_->X(), blk.offset, blk.size, delta, activationAll_);
        } else {
            activationAll_.noalias() +=
                objective_->X().middleCols(blk.offset, blk.size) * (averageWeight * delta);
        }
    }
}

double CpuBackend::sampleObjective() {
    return objective_->valueFromActivation(activationAll_, average_.squaredNorm(), scratchRows_);
}

void CpuBackend::forwardFromStash(const PipelineOp& op, int lastStage) {
    const int b = objective_->batchSize();
    const BlockRange& blk = blocks_[op.stage];
    auto Xb =
        objective_->X().block(static_cast<Eigen::Index>(op.batch) * b, blk.offset, b, blk.size);
    auto stash = stash_[op.stage].col(op.stashSlot);
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
}

void CpuBackend::blockGradientAtStash(const PipelineOp& op, double l2) {
    const int b = objective_->batchSize();
    const BlockRange& blk = blocks_[op.stage];
    auto Xb =
        objective_->X().block(static_cast<Eigen::Index>(op.batch) * b, blk.offset, b, blk.size);
    blockGrad_.noalias() = Xb.transpose() * outputGrad_.col(op.actSlot);
    if (l2 != 0.0) blockGrad_ += l2 * stash_[op.stage].col(op.stashSlot);
    if (noise_) noise_->addTo(blockGrad_);
}

void CpuBackend::runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                        std::vector<UpdateSample>& samples) {
    if (correctors_) {
        runCorrectedOps(ops, stepSize, sample, samples);
        return;
    }
    const int lastStage = static_cast<int>(blocks_.size()) - 1;
    const double l2 = regularisation();
    const double replicaWeight = 1.0 / static_cast<double>(weights_.cols());
    for (const PipelineOp& op : ops) {
        const BlockRange& blk = blocks_[op.stage];
        if (op.op == OpKind::Forward) {
            stash_[op.stage].col(op.stashSlot) =
                weights_.col(op.replica).segment(blk.offset, blk.size);
            forwardFromStash(op, lastStage);
        } else {
            blockGradientAtStash(op, l2);
            if (!optimizer_) {
                delta_.noalias() = -stepSize * blockGrad_;
            } else if (!optimizerDelta(op, stepSize)) {
                // Part of a synchronous step: summed, the weights wait for the step's end.
                samples.push_back({sample ? sampleObjective() : 0.0, blockGrad_.squaredNorm()});
                continue;
            }
            weights_.col(op.replica).segment(blk.offset, blk.size) += delta_;
            applyBlockUpdate(op.stage, delta_, replicaWeight);
            samples.push_back({sample ? sampleObjective() : 0.0, blockGrad_.squaredNorm()});
        }
    }
}

void CpuBackend::runCorrectedOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                                 std::vector<UpdateSample>& samples) {
    Correctors& c = *correctors_;
    const CorrectorSpec& spec = c.spec;
    const int lastStage = static_cast<int>(blocks_.size()) - 1;
    const double l2 = regularisation();
    const double replicaWeight = 1.0 / static_cast<double>(weights_.cols());
    for (const PipelineOp& op : ops) {
        const BlockRange& blk = blocks_[op.stage];
        auto w = weights_.col(op.replica).segment(blk.offset, blk.size);
        auto stash = stash_[op.stage].col(op.stashSlot);
        if (op.op == OpKind::Forward) {
            // Prediction or lookahead: the forward reads (and stashes) w + shift * d.
            stash = w;
            if (op.readShift != 0.0) {
                stash += op.readShift * c.lastChange.col(op.replica).segment(blk.offset, blk.size);
            }
            forwardFromStash(op, lastStage);
            continue;
        }
        blockGradientAtStash(op, l2);
        if (spec.dc) {
            // DC-ASGD: g + lambda g (.) g (.) (w_now - w_read), w_read the stash.
            blockGrad_.array() += spec.lambda * blockGrad_.array().square() * (w - stash).array();
        }
        // Every backward reports its own gradient (as a synchronous step's partial one does).
        const double gradNormSq = blockGrad_.squaredNorm();
        if (spec.accumulate > 1) {
            auto sum = c.gradSum.col(op.replica).segment(blk.offset, blk.size);
            sum += blockGrad_;
            if (!op.applies) {
                samples.push_back({sample ? sampleObjective() : 0.0, gradNormSq});
                continue;
            }
            blockGrad_ = sum / static_cast<double>(spec.accumulate);
            sum.setZero();
        }
        const double step = stepSize * op.stepFactor;
        if (optimizer_) {
            optimizer_->step(op.replica, op.stage, w, blockGrad_, step, delta_);
        } else {
            delta_.noalias() = -step * blockGrad_;
        }
        if (c.keepLastChange) {
            auto d = c.lastChange.col(op.replica).segment(blk.offset, blk.size);
            // Lookahead (asynchronous Nesterov): delta = beta d - gamma_k g.
            if (spec.lookahead) delta_ += spec.beta * d;
            d = delta_;
        }
        w += delta_;
        applyBlockUpdate(op.stage, delta_, replicaWeight);
        samples.push_back({sample ? sampleObjective() : 0.0, gradNormSq});
    }
}

bool CpuBackend::optimizerDelta(const PipelineOp& op, double stepSize) {
    const BlockRange& blk = blocks_[op.stage];
    auto w = weights_.col(op.replica).segment(blk.offset, blk.size);
    if (pending_.size() == 0) {
        optimizer_->step(op.replica, op.stage, w, blockGrad_, stepSize, delta_);
        return true;
    }
    auto pending = pending_.col(op.replica).segment(blk.offset, blk.size);
    pending += blockGrad_;
    if (!op.endsStep) return false;
    stepGrad_ = gradientScale_ * pending;
    pending.setZero();
    optimizer_->step(op.replica, op.stage, w, stepGrad_, stepSize, delta_);
    return true;
}

void CpuBackend::averageReplicas() {
    if (optimizer_) optimizer_->averageReplicas();
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
    noise_.reset();
    optimizer_.reset();
    correctors_.reset();
    // Each block keeps at most depth versions: enough even if every one of the last depth
    // iterates updated it. Memory is depth * d, independent of the number of updates.
    rings_.assign(blocks.size(), {});
    for (size_t j = 0; j < blocks.size(); ++j) {
        BlockRing& r = rings_[j];
        r.values.resize(blocks[j].size, depth);
        r.from.assign(static_cast<size_t>(depth), 0);
        r.values.col(0) = w0.segment(blocks[j].offset, blocks[j].size);
        r.from[0] = 0;
        r.start = 0;
        r.count = 1;
    }
    ringDepth_ = depth;
    average_ = w0;
    activationAll_ = objective.X() * w0;
    point_ = w0;
    rpdIndex_ = 0;
    updatesSinceResync_ = 0;
}

UpdateSample CpuBackend::rpdStep(std::span<const int> delays, int stage, int batch, double stepSize,
                                 bool sample) {
    const int b = objective_->batchSize();
    const auto rows = static_cast<Eigen::Index>(batch) * b;
    // z_k: block j of the iterate k - delays[j]; accumulate the activation stage by stage as a
    // pipeline would.
    scratchA_.setZero(b);
    for (size_t j = 0; j < blocks_.size(); ++j) {
        if (delays[j] < 0 || delays[j] >= ringDepth_ || delays[j] > rpdIndex_) {
            throw std::logic_error("RPD delay out of range for the ring");
        }
        const BlockRing& r = rings_[j];
        const long long want = rpdIndex_ - delays[j];
        // The newest version valid at iterate `want`: binary search over the ring's versions
        // (ordered oldest to newest by `from`).
        int lo = 0;
        int hi = r.count - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            const int phys = (r.start + mid) % ringDepth_;
            if (r.from[static_cast<size_t>(phys)] <= want) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        const BlockRange& blk = blocks_[j];
        auto version = r.values.col((r.start + lo) % ringDepth_);
        point_.segment(blk.offset, blk.size) = version;
        scratchA_.noalias() += objective_->X().block(rows, blk.offset, b, blk.size) * version;
    }
    objective_->outputGradient(batch, scratchA_, scratchG_);
    const BlockRange& blk = blocks_[stage];
    blockGrad_.noalias() =
        objective_->X().block(rows, blk.offset, b, blk.size).transpose() * scratchG_;
    if (regularisation() != 0.0)
        blockGrad_ += regularisation() * point_.segment(blk.offset, blk.size);
    if (noise_) {
        for (int j = static_cast<int>(blocks_.size()) - 1; j > stage; --j)
            noise_->skip(blocks_[j].size);
        noise_->addTo(blockGrad_);
    }
    // w_{k+1}: block `stage` of w_k plus delta becomes the newest version of that block.
    BlockRing& r = rings_[stage];
    const int newest = (r.start + r.count - 1) % ringDepth_;
    if (correctors_ && correctors_->spec.dc) {
        // DC-ASGD: w_now is the block's newest version, w_read the version z_k holds.
        blockGrad_.array() += correctors_->spec.lambda * blockGrad_.array().square() *
                              (r.values.col(newest) - point_.segment(blk.offset, blk.size)).array();
    }
    if (optimizer_) {
        optimizer_->step(0, stage, r.values.col(newest), blockGrad_, stepSize, delta_);
    } else {
        delta_.noalias() = -stepSize * blockGrad_;
    }
    int slot = 0;
    if (r.count < ringDepth_) {
        slot = (r.start + r.count) % ringDepth_;
        ++r.count;
    } else {
        slot = r.start;  // drop the oldest: no read can reach back that far any more
        r.start = (r.start + 1) % ringDepth_;
    }
    if (slot != newest) r.values.col(slot) = r.values.col(newest);
    r.values.col(slot) += delta_;
    r.from[static_cast<size_t>(slot)] = rpdIndex_ + 1;
    ++rpdIndex_;
    applyBlockUpdate(stage, delta_, 1.0);
    UpdateSample out;
    out.blockGradNormSq = blockGrad_.squaredNorm();
    if (sample) out.objective = sampleObjective();
    return out;
}

void CpuBackend::setGradientNoise(double sigma, const NumpyRandom& stream) {
    if (sigma > 0.0) noise_.emplace(sigma, stream);
}

void CpuBackend::setOptimizer(const OptimizerSpec& spec, double gradientScale) {
    optimizer_.reset();
    pending_.resize(0, 0);
    gradientScale_ = gradientScale;
    if (spec.plain()) return;
    const int replicas = rpdMode_ ? 1 : static_cast<int>(weights_.cols());
    optimizer_.emplace();
    optimizer_->prepare(spec, blocks_, replicas);
    // A pipeline's synchronous step (gradientScale != 1) sums its gradients before the update.
    if (!rpdMode_ && gradientScale != 1.0) {
        pending_ = Eigen::MatrixXd::Zero(weights_.rows(), weights_.cols());
    }
}

void CpuBackend::setCorrectors(const CorrectorSpec& spec) {
    correctors_.reset();
    if (!spec.any()) return;
    if (rpdMode_ && (spec.prediction || spec.lookahead || spec.accumulate > 1)) {
        // The config refuses these for RPD (requireCorrectorsFit); a guard for direct callers.
        throw std::invalid_argument("RPD takes the correctors delay_adaptive and dc only, not " +
                                    correctorSummary(spec));
    }
    if (pending_.size() != 0) {
        // Synchronous steps (gradientScale != 1) read fresh weights; the replay refuses them too.
        throw std::invalid_argument("correctors need every block update to be a step of its own");
    }
    Correctors c;
    c.spec = spec;
    if (!rpdMode_) {
        c.keepLastChange = spec.prediction || spec.lookahead;
        if (c.keepLastChange)
            c.lastChange = Eigen::MatrixXd::Zero(weights_.rows(), weights_.cols());
        if (spec.accumulate > 1)
            c.gradSum = Eigen::MatrixXd::Zero(weights_.rows(), weights_.cols());
    }
    correctors_ = std::move(c);
}

double CpuBackend::objective() {
    return sampleObjective();
}

double CpuBackend::gradientNormSquared() {
    return objective_->gradient(average_).squaredNorm();
}

Eigen::VectorXd CpuBackend::weights() {
    return average_;
}

}  // namespace pipelens

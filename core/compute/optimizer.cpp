#include "compute/optimizer.hpp"

#include <algorithm>
#include <cmath>

namespace pipelens {

double defaultWeightDecay(OptimizerKind kind) {
    return kind == OptimizerKind::AdamW ? 0.01 : 0.0;
}

OptimizerSpec normalizedOptimizer(const OptimizerSpec& spec) {
    OptimizerSpec n;
    n.kind = spec.kind;
    n.weightDecay = spec.weightDecay;
    switch (spec.kind) {
        case OptimizerKind::Sgd:
            break;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov:
            n.beta = spec.beta;
            break;
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:
            n.beta1 = spec.beta1;
            n.beta2 = spec.beta2;
            n.eps = spec.eps;
            break;
    }
    return n;
}

void OptimizerState::prepare(const OptimizerSpec& spec, const std::vector<BlockRange>& blocks,
                             int replicas) {
    spec_ = spec;
    blocks_ = blocks;
    Eigen::Index d = 0;
    for (const BlockRange& b : blocks) d = std::max<Eigen::Index>(d, b.offset + b.size);
    const bool adam = spec.kind == OptimizerKind::Adam || spec.kind == OptimizerKind::AdamW;
    const bool momentum = spec.kind != OptimizerKind::Sgd;
    first_ = momentum ? Eigen::MatrixXd::Zero(d, replicas) : Eigen::MatrixXd();
    second_ = adam ? Eigen::MatrixXd::Zero(d, replicas) : Eigen::MatrixXd();
    steps_.assign(static_cast<size_t>(replicas) * blocks.size(), 0);
}

void OptimizerState::step(int replica, int stage, const Eigen::Ref<const Eigen::VectorXd>& w,
                          const Eigen::Ref<const Eigen::VectorXd>& g, double stepSize,
                          Eigen::VectorXd& delta) {
    const BlockRange& blk = blocks_[static_cast<size_t>(stage)];
    const long long t = ++steps_[static_cast<size_t>(replica) * blocks_.size() + stage];
    const double wd = spec_.weightDecay;
    // Coupled decay (all but adamw) joins the gradient: g + wd * w at the current weights.
    scratch_ = g;
    if (wd != 0.0 && spec_.kind != OptimizerKind::AdamW) scratch_ += wd * w;
    switch (spec_.kind) {
        case OptimizerKind::Sgd:
            delta.noalias() = -stepSize * scratch_;
            return;
        case OptimizerKind::Momentum: {
            auto v = first_.col(replica).segment(blk.offset, blk.size);
            v = spec_.beta * v + scratch_;
            delta.noalias() = -stepSize * v;
            return;
        }
        case OptimizerKind::Nesterov: {
            auto v = first_.col(replica).segment(blk.offset, blk.size);
            v = spec_.beta * v + scratch_;
            delta.noalias() = -stepSize * (scratch_ + spec_.beta * v);
            return;
        }
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW: {
            auto m = first_.col(replica).segment(blk.offset, blk.size);
            auto s = second_.col(replica).segment(blk.offset, blk.size);
            const double b1 = spec_.beta1;
            const double b2 = spec_.beta2;
            m = b1 * m + (1.0 - b1) * scratch_;
            s = b2 * s + (1.0 - b2) * scratch_.cwiseProduct(scratch_);
            const double c1 = 1.0 - std::pow(b1, static_cast<double>(t));
            const double c2 = 1.0 - std::pow(b2, static_cast<double>(t));
            delta = -stepSize * ((m.array() / c1) / ((s.array() / c2).sqrt() + spec_.eps)).matrix();
            // Decoupled decay (Loshchilov & Hutter): w -= step * wd * w, at the current weights.
            if (spec_.kind == OptimizerKind::AdamW && wd != 0.0) delta -= (stepSize * wd) * w;
            return;
        }
    }
}

void OptimizerState::averageReplicas() {
    if (first_.cols() > 1) first_.colwise() = Eigen::VectorXd(first_.rowwise().mean());
    if (second_.cols() > 1) second_.colwise() = Eigen::VectorXd(second_.rowwise().mean());
}

std::vector<char> synchronousStepEnds(const std::vector<ReplayEvent>& events, int stages,
                                      int replicas, double stepScale) {
    const long long M = std::max(1LL, std::llround(1.0 / stepScale));
    const auto key = [&](const ReplayEvent& e) {
        return static_cast<size_t>(e.microbatch % replicas) * static_cast<size_t>(stages) +
               static_cast<size_t>(e.stage);
    };
    std::vector<char> ends(events.size(), 1);
    std::vector<char> nextIsBackward(static_cast<size_t>(replicas) * stages, 0);
    for (size_t i = events.size(); i-- > 0;) {
        const bool backward = events[i].op == OpKind::Backward;
        if (backward) ends[i] = nextIsBackward[key(events[i])] ? 0 : 1;
        nextIsBackward[key(events[i])] = backward ? 1 : 0;
    }
    std::vector<long long> inStep(static_cast<size_t>(replicas) * stages, 0);
    for (size_t i = 0; i < events.size(); ++i) {
        if (events[i].op != OpKind::Backward) continue;
        long long& n = inStep[key(events[i])];
        if (++n == M) ends[i] = 1;
        if (ends[i] != 0) n = 0;
    }
    return ends;
}

}  // namespace pipelens

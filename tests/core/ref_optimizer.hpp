#pragma once
// The optimizers of docs/correctors.md written coordinate by coordinate from the formulas, and
// the pipeline walk that applies them, for the tests' reference recursions (tst_optimizers:
// linear objectives; tst_lm_optimizers: the language model). Never the engine's code
// (compute/optimizer.cpp, the replays).
#include <Eigen/Dense>
#include <cmath>
#include <utility>
#include <vector>

#include "compute/optimizer.hpp"
#include "schedule/timeline.hpp"

namespace pipelens::test {

// One block's optimizer (of one replica).
struct RefOptimizer {
    explicit RefOptimizer(const OptimizerSpec& o) : spec(o) {}
    OptimizerSpec spec;
    std::vector<double> v, m, s;
    long long t = 0;

    // w (the block's current weights) takes one step with gradient g.
    void apply(Eigen::Ref<Eigen::VectorXd> w, const Eigen::VectorXd& g, double gamma) {
        const auto n = static_cast<size_t>(w.size());
        if (v.empty()) v.assign(n, 0.0), m.assign(n, 0.0), s.assign(n, 0.0);
        ++t;
        const double lambda = spec.weightDecay;
        for (size_t i = 0; i < n; ++i) {
            const auto k = static_cast<Eigen::Index>(i);
            double gi = g[k];
            switch (spec.kind) {
                case OptimizerKind::Sgd:
                    w[k] = w[k] - gamma * (gi + lambda * w[k]);
                    break;
                case OptimizerKind::Momentum:
                    v[i] = spec.beta * v[i] + (gi + lambda * w[k]);
                    w[k] = w[k] - gamma * v[i];
                    break;
                case OptimizerKind::Nesterov:
                    gi += lambda * w[k];
                    v[i] = spec.beta * v[i] + gi;
                    w[k] = w[k] - gamma * (gi + spec.beta * v[i]);
                    break;
                case OptimizerKind::Adam:
                case OptimizerKind::AdamW: {
                    const bool decoupled = spec.kind == OptimizerKind::AdamW;
                    if (!decoupled) gi += lambda * w[k];
                    m[i] = spec.beta1 * m[i] + (1.0 - spec.beta1) * gi;
                    s[i] = spec.beta2 * s[i] + (1.0 - spec.beta2) * gi * gi;
                    const double mHat = m[i] / (1.0 - std::pow(spec.beta1, t));
                    const double sHat = s[i] / (1.0 - std::pow(spec.beta2, t));
                    const double decay = decoupled ? gamma * lambda * w[k] : 0.0;
                    w[k] = w[k] - decay - gamma * mHat / (std::sqrt(sHat) + spec.eps);
                    break;
                }
            }
        }
    }
};

// LocalSGD's averaging of the optimizers' state: opt[r][s] is replica r's optimizer of block s;
// every state vector becomes the replicas' mean (the step counts stay).
inline void averageStates(std::vector<std::vector<RefOptimizer>>& opt) {
    const auto replicas = static_cast<double>(opt.size());
    for (size_t s = 0; s < opt[0].size(); ++s) {
        using Field = std::vector<double> RefOptimizer::*;
        for (Field field : {&RefOptimizer::v, &RefOptimizer::m, &RefOptimizer::s}) {
            for (size_t i = 0; i < (opt[0][s].*field).size(); ++i) {
                double total = 0.0;
                for (auto& r : opt) total += (r[s].*field)[i];
                for (auto& r : opt) (r[s].*field)[i] = total / replicas;
            }
        }
    }
}

// A pipeline schedule replayed from its events: F(m, s) stashes replica r's block s, B(m, s)
// takes the gradient at m's stashed point. With stepGroup > 1 (a synchronous step) a block's
// gradients are summed and it steps once, on their mean, at the group's last backward. LocalSGD's
// replicas (m mod R) average weights and state at the timeline's averaging slots. `blocks`: each
// stage's (offset, size) in the weights; `gradient(point, stage, microbatch)`: that stage's block
// of the gradient at `point`. Returns the replicas' final average.
template <class Gradient>
Eigen::VectorXd refPipelineWalk(const Timeline& tl, int replicas, const Eigen::VectorXd& w0,
                                const std::vector<std::pair<Eigen::Index, Eigen::Index>>& blocks,
                                const Gradient& gradient, double gamma, const OptimizerSpec& spec,
                                int stepGroup) {
    using Eigen::VectorXd;
    const int S = tl.params.stages;
    std::vector<VectorXd> w(static_cast<size_t>(replicas), w0);
    std::vector<VectorXd> stash(static_cast<size_t>(tl.params.microbatches), w0);
    std::vector<std::vector<RefOptimizer>> opt(static_cast<size_t>(replicas),
                                               std::vector<RefOptimizer>(S, RefOptimizer(spec)));
    std::vector<VectorXd> sum(static_cast<size_t>(S));
    std::vector<int> summed(static_cast<size_t>(S), 0);
    size_t nextAverage = 0;
    auto average = [&] {
        VectorXd mean = VectorXd::Zero(w0.size());
        for (const auto& x : w) mean += x;
        mean /= replicas;
        for (auto& x : w) x = mean;
        averageStates(opt);
    };
    for (const ReplayEvent& e : replayOrder(tl)) {
        while (nextAverage < tl.averagingSlots.size() && tl.averagingSlots[nextAverage] < e.slot) {
            average();
            ++nextAverage;
        }
        const int r = e.microbatch % replicas;
        const auto [offset, size] = blocks[static_cast<size_t>(e.stage)];
        if (e.op == OpKind::Forward) {
            stash[e.microbatch].segment(offset, size) = w[r].segment(offset, size);
            continue;
        }
        const VectorXd g = gradient(stash[e.microbatch], e.stage, e.microbatch);
        auto block = w[r].segment(offset, size);
        if (stepGroup <= 1) {
            opt[r][e.stage].apply(block, g, gamma);
            continue;
        }
        if (summed[e.stage] == 0) sum[e.stage] = VectorXd::Zero(size);
        sum[e.stage] += g;
        if (++summed[e.stage] < stepGroup) continue;
        summed[e.stage] = 0;
        opt[r][e.stage].apply(block, sum[e.stage] / stepGroup, gamma);
    }
    while (nextAverage++ < tl.averagingSlots.size()) average();
    VectorXd mean = VectorXd::Zero(w0.size());
    for (const auto& x : w) mean += x;
    return mean / replicas;
}

}  // namespace pipelens::test

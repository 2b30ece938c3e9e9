#pragma once
// The interface a compute backend implements. Replays (core/replay) decide the order of work and
// keep the bookkeeping (versions, delays, statistics); a backend owns the numbers: data, replica
// weights, stashed copies, activations, RPD's ring of recent iterates, and the reductions.
// CpuBackend (core/compute/cpu_backend.hpp) is the double-precision reference; gpu/ implements
// the same interface on OpenCL devices.
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compute/corrector.hpp"
#include "compute/optimizer.hpp"
#include "objective/linear_objective.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

class NumpyRandom;

// One forward or backward of a pipeline schedule, as a backend executes it.
//  Forward:  stash[stage][stashSlot] = w_r(stage); act[actSlot] (+)= X_batch[:, block] * stash;
//            on the first stage act is reset first; on the last stage the output gradient
//            grad[actSlot] = dloss/da / b is computed as well.
//  Backward: g = X_batch[:, block]^T grad[actSlot] + l2 * stash[stage][stashSlot];
//            w_r(stage) -= stepSize * g (with an optimizer set: its update, see setOptimizer).
// With correctors set (setCorrectors) the forward stashes w_r(stage) + readShift * d and the
// backward's step size is stepSize * stepFactor; `applies` drives accumulation.
struct PipelineOp {
    OpKind op = OpKind::Forward;
    int stage = 0;
    int batch = 0;      // data batch (rows [batch*b, (batch+1)*b))
    int replica = 0;    // weight copy acted on (0 unless LocalSGD)
    int stashSlot = 0;  // per-stage stash index, < stashSlots[stage]
    int actSlot = 0;    // in-flight microbatch index, < activationSlots
    // Backward only, read only with a stateful optimizer on a synchronous step: false adds g to
    // the block's pending sum and leaves the weights; true applies the step (setOptimizer).
    bool endsStep = true;
    // Correctors (setCorrectors; the replay takes them from its CorrectorPlan). Forward: the
    // read moves to w + readShift * d (d: the block's last applied change). Backward: the step
    // size is stepSize * stepFactor, and with accumulate the update takes effect only where
    // `applies` (the gradient is summed either way).
    double readShift = 0.0;
    double stepFactor = 1.0;
    bool applies = true;
};

// What a backend reports after each block update when asked.
struct UpdateSample {
    double objective = 0.0;        // f at the replica average after the update
    double blockGradNormSq = 0.0;  // ||g||^2 of the block gradient just applied
};

struct PipelineLayout {
    std::vector<BlockRange> blocks;
    int replicas = 1;
    std::vector<int> stashSlots;  // per stage
    int activationSlots = 1;
};

class ComputeBackend {
  public:
    virtual ~ComputeBackend() = default;
    virtual std::string name() const = 0;

    // Upload the data and allocate the pipeline state; all replica weights start at w0.
    virtual void preparePipeline(const LinearObjective& objective, const PipelineLayout& layout,
                                 const Eigen::VectorXd& w0) = 0;
    // Execute ops in order (the ops of one slot). Appends one UpdateSample per backward to
    // `samples`, in order; its objective is computed only when `sample` is set (else 0).
    virtual void runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                        std::vector<UpdateSample>& samples) = 0;
    // Replace every replica by the replica average, block by block.
    virtual void averageReplicas() = 0;

    // Randomized PipeDream: keep the last `depth` = delta+1 iterates, starting from w0.
    virtual void prepareRpd(const LinearObjective& objective, const std::vector<BlockRange>& blocks,
                            int depth, const Eigen::VectorXd& w0) = 0;
    // One RPD update: z = (block j of iterate k - delays[j])_j; g = grad_stage f_batch(z);
    // w_{k+1} = w_k with block `stage` -= stepSize * g.
    virtual UpdateSample rpdStep(std::span<const int> delays, int stage, int batch, double stepSize,
                                 bool sample) = 0;

    // Gaussian gradient noise for the rest of the run (SPEC section 6): each backward adds
    // sigma * xi to its block gradient before the update, xi drawn in processing order from a
    // copy of `stream` (default_rng(seed), or a shared stream advanced past earlier runs); an RPD
    // step draws for blocks S-1 ... stage and uses only its own. Called only with sigma > 0,
    // after prepare*. The default refuses (ConfigError naming the backend).
    virtual void setGradientNoise(double sigma, const NumpyRandom& stream);
    // The optimizer of the rest of the run (compute/optimizer.hpp), after prepare*. Unset (or
    // plain()): w -= stepSize * g. Otherwise a backward (or RPD step) applies the optimizer's
    // update with step size stepSize to the block's current weights with its state; in
    // pipelines, a backward whose op has endsStep = false only adds g to a pending sum, and the
    // step's last one applies the optimizer to gradientScale * (sum + g). The default refuses
    // a spec that is not plain() (ConfigError naming the backend).
    virtual void setOptimizer(const OptimizerSpec& spec, double gradientScale);
    // The staleness correctors of the rest of the run (compute/corrector.hpp,
    // docs/correctors.md), after prepare* and setOptimizer. The backend keeps each replica's
    // and block's last applied change d (for readShift and lookahead) and accumulate's sums,
    // and applies dc and lookahead; the replay supplies readShift, stepFactor and applies per
    // op, and for RPD scales the step size (delay_adaptive). The default refuses a spec with
    // any() (ConfigError naming the backend).
    virtual void setCorrectors(const CorrectorSpec& spec);

    // Queries at the current point (replica average for pipelines, w_k for RPD).
    virtual double objective() = 0;
    virtual double gradientNormSquared() = 0;
    virtual Eigen::VectorXd weights() = 0;
};

using BackendFactory = std::unique_ptr<ComputeBackend> (*)();

}  // namespace pipelens

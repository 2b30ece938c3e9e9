#pragma once
// What PD and LocalSGD on the language model compute, apart from the schedule walk and the logs
// (LmPipelineReplay, core/replay/lm_pipeline_replay.hpp, owns those): an executor holds the
// replicas' weights, the per-stage weight stashes and kept input activations, and runs one
// stage forward or backward at a time. The CPU executor (lm_cpu_pipeline_executor.hpp) and the
// OpenCL one (gpu/lm_opencl_executor.hpp) plug into the same replay, so both follow one
// timeline with one set of semantics (../shared/golden-lm/README.md, "Pipeline semantics").
// The replay hands over one slot at a time (runSlot); the CPU executor may run its ops side by
// side, bit-identical to one after the other.
#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compute/corrector.hpp"
#include "compute/optimizer.hpp"
#include "data/text_corpus.hpp"

namespace pipelens {

struct CharTransformerProblem;
class TaskTeam;

// One op of a slot: F(m, s) or B(m, s) on `replica` with dataset batch `batch`.
struct LmSlotOp {
    bool forward = true;
    int microbatch = 0;
    int stage = 0;
    int replica = 0;
    int batch = 0;
    // Backward only, read only with a stateful optimizer on a synchronous step: false adds the
    // gradient to the block's pending sum and leaves the weights (setOptimizer).
    bool endsStep = true;
    // Correctors (setCorrectors; the replay takes them from its CorrectorPlan). Forward: the
    // stash is w + readShift * d (d: the block's last applied change). Backward: the step size
    // is stepSize * stepFactor, and under accumulate the update takes effect only where
    // `applies` (the gradient joins the block's sum either way).
    double readShift = 0.0;
    double stepFactor = 1.0;
    bool applies = true;
};

// Called for op `op` (an index into the slot's ops) in the slot's order once it has taken
// effect: a forward computed (`loss`: its forward loss on the last stage, NaN otherwise), a
// backward's update applied (`loss` NaN). false stops the slot: no later op of it takes effect.
using LmSlotDone = std::function<bool(std::size_t op, double loss)>;

// Which of a pool's equal-size slots each microbatch key holds (a stash or a kept activation):
// slots are reused, so steady state allocates nothing, and the peak is the stash depth SPEC
// section 3 predicts. Shared by the executors' pools.
class LmSlotPool {
  public:
    int acquire(int key);    // a free slot (or a new one); logic_error if key already holds one
    int get(int key) const;  // logic_error if key holds none
    void release(int key);
    // Counts as released now (for the peak) but lends the slot to no one until reclaim(): a
    // slot's ops still read it while others acquire.
    void releaseDeferred(int key);
    void reclaim();
    int peak() const { return peak_; }

  private:
    void releaseAs(int key, int mark);  // owner becomes mark (-1 or -2)

    std::vector<int> owner_;  // key, -1 (free) or -2 (released, not yet reclaimed)
    int inUse_ = 0;
    int peak_ = 0;
};

class LmPipelineExecutor {
  public:
    virtual ~LmPipelineExecutor() = default;
    // "cpu, double" or the OpenCL device and precision.
    virtual std::string describe() const = 0;
    // F(m, s) on `replica` with dataset batch `batch`: stashes the replica's current block s
    // for B(m, s), keeps the stage's output as stage s+1's input, runs the forward. Returns the
    // mean next-character loss of the batch when s is the last stage, NaN otherwise.
    virtual double forward(int m, int s, int replica, int batch) = 0;
    // B(m, s): recomputes the stage's forward from its kept input with the stash when the
    // stage's saved internals belong to another microbatch, backpropagates the gradient from
    // B(m, s+1) (the last stage: from the loss), w_replica,s -= step grad, passes the input
    // gradient to stage s-1 and releases m's stash and input.
    virtual void backward(int m, int s, int replica, int batch, double stepSize) = 0;
    // The ops of one slot (each on its own stage), calling `done` for each in the slot's order
    // (LmSlotDone); returns false when `done` stopped the slot. `team`: null, or threads that may
    // run the ops side by side (the replay passes one only when `done` calls nothing of the
    // executor). This default runs forward() and backward() one after the other.
    virtual bool runSlot(const std::vector<LmSlotOp>& ops, double stepSize, TaskTeam* team,
                         const LmSlotDone& done);
    // The optimizer of the run (compute/optimizer.hpp, docs/correctors.md), before the first
    // op. plain(): w -= stepSize g. Otherwise a backward applies the optimizer's update with
    // step size stepSize to the replica's current block with that block's state; a backward
    // whose op has endsStep = false only adds its gradient to a pending sum, and the step's last
    // one applies the optimizer to gradientScale * (sum + g). The default refuses a spec that is
    // not plain() (ConfigError naming the executor).
    virtual void setOptimizer(const OptimizerSpec& spec, double gradientScale);
    // The staleness correctors of the run (compute/corrector.hpp, docs/correctors.md), after
    // setOptimizer and before the first op: the executor keeps each replica's and block's last
    // applied change d and accumulate's sums, and applies dc and lookahead; the ops carry
    // readShift, stepFactor and applies. The default refuses a spec with any() (ConfigError
    // naming the executor).
    virtual void setCorrectors(const CorrectorSpec& spec);
    // Every replica becomes the replicas' mean (LocalSGD), and so does the optimizer's state.
    virtual void averageReplicas() = 0;
    // Mean batch loss over `batches` at the replica average (the full or held-out objective).
    virtual double meanLoss(const TokenBatches& batches) = 0;
    // The replica average in double.
    virtual Eigen::VectorXd weights() const = 0;
    // Peak copies held at once per stage: stashed weights; kept inputs (stage 0: its stashes).
    virtual std::vector<int> peakStashedWeights() const = 0;
    virtual std::vector<int> peakKeptInputs() const = 0;

  protected:
    // What runSlot's default does for an op: forward() (which has no readShift) and backward()
    // (which has no endsStep, stepFactor or applies).
    virtual double forwardOp(const LmSlotOp& op);
    virtual void backwardOp(const LmSlotOp& op, double stepSize);
};

// The ConfigError of an executor that applies plain SGD only, for a spec that is not plain().
void refuseLmOptimizer(const OptimizerSpec& spec, const std::string& executor);
// The ConfigError of an executor that applies no corrector, for a spec with any().
void refuseLmCorrectors(const CorrectorSpec& spec, const std::string& executor);

// Makes the executor of a run: the problem (its precision decides the executor's) and R.
using LmExecutorFactory = std::function<std::unique_ptr<LmPipelineExecutor>(
    std::shared_ptr<const CharTransformerProblem> problem, int replicas)>;

}  // namespace pipelens

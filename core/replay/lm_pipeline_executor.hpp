#pragma once
// What PD and LocalSGD on the language model compute, apart from the schedule walk and the logs
// (LmPipelineReplay, core/replay/lm_pipeline_replay.hpp, owns those): an executor holds the
// replicas' weights, the per-stage weight stashes and kept input activations, and runs one
// stage forward or backward at a time. The CPU executor (lm_cpu_pipeline_executor.hpp) and the
// OpenCL one (gpu/lm_opencl_executor.hpp) plug into the same replay, so both follow one
// timeline with one set of semantics (../shared/golden-lm/README.md, "Pipeline semantics").
#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/text_corpus.hpp"

namespace pipelens {

struct CharTransformerProblem;

// Which of a pool's equal-size slots each microbatch key holds (a stash or a kept activation):
// slots are reused, so steady state allocates nothing, and the peak is the stash depth SPEC
// section 3 predicts. Shared by the executors' pools.
class LmSlotPool {
  public:
    int acquire(int key);    // a free slot (or a new one); logic_error if key already holds one
    int get(int key) const;  // logic_error if key holds none
    void release(int key);
    int peak() const { return peak_; }

  private:
    std::vector<int> owner_;  // key or -1
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
    // Every replica becomes the replicas' mean (LocalSGD).
    virtual void averageReplicas() = 0;
    // Mean batch loss over `batches` at the replica average (the full or held-out objective).
    virtual double meanLoss(const TokenBatches& batches) = 0;
    // The replica average in double.
    virtual Eigen::VectorXd weights() const = 0;
    // Peak copies held at once per stage: stashed weights; kept inputs (stage 0: its stashes).
    virtual std::vector<int> peakStashedWeights() const = 0;
    virtual std::vector<int> peakKeptInputs() const = 0;
};

// Makes the executor of a run: the problem (its precision decides the executor's) and R.
using LmExecutorFactory = std::function<std::unique_ptr<LmPipelineExecutor>(
    std::shared_ptr<const CharTransformerProblem> problem, int replicas)>;

}  // namespace pipelens

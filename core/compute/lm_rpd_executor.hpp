#pragma once
// What Randomized PipeDream on the language model computes, apart from its draws, its version
// bookkeeping and its logs (LmRpdReplay, core/replay/lm_rpd_replay.hpp, owns those): an
// executor holds the versions of every block in numbered buffers and runs one RPD step on a
// mixed stale point. The CPU executor (below) and the OpenCL one
// (gpu/lm_opencl_rpd_executor.hpp) plug into the same replay, so both draw the same stages,
// batches and delays and read the same versions.
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

class LmRpdExecutor {
  public:
    virtual ~LmRpdExecutor() = default;
    // "cpu, double" or the OpenCL device and precision.
    virtual std::string describe() const = 0;
    // Buffer 0 of every block holds w0's block when the executor is made; others come into use
    // as step() writes them. `point[j]`: the buffer of block j to read.
    // One step: forward through every stage at `point` on dataset batch `batch`, backward from
    // the last stage down to `stage`, and buffer `to` of block `stage` becomes buffer `from`
    // of that block minus stepSize times the block's gradient (`to` is never `from` or a buffer
    // `point` reads). Returns the forward's mean next-character loss.
    virtual double step(const std::vector<int>& point, int stage, int batch, int from, int to,
                        double stepSize) = 0;
    // The optimizer of the run, before the first step (docs/correctors.md): not plain(), step()
    // makes buffer `to` buffer `from` plus the optimizer's update of the block's gradient, with
    // the block's state. The default refuses a spec that is not plain() (refuseLmOptimizer).
    virtual void setOptimizer(const OptimizerSpec& spec);
    // The correctors of the run, before the first step (docs/correctors.md): RPD takes
    // delay_adaptive (the replay scales stepSize) and dc, which step() applies with w_now the
    // newest version of block `stage` (buffer `from`) and w_read the version `point` reads. The
    // default refuses a spec with any() (refuseLmCorrectors).
    virtual void setCorrectors(const CorrectorSpec& spec);
    // Mean batch loss over `batches` at `point` (the full or held-out objective).
    virtual double meanLoss(const std::vector<int>& point, const TokenBatches& batches) = 0;
    // The weights at `point` in double.
    virtual Eigen::VectorXd weights(const std::vector<int>& point) const = 0;
};

using LmRpdExecutorFactory = std::function<std::unique_ptr<LmRpdExecutor>(
    std::shared_ptr<const CharTransformerProblem> problem)>;

// The CPU executor (Eigen, the problem's precision).
std::unique_ptr<LmRpdExecutor> makeLmCpuRpdExecutor(
    std::shared_ptr<const CharTransformerProblem> problem);

}  // namespace pipelens

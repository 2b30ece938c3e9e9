#pragma once
// Randomized PipeDream (SPEC section 4) on the language model: at step k, block j of the mixed
// stale point z_k is block j of iterate k - d_j; forward through every stage at z_k, backward from
// the last stage down to the drawn stage s, and update only block s. Each block keeps only the
// versions an iterate in the window [k - delta, k] can still read (at most delta + 1), never a
// copy of every iterate. The replay draws and keeps the bookkeeping; an executor
// (lm_rpd_executor.hpp: the CPU's or OpenCL's) holds the versions and runs the steps.
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "compute/lm_rpd_executor.hpp"
#include "random/numpy_random.hpp"
#include "replay/lm_replay.hpp"
#include "replay/replay_config.hpp"
#include "replay/rpd_replay.hpp"
#include "schedule/delays.hpp"

namespace pipelens {

struct LmRpdConfig : RpdRunConfig {
    LmRunOptions options;
};

template <typename Real>
class LmRpdReplay final : public LmReplayBase<Real> {
  public:
    // A null executor: the CPU's.
    LmRpdReplay(std::shared_ptr<const CharTransformerProblem> problem, LmRpdConfig config,
                std::unique_ptr<LmRpdExecutor> executor = nullptr);
    long long advance(long long maxUpdates) override;
    long long stepsDone() const override { return k_; }
    long long totalSteps() const override { return config_.updates; }
    Eigen::VectorXd weights() const override;
    // Versions currently held per block (for the memory check).
    int versionsHeld(int block) const {
        return static_cast<int>(history_[static_cast<std::size_t>(block)].size());
    }

  private:
    struct Version {
        long long from = 0;  // the first iterate index holding this version
        int buffer = 0;      // the executor's buffer of this block holding it
    };
    int bufferAt(int block, long long iterate) const;
    const std::vector<int>& currentPoint();  // every block's newest version

    LmRpdConfig config_;
    long long k_ = 0;
    NumpyRandom rng_;                           // the linear RPD's stream: both RPDs draw alike
    std::vector<std::deque<Version>> history_;  // per block, oldest first
    std::vector<std::vector<int>> spare_;       // per block: buffers free for reuse
    std::vector<int> buffers_;                  // per block: buffers handed out so far
    std::vector<int> point_, current_;
    std::unique_ptr<LmRpdExecutor> executor_;
};

// The run in the problem's precision, on the executor `executor` makes (empty: the CPU's).
std::unique_ptr<LmReplay> makeLmRpdReplay(std::shared_ptr<const CharTransformerProblem> problem,
                                          LmRpdConfig config,
                                          const LmRpdExecutorFactory& executor = {});

}  // namespace pipelens

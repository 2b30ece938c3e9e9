#pragma once
// Randomized PipeDream: block updates with drawn delays and stage order, no slots of its own.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "random/numpy_random.hpp"
#include "replay/replay.hpp"
#include "replay/replay_config.hpp"

namespace pipelens {

// Randomized PipeDream (SPEC section 4). Memory: a ring of delta+1 iterates, never K.
struct RpdReplayConfig : RpdRunConfig {
    int stages = 4;
    SamplingOptions sampling;
    GradientNoiseSpec noise;
};

// The normals an RPD run of `config` with gradient noise draws: sum over its updates k of the
// sizes of blocks s_k ... S-1 (a step on stage s_k backpropagates from the last stage). Its
// stages, batches and delays are drawn as the run draws them, without the run: the count is the
// same for every step size, and counts every update even where the run would diverge first.
std::int64_t rpdNoiseNormals(RpdReplayConfig config, const LinearObjective& objective);

class RpdReplay final : public Replay {
  public:
    RpdReplay(std::shared_ptr<const LinearObjective> objective,
              std::unique_ptr<ComputeBackend> backend, RpdReplayConfig config);
    long long advance(long long maxUpdates) override;
    long long stepsDone() const override { return k_; }
    long long totalSteps() const override { return config_.updates; }

  private:
    void finish();

    std::shared_ptr<const LinearObjective> objective_;
    std::unique_ptr<ComputeBackend> backend_;
    RpdReplayConfig config_;
    long long k_ = 0;
    NumpyRandom rng_;  // default_rng(seed), fresh per run: stage, batch index, delays
    std::vector<int> delays_;
    double tauRef_ = 0.0;  // delay_adaptive's tau_ref (> 0) or 0 when it is off
};

}  // namespace pipelens

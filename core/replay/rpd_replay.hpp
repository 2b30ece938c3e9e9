#pragma once
// Randomized PipeDream: block updates with drawn delays and stage order, no slots of its own.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "random/numpy_random.hpp"
#include "replay/replay.hpp"

namespace pipelens {

enum class DelayMode { Uniform, Max, Zero, PipeDream };
enum class StageOrder { Uniform, PipeDream };
DelayMode parseDelayMode(const std::string& text);
std::string delayModeName(DelayMode mode);
StageOrder parseStageOrder(const std::string& text);
std::string stageOrderName(StageOrder order);

// Randomized PipeDream (SPEC section 4). Memory: a ring of delta+1 iterates, never K.
struct RpdReplayConfig {
    std::string label;
    int stages = 4;
    long long updates = 100;  // K (PipeDream delays/order: at most the table's update count)
    double stepSize = 0.1;
    DelayMode delayMode = DelayMode::Uniform;
    long long maxDelay = 0;   // delta (ignored for DelayMode::PipeDream: the table's maximum)
    StageOrder order = StageOrder::Uniform;
    std::uint64_t seed = 0;
    // Needed for DelayMode::PipeDream or StageOrder::PipeDream.
    std::shared_ptr<const DelayTable> pipeDream;
    std::vector<int> batchOf;  // PD's batch schedule (data batch of each PD microbatch)
    SamplingOptions sampling;
    GradientNoiseSpec noise;
};

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
};

}  // namespace pipelens

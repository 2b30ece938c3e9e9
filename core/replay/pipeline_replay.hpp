#pragma once
// The pipeline replays: PipeDream (1F1B with weight stashing), LocalSGD, sequential SGD and
// fill-drain, each walking its slot timeline.
#include <memory>
#include <string>
#include <vector>

#include "method.hpp"
#include "replay/replay.hpp"
#include "replay/replay_config.hpp"

namespace pipelens {

// PipeDream (weight stashing), LocalSGD (replicas + averaging), sequential SGD and fill-drain
// over a slot timeline. Every backward is one block update with step stepSize * stepScale.
struct PipelineReplayConfig : PipelineRunConfig {
    bool recordDelays = true;  // keep the delay table (single-replica runs)
    SamplingOptions sampling;
    GradientNoiseSpec noise;
};

class PipelineReplay final : public Replay {
  public:
    PipelineReplay(std::shared_ptr<const LinearObjective> objective,
                   std::unique_ptr<ComputeBackend> backend, PipelineReplayConfig config);
    long long advance(long long maxSlots) override;
    long long stepsDone() const override { return slot_; }
    long long totalSteps() const override { return config_.timeline.totalSlots; }

  private:
    void finish();

    std::shared_ptr<const LinearObjective> objective_;
    std::unique_ptr<ComputeBackend> backend_;
    PipelineReplayConfig config_;
    std::vector<ReplayEvent> events_;
    size_t nextEvent_ = 0;
    size_t nextAveraging_ = 0;
    int slot_ = 0;
    int activationSlots_ = 1;
    std::vector<int> blockVersion_;             // per replica * S + stage
    std::vector<int> versionAtForward_;         // per microbatch * S + stage
    std::vector<std::vector<int>> stashOwner_;  // per stage, per stash slot: microbatch or -1
    // Stateful optimizer on a synchronous step: per event, whether a backward is its block's
    // last before the block is read again (the step's end). Empty otherwise.
    std::vector<char> endsStep_;
    // Correctors (CorrectorPlan, per event): the forward's read shift, the backward's step
    // factor and whether its update takes effect. Empty without correctors.
    std::vector<double> readShift_;
    std::vector<double> stepFactor_;
    std::vector<char> applies_;
    std::vector<PipelineOp> ops_;
    std::vector<UpdateSample> samples_;
};

}  // namespace pipelens

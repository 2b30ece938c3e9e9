#pragma once
// Replays walk a schedule (or an update counter) and drive a compute backend. They advance in
// bounded steps so a UI can animate a run while it computes and a CLI can run it to the end.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "compute.hpp"
#include "random/numpy_random.hpp"
#include "replay/run_result.hpp"

namespace pipelens {

// Data batch used by each microbatch: j mod M, or a fresh permutation of the M batches per epoch.
std::vector<int> batchSequence(long long microbatches, int batches, bool shufflePerEpoch,
                               std::uint64_t seed);

struct SamplingOptions {
    bool objectivePerUpdate = true;  // f after every block update
    long long gradNormEvery = 0;     // ||grad f||^2 every this many updates (0: never)
    // Divergence: a non-finite objective, or f - f* above this factor times (f(w0) - f*).
    double blowUpFactor = 1e6;
};

// Gaussian noise on every block gradient (SPEC section 6); sigma = 0: none, nothing drawn.
struct GradientNoiseSpec {
    double sigma = 0.0;
    std::uint64_t seed = 0;  // of the run's own default_rng
};

class Replay {
public:
    virtual ~Replay() = default;
    // Advances by at most `maxSteps` steps (slots for pipelines, updates for RPD); returns the
    // number taken. Returns 0 once finished, diverged or cancelled.
    virtual long long advance(long long maxSteps) = 0;
    virtual long long stepsDone() const = 0;
    virtual long long totalSteps() const = 0;
    bool done() const { return result_.finished || result_.divergence.diverged || result_.cancelled; }
    void cancel() { cancelRequested_.store(true); }
    void runToEnd(long long chunk = 1 << 20) {
        while (!done() && advance(chunk) > 0) {
        }
    }
    const RunResult& result() const { return result_; }

protected:
    // Records f after an update; returns false (and fills result_.divergence) if it diverged.
    bool checkObjective(double f, long long updatesDone, int slot);
    void recordGradNorm(ComputeBackend& backend, long long k);
    static void startNoise(ComputeBackend& backend, const GradientNoiseSpec& noise);
    bool cancelRequested() const { return cancelRequested_.load(); }

    RunResult result_;
    SamplingOptions sampling_;

private:
    std::atomic<bool> cancelRequested_{false};
    double gradNormSum_ = 0.0;
};

// PipeDream (weight stashing), LocalSGD (replicas + averaging), sequential SGD and fill-drain
// over a slot timeline. Every backward is one block update with step stepSize * stepScale.
struct PipelineReplayConfig {
    std::string method = "pd";
    std::string label;
    Timeline timeline;
    int replicas = 1;         // LocalSGD: R (microbatch m acts on replica m mod R)
    double stepSize = 0.1;
    double stepScale = 1.0;   // fill-drain: 1/G so a flush applies the mean gradient
    std::vector<int> batchOf; // data batch of each microbatch
    bool recordDelays = true; // keep the delay table (single-replica runs)
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
    std::vector<int> blockVersion_;       // per replica * S + stage
    std::vector<int> versionAtForward_;   // per microbatch * S + stage
    std::vector<std::vector<int>> stashOwner_;  // per stage, per stash slot: microbatch or -1
    std::vector<PipelineOp> ops_;
    std::vector<UpdateSample> samples_;
};

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

#pragma once
// Replays walk a schedule (or an update counter) and drive a compute backend. They advance in
// bounded steps so a UI can animate a run while it computes and a CLI can run it to the end.
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "compute/compute.hpp"
#include "objective/linear_objective.hpp"
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

    bool operator==(const SamplingOptions&) const = default;
};

class NumpyRandom;

// Gaussian noise on every block gradient (SPEC section 6); sigma = 0: none, nothing drawn.
struct GradientNoiseSpec {
    double sigma = 0.0;
    std::uint64_t seed = 0;  // of the run's own default_rng
    // Set (objective.noise_stream = shared): the generator starts here instead, a shared stream
    // advanced past the runs before this one (experiment/run/shared_noise.hpp).
    std::shared_ptr<const NumpyRandom> start;
};

class Replay {
  public:
    virtual ~Replay() = default;
    // Advances by at most `maxSteps` steps (slots for pipelines, updates for RPD); returns the
    // number taken. Returns 0 once finished, diverged or cancelled.
    virtual long long advance(long long maxSteps) = 0;
    virtual long long stepsDone() const = 0;
    virtual long long totalSteps() const = 0;
    bool done() const {
        return result_.finished || result_.divergence.diverged || result_.cancelled;
    }
    void cancel() { cancelRequested_.store(true); }
    void runToEnd(long long chunk = 1 << 20) {
        while (!done() && advance(chunk) > 0) {
        }
    }
    const RunResult& result() const { return result_; }
    // The result moved out (a run's per-update tables are megabytes): the replay is spent after.
    // f* and L still being computed aside are waited for first.
    RunResult takeResult() {
        settleConstants();
        return std::move(result_);
    }

  protected:
    // f* and L into result_: known ones at once, ones being computed aside (LinearObjective::
    // computeConstantsAside) when they arrive; neither known nor coming, f* is taken as its lower
    // bound 0 and L as 0 (nobody asked for them). Call before the first checkObjective.
    void adoptConstants(const LinearObjective& objective);
    // Waits for f* and L still coming (the end of a run, or a result taken early).
    void settleConstants();
    // Records f after an update; returns false (and fills result_.divergence) if it diverged.
    bool checkObjective(double f, long long updatesDone, int slot);
    void recordGradNorm(ComputeBackend& backend, long long k);
    static void startNoise(ComputeBackend& backend, const GradientNoiseSpec& noise);
    bool cancelRequested() const { return cancelRequested_.load(); }

    RunResult result_;
    SamplingOptions sampling_;

  private:
    // f - f* > blowUpFactor (f(w0) - f*), decided without waiting for f* whenever bounds on it
    // settle the question.
    bool blewUp(double f);
    void settleOptimum();

    std::atomic<bool> cancelRequested_{false};
    const LinearObjective* coming_ = nullptr;  // owned by the derived replay; constants pending
    bool optimumPending_ = false;
    bool smoothnessPending_ = false;
    double lowestObjective_ = 0.0;  // the least f seen: an upper bound on f*
    double gradNormSum_ = 0.0;
};

}  // namespace pipelens

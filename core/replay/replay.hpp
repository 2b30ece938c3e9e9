#pragma once
// Replays walk a schedule (or an update counter) and drive a compute backend. They advance in
// bounded steps so a UI can animate a run while it computes and a CLI can run it to the end.
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "compute.hpp"
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
    // The result moved out (a run's per-update tables are megabytes): the replay is spent after.
    RunResult takeResult() { return std::move(result_); }

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

}  // namespace pipelens

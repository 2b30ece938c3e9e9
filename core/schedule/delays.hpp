#pragma once
// Exact PipeDream delays (SPEC section 3). Block updates are numbered k = 0, 1, ... in replay
// order (slot, then stage); h(m, j) counts the updates before forward F(m, j). The update k that
// is the backward of microbatch m reads block j with delay k - h(m, j).
#include <cstdint>
#include <vector>

#include "schedule/timeline.hpp"

namespace pipelens {

struct BlockUpdateInfo {
    int stage = 0;
    int microbatch = 0;
    int slot = 0;
};

class DelayTable {
  public:
    DelayTable() = default;
    explicit DelayTable(const Timeline& timeline);

    int stages() const { return stages_; }
    int microbatches() const { return microbatches_; }
    long long updates() const { return static_cast<long long>(updates_.size()); }
    const BlockUpdateInfo& update(long long k) const { return updates_[static_cast<size_t>(k)]; }
    // h(m, j): block updates before the forward of microbatch m on stage j.
    long long forwardIndex(int microbatch, int stage) const {
        return h_[static_cast<size_t>(microbatch) * stages_ + stage];
    }
    long long delay(long long k, int block) const {
        return k - forwardIndex(update(k).microbatch, block);
    }
    // Version of block `stage` read by F(m, stage): updates of that block before it.
    int versionRead(int microbatch, int stage) const {
        return version_[static_cast<size_t>(microbatch) * stages_ + stage];
    }
    long long maxDelay() const;

  private:
    int stages_ = 0;
    int microbatches_ = 0;
    std::vector<long long> h_;
    std::vector<int> version_;
    std::vector<BlockUpdateInfo> updates_;
};

struct DelayStats {
    int stages = 0;
    int microbatches = 0;
    long long samples = 0;  // delay values counted (updates x blocks)
    long long max = 0;
    double mean = 0.0;
    long long p10 = 0;
    long long p50 = 0;
    long long p90 = 0;
    double formulaMax = 0.0;   // S^2 - S/2 (even S) or S^2 - S/2 - 1/2 (odd S)
    double formulaMean = 0.0;  // S^2 / 2
    // The read of which block attains the maximum most often (0 = stage 1).
    int maxBlock = 0;
};

// floor(S^2 - S/2): the steady-state maximum delay of PD with NOAM = S.
long long pipeDreamMaxDelayFormula(int stages);
// Whether that formula (and the mean S^2/2) is this schedule's own: PipeDream with NOAM = S and
// unit costs. Fill-drain, sequential SGD or another NOAM have other delays: no formula for them.
bool pipeDreamFormulaApplies(const ScheduleParams& schedule);

// How a measured second-half maximum stands against the steady-state formula.
enum class SteadyState {
    Reached,        // the second half's maximum is the formula
    StartUpStripe,  // above it: the run is too short, the second half still holds start-up reads
    NotReached      // below it: the run is too short for the largest steady-state read to occur
};
SteadyState steadyState(long long measuredMax, long long formulaMax);

// Statistics over the updates k >= fromFraction * K of a delay table (every block's read).
// Percentiles are nearest-rank: the smallest value with at least q of the samples <= it.
DelayStats delayStats(const DelayTable& table, double fromFraction = 0.5);

// The same statistics for a default-cost PD run of N microbatches (N = 10 S when 0), computed
// without materialising the K x S delays: microbatches with identical update/forward patterns
// are counted once.
DelayStats pipeDreamDelayStats(int stages, int microbatches = 0, double fromFraction = 0.5);

// Throws ResourceError when the statistics for S = first..last (run `threads` at a time; 0: one
// per hardware thread) need more memory than memoryLimitBytes(). pipeDreamDelayStatsRange calls it.
void requireDelayStatsMemory(int firstStages, int lastStages, int microbatches, int threads);

// pipeDreamDelayStats for every S in [firstStages, lastStages], spread over `threads` worker
// threads (0: one per hardware thread). Results are in order of S.
std::vector<DelayStats> pipeDreamDelayStatsRange(int firstStages, int lastStages,
                                                 int microbatches = 0, double fromFraction = 0.5,
                                                 int threads = 0);

}  // namespace pipelens

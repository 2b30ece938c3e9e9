#pragma once
// Exact PipeDream delays (SPEC section 3). Block updates are numbered k = 0, 1, ... in replay
// order (slot, then stage); h(m, j) counts the updates before forward F(m, j). The update k that
// is the backward of microbatch m reads block j with delay k - h(m, j).
// SPEC section 2.1 counts the same read in two more units (DelayUnit): optimizer steps of block j
// and slots.
#include <cstdint>
#include <vector>

#include "schedule/timeline.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

// The unit a delay counts (SPEC section 2.1):
//  - BlockUpdates: updates of any block between F(m, j)'s read and update k (section 3, the
//    paper's): k - h(m, j);
//  - OptimizerSteps: optimizer steps of block j that began to land after the read and before
//    update k, update k's own step not counted. Where each block update is a step of its block
//    (PD, async imported, SGD and LocalSGD with one replica: the replica's own updates) that is
//    the updates of block j in between, so PD's own-block delay on stage s = 1 ... S is S - s
//    (and SGD's read of a block above the updated one is 1: the same microbatch's update);
//    where microbatches form steps (fill-drain's flush groups, 1F1B, ZB-H1, imported sync: M
//    per step; 2BW: m per step) a step's partial updates count once, giving 0 for the
//    synchronous schedules and 1 for 2BW (0 for its first group, which reads w(0) = w(-1));
//  - Slots: the update's slot minus the read's (F(m, j)'s start slot).
enum class DelayUnit : std::uint8_t { BlockUpdates, OptimizerSteps, Slots };
inline constexpr EnumNames<DelayUnit, 3> kDelayUnits{
    {{DelayUnit::BlockUpdates, "block_updates"},
     {DelayUnit::OptimizerSteps, "optimizer_steps"},
     {DelayUnit::Slots, "slots"}}};
// "block updates", "optimizer steps", "slots": for titles and messages.
const char* delayUnitWords(DelayUnit unit);

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
        return appliedAt(k) - forwardIndex(update(k).microbatch, block);
    }
    // Where update k's gradient lands, in the table's count of updates: k itself, except in an
    // effective() table.
    long long appliedAt(long long k) const {
        return appliedAt_.empty() ? k : appliedAt_[static_cast<size_t>(k)];
    }
    // The same updates and reads counted in the updates that take effect (a corrector that
    // accumulates gradients, docs/correctors.md): `applies[k]` says whether update k changes
    // the weights, and `closing[k]` (>= k, or -1 for a gradient never applied) is the update
    // that applies update k's gradient. delay(k, j) becomes the updates that took effect
    // between F(m, j)'s read and update closing[k] (a gradient never applied: the run's end);
    // the optimizer-step and slot units are the schedule's, unchanged.
    DelayTable effective(const std::vector<char>& applies,
                         const std::vector<long long>& closing) const;
    // Version of block `stage` read by F(m, stage): updates of that block before it.
    int versionRead(int microbatch, int stage) const {
        return version_[static_cast<size_t>(microbatch) * stages_ + stage];
    }
    long long maxDelay() const;

    // Microbatches per optimizer step (steps of consecutive microbatches, every block updated
    // by each); 0 where every block update is a step of its own block.
    int stepMicrobatches() const { return stepMicrobatches_; }
    // F(m, j)'s start slot.
    int readSlot(int microbatch, int stage) const {
        return readSlot_[static_cast<size_t>(microbatch) * stages_ + stage];
    }
    // Updates of block `block` before update k (k itself not counted), in O(log K).
    long long blockUpdatesBefore(int block, long long k) const;
    long long delaySlots(long long k, int block) const {
        return static_cast<long long>(update(k).slot) - readSlot(update(k).microbatch, block);
    }
    long long delaySteps(long long k, int block) const;
    long long delayIn(DelayUnit unit, long long k, int block) const;
    // With stepMicrobatches() > 0: the steps delay of every read of F(m, j), which does not
    // depend on the update (each of the microbatch's updates lands in the same step).
    int groupStepsDelay(int microbatch, int stage) const {
        return groupSteps_[static_cast<size_t>(microbatch) * stages_ + stage];
    }

  private:
    int stages_ = 0;
    int microbatches_ = 0;
    std::vector<long long> h_;
    std::vector<long long> appliedAt_;  // effective() tables only: per update
    std::vector<int> version_;
    std::vector<BlockUpdateInfo> updates_;
    std::vector<int> readSlot_;
    int stepMicrobatches_ = 0;
    std::vector<int> groupSteps_;  // stepMicrobatches_ > 0: steps delay of F(m, j)'s read
    // stepMicrobatches_ == 0: the update indices of each block, ascending, block j's at
    // [blockStart_[j], blockStart_[j + 1]).
    std::vector<long long> blockUpdates_;
    std::vector<long long> blockStart_;
};

// Microbatches per optimizer step of a timeline's schedule in the sense of DelayUnit (0: every
// block update is a step of its block).
int stepMicrobatchesOf(const ScheduleParams& params);

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

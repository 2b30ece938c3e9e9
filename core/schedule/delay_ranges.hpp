#pragma once
// Range queries over the PipeDream delays d(k, j) = k - h(m_k, j) of a DelayTable, for views
// that show millions of block updates: the largest delay of each block over any update range
// and the mean over any prefix, without storing the K x S delays (S = 128 over 20,000 slots
// makes 160 million). Updates are grouped in bins of 2^binShift; a max segment tree over the
// bins (each node holds the S blocks side by side) answers range maxima in O(S log K) plus the
// partial bins at the ends, and prefix sums over bins give any prefix's sum of delays.
// The same in any DelayUnit: every unit's delay is a per-update term minus a per-read term
// (k - h, slot - read slot, a group's steps delay), except the steps of schedules whose block
// updates are each a step of their block, counted as block j's updates before k minus those
// before the read (per-block counters walked along the updates).
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "schedule/delays.hpp"

namespace pipelens {

class DelayRanges {
  public:
    // The value range maxima start from ("no delay seen yet").
    static constexpr std::int32_t kNoValue = std::numeric_limits<std::int32_t>::min();
    // Bins are sized so that the tree's leaves hold at most this many numbers (8 MB).
    static constexpr long long kDefaultMaxBinCells = 1'000'000;

    DelayRanges() = default;
    // Keeps `table` alive; a null table gives an empty index.
    explicit DelayRanges(std::shared_ptr<const DelayTable> table,
                         long long maxBinCells = kDefaultMaxBinCells,
                         DelayUnit unit = DelayUnit::BlockUpdates) {
        reset(std::move(table), maxBinCells, unit);
    }
    // Indexes another table (or the same in another unit), reusing this index's memory.
    void reset(std::shared_ptr<const DelayTable> table, long long maxBinCells = kDefaultMaxBinCells,
               DelayUnit unit = DelayUnit::BlockUpdates);
    DelayUnit unit() const { return unit_; }

    bool empty() const { return blocks_ <= 0 || updates_ <= 0; }
    int blocks() const { return blocks_; }
    long long updates() const { return updates_; }
    const DelayTable* table() const { return table_.get(); }
    int binShift() const { return binShift_; }
    // The largest delay of the whole run (0 when empty).
    std::int32_t largest() const { return largest_; }

    // d(k, j) in unit() for 0 <= k < updates(), 0 <= block < blocks() (unchecked: called per
    // cell; O(log K) for counted steps, else O(1)).
    std::int32_t delay(long long k, int block) const {
        const std::int32_t read = forward_[static_cast<std::size_t>(table_->update(k).microbatch) *
                                               static_cast<std::size_t>(blocks_) +
                                           static_cast<std::size_t>(block)];
        if (countedSteps_)
            return static_cast<std::int32_t>(table_->blockUpdatesBefore(block, k)) - read;
        return updateTerm(k) - read;
    }

    // acc[j] = max(acc[j], largest d(k, j) over k in [lo, hi)) for every block j, exactly.
    void rangeMax(long long lo, long long hi, std::int32_t* acc) const;
    // The update in [lo, hi) with the largest delay of `block` (the first such); lo if empty.
    long long argMax(long long lo, long long hi, int block) const;
    // Sum over every block of the delays of updates [lo, hi).
    long long delaySum(long long lo, long long hi) const;

    // SPEC section 3: the maximum and mean of every block's delay over the second half of the
    // first `shown` updates (updates [ceil(shown / 2), shown)); zeros when that is empty.
    struct Stats {
        double max = 0.0;
        double mean = 0.0;
    };
    Stats secondHalfStats(long long shown) const;

  private:
    // The per-update term of the unit's delay (not for counted steps).
    std::int32_t updateTerm(long long k) const {
        switch (unit_) {
            case DelayUnit::Slots:
                return table_->update(k).slot;
            case DelayUnit::OptimizerSteps:
                return 0;
            case DelayUnit::BlockUpdates:
                break;
        }
        return static_cast<std::int32_t>(table_->appliedAt(k));
    }
    long long sumBefore(long long x) const;  // delaySum(0, x) from the bin prefix sums
    void directMax(long long lo, long long hi, std::int32_t* acc) const;

    std::shared_ptr<const DelayTable> table_;
    DelayUnit unit_ = DelayUnit::BlockUpdates;
    // Steps where each block update is a step of its block: block j's updates before k minus
    // those before the read (forward_ holds versionRead).
    bool countedSteps_ = false;
    int blocks_ = 0;
    long long updates_ = 0;
    std::vector<std::int32_t> forward_;  // the per-read term at m * S + j: h(m, j) for updates
    std::vector<long long> forwardSum_;  // sum over j of h(m, j)
    int binShift_ = 0;
    long long bins_ = 0;
    std::vector<std::int32_t> binTree_;    // node i's S maxima at [i * S, (i + 1) * S)
    std::vector<long long> binSumPrefix_;  // sum of all delays of bins [0, b)
    std::int32_t largest_ = 0;
};

}  // namespace pipelens

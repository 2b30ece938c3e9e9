#pragma once
// Queries on a built timeline that a view asks for every frame or every hover: the cell busy at
// (stage, slot), how many forward / backward slots a stage spent in any slot range, and the
// stash depth. Prefix counts make each count O(1), so a chart can draw any zoom level in time
// proportional to its pixels.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "schedule/timeline.hpp"

namespace pipelens {

class TimelineIndex {
  public:
    TimelineIndex() = default;
    // Keeps `timeline` alive; a null timeline gives an empty index.
    explicit TimelineIndex(std::shared_ptr<const Timeline> timeline) { reset(std::move(timeline)); }
    // Indexes another timeline, reusing this index's memory (a view swapping runs of one size
    // then allocates nothing).
    void reset(std::shared_ptr<const Timeline> timeline);

    bool empty() const { return stages_ <= 0 || slots_ <= 0; }
    int stages() const { return stages_; }
    int slotCount() const { return slots_; }
    const Timeline* timeline() const { return timeline_.get(); }

    // Forward (backward) slots of `stage` in slots [lo, hi), 0 <= lo <= hi <= slotCount(), and
    // 0 <= stage < stages() (unchecked: called per pixel).
    int forwardBusy(int stage, int lo, int hi) const {
        return forward_[at(hi, stage)] - forward_[at(lo, stage)];
    }
    int backwardBusy(int stage, int lo, int hi) const {
        return backward_[at(hi, stage)] - backward_[at(lo, stage)];
    }

    // The cell running on `stage` during `slot`; null for an idle slot or outside the run.
    const TimelineCell* cellAt(int stage, int slot) const;

    // Weight copies held on `stage` during `slot`: microbatches whose F started at or before the
    // slot and whose B has not finished before it (a copy is held until its B's last slot).
    // 0 outside the run.
    int stashDepth(int stage, int slot) const;

    // Calls fn(cell) for every cell overlapping slots [first, last), in timeline order.
    template <typename Fn>
    void forEachCellIn(int first, int last, Fn fn) const {
        if (empty()) return;
        const int earliest = first - std::max(forwardSlots_, backwardSlots_) + 1;
        const auto& cells = timeline_->cells;
        auto it = std::lower_bound(cells.begin(), cells.end(), earliest,
                                   [](const TimelineCell& c, int t) { return c.startSlot < t; });
        for (; it != cells.end() && it->startSlot < last; ++it) {
            if (it->endSlot >= first && it->stage >= 0 && it->stage < stages_) fn(*it);
        }
    }

  private:
    // Prefix counts are slot-major: row t (index t * S + s) counts slots [0, t) of stage s.
    std::size_t at(int slot, int stage) const {
        return static_cast<std::size_t>(slot) * static_cast<std::size_t>(stages_) +
               static_cast<std::size_t>(stage);
    }

    std::shared_ptr<const Timeline> timeline_;
    int stages_ = 0;
    int slots_ = 0;
    int forwardSlots_ = 1;   // duration of every F cell
    int backwardSlots_ = 1;  // duration of every B cell
    // Memory: 2 x 4 bytes x S x (T + 1), 20 MB at S = 128 and 20,000 slots.
    std::vector<std::int32_t> forward_;
    std::vector<std::int32_t> backward_;
};

}  // namespace pipelens

#include "schedule/timeline_index.hpp"

#include <utility>

namespace pipelens {

void TimelineIndex::reset(std::shared_ptr<const Timeline> timeline) {
    timeline_ = std::move(timeline);
    stages_ = timeline_ ? timeline_->params.stages : 0;
    slots_ = timeline_ ? timeline_->totalSlots : 0;
    forward_.clear();
    backward_.clear();
    if (empty()) return;
    forwardSlots_ = std::max(1, timeline_->params.costs.forwardSlots);
    backwardSlots_ = std::max(1, timeline_->params.costs.backwardSlots);
    const auto S = static_cast<std::size_t>(stages_);
    forward_.assign((static_cast<std::size_t>(slots_) + 1) * S, 0);
    backward_.assign((static_cast<std::size_t>(slots_) + 1) * S, 0);
    // One pass over the cells marks row t + 1 for every busy slot t; the running sum below turns
    // the marks into counts.
    for (const TimelineCell& c : timeline_->cells) {
        if (c.stage < 0 || c.stage >= stages_) continue;
        auto& counts = c.op == OpKind::Forward ? forward_ : backward_;
        for (int t = std::max(0, c.startSlot); t <= std::min(c.endSlot, slots_ - 1); ++t)
            counts[at(t + 1, c.stage)] = 1;
    }
    for (std::size_t i = S; i < forward_.size(); ++i) {
        forward_[i] += forward_[i - S];
        backward_[i] += backward_[i - S];
    }
}

const TimelineCell* TimelineIndex::cellAt(int stage, int slot) const {
    if (empty() || stage < 0 || stage >= stages_ || slot < 0 || slot >= slots_) return nullptr;
    const auto& cells = timeline_->cells;
    // Cells are sorted by (start slot, stage); a cell covering `slot` started at most
    // max(F, B duration) - 1 slots earlier.
    for (int start = slot; start > slot - std::max(forwardSlots_, backwardSlots_) && start >= 0;
         --start) {
        auto it = std::lower_bound(cells.begin(), cells.end(), std::pair(start, stage),
                                   [](const TimelineCell& c, std::pair<int, int> key) {
                                       return std::pair(c.startSlot, c.stage) < key;
                                   });
        if (it != cells.end() && it->startSlot == start && it->stage == stage)
            return it->endSlot >= slot ? &*it : nullptr;
    }
    return nullptr;
}

// A stage's forwards (and backwards) never overlap and all last the same number of slots, so
// busy-slot counts give both the forwards started and the backwards finished.
int TimelineIndex::stashDepth(int stage, int slot) const {
    if (empty() || stage < 0 || stage >= stages_ || slot < 0) return 0;
    const int forwardBusyUpTo = forwardBusy(stage, 0, std::min(slot + 1, slots_));
    const int started = (forwardBusyUpTo + forwardSlots_ - 1) / forwardSlots_;
    const int released = backwardBusy(stage, 0, std::min(slot, slots_)) / backwardSlots_;
    return started - released;
}

}  // namespace pipelens

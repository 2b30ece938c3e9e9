#include "experiment/run/budget.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace pipelens {
namespace {

int startedBefore(const Timeline& tl, int slots) {
    std::set<int> started;
    for (const TimelineCell& c : tl.cells) {
        if (c.stage == 0 && c.op == OpKind::Forward && c.startSlot < slots)
            started.insert(c.microbatch);
    }
    return static_cast<int>(started.size());
}

}  // namespace

Timeline truncatedTimeline(ScheduleParams params, int slots) {
    params.microbatches = std::max(1, microbatchesForBudget(params, slots) + 1);
    Timeline tl = buildTimeline(params);
    while (startedBefore(tl, slots) >= params.microbatches) {
        params.microbatches *= 2;
        tl = buildTimeline(params);
    }
    return cutTimeline(std::move(tl), slots);
}

Timeline cutTimeline(Timeline tl, int slots) {
    std::erase_if(tl.cells, [&](const TimelineCell& c) { return c.endSlot >= slots; });
    std::erase_if(tl.averagingSlots, [&](int s) { return s >= slots; });
    tl.totalSlots = slots;
    return tl;
}

long long updatesWithin(const Timeline& tl, int slots) {
    return std::count_if(tl.cells.begin(), tl.cells.end(), [&](const TimelineCell& c) {
        return c.op == OpKind::Backward && c.endSlot < slots;
    });
}

}  // namespace pipelens

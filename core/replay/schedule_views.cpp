#include "replay/schedule_views.hpp"

#include <utility>

namespace pipelens {

void fillScheduleViews(RunResult& r, Timeline timeline, bool withDelays) {
    r.utilization = utilization(timeline);
    if (withDelays) r.delays = DelayTable(timeline);
    r.timeline = std::move(timeline);
    if (!withDelays) return;
    r.delayStats = delayStats(*r.delays, 0.5);
    r.maxDelay = r.delays->maxDelay();
}

}  // namespace pipelens

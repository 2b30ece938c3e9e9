#include "replay/schedule_views.hpp"

namespace pipelens {

void fillScheduleViews(RunResult& r, const Timeline& timeline, bool withDelays) {
    r.timeline = timeline;
    r.utilization = utilization(timeline);
    if (!withDelays) return;
    r.delays = DelayTable(timeline);
    r.delayStats = delayStats(*r.delays, 0.5);
    r.maxDelay = r.delays->maxDelay();
}

}  // namespace pipelens

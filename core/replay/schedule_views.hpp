#pragma once
// What a pipeline run reports that depends only on its schedule (timeline, utilization, delay
// table and statistics): the replay fills it before the first slot, and views of a run not yet
// computed (the app while S is dragged) fill it the same way without running anything.
#include "replay/run_result.hpp"

namespace pipelens {

// Sets r.timeline, r.utilization and, when `withDelays` (single-replica runs), r.delays,
// r.delayStats (second half of the updates) and r.maxDelay. (By value: a caller done with its
// timeline moves it in, 10^5 cells at S = 128, instead of copying.)
void fillScheduleViews(RunResult& r, Timeline timeline, bool withDelays);

}  // namespace pipelens

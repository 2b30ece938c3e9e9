#pragma once
// The two rules for a budget of simulated time (SPEC section 6). "fit": a method runs the
// largest N whose whole run fits in the budget. "truncate" (the authors' rule): it runs a
// longer timeline and stops after the budget's last slot; microbatches in flight then never
// finish (an operation counts only if it ends inside the budget).
#include "schedule/timeline.hpp"

namespace pipelens {

// The first `slots` slots of the endless run of `params`: cells that end before slot `slots`,
// averaging slots inside it, totalSlots = slots (peak stash kept from the longer run). N is
// doubled until some microbatch was never started, which proves the prefix is the endless
// run's: the N limit never held a stage back.
Timeline truncatedTimeline(ScheduleParams params, int slots);

// `timeline` cut after slot `slots` - 1: the cells that end before it and the averaging slots
// inside it; totalSlots = slots.
Timeline cutTimeline(Timeline timeline, int slots);

// Block updates (backwards) that end before slot `slots`.
long long updatesWithin(const Timeline& timeline, int slots);

}  // namespace pipelens

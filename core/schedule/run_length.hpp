#pragma once
// Run lengths of schedules without building their timelines, and the inverse used by budgets:
// how many microbatches fit in a number of slots. Closed forms where SPEC section 2 gives them,
// else one simulated round scaled up (rounds are independent after a full drain), else one
// simulation without cells; never anything above the timeline cap.
#include <optional>

#include "schedule/timeline.hpp"

namespace pipelens {

// The most microbatches a timeline may have with `stages` stages (microbatches x stages x 2 <=
// 400000000 cells, the cap buildTimeline enforces).
int maxMicrobatches(int stages);

// The closed form, when one holds: PD with unit costs, no latency and NOAM = S lasts
// 2N + 2(S - 1); fill-drain with unit costs and no latency, 2(g + S - 1) per flush group of g.
std::optional<long long> closedFormRunLength(const ScheduleParams& params);

// Run length in slots (validates the parameters like buildTimeline; stores no cells).
long long runLengthSlots(const ScheduleParams& params);

struct BudgetFit {
    int microbatches = 0;  // the largest N whose run fits (0: none)
    bool capped = false;   // maxMicrobatches decided, not the budget: the budget is too large
};

// The largest N with runLengthSlots(N) <= slotBudget, searched among 1..maxMicrobatches(S).
BudgetFit fitBudget(ScheduleParams params, long long slotBudget);

}  // namespace pipelens

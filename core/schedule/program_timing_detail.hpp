#pragma once
// Internal to the schedule code: timeProgram's list scheduling (program_timing.cpp) run straight
// on per-rank orders, giving each action's start in a caller's buffer instead of a sorted list of
// timed actions (buildFlushProgram writes its grid from it without copying the order into a
// program first). The algorithm is timeProgram's own: both call one routine.
#include <cstdint>
#include <vector>

#include "schedule/program.hpp"

namespace pipelens::detail {

struct OrderStarts {
    // Per action: its first slot, rank 0's actions in row order first, then rank 1's, ….
    std::vector<std::int32_t> starts;
    long long length = 0;  // slots until the last action ends
};

// timeProgram of orderProgram(order) (one action per step), without building either; throws
// ConfigError as timeProgram does (steps named are positions in a rank's order), and where the
// actions' costs together pass 2^31 − 1 slots (a flush grid, at most kMaxFlushCells, never does).
void timeOrder(const std::vector<std::vector<Action>>& order, const ActionCosts& costs,
               OrderStarts& out);

}  // namespace pipelens::detail

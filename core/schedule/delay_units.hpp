#pragma once
// A delay table's delays in every DelayUnit at once (SPEC section 2.1): the results folder's
// delay_units_<i>.csv, the app's heatmap CSV in a unit other than block updates, and each
// unit's largest delay for summary.json.
#include <array>
#include <string>

#include "schedule/delays.hpp"

namespace pipelens {

// Columns method, block_update, updated_stage (1 ... S), microbatch, slot, then S columns per
// unit named by it: block_updates_block1 ... block_updates_blockS, optimizer_steps_block1 ...,
// slots_block1 ...; one row per update k < rows (all when rows < 0), in replay order.
// O(K S): each block's update count is carried along the rows.
std::string delayUnitsCsv(const DelayTable& delays, const std::string& method, long long rows = -1);

// The largest delay of any read in each unit, indexed by DelayUnit (0 with no updates).
std::array<long long, 3> maxDelayByUnit(const DelayTable& delays);

}  // namespace pipelens

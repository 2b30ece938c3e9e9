#pragma once
// A run's schedule as tables for people: the app's Gantt and heatmap CSV exports and the results
// folder write these. Stages and blocks are numbered from 1, as on screen; slots, microbatches
// and block updates from 0, as on screen. (`timelineCsv` keeps the authors' reference format,
// stages from 0, for comparing with their timelines.)
#include <optional>
#include <string>

#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

// Where a LocalSGD timeline puts microbatch m (SPEC section 2): replica m mod R and round
// m / (R H), both from 0. Empty for other schedules and for unresolved parameters (R = 0). The
// Gantt table and the Perfetto trace number replicas and rounds through this one rule.
struct ReplicaPlace {
    int replica = 0;
    int round = 0;
};
std::optional<ReplicaPlace> localSgdPlace(const ScheduleParams& params, int microbatch);

// Columns method, slot, end_slot, stage, op, microbatch, version_read, replica, round.
// One row per F or B cell (op F or B) and, for LocalSGD, one per averaging (op "average", at the
// slot whose end it happens at, for every stage and replica: stage, microbatch, version_read and
// replica empty). replica and round (from 1) are filled for LocalSGD only; version_read when
// `delays` is given (the version of the stage's block that F read and its B used).
std::string ganttTableCsv(const Timeline& timeline, const DelayTable* delays,
                          const std::string& method);

// Columns method, block_update, updated_stage, microbatch, slot, delay_block1 … delay_blockS:
// the first `rows` block updates (all when rows < 0) and how stale each block's read was.
std::string delayTableCsv(const DelayTable& delays, const std::string& method, long long rows = -1);

}  // namespace pipelens

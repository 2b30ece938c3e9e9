#pragma once
// What the correctors (compute/corrector.hpp, docs/correctors.md) do at each event of a
// pipeline replay, worked out once from the schedule before the run: one plan for the linear
// models' replay and the language model's, so both apply exactly the same corrections.
#include <optional>
#include <vector>

#include "compute/corrector.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

struct CorrectorPlan {
    // Per event of the replay order: a forward reads w + readShift * d (d: the block's last
    // applied change): prediction's s or lookahead's beta; 0 otherwise (and for backwards).
    std::vector<double> readShift;
    // Per event: a backward's step-size factor f_k = tau_ref / max(tau_ref, tau_k)
    // (delay_adaptive), 1 otherwise.
    std::vector<double> stepFactor;
    // Per event: 1 where a backward's update takes effect (every backward, except under
    // accumulate k > 1: the k-th of each block and replica); forwards 1.
    std::vector<char> applies;
    // accumulate k > 1: the delays counted in the updates that take effect
    // (DelayTable::effective), for RunResult::effectiveDelays.
    std::optional<DelayTable> effective;
};

// The plan of `spec` for a timeline walked in `events` (replayOrder(timeline)) with `replicas`
// weight copies (microbatch m acts on replica m mod replicas). Throws std::invalid_argument for
// a timeline whose updates form synchronous steps (correctors need each update to be a step).
CorrectorPlan planCorrectors(const std::vector<ReplayEvent>& events, const Timeline& timeline,
                             int replicas, const CorrectorSpec& spec);

}  // namespace pipelens

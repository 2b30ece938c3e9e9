#include "schedule/timeline_program.hpp"

#include <string>

#include "errors.hpp"

namespace pipelens {

PipelineProgram programFromTimeline(const Timeline& timeline) {
    const OpCosts& costs = timeline.params.costs;
    if (costs.forwardSlots != 1 || costs.backwardSlots != 1) {
        throw ConfigError("a PyTorch schedule CSV has one op per step: forward_slots = " +
                          std::to_string(costs.forwardSlots) +
                          " and backward_slots = " + std::to_string(costs.backwardSlots) +
                          " cannot be written; allowed: 1 and 1 (latency_slots may be anything)");
    }
    PipelineProgram program;
    program.ranks.assign(static_cast<size_t>(timeline.params.stages), {});
    for (auto& row : program.ranks) row.resize(static_cast<size_t>(timeline.totalSlots));
    for (const TimelineCell& c : timeline.cells) {
        ProgramStep& step =
            program.ranks[static_cast<size_t>(c.stage)][static_cast<size_t>(c.startSlot)];
        step.actions[0] =
            Action{c.op == OpKind::Forward ? ActionKind::Forward : ActionKind::Backward, c.stage,
                   c.microbatch};
        step.count = 1;
    }
    return program;
}

}  // namespace pipelens

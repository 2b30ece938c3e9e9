#include "schedule/phases.hpp"

#include <algorithm>

namespace pipelens {

std::vector<Phase> schedulePhases(const Timeline& timeline) {
    const ScheduleParams& p = timeline.params;
    const int stages = p.stages;
    const int microbatches = p.microbatches;
    std::vector<Phase> phases;
    if (stages <= 0 || microbatches <= 0) return phases;
    int group = microbatches;
    if (p.kind == ScheduleKind::LocalSgd) group = std::max(1, p.replicas * p.localSteps);
    if (p.kind == ScheduleKind::FillDrain && p.flushGroup > 0) group = p.flushGroup;
    const auto groups = static_cast<std::size_t>((microbatches + group - 1) / group);
    std::vector<int> begin(groups, 0);
    std::vector<int> steady(groups, 0);
    std::vector<int> lastForwardEnd(groups, 0);
    std::vector<int> end(groups, 0);
    for (const TimelineCell& c : timeline.cells) {
        if (c.stage < 0 || c.stage >= stages || c.microbatch < 0 || c.microbatch >= microbatches)
            continue;
        const auto g = static_cast<std::size_t>(c.microbatch / group);
        const bool firstOfGroup = c.microbatch % group == 0;
        const bool lastOfGroup =
            c.microbatch == std::min(microbatches, (c.microbatch / group + 1) * group) - 1;
        if (c.op == OpKind::Forward && c.stage == 0) {
            if (firstOfGroup) begin[g] = c.startSlot;
            if (lastOfGroup) lastForwardEnd[g] = c.endSlot;
        }
        if (c.op == OpKind::Backward) {
            if (firstOfGroup) steady[g] = std::max(steady[g], c.startSlot);
            if (lastOfGroup && c.stage == 0) end[g] = c.endSlot + 1;
        }
    }
    for (std::size_t g = 0; g < groups; ++g) {
        const int drainBegin =
            std::clamp(lastForwardEnd[g] + 1, std::max(begin[g], steady[g]), end[g]);
        const int steadyBegin = std::clamp(steady[g], begin[g], drainBegin);
        if (steadyBegin > begin[g]) phases.push_back({begin[g], steadyBegin, PhaseKind::Startup});
        if (drainBegin > steadyBegin)
            phases.push_back({steadyBegin, drainBegin, PhaseKind::Steady});
        if (end[g] > drainBegin) phases.push_back({drainBegin, end[g], PhaseKind::Drain});
    }
    return phases;
}

PhaseKind phaseAt(const std::vector<Phase>& phases, double slot) {
    auto it = std::upper_bound(phases.begin(), phases.end(), slot,
                               [](double t, const Phase& r) { return t < r.first; });
    if (it == phases.begin()) return PhaseKind::Steady;
    --it;
    return slot < it->last ? it->kind : PhaseKind::Steady;
}

}  // namespace pipelens

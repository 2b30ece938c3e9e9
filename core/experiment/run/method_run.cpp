// Where each method's block updates fall in simulated time, so views can follow one cursor.
#include <algorithm>

#include "experiment/run/experiment.hpp"

namespace pipelens {
namespace {

std::vector<int> backwardSlots(const Timeline& timeline) {
    std::vector<int> out;
    for (const ReplayEvent& e : replayOrder(timeline)) {
        if (e.op == OpKind::Backward) out.push_back(e.slot);
    }
    return out;
}

// The update slots of a PipeDream run of `res` with exactly the schedule `pd` (NOAM = S, whole
// run), if there is one: RPD is placed on it without building that timeline again.
std::vector<int> samePipeDream(const ExperimentResult& res, const ScheduleParams& pd) {
    for (const MethodRun& run : res.methods) {
        const auto& tl = run.result.timeline;
        if (!tl || run.updateSlot.empty() || run.truncateSlots > 0) continue;
        const ScheduleParams& p = tl->params;
        if (p.kind == ScheduleKind::PipeDream && (p.noam == 0 || p.noam == p.stages) &&
            p.stages == pd.stages && p.microbatches == pd.microbatches &&
            p.costs.forwardSlots == pd.costs.forwardSlots &&
            p.costs.backwardSlots == pd.costs.backwardSlots &&
            p.costs.latencySlots == pd.costs.latencySlots)
            return run.updateSlot;
    }
    return {};
}

}  // namespace

long long MethodRun::updatesBefore(int slot) const {
    return std::lower_bound(updateSlot.begin(), updateSlot.end(), slot) - updateSlot.begin();
}

void placeUpdates(ExperimentResult& res) {
    const ExperimentConfig& c = res.config;
    std::vector<int> pipeDreamSlots;  // built on demand for RPD
    for (MethodRun& run : res.methods) {
        if (!run.updateSlot.empty()) continue;  // placed already (a planned experiment)
        if (run.result.timeline) {
            run.updateSlot = backwardSlots(*run.result.timeline);
            continue;
        }
        if (pipeDreamSlots.empty()) {
            ScheduleParams pd;
            pd.kind = ScheduleKind::PipeDream;
            pd.stages = c.stages;
            pd.costs = c.costs;
            pd.microbatches = static_cast<int>(pipeDreamMicrobatchesFor(run.updates, c.stages));
            pipeDreamSlots = samePipeDream(res, pd);
            if (pipeDreamSlots.empty()) pipeDreamSlots = backwardSlots(buildTimeline(pd));
        }
        run.updateSlot = pipeDreamSlots;
        run.updateSlot.resize(
            std::min<size_t>(run.updateSlot.size(), static_cast<size_t>(run.updates)));
    }
}

}  // namespace pipelens

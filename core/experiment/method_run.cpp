// Where each method's block updates fall in simulated time, so views can follow one cursor.
#include <algorithm>

#include "experiment/experiment.hpp"

namespace pipelens {
namespace {

std::vector<int> backwardSlots(const Timeline& timeline) {
    std::vector<int> out;
    for (const ReplayEvent& e : replayOrder(timeline)) {
        if (e.op == OpKind::Backward) out.push_back(e.slot);
    }
    return out;
}

}  // namespace

long long MethodRun::updatesBefore(int slot) const {
    return std::lower_bound(updateSlot.begin(), updateSlot.end(), slot) - updateSlot.begin();
}

void placeUpdates(ExperimentResult& res) {
    const ExperimentConfig& c = res.config;
    std::vector<int> pipeDreamSlots;  // built on demand for RPD
    for (MethodRun& run : res.methods) {
        if (run.result.timeline) {
            run.updateSlot = backwardSlots(*run.result.timeline);
            continue;
        }
        if (pipeDreamSlots.empty()) {
            ScheduleParams pd;
            pd.kind = ScheduleKind::PipeDream;
            pd.stages = c.stages;
            pd.costs = c.costs;
            const long long k = std::max<long long>(run.updates, 1);
            pd.microbatches = static_cast<int>((k + c.stages - 1) / c.stages);
            pipeDreamSlots = backwardSlots(buildTimeline(pd));
        }
        run.updateSlot = pipeDreamSlots;
        run.updateSlot.resize(
            std::min<size_t>(run.updateSlot.size(), static_cast<size_t>(run.updates)));
    }
}

}  // namespace pipelens

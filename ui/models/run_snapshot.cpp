#include "models/run_snapshot.hpp"

#include <algorithm>

namespace pipelens::ui {

std::shared_ptr<const Timeline> timelineOf(const SnapshotPtr& snapshot, size_t method) {
    if (!snapshot || method >= snapshot->experiment.methods.size()) return nullptr;
    const RunResult& r = snapshot->result(method);
    if (!r.timeline) return nullptr;
    return std::shared_ptr<const Timeline>(snapshot, &*r.timeline);
}

std::shared_ptr<const DelayTable> delaysOf(const SnapshotPtr& snapshot, size_t method) {
    if (!snapshot || method >= snapshot->experiment.methods.size()) return nullptr;
    const RunResult& r = snapshot->result(method);
    if (!r.delays) return nullptr;
    return std::shared_ptr<const DelayTable>(snapshot, &*r.delays);
}

std::shared_ptr<const DelayTable> effectiveDelaysOf(const SnapshotPtr& snapshot, size_t method) {
    if (!snapshot || method >= snapshot->experiment.methods.size()) return nullptr;
    const RunResult& r = snapshot->result(method);
    if (!r.effectiveDelays) return nullptr;
    return std::shared_ptr<const DelayTable>(snapshot, &*r.effectiveDelays);
}

void deriveRunViews(RunSnapshot& s) {
    placeUpdates(s.experiment);
    s.totalSlots = s.experiment.budget.slotBudget;
    for (const MethodRun& run : s.experiment.methods) {
        if (run.result.timeline) {
            s.totalSlots = std::max(s.totalSlots, run.result.timeline->totalSlots);
        }
        if (!run.updateSlot.empty()) {
            s.totalSlots = std::max(s.totalSlots, run.updateSlot.back() + 1);
        }
    }
    // The theorem's slot axis ends at the whole run's length, known only now.
    s.curves.clear();
    s.curves.reserve(s.experiment.methods.size());
    for (const MethodRun& run : s.experiment.methods) {
        RunCurves c;
        c.loss = lossPoints(run.result, run);
        if (!run.pipeline()) c.theorem = theoremCurves(run.result, run, s.totalSlots);
        s.curves.push_back(std::move(c));
    }
}

}  // namespace pipelens::ui

#include "run_snapshot.hpp"

#include <algorithm>

namespace pipelens::ui {

long long MethodRun::updatesBefore(int slot) const {
    return std::lower_bound(updateSlot.begin(), updateSlot.end(), slot) - updateSlot.begin();
}

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

namespace {

std::vector<int> backwardSlots(const Timeline& timeline) {
    std::vector<int> out;
    for (const ReplayEvent& e : replayOrder(timeline)) {
        if (e.op == OpKind::Backward) out.push_back(e.slot);
    }
    return out;
}

}  // namespace

void deriveRunViews(RunSnapshot& s) {
    const ExperimentConfig& c = s.experiment.config;
    s.runs.clear();
    s.totalSlots = s.experiment.plan.slotBudget;
    std::vector<int> pipeDreamSlots;  // built on demand for RPD
    for (const MethodOutcome& o : s.experiment.methods) {
        MethodRun run;
        run.label = QString::fromStdString(o.plan.label);
        run.method = o.plan.spec.method;
        run.pipeline = o.plan.pipeline;
        if (o.result.timeline) {
            run.updateSlot = backwardSlots(*o.result.timeline);
            s.totalSlots = std::max(s.totalSlots, o.result.timeline->totalSlots);
        } else {
            if (pipeDreamSlots.empty()) {
                ScheduleParams pd;
                pd.kind = ScheduleKind::PipeDream;
                pd.stages = c.stages;
                pd.costs = c.costs;
                const long long k = std::max<long long>(o.plan.updates, 1);
                pd.microbatches = static_cast<int>((k + c.stages - 1) / c.stages);
                pipeDreamSlots = backwardSlots(buildTimeline(pd));
            }
            run.updateSlot = pipeDreamSlots;
            run.updateSlot.resize(std::min<size_t>(run.updateSlot.size(),
                                                   static_cast<size_t>(o.plan.updates)));
            if (!run.updateSlot.empty()) {
                s.totalSlots = std::max(s.totalSlots, run.updateSlot.back() + 1);
            }
        }
        s.runs.push_back(std::move(run));
    }
    // The theorem's slot axis ends at the whole run's length, known only now.
    for (size_t i = 0; i < s.runs.size(); ++i) {
        MethodRun& run = s.runs[i];
        const RunResult& r = s.result(i);
        run.loss = lossPoints(r, run);
        if (!run.pipeline) run.theorem = theoremCurves(r, run, s.totalSlots);
    }
}

}  // namespace pipelens::ui

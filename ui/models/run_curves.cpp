#include "models/run_curves.hpp"

#include <algorithm>
#include <cmath>

#include "replay/theorem_trace.hpp"

namespace pipelens::ui {

void appendLossPoints(const RunResult& r, const MethodRun& run, CurveProgress& progress,
                      CurvePoints& out) {
    const double fStar = r.optimum;
    // A NaN is no value yet (the language model's loss before its first last-stage forward):
    // no point, so the line starts where the values do.
    if (!progress.started) {
        if (!std::isnan(r.initialObjective)) {
            if (!run.pipeline()) out.bySlot.emplace_back(0.0, r.initialObjective - fStar);
            out.byUpdate.emplace_back(0.0, r.initialObjective - fStar);
        }
        progress.started = true;
    }
    if (run.pipeline()) {
        for (std::size_t t = progress.slotsTaken; t < r.objectivePerSlot.size(); ++t) {
            const double y = r.objectivePerSlot[t] - fStar;
            if (std::isnan(y)) continue;
            out.bySlot.emplace_back(static_cast<double>(t), y);
            if (r.objectivePerUpdate.empty() && t >= 1) {
                out.byUpdate.emplace_back(
                    static_cast<double>(run.updatesBefore(static_cast<int>(t))), y);
            }
        }
        progress.slotsTaken = std::max(progress.slotsTaken, r.objectivePerSlot.size());
    }
    for (std::size_t k = progress.updatesTaken; k < r.objectivePerUpdate.size(); ++k) {
        const double y = r.objectivePerUpdate[k] - fStar;
        if (std::isnan(y)) continue;
        out.byUpdate.emplace_back(static_cast<double>(k + 1), y);
        if (!run.pipeline() && k < run.updateSlot.size())
            out.bySlot.emplace_back(run.updateSlot[k] + 1.0, y);
    }
    progress.updatesTaken = std::max(progress.updatesTaken, r.objectivePerUpdate.size());
}

CurvePoints lossPoints(const RunResult& r, const MethodRun& run) {
    CurvePoints out;
    out.bySlot.reserve(r.objectivePerSlot.size() + r.objectivePerUpdate.size() + 1);
    out.byUpdate.reserve(std::max(r.objectivePerUpdate.size(), r.objectivePerSlot.size()) + 1);
    CurveProgress progress;
    appendLossPoints(r, run, progress, out);
    return out;
}

TheoremCurves theoremCurves(const RunResult& r, const MethodRun& run, int totalSlots) {
    TheoremCurves c;
    for (const TheoremTracePoint& p : theoremTrace(r)) {
        const auto k = static_cast<std::size_t>(p.updates);
        const double xSlot = k <= run.updateSlot.size() ? run.updateSlot[k - 1] + 1.0
                                                        : static_cast<double>(totalSlots);
        const double xUpdate = static_cast<double>(p.updates);
        auto add = [&](CurvePoints& curve, double y) {
            curve.bySlot.emplace_back(xSlot, y);
            curve.byUpdate.emplace_back(xUpdate, y);
        };
        add(c.meanGradNormSq, p.meanGradNormSq);
        add(c.bound, p.bound.total);
        add(c.optimisation, p.bound.optimisation);
        add(c.noise, p.bound.noise);
        add(c.staleness, p.bound.staleness);
    }
    return c;
}

}  // namespace pipelens::ui

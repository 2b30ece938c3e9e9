#pragma once
// The curves a finished run draws, derived once beside its RunSnapshot (on the worker thread):
// f − f* against slots and against block updates, and for RPD the theorem's bound along the run.
// The loss chart only hands these points to its series; the live publisher appends the new part
// of a run in flight with the same mapping.
#include <QPointF>
#include <cstddef>
#include <vector>

#include "experiment/run/experiment.hpp"
#include "replay/run_result.hpp"

namespace pipelens::ui {

// One line against both x axes: (slots done, y) and (block updates done, y).
struct CurvePoints {
    std::vector<QPointF> bySlot;
    std::vector<QPointF> byUpdate;
};

// How much of a run's series a curve has taken so far.
struct CurveProgress {
    std::size_t slotsTaken = 0;    // of objectivePerSlot
    std::size_t updatesTaken = 0;  // of objectivePerUpdate
    bool started = false;          // f(w0) appended
};

// Appends to `out` the points of f − f* that `r` has beyond `progress`, and advances it.
// Pipelines put slot t at x = t (f(w0) is their slot 0). RPD has no slots of its own: its update
// k is drawn at PipeDream's slot of update k (run.updateSlot). Without per-update samples, the
// update axis takes each slot's value at the updates done before it.
void appendLossPoints(const RunResult& r, const MethodRun& run, CurveProgress& progress,
                      CurvePoints& out);
CurvePoints lossPoints(const RunResult& r, const MethodRun& run);

// The theorem overlay of one RPD run: the running mean of ‖∇f‖², the bound and its three terms,
// at each sampled update count (on the slot axis at that update's slot; past the slots of
// run.updateSlot, at `totalSlots`).
struct TheoremCurves {
    CurvePoints meanGradNormSq;
    CurvePoints bound;
    CurvePoints optimisation;
    CurvePoints noise;
    CurvePoints staleness;
};
TheoremCurves theoremCurves(const RunResult& r, const MethodRun& run, int totalSlots);

// Everything the loss chart draws for one method of a finished run.
struct RunCurves {
    CurvePoints loss;
    TheoremCurves theorem;
};

}  // namespace pipelens::ui

#pragma once
// A finished experiment as the GUI sees it, for every objective: the engine's ExperimentResult
// with, per method, the
// slot in which each block update happened (so every chart can follow one playback cursor that
// counts slots). Built once on a worker thread, then shared read-only with every widget.
#include <QMetaType>
#include <QPointF>
#include <QString>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiment/run/experiment.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "models/run_curves.hpp"

namespace pipelens::ui {

struct RunSnapshot {
    std::uint64_t generation = 0;
    ExperimentResult experiment;
    int totalSlots = 0;    // the longest run, in slots (the playback range)
    double seconds = 0.0;  // wall time of the run
    // Planned only (ExperimentController::planned): the schedule views of every method, no
    // results yet (no curves, f* unknown).
    bool planOnly = false;
    // What the loss chart draws per method (derived once, by deriveRunViews): f − f*, and for
    // RPD the theorem overlay (empty without ‖∇f‖² samples).
    std::vector<RunCurves> curves;
    // A language-model run (objective kind char_transformer): the curves are then the
    // last-stage forward loss (there is no f*); each method's MethodRun::lm holds its samples.
    bool languageModel() const { return experiment.config.languageModel(); }
    // The language model's corpus and model once the run finished (null while planned and for
    // the linear models).
    const CharTransformerProblem* lmProblem() const {
        return planOnly ? nullptr : experiment.lmProblem.get();
    }

    const std::vector<MethodRun>& runs() const { return experiment.methods; }
    const RunResult& result(size_t i) const { return experiment.methods[i].result; }
    QString label(size_t i) const { return QString::fromStdString(experiment.methods[i].label); }
};

using SnapshotPtr = std::shared_ptr<const RunSnapshot>;

// The part of one method's loss curve computed so far by a run in flight (x: slots or block
// updates done, y: f - f*), thinned to a bounded number of points.
struct LiveCurve {
    QString name;
    int method = 0;
    std::vector<QPointF> bySlot;
    std::vector<QPointF> byUpdate;
    double fraction = 0.0;  // of this method's run (grid: of all its step sizes)
    double stepSize = 0.0;  // the γ being run
    bool tuning = false;    // one point of a step-size grid
};

// Views into a snapshot that keep it alive (aliasing shared pointers); null when absent.
std::shared_ptr<const Timeline> timelineOf(const SnapshotPtr& snapshot, size_t method);
std::shared_ptr<const DelayTable> delaysOf(const SnapshotPtr& snapshot, size_t method);
// The delays after correction (RunResult::effectiveDelays: a corrector that accumulates).
std::shared_ptr<const DelayTable> effectiveDelaysOf(const SnapshotPtr& snapshot, size_t method);

// Places each method's updates in slots, sets `totalSlots` and derives `curves` (called on the
// worker thread).
void deriveRunViews(RunSnapshot& snapshot);

}  // namespace pipelens::ui

Q_DECLARE_METATYPE(pipelens::ui::SnapshotPtr)

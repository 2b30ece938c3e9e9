#pragma once
// A finished experiment as the GUI sees it: the engine's ExperimentResult with, per method, the
// slot in which each block update happened (so every chart can follow one playback cursor that
// counts slots). Built once on a worker thread, then shared read-only with every widget.
#include <QMetaType>
#include <QPointF>
#include <QString>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiment/experiment.hpp"
#include "experiment/lm_experiment.hpp"
#include "run_curves.hpp"

namespace pipelens::ui {

// What a language-model run has beyond the ExperimentResult (per method, in config order): the
// text sampled from its final weights and its final training loss; and the corpus and model.
struct LmRunInfo {
    struct Method {
        std::vector<std::string> samples;  // sample_lines lines (none for non-finite weights)
        double finalLoss = 0.0;            // lmFinalLoss: the mean of the last 10 % of forwards
    };
    std::vector<Method> methods;
    int vocabulary = 0;        // V; log V is the loss of a uniform guess
    long long parameters = 0;  // the model's parameter count
    int trainBatches = 0;      // M
    long long corpusCharacters = 0;
};

struct RunSnapshot {
    std::uint64_t generation = 0;
    ExperimentResult experiment;
    int totalSlots = 0;            // the longest run, in slots (the playback range)
    double seconds = 0.0;          // wall time of the run
    // Planned only (ExperimentController::planned): the schedule views of every method, no
    // results yet (no curves, f* unknown).
    bool planOnly = false;
    // What the loss chart draws per method (derived once, by deriveRunViews): f − f*, and for
    // RPD the theorem overlay (empty without ‖∇f‖² samples).
    std::vector<RunCurves> curves;
    // Set for a language-model run (objective kind char_transformer): the curves are then the
    // last-stage forward loss (there is no f*), and `lm` holds the samples (null while planned).
    std::shared_ptr<const LmRunInfo> lm;

    bool languageModel() const { return experiment.config.languageModel(); }

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

// The ExperimentResult the views read of a language-model run (its MethodRuns, moved out; no f*),
// and what only the language model has.
ExperimentResult lmExperimentResult(LmExperimentResult&& lm, LmRunInfo& info);

// Places each method's updates in slots, sets `totalSlots` and derives `curves` (called on the
// worker thread).
void deriveRunViews(RunSnapshot& snapshot);

}  // namespace pipelens::ui

Q_DECLARE_METATYPE(pipelens::ui::SnapshotPtr)

#pragma once
// Everything a run reports (SPEC section 6). Filled in by a Replay as it advances.
#include <optional>
#include <string>
#include <vector>

#include "method.hpp"
#include "replay/theorem.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

struct Divergence {
    bool diverged = false;
    long long update = -1;  // first block update (1-based count of updates done) found bad
    int slot = -1;          // slot in which it happened (pipelines)
    double value = 0.0;     // the objective found there
    std::string reason;
};

// The record of a run found bad at block update `update` (slot -1: no slot of its own), its reason
// as "diverged at block update K (slot T): WHY (step size G)". `seenAfter`: the value was seen
// after update K rather than at it (the language model's loss), and the text says "after".
Divergence divergenceRecord(long long update, int slot, double value, const std::string& why,
                            double stepSize, bool seenAfter = false);

struct RunResult {
    Method method = Method::PipeDream;
    std::string label;  // e.g. "RPD (uniform, delta=60)"
    int stages = 0;
    double stepSize = 0.0;
    long long microbatches = 0;

    // f after each slot; [0] is the initial value (pipelines only).
    std::vector<double> objectivePerSlot;
    // f after update k at [k-1] (when sampled every update).
    std::vector<double> objectivePerUpdate;
    // ||g||^2 of each applied block gradient.
    std::vector<double> blockGradNormSq;
    // ||grad f(w_k)||^2 at sampled update counts k (k = 0 is the start) and their running mean.
    std::vector<long long> gradNormUpdates;
    std::vector<double> gradNormSq;
    std::vector<double> gradNormRunningMean;

    // f where the run stopped, when no per-update or per-slot series holds it (RPD without
    // objective_per_update keeps only this).
    std::optional<double> endObjective;

    long long updates = 0;
    int totalSlots = 0;
    double initialObjective = 0.0;
    double optimum = 0.0;                 // f*
    double smoothness = 0.0;              // L
    double gradientBound = 0.0;           // G: largest block-gradient norm seen
    long long maxDelay = 0;               // delta (RPD's bound, or PD's measured maximum)
    std::optional<TheoremBound> theorem;  // RPD only

    Divergence divergence;
    bool finished = false;
    bool cancelled = false;
    long long versionChecks = 0;  // stash version checks that passed (PD-like runs)

    std::optional<Timeline> timeline;
    std::optional<DelayTable> delays;
    // Set where a corrector changes which updates take effect (accumulate, k > 1): the same
    // updates k and blocks as `delays`, each delay counted in the updates that took effect
    // between the read and the update that applied this gradient (docs/correctors.md).
    std::optional<DelayTable> effectiveDelays;
    std::optional<DelayStats> delayStats;
    std::optional<Utilization> utilization;

    double finalObjective() const;
};

}  // namespace pipelens

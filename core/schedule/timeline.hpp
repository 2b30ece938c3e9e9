#pragma once
// Slot timelines of SPEC section 2: which stage runs which forward or backward in which slot.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "limits.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

// F, a full B; and the zero-bubble split of a backward (program schedules only): InputGrad, the
// gradient with respect to the stage's input (I), and WeightGrad, with respect to its weights
// (W). A replay's events (ReplayEvent) are only Forward and Backward: a Backward event is the
// moment a block update takes effect.
enum class OpKind : std::uint8_t { Forward, Backward, InputGrad, WeightGrad };

// The paper's schedules (PipeDream, fill-drain, LocalSGD rounds), and the schedule family of
// SPEC section 2.1 walked as repeated programs (program_schedules.hpp): 1F1B with flush, ZB-H1,
// PipeDream-2BW, an imported PyTorch schedule and interleaved 1F1B (virtual stages).
enum class ScheduleKind : std::uint8_t {
    PipeDream,
    FillDrain,
    LocalSgd,
    OneFOneB,
    ZeroBubbleH1,
    TwoBw,
    Imported,
    Interleaved
};
bool isProgramKind(ScheduleKind kind);

struct PipelineProgram;

// Cost of each operation in slots and the delay before a neighbouring stage may use its result.
// Defaults (1, 1, 0) are the paper's model and reproduce the golden timelines exactly.
struct OpCosts {
    int forwardSlots = 1;
    int backwardSlots = 1;  // a full backward
    int latencySlots = 0;
    // ZB-H1 and imported split backwards: W costs this, I costs backwardSlots - weightSlots, so a
    // split backward does the same work as a full one (the zero-bubble paper's F = B = W is
    // forward 1, backward 2, weight 1). Unused by the other schedules.
    int weightSlots = 1;

    bool operator==(const OpCosts&) const = default;
};

struct ScheduleParams {
    ScheduleKind kind = ScheduleKind::PipeDream;
    int stages = 4;
    int microbatches = 8;
    int noam = 0;        // PD: microbatches allowed in flight; 0 means S.
    int replicas = 0;    // LocalSGD: R; 0 means S.
    int localSteps = 1;  // LocalSGD: H, the averaging period in local steps.
    // Fill-drain: microbatches per flush; 0 means all N. 1F1B and ZB-H1: microbatches per
    // optimizer step (M); 2BW: microbatches whose gradients one step sums (m >= S); imported: the
    // file's microbatches (set from the program).
    int flushGroup = 0;
    OpCosts costs;
    // Imported: one optimizer step's work (the file's program, validated), and whether every
    // backward (or W) updates its block at once with weight stashing (async) instead of one
    // step per program (sync, as PyTorch).
    std::shared_ptr<const PipelineProgram> program;
    bool asyncUpdate = false;
    // Interleaved: chunks per device (v >= 2). `stages` counts the model's chunks (devices x v):
    // chunk c sits on device c mod (stages / v), and each chunk op costs 1/v of the slot costs.
    int virtualStages = 1;
};

// One step of a replay, in its processing order (replayOrder): for the paper's schedules slot
// order, then stage order, a forward acting (reading weights) in its first slot and a backward
// (updating weights) in its last. Program schedules list their own order (Timeline::events).
// `op` is Forward or Backward only.
struct ReplayEvent {
    int slot = 0;
    int stage = 0;
    OpKind op = OpKind::Forward;
    int microbatch = 0;
};

// One busy cell: stage `stage` runs `op` of `microbatch` in slots [startSlot, endSlot].
struct TimelineCell {
    int startSlot = 0;
    int endSlot = 0;
    int stage = 0;
    OpKind op = OpKind::Forward;
    int microbatch = 0;
};

struct Timeline {
    ScheduleParams params;  // with defaults resolved (noam, replicas, flushGroup filled in)
    int totalSlots = 0;     // total length of the run
    std::vector<TimelineCell> cells;  // sorted by (startSlot, stage)
    // Slots at whose end replicas are averaged (LocalSGD, one per complete round).
    std::vector<int> averagingSlots;
    // Peak number of weight copies stashed at once on each stage (F done, B not yet), in the
    // replay's processing order: what a backend allocates.
    std::vector<int> peakStash;

    // Program schedules (isProgramKind) only; empty for the others.
    // The replay's processing order (replayOrder returns it): reads and block updates where the
    // schedule's update rule puts them, which need not be the cells' order (a synchronous step's
    // updates land together at its end; 2BW's forwards read the version before the newest).
    std::vector<ReplayEvent> events;
    std::vector<int> stageRank;     // device (rank) holding each stage
    std::vector<int> stepEndSlots;  // last slot of each optimizer step, ascending
    // Memory per stage in the schedule's own semantics: weight versions held at once (1 for a
    // synchronous step, 2 for 2BW, the stash depth for asynchronous updates) and activations
    // held at once (from F to the full B, or to W where the backward is split).
    std::vector<int> weightVersions;
    std::vector<int> peakActivations;
};

// Validates parameters (throws ConfigError naming the field) and builds the timeline.
Timeline buildTimeline(const ScheduleParams& params);

// The same schedule without storing its cells: `visit` sees each cell in (startSlot, stage)
// order. The returned timeline has everything but `cells` (used by long sweeps).
Timeline simulateSchedule(const ScheduleParams& params,
                          const std::function<void(const TimelineCell&)>& visit);

// Throws ConfigError if any parameter is out of range.
void validateScheduleParams(const ScheduleParams& params);
// runLengthSlots of a program schedule (isProgramKind), flushGroup resolved here.
long long programScheduleRunLength(const ScheduleParams& params);
// programBudgetFit of a program schedule, flushGroup resolved here (nullopt: search it as any
// other schedule).
std::optional<long long> programScheduleBudgetFit(const ScheduleParams& params,
                                                  long long slotBudget);

// Throws ResourceError when building (keepCells) or simulating the schedule of these (resolved)
// parameters needs more memory than memoryLimitBytes(); buildTimeline and simulateSchedule
// call it before allocating.
void requireScheduleMemory(const ScheduleParams& params, bool keepCells);

// "pd", "localsgd", "fill-drain", "1f1b", ...: the key of the method that walks the schedule
// (kMethods; parseScheduleKind in method.hpp reads these names and the methods' aliases).
inline constexpr EnumNames<ScheduleKind, 8> kScheduleKinds{
    {{ScheduleKind::PipeDream, "pd"},
     {ScheduleKind::LocalSgd, "localsgd"},
     {ScheduleKind::FillDrain, "fill-drain"},
     {ScheduleKind::OneFOneB, "1f1b"},
     {ScheduleKind::ZeroBubbleH1, "zb-h1"},
     {ScheduleKind::TwoBw, "2bw"},
     {ScheduleKind::Imported, "imported"},
     {ScheduleKind::Interleaved, "interleaved"}}};
inline std::string scheduleKindName(ScheduleKind kind) {
    return std::string(enumName(kScheduleKinds, kind));
}

struct Utilization {
    std::vector<double> perStage;  // busy slots / total slots
    double overall = 0.0;          // mean over stages
    double bubbleFraction = 0.0;   // 1 - overall
};
Utilization utilization(const Timeline& timeline);

// N = max(1, ceil(K / S)): the microbatches of the PipeDream run that makes K block updates on
// S stages (RPD's counterpart in PD: its batch schedule, delay table and update slots).
long long pipeDreamMicrobatchesFor(long long updates, int stages);

// Closed-form run lengths with default costs (used in docs, UI and tests).
int pipeDreamSlotsFormula(int stages, int microbatches);
int localSgdRoundSlotsFormula(int stages, int localSteps);

// The largest number of microbatches whose timeline fits within `slotBudget` slots (0 if none
// fits).
int microbatchesForBudget(const ScheduleParams& params, int slotBudget);

// The golden CSV format: `slot,stage,op,microbatch` (stages and microbatches from 0) plus
// `end_slot`.
std::string timelineCsv(const Timeline& timeline, bool withEndSlot = false);
// A text drawing: one row per stage, one column per slot, F/B followed by the microbatch.
std::string timelineArt(const Timeline& timeline, int maxSlots = 200);

std::vector<ReplayEvent> replayOrder(const Timeline& timeline);

}  // namespace pipelens

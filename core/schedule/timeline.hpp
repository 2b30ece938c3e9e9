#pragma once
// Slot timelines of SPEC section 2: which stage runs which forward or backward in which slot.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "limits.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

enum class OpKind : std::uint8_t { Forward, Backward };

enum class ScheduleKind : std::uint8_t { PipeDream, FillDrain, LocalSgd };

// Cost of each operation in slots and the delay before a neighbouring stage may use its result.
// Defaults (1, 1, 0) are the paper's model and reproduce the golden timelines exactly.
struct OpCosts {
    int forwardSlots = 1;
    int backwardSlots = 1;
    int latencySlots = 0;

    bool operator==(const OpCosts&) const = default;
};

struct ScheduleParams {
    ScheduleKind kind = ScheduleKind::PipeDream;
    int stages = 4;
    int microbatches = 8;
    int noam = 0;        // PD: microbatches allowed in flight; 0 means S.
    int replicas = 0;    // LocalSGD: R; 0 means S.
    int localSteps = 1;  // LocalSGD: H, the averaging period in local steps.
    int flushGroup = 0;  // Fill-drain: microbatches per flush; 0 means all N.
    OpCosts costs;
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
    // Peak number of weight copies stashed at once on each stage (F done, B not yet).
    std::vector<int> peakStash;
};

// Validates parameters (throws ConfigError naming the field) and builds the timeline.
Timeline buildTimeline(const ScheduleParams& params);

// The same schedule without storing its cells: `visit` sees each cell in (startSlot, stage)
// order. The returned timeline has everything but `cells` (used by long sweeps).
Timeline simulateSchedule(const ScheduleParams& params,
                          const std::function<void(const TimelineCell&)>& visit);

// Throws ConfigError if any parameter is out of range.
void validateScheduleParams(const ScheduleParams& params);

// Throws ResourceError when building (keepCells) or simulating the schedule of these (resolved)
// parameters needs more memory than memoryLimitBytes(); buildTimeline and simulateSchedule
// call it before allocating.
void requireScheduleMemory(const ScheduleParams& params, bool keepCells);

// "pd", "localsgd", "fill-drain": the key of the method that walks the schedule (kMethods;
// parseScheduleKind in method.hpp reads these names and the methods' aliases).
inline constexpr EnumNames<ScheduleKind, 3> kScheduleKinds{
    {{ScheduleKind::PipeDream, "pd"},
     {ScheduleKind::LocalSgd, "localsgd"},
     {ScheduleKind::FillDrain, "fill-drain"}}};
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
int microbatchesForBudget(ScheduleParams params, int slotBudget);

// The golden CSV format: `slot,stage,op,microbatch` (stages and microbatches from 0) plus
// `end_slot`.
std::string timelineCsv(const Timeline& timeline, bool withEndSlot = false);
// A text drawing: one row per stage, one column per slot, F/B followed by the microbatch.
std::string timelineArt(const Timeline& timeline, int maxSlots = 200);

// The order in which a replay processes operations: slot order, then stage order. A forward acts
// (reads weights) in its first slot; a backward acts (updates weights) in its last slot.
struct ReplayEvent {
    int slot = 0;
    int stage = 0;
    OpKind op = OpKind::Forward;
    int microbatch = 0;
};
std::vector<ReplayEvent> replayOrder(const Timeline& timeline);

}  // namespace pipelens

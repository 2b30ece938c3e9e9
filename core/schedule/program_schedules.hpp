#pragma once
// The schedule family of SPEC section 2.1 as run timelines: what a replay walks and the views
// draw. One optimizer step's work is a program (program.hpp): 1F1B with flush and ZB-H1 build
// theirs (flush_family.hpp), an imported PyTorch schedule brings its own; a run repeats it back
// to back, the last step holding the microbatches left over. PipeDream-2BW runs on PipeDream's
// own 1F1B timeline without a flush. Each kind places its block updates (Timeline::events):
//  - synchronous (1F1B, ZB-H1, imported with update = sync): every forward of a step reads the
//    weights of the step before; the step's updates all land in its last slot, stages from the
//    last to the first, so a run is minibatch SGD over each step's microbatches;
//  - asynchronous (imported with update = async): as PipeDream, each full backward (or W where
//    the backward is split) updates its block in its last slot, reading the copy its forward
//    stashed; forwards of a slot act before its updates;
//  - 2BW: microbatches are grouped by m = flushGroup (m >= S); group t's forwards read version
//    t - 1 of every block, and its summed gradients land once its last backward has ended on
//    every stage, so w(t+1) = w(t) - step * g_t(w(t-1)) (delay one optimizer step at any depth).
// With a backend's weight stashing and updates scaled by 1/M (1/m) those events reproduce each
// rule exactly; see replay/pipeline_replay.hpp.
#include <functional>
#include <optional>
#include <string>

#include "schedule/program.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

// Microbatches per optimizer step: flushGroup, or when 0 the file's (imported) or S.
int programStepMicrobatches(const ScheduleParams& params);

// The slots each action of a program schedule takes: F forwardSlots, a full B backwardSlots,
// a split backward's W weightSlots and I backwardSlots - weightSlots, so that I + W does a full
// backward's work; with backwardSlots <= weightSlots (the defaults 1 and 1) I costs 1, SPEC
// section 2.1's F = B = W = 1, and a split backward then takes longer than a full one.
ActionCosts programActionCosts(const OpCosts& costs);

// Throws ConfigError naming the field: latency_slots must be 0 (programs carry no link
// latency), weight_slots in [1, 1000], 2BW needs m >= S, an
// imported schedule needs its program and stages equal to the file's.
void validateProgramSchedule(const ScheduleParams& params);

// The program of one step holding `microbatches` (at most flushGroup) microbatches.
PipelineProgram stepProgram(const ScheduleParams& params, int microbatches);

// The timeline of a program schedule (params resolved: flushGroup set). `visit`, when given,
// sees every cell in (startSlot, stage) order and no cells are kept.
Timeline buildProgramTimeline(const ScheduleParams& params,
                              const std::function<void(const TimelineCell&)>* visit = nullptr);

// Run length in slots without building cells. Each step's timing is cached for the process,
// so asking again, or for another N of the same schedule, costs no new timing.
long long programRunLength(const ScheduleParams& params);

// The largest N whose run lasts at most slotBudget slots (0 when none fits), found from the
// cached step lengths: whole steps, then the longest partial step that still fits. nullopt for
// 2BW (PipeDream's timeline: fitBudget searches it as PipeDream's). Not capped.
std::optional<long long> programBudgetFit(const ScheduleParams& params, long long slotBudget);

// The language model backpropagates from stage s + 1 to stage s inside one update: its replay
// needs every update of (m, s + 1) processed before that of (m, s). The first pair that breaks
// it ("W(3, 1) at slot 12 before W(3, 2) at slot 15"), or nullopt.
std::optional<std::string> backpropOrderViolation(const Timeline& timeline);

}  // namespace pipelens

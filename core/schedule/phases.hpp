#pragma once
// The phases of a pipeline timeline: startup (the pipeline fills), steady state, drain.
#include <vector>

#include "schedule/timeline.hpp"

namespace pipelens {

enum class PhaseKind { Startup, Steady, Drain };

// A stretch of slots [first, last) of one phase.
struct Phase {
    int first = 0;
    int last = 0;
    PhaseKind kind = PhaseKind::Steady;

    bool operator==(const Phase&) const = default;
};

// Phases of each group of microbatches that runs as one pipeline fill (PD: all N; LocalSGD: a
// round of R*H; fill-drain: a flush group), in slot order:
//   startup = from the group's first forward on stage 1 until every stage has started a
//             backward of the group (the last to do so is stage 1);
//   drain   = after stage 1 admitted the group's last forward (from the slot after that forward
//             ends, but not before startup ends) until the group's last backward on stage 1
//             ends;
//   steady  = in between. With fewer microbatches than stages there is no steady phase: drain
//             begins where startup ends. Empty phases are left out.
std::vector<Phase> schedulePhases(const Timeline& timeline);

// The phase containing `slot` (Steady outside every phase, e.g. between LocalSGD rounds).
PhaseKind phaseAt(const std::vector<Phase>& phases, double slot);

}  // namespace pipelens

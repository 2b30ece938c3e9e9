#pragma once
// The schedule family's parameters as the family's tests build them: kind, S stages, N
// microbatches and a step of `group` (flush_group, or 2BW's m), ZB-H1 on F = I = W = 1.
#include "schedule/timeline.hpp"

namespace pipelens::test {

inline ScheduleParams familyParams(ScheduleKind kind, int S, int N, int group) {
    ScheduleParams p;
    p.kind = kind;
    p.stages = S;
    p.microbatches = N;
    p.flushGroup = group;
    if (kind == ScheduleKind::ZeroBubbleH1) p.costs.backwardSlots = 2;  // F = I = W = 1
    return p;
}

}  // namespace pipelens::test

#pragma once
// A PipeLens slot timeline (PipeDream, fill-drain, LocalSGD) as a program of actions
// (program.hpp): rank r is stage r, step t is slot t, a forward is F and a backward the full B.
// What `schedule --export-csv` writes for those kinds, in PyTorch's schedule CSV.
#include "schedule/program.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

// Every op must take one slot (PyTorch's format has no durations): a timeline built with
// forward or backward costs above 1 is refused with a ConfigError naming the cost option.
PipelineProgram programFromTimeline(const Timeline& timeline);

}  // namespace pipelens

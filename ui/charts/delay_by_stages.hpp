#pragma once
// PipeDream's measured steady-state delays by S (N = 10·S; they do not depend on the data),
// cached for the whole program. The figure strip's max-delay-vs-S figure needs them up to the
// current S: every S to 32 costs a few milliseconds, but S = 128 alone about 20 ms, so larger S
// are computed on a worker thread and the figure fills in when they arrive (a change of S never
// waits for them). The same maxima and means count optimizer steps or slots on request (SPEC
// section 2.1; the figure's unit selector): per S the steady state is S - 1 steps (block 1's
// own reads) and 2S - 1 slots.
#include <functional>
#include <optional>
#include <vector>

#include "schedule/delays.hpp"
#include "util/worker_threads.hpp"

namespace pipelens::ui {

// The cached statistics of S, if computed (any thread).
std::optional<DelayStats> cachedPipeDreamDelayStats(int stages);
// Computes and caches S now (on the calling thread) unless cached.
DelayStats pipeDreamDelayStatsCached(int stages);

// The second-half maximum and mean of every block's delay of PD with N = 10 S, in a unit.
struct UnitDelayStats {
    int stages = 0;
    DelayUnit unit = DelayUnit::BlockUpdates;
    double max = 0.0;
    double mean = 0.0;
};
// Block updates come from the statistics above; the other units from a delay table (S = 128:
// about a hundred milliseconds), cached per (S, unit).
std::optional<UnitDelayStats> cachedPipeDreamDelayStats(int stages, DelayUnit unit);
UnitDelayStats pipeDreamDelayStatsCached(int stages, DelayUnit unit);

class DelayByStagesWorker {
  public:
    // Computes the S of `stages` not cached yet on a worker thread, which calls `done` (on that
    // thread) when it has them all. A newer request supersedes the one in flight (cancelled, its
    // `done` not called). False, and nothing started, when nothing is missing.
    bool request(const std::vector<int>& stages, std::function<void()> done,
                 DelayUnit unit = DelayUnit::BlockUpdates);
    bool busy() const { return workers_.inFlight() > 0; }

  private:
    WorkerThreads workers_;  // cancelled and joined when the worker goes
};

}  // namespace pipelens::ui

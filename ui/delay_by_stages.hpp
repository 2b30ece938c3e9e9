#pragma once
// PipeDream's measured steady-state delays by S (N = 10·S; they do not depend on the data),
// cached for the whole program. The figure strip's max-delay-vs-S figure needs them up to the
// current S: every S to 32 costs a few milliseconds, but S = 128 alone about 20 ms, so larger S
// are computed on a worker thread and the figure fills in when they arrive (a change of S never
// waits for them).
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "replay/delays.hpp"

namespace pipelens::ui {

// The cached statistics of S, if computed (any thread).
std::optional<DelayStats> cachedPipeDreamDelayStats(int stages);
// Computes and caches S now (on the calling thread) unless cached.
DelayStats pipeDreamDelayStatsCached(int stages);

class DelayByStagesWorker {
public:
    DelayByStagesWorker() = default;
    DelayByStagesWorker(const DelayByStagesWorker&) = delete;
    DelayByStagesWorker& operator=(const DelayByStagesWorker&) = delete;
    ~DelayByStagesWorker();  // waits for the computation in flight

    // Starts computing the S of `stages` not cached yet, on a thread that calls `done` (on that
    // thread) when they are. False when a computation is already in flight or nothing is
    // missing (then `done` is not called).
    bool request(const std::vector<int>& stages, std::function<void()> done);
    bool busy() const;

private:
    std::thread thread_;
    std::shared_ptr<std::atomic<bool>> running_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace pipelens::ui

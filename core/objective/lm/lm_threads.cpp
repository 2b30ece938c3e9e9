#include "objective/lm/lm_threads.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PIPELENS_CPU_RELAX() _mm_pause()
#else
#define PIPELENS_CPU_RELAX() std::this_thread::yield()
#endif

namespace pipelens::lmk {

namespace {

// How long a waiting thread spins before it sleeps: longer than the serial stretch between two
// splits of a stage (a few microseconds), far shorter than a scheduler time slice.
constexpr std::chrono::microseconds kSpin{40};

// Waits until `value` differs from `old` (acquire), spinning first.
template <typename T>
T waitChange(const std::atomic<T>& value, T old) {
    T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            PIPELENS_CPU_RELAX();
            now = value.load(std::memory_order_acquire);
            if (now != old) return now;
        }
        if (std::chrono::steady_clock::now() > until) break;
    }
    for (;;) {
        value.wait(old, std::memory_order_acquire);
        now = value.load(std::memory_order_acquire);
        if (now != old) return now;
    }
}

thread_local IntraOpTeam* tCurrent = nullptr;
thread_local bool tInside = false;

}  // namespace

class IntraOpTeam {
  public:
    explicit IntraOpTeam(int threads) {
        for (int i = 1; i < threads; ++i) helpers_.emplace_back([this, i] { helperLoop(i); });
    }
    IntraOpTeam(const IntraOpTeam&) = delete;
    IntraOpTeam& operator=(const IntraOpTeam&) = delete;
    ~IntraOpTeam() {
        stop_.store(true, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        for (std::thread& t : helpers_) t.join();
    }

    int threads() const { return static_cast<int>(helpers_.size()) + 1; }

    // Piece i is [i per, min(count, (i + 1) per)); piece 0 runs on the caller.
    void run(std::size_t pieces, std::size_t per, std::size_t count, detail::RangeFn fn,
             const void* ctx) {
        fn_ = fn;
        ctx_ = ctx;
        pieces_ = pieces;
        per_ = per;
        count_ = count;
        remaining_.store(static_cast<int>(helpers_.size()), std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        tInside = true;
        fn(ctx, 0, std::min(count, per));
        tInside = false;
        int left = remaining_.load(std::memory_order_acquire);
        while (left != 0) left = waitChange(remaining_, left);
    }

  private:
    void helperLoop(std::size_t index) {
        std::uint32_t seen = 0;
        for (;;) {
            seen = waitChange(generation_, seen);
            if (stop_.load(std::memory_order_relaxed)) return;
            if (index < pieces_) {
                const std::size_t begin = index * per_;
                fn_(ctx_, begin, std::min(count_, begin + per_));
            }
            if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
        }
    }

    std::vector<std::thread> helpers_;
    // The current split: written by the caller before generation_ moves on (release), read by
    // the helpers after they see it move (acquire); the next split waits until every helper has
    // counted remaining_ down, so no helper still reads them.
    detail::RangeFn fn_ = nullptr;
    const void* ctx_ = nullptr;
    std::size_t pieces_ = 0, per_ = 0, count_ = 0;
    std::atomic<std::uint32_t> generation_{0};
    std::atomic<int> remaining_{0};
    std::atomic<bool> stop_{false};
};

ScopedThreads::ScopedThreads(int threads) : previous_(tCurrent) {
    if (threads > 1) team_ = std::make_unique<IntraOpTeam>(threads);
    tCurrent = team_.get();
}

ScopedThreads::~ScopedThreads() {
    tCurrent = previous_;
}

int currentThreads() {
    return (tInside || tCurrent == nullptr) ? 1 : tCurrent->threads();
}

int threadsPerRun(int threads, std::size_t concurrentRuns) {
    const int total =
        threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto runs = static_cast<int>(std::clamp<std::size_t>(concurrentRuns, 1, total));
    return std::max(1, total / runs);
}

namespace detail {

void parallelRange(std::size_t count, std::size_t grain, RangeFn fn, const void* ctx) {
    if (count == 0) return;
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t units = (count + grain - 1) / grain;
    IntraOpTeam* team = tInside ? nullptr : tCurrent;
    const std::size_t threads = team != nullptr ? static_cast<std::size_t>(team->threads()) : 1;
    std::size_t pieces = std::min(threads, units);
    if (pieces <= 1) {
        fn(ctx, 0, count);
        return;
    }
    const std::size_t per = (units + pieces - 1) / pieces * grain;
    pieces = (count + per - 1) / per;
    team->run(pieces, per, count, fn, ctx);
}

}  // namespace detail

}  // namespace pipelens::lmk

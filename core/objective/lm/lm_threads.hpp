#pragma once
// Threads inside one stage's forward or backward (intra-op parallelism) for the language model's
// CPU engine. A run that owns a few cores opens a ScopedThreads on its thread; while it is open,
// the stages split their matrix products, attention heads, row-wise LayerNorm and cross-entropy
// and elementwise GELU over that many threads, the calling thread included.
//
// Splits are over independent outputs only (columns or rows of a product, rows, (sequence, head)
// pairs, aligned runs of elements), never over a sum: every number is computed by the same
// operations in the same order whatever the thread count, so results are bit-identical to one
// thread (tests/core/tst_lm_threads.cpp checks it).
//
// The helpers wait for work spinning for a few microseconds and then sleep on a futex, so a
// split costs about a microsecond on an idle core and nothing on a busy one. A split inside a
// split (or on a thread with no ScopedThreads open) runs on the calling thread alone.
#include <cstddef>
#include <memory>

namespace pipelens::lmk {

class IntraOpTeam;

// Opens a team of `threads` (the caller and threads - 1 helpers) for this thread until
// destroyed; threads <= 1 switches splitting off for this thread. Nestable (the innermost
// wins); not movable.
class ScopedThreads {
  public:
    explicit ScopedThreads(int threads);
    ScopedThreads(const ScopedThreads&) = delete;
    ScopedThreads& operator=(const ScopedThreads&) = delete;
    ~ScopedThreads();

  private:
    std::unique_ptr<IntraOpTeam> team_;
    IntraOpTeam* previous_;
};

// The threads a split on this thread would use now (1 inside a split or without a team).
int currentThreads();

// The number of threads a run should give its stages when `concurrentRuns` runs share
// `threads` threads (0: one per hardware thread): what is left to each run, at least 1.
int threadsPerRun(int threads, std::size_t concurrentRuns);

namespace detail {
using RangeFn = void (*)(const void* ctx, std::size_t begin, std::size_t end);
void parallelRange(std::size_t count, std::size_t grain, RangeFn fn, const void* ctx);
}  // namespace detail

// Calls fn(begin, end) on contiguous, disjoint pieces covering [0, count), at most one piece
// per thread of the current team; every piece but the last starts and ends on a multiple of
// `grain`. Returns once all pieces have returned. fn must not throw.
template <typename F>
void parallelRange(std::size_t count, std::size_t grain, const F& fn) {
    detail::parallelRange(
        count, grain,
        [](const void* ctx, std::size_t b, std::size_t e) { (*static_cast<const F*>(ctx))(b, e); },
        &fn);
}

}  // namespace pipelens::lmk

#pragma once
// The one thread pool of the engine: independent jobs (methods of an experiment, pipeline sizes
// of a delay sweep) spread over a few threads, the calling thread included.
#include <cstddef>
#include <functional>

namespace pipelens {

// Calls body(i) for every i in [0, count), on at most `threads` threads (0: one per hardware
// thread, never more than `count`). Indices are handed out in increasing order, so put the
// longest jobs first. After the first exception no further index starts; that exception is
// rethrown once every running call has returned.
void parallelFor(std::size_t count, int threads, const std::function<void(std::size_t)>& body);

}  // namespace pipelens

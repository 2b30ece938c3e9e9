#include "util/parallel_for.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace pipelens {

void parallelFor(std::size_t count, int threads, const std::function<void(std::size_t)>& body) {
    std::mutex mutex;  // guards next and failure
    std::size_t next = 0;
    std::exception_ptr failure;
    auto worker = [&] {
        for (;;) {
            std::size_t i = 0;
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (next >= count || failure) return;
                i = next++;
            }
            try {
                body(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                if (!failure) failure = std::current_exception();
            }
        }
    };
    std::size_t n = threads > 0 ? static_cast<std::size_t>(threads)
                                : std::max(1u, std::thread::hardware_concurrency());
    n = std::min(n, count);
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < n; ++t) {
        try {
            pool.emplace_back(worker);
        } catch (const std::system_error&) {
            break;  // no more threads to be had: the ones running share the rest
        }
    }
    worker();
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace pipelens

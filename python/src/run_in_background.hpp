#pragma once
// Long engine calls from Python: the work runs on a thread of its own while the calling Python
// thread waits without the GIL. Every kPollInterval the caller takes the GIL back to run Python's
// signal handlers (Ctrl-C raises KeyboardInterrupt there) and the progress callback. An exception
// from either sets `cancel`, waits until the work has stopped (the engine looks at the flag between
// chunks) and is then raised: the partial result is dropped and no thread is left running.
#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace pipelens::python {

inline constexpr std::chrono::milliseconds kPollInterval{50};

template <class Result>
Result runInBackground(const std::function<Result()>& work, std::atomic<bool>& cancel,
                       const std::function<void()>& poll) {
    std::optional<Result> result;
    std::exception_ptr failure;
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::optional<pybind11::error_already_set> raised;
    {
        // Released here, before the worker exists: the worker never touches Python objects.
        pybind11::gil_scoped_release release;
        std::thread worker([&] {
            try {
                result.emplace(work());
            } catch (...) {
                failure = std::current_exception();
            }
            {
                const std::lock_guard<std::mutex> lock(mutex);
                done = true;
            }
            finished.notify_all();
        });
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex);
                if (finished.wait_for(lock, kPollInterval, [&] { return done; })) break;
            }
            if (raised) continue;  // already stopping: just wait for the worker
            const pybind11::gil_scoped_acquire gil;
            try {
                if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
                if (poll) poll();
            } catch (pybind11::error_already_set& e) {
                raised.emplace(std::move(e));
                cancel.store(true);
            }
        }
        worker.join();
    }
    if (raised) throw std::move(*raised);
    if (failure) std::rethrow_exception(failure);
    return std::move(*result);
}

}  // namespace pipelens::python

#include "util/task_team.hpp"

#include <system_error>

namespace pipelens {

namespace {

// Before sleeping on a condition variable, a thread polls for a while: a batch is a few
// milliseconds of work and the next one follows within microseconds, while waking a sleeping
// thread costs tens of microseconds (more in a virtual machine).
constexpr int kSpins = 4000;

template <typename Done>
void spinUntil(Done done) {
    for (int i = 0; i < kSpins && !done(); ++i) std::this_thread::yield();
}

}  // namespace

TaskTeam::TaskTeam(int threads) {
    for (int t = 1; t < threads; ++t) {
        try {
            helpers_.emplace_back([this] { helperLoop(); });
        } catch (const std::system_error&) {
            break;  // no more threads to be had: the team is smaller
        }
    }
}

TaskTeam::~TaskTeam() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : helpers_) t.join();
}

void TaskTeam::work() {
    for (;;) {
        std::size_t i = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (next_ >= count_ || failure_) return;
            i = next_++;
        }
        try {
            (*body_)(i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!failure_) failure_ = std::current_exception();
        }
        pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

void TaskTeam::helperLoop() {
    unsigned long long seen = 0;
    for (;;) {
        spinUntil([&] { return batch_.load(std::memory_order_acquire) != seen; });
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || batch_ != seen; });
            if (stop_) return;
            seen = batch_;
            ++running_;
        }
        work();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --running_;
        }
        finished_.notify_all();
    }
}

void TaskTeam::run(std::size_t count, const std::function<void(std::size_t)>& body) {
    if (helpers_.empty() || count <= 1) {
        for (std::size_t i = 0; i < count; ++i) body(i);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        body_ = &body;
        count_ = count;
        pending_.store(count, std::memory_order_relaxed);
        next_ = 0;
        failure_ = nullptr;
        ++batch_;
    }
    wake_.notify_all();
    work();
    // Usually the helpers' last jobs end within microseconds of the caller's.
    spinUntil([&] { return pending_.load(std::memory_order_acquire) == 0; });
    std::exception_ptr failure;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        // Every index handed out has returned once no helper is inside work() and none is left;
        // a helper that wakes late finds nothing left and leaves at once.
        finished_.wait(lock, [&] { return running_ == 0; });
        count_ = 0;  // a late helper of this batch takes nothing
        body_ = nullptr;
        failure = failure_;
    }
    if (failure) std::rethrow_exception(failure);
}

}  // namespace pipelens

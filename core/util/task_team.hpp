#pragma once
// A fixed team of helper threads that run short batches of independent jobs with the calling
// thread: run(count, body) calls body(i) for every i in [0, count) and returns when all have
// returned. The helpers live as long as the team and sleep between batches, so a batch costs a
// wake-up, not a thread start (the language model's pipeline replay runs one batch per slot, a
// few milliseconds of work). Jobs are handed out in increasing index order.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pipelens {

class TaskTeam {
  public:
    // threads: the team's size with the caller (1: no helper, run() calls body inline).
    explicit TaskTeam(int threads);
    TaskTeam(const TaskTeam&) = delete;
    TaskTeam& operator=(const TaskTeam&) = delete;
    ~TaskTeam();

    int threads() const { return static_cast<int>(helpers_.size()) + 1; }
    // After an exception no further index starts; the first one is rethrown once every running
    // call has returned.
    void run(std::size_t count, const std::function<void(std::size_t)>& body);

  private:
    void helperLoop();
    void work();  // takes indices until none is left (mutex_ not held)

    std::vector<std::thread> helpers_;
    std::mutex mutex_;
    std::condition_variable wake_, finished_;
    const std::function<void(std::size_t)>* body_ = nullptr;
    std::size_t count_ = 0;
    std::size_t next_ = 0;
    std::size_t running_ = 0;                   // helpers inside work() for this batch
    std::atomic<unsigned long long> batch_{0};  // increments per run() (written under mutex_)
    std::atomic<std::size_t> pending_{0};       // indices of this batch not yet returned
    bool stop_ = false;
    std::exception_ptr failure_;
};

}  // namespace pipelens

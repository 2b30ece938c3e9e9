#pragma once
// Background jobs that can be told to stop: each runs on a thread of its own with a cancel flag of
// its own. Finished ones are joined on reapFinished(); all of them are cancelled and joined when
// the owner goes. Used by the app's controllers, which start a job per run or sweep and cancel
// the one in flight when a newer one supersedes it.
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace pipelens {

using CancelFlag = std::shared_ptr<std::atomic<bool>>;

class WorkerThreads {
  public:
    WorkerThreads() = default;
    WorkerThreads(const WorkerThreads&) = delete;
    WorkerThreads& operator=(const WorkerThreads&) = delete;
    ~WorkerThreads();

    // Runs job(cancel) on a new thread; the job should return soon after *cancel turns true.
    void start(std::function<void(CancelFlag cancel)> job);
    // Asks every job to stop (it does not wait).
    void cancelAll();
    // Asks every job to stop and waits for all of them (an owner's destructor calls it first,
    // before the members its jobs may still use are gone).
    void stopAll();
    // Joins the threads whose job has returned.
    void reapFinished();
    // Jobs that have not returned yet (a cancelled one counts until it has).
    int inFlight() const;

  private:
    struct Worker {
        std::thread thread;
        CancelFlag cancel;
        std::shared_ptr<std::atomic<bool>> finished;
    };
    std::vector<Worker> workers_;
};

}  // namespace pipelens

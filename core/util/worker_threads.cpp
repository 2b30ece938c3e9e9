#include "util/worker_threads.hpp"

namespace pipelens {

WorkerThreads::~WorkerThreads() {
    stopAll();
}

void WorkerThreads::stopAll() {
    cancelAll();
    for (Worker& w : workers_) {
        if (w.thread.joinable()) w.thread.join();
    }
    workers_.clear();
}

void WorkerThreads::start(std::function<void(CancelFlag cancel)> job) {
    Worker w;
    w.cancel = std::make_shared<std::atomic<bool>>(false);
    w.finished = std::make_shared<std::atomic<bool>>(false);
    w.thread = std::thread([job = std::move(job), cancel = w.cancel, finished = w.finished] {
        // Marked finished however the job ends, so that reapFinished never waits on it.
        struct MarkFinished {
            std::atomic<bool>& flag;
            ~MarkFinished() { flag.store(true); }
        } mark{*finished};
        job(cancel);
    });
    workers_.push_back(std::move(w));
}

void WorkerThreads::cancelAll() {
    for (Worker& w : workers_) w.cancel->store(true);
}

void WorkerThreads::reapFinished() {
    for (auto it = workers_.begin(); it != workers_.end();) {
        if (it->finished->load()) {
            it->thread.join();
            it = workers_.erase(it);
        } else {
            ++it;
        }
    }
}

int WorkerThreads::inFlight() const {
    int n = 0;
    for (const Worker& w : workers_) n += w.finished->load() ? 0 : 1;
    return n;
}

}  // namespace pipelens

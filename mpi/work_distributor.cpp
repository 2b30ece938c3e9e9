#include "work_distributor.hpp"

#include <mpi.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "mpi_call.hpp"

namespace pipelens {
namespace {

// Worker -> coordinator: kAsk (nothing), kResult and kFailed (item + text; both also ask for
// the next item). Coordinator -> worker: kAssign (item) or, once the outcome is final, kStop
// (the verdict).
enum Tag : int { kAsk = 1, kResult = 2, kFailed = 3, kAssign = 4, kStop = 5 };

struct Message {
    int source = 0;
    int tag = 0;
    std::string bytes;
};

struct Failure {
    std::size_t item = 0;
    int rank = 0;
    std::string message;
};

// Items travel as 8 bytes in the machine's own order: every rank runs the same binary.
std::string withItem(std::size_t item, const std::string& text) {
    const std::uint64_t v = item;
    std::string out(sizeof v, '\0');
    std::memcpy(out.data(), &v, sizeof v);
    return out + text;
}

std::size_t itemOf(const std::string& bytes) {
    std::uint64_t v = 0;
    if (bytes.size() < sizeof v) throw std::runtime_error("malformed work message (no item)");
    std::memcpy(&v, bytes.data(), sizeof v);
    return static_cast<std::size_t>(v);
}

std::string textOf(const std::string& bytes) {
    return bytes.substr(sizeof(std::uint64_t));
}

std::string verdictBytes(const std::optional<Failure>& f) {
    if (!f) return {};
    std::string rank(sizeof(std::int32_t), '\0');
    const std::int32_t r = f->rank;
    std::memcpy(rank.data(), &r, sizeof r);
    return withItem(f->item, rank + f->message);
}

std::optional<Failure> verdictFrom(const std::string& bytes) {
    if (bytes.empty()) return std::nullopt;
    const std::string rest = textOf(bytes);
    std::int32_t r = 0;
    if (rest.size() < sizeof r) throw std::runtime_error("malformed stop message");
    std::memcpy(&r, rest.data(), sizeof r);
    return Failure{itemOf(bytes), r, rest.substr(sizeof r)};
}

void send(int dest, Tag tag, const std::string& bytes) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
        throw std::runtime_error("a work result of " + std::to_string(bytes.size()) +
                                 " bytes is too large for one MPI message (2 GiB at most)");
    }
    checkMpiCall(
        MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD),
        "MPI_Send");
}

Message receive(const MPI_Status& probed) {
    int count = 0;
    checkMpiCall(MPI_Get_count(&probed, MPI_BYTE, &count), "MPI_Get_count");
    Message m;
    m.source = probed.MPI_SOURCE;
    m.tag = probed.MPI_TAG;
    m.bytes.resize(static_cast<std::size_t>(count));
    checkMpiCall(MPI_Recv(m.bytes.data(), count, MPI_BYTE, m.source, m.tag, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE),
                 "MPI_Recv");
    return m;
}

std::optional<Message> poll(int source) {
    int flag = 0;
    MPI_Status status;
    checkMpiCall(MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
    if (!flag) return std::nullopt;
    return receive(status);
}

std::string describe(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        return x.what();
    } catch (...) {
        return "an exception that is not a std::exception";
    }
}

class Coordinator {
  public:
    Coordinator(const MpiWorld& world, const std::vector<std::size_t>& todo,
                const ComputeWorkItem& compute, const FinishWorkItem& onFinish)
        : world_(world), todo_(todo), compute_(compute), onFinish_(onFinish) {
        report_.rankOfItem.assign(todo.size(), -1);
        for (std::size_t i = 0; i < todo.size(); ++i) {
            if (!position_.emplace(todo[i], i).second && !failure_) {
                failure_ = Failure{todo[i], 0, "the item is listed twice in the work to do"};
            }
        }
    }

    DistributorReport run(bool computeHere) {
        std::thread local;
        localRunning_ = computeHere && !todo_.empty();
        if (localRunning_) local = std::thread([this] { computeLocally(); });
        try {
            coordinate();
        } catch (const std::exception& e) {  // MPI failed: the workers cannot be told to stop
            fail(0, 0, e.what());            // stops the local thread
            if (local.joinable()) local.join();
            abortJob(0, e.what());
        }
        if (local.joinable()) local.join();
        passOnLocalResults();
        if (failure_) throw WorkItemFailed(failure_->item, failure_->rank, failure_->message);
        return report_;
    }

  private:
    std::optional<std::size_t> takeNext() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (failure_ || next_ >= todo_.size()) return std::nullopt;
        return todo_[next_++];
    }

    void fail(std::size_t item, int rank, const std::string& message) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!failure_) failure_ = Failure{item, rank, message};
    }

    void computeLocally() {
        while (auto item = takeNext()) {
            try {
                std::string result = compute_(*item);
                std::lock_guard<std::mutex> lock(mutex_);
                localDone_.emplace_back(*item, std::move(result));
            } catch (...) {
                fail(*item, 0, describe(std::current_exception()));
            }
        }
        localRunning_ = false;
    }

    void finish(std::size_t item, const std::string& result, int rank) {
        const auto at = position_.find(item);
        if (at == position_.end()) {
            fail(item, rank, "rank " + std::to_string(rank) + " returned an item not handed out");
            return;
        }
        report_.rankOfItem[at->second] = rank;
        if (rank == 0) ++report_.computedHere;
        try {
            onFinish_(item, result);
        } catch (...) {
            fail(item, 0, describe(std::current_exception()));
        }
    }

    bool passOnLocalResults() {
        std::deque<std::pair<std::size_t, std::string>> done;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done.swap(localDone_);
        }
        for (auto& [item, result] : done) finish(item, result, 0);
        return !done.empty();
    }

    void handle(const Message& m) {
        if (m.tag == kResult) finish(itemOf(m.bytes), textOf(m.bytes), m.source);
        if (m.tag == kFailed) fail(itemOf(m.bytes), m.source, textOf(m.bytes));
        if (auto item = takeNext()) {
            send(m.source, kAssign, withItem(*item, {}));
        } else {
            waiting_.push_back(m.source);  // answered once the outcome is final
        }
    }

    void coordinate() {
        const std::size_t workers = static_cast<std::size_t>(world_.size() - 1);
        Backoff idle;
        while (waiting_.size() < workers || localRunning_) {
            bool busy = passOnLocalResults();
            if (workers > 0) {
                if (auto m = poll(MPI_ANY_SOURCE)) {
                    handle(*m);
                    busy = true;
                }
            }
            if (busy) {
                idle.reset();
            } else {
                idle.wait();
            }
        }
        passOnLocalResults();
        std::string verdict;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            verdict = verdictBytes(failure_);
        }
        for (int w : waiting_) send(w, kStop, verdict);
    }

    const MpiWorld& world_;
    const std::vector<std::size_t>& todo_;
    const ComputeWorkItem& compute_;
    const FinishWorkItem& onFinish_;
    std::unordered_map<std::size_t, std::size_t> position_;
    DistributorReport report_;
    std::vector<int> waiting_;  // workers told nothing yet because nothing is left to hand out

    std::mutex mutex_;  // guards what the local compute thread shares
    std::size_t next_ = 0;
    std::optional<Failure> failure_;
    std::deque<std::pair<std::size_t, std::string>> localDone_;
    std::atomic<bool> localRunning_{false};
};

DistributorReport work(const ComputeWorkItem& compute) {
    DistributorReport report;
    send(0, kAsk, {});
    Backoff idle;
    for (;;) {
        std::optional<Message> m = poll(0);
        if (!m) {
            idle.wait();
            continue;
        }
        idle.reset();
        if (m->tag == kStop) {
            if (auto f = verdictFrom(m->bytes)) throw WorkItemFailed(f->item, f->rank, f->message);
            return report;
        }
        const std::size_t item = itemOf(m->bytes);
        try {
            std::string result = compute(item);
            ++report.computedHere;
            send(0, kResult, withItem(item, result));
        } catch (...) {
            send(0, kFailed, withItem(item, describe(std::current_exception())));
        }
    }
}

}  // namespace

WorkItemFailed::WorkItemFailed(std::size_t item, int rank, const std::string& message)
    : std::runtime_error("work item " + std::to_string(item) + " failed on rank " +
                         std::to_string(rank) + ": " + message),
      item_(item),
      rank_(rank),
      message_(message) {}

DistributorReport distributeWork(const MpiWorld& world, const std::vector<std::size_t>& todo,
                                 const ComputeWorkItem& compute, const FinishWorkItem& onFinish,
                                 const DistributorOptions& options) {
    if (!world.isCoordinator()) {
        try {
            return work(compute);
        } catch (const WorkItemFailed&) {
            throw;
        } catch (const std::exception& e) {  // MPI failed: rank 0 cannot be told
            abortJob(world.rank(), e.what());
        }
    }
    Coordinator c(world, todo, compute, onFinish);
    return c.run(options.coordinatorComputes || world.size() == 1);
}

}  // namespace pipelens

#include "charts/delay_by_stages.hpp"

#include <map>
#include <mutex>

namespace pipelens::ui {
namespace {

std::mutex& cacheMutex() {
    static std::mutex m;
    return m;
}

std::map<int, DelayStats>& cache() {
    static std::map<int, DelayStats> c;
    return c;
}

}  // namespace

std::optional<DelayStats> cachedPipeDreamDelayStats(int stages) {
    const std::lock_guard<std::mutex> lock(cacheMutex());
    const auto it = cache().find(stages);
    if (it == cache().end()) return std::nullopt;
    return it->second;
}

DelayStats pipeDreamDelayStatsCached(int stages) {
    if (auto cached = cachedPipeDreamDelayStats(stages)) return *cached;
    const DelayStats stats = pipeDreamDelayStats(stages);  // outside the lock: it takes a while
    const std::lock_guard<std::mutex> lock(cacheMutex());
    cache().emplace(stages, stats);
    return stats;
}

bool DelayByStagesWorker::request(const std::vector<int>& stages, std::function<void()> done) {
    workers_.cancelAll();  // an older request's S may no longer be wanted
    workers_.reapFinished();
    std::vector<int> missing;
    for (int s : stages) {
        if (!cachedPipeDreamDelayStats(s)) missing.push_back(s);
    }
    if (missing.empty()) return false;
    workers_.start([missing, done = std::move(done)](const CancelFlag& cancel) {
        for (int s : missing) {
            if (cancel->load()) return;
            pipeDreamDelayStatsCached(s);
        }
        if (!cancel->load()) done();
    });
    return true;
}

}  // namespace pipelens::ui

#include "charts/delay_by_stages.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "schedule/delay_ranges.hpp"

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

std::map<std::pair<int, DelayUnit>, UnitDelayStats>& unitCache() {
    static std::map<std::pair<int, DelayUnit>, UnitDelayStats> c;
    return c;
}

UnitDelayStats fromBlockUpdates(const DelayStats& d) {
    return {d.stages, DelayUnit::BlockUpdates, static_cast<double>(d.max), d.mean};
}

}  // namespace

std::optional<UnitDelayStats> cachedPipeDreamDelayStats(int stages, DelayUnit unit) {
    if (unit == DelayUnit::BlockUpdates) {
        if (auto d = cachedPipeDreamDelayStats(stages)) return fromBlockUpdates(*d);
        return std::nullopt;
    }
    const std::lock_guard<std::mutex> lock(cacheMutex());
    const auto it = unitCache().find({stages, unit});
    if (it == unitCache().end()) return std::nullopt;
    return it->second;
}

UnitDelayStats pipeDreamDelayStatsCached(int stages, DelayUnit unit) {
    if (unit == DelayUnit::BlockUpdates) return fromBlockUpdates(pipeDreamDelayStatsCached(stages));
    if (auto cached = cachedPipeDreamDelayStats(stages, unit)) return *cached;
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = stages;
    p.microbatches = 10 * stages;  // as pipeDreamDelayStats
    auto table = std::make_shared<const DelayTable>(buildTimeline(p));
    const DelayRanges ranges(table, DelayRanges::kDefaultMaxBinCells, unit);
    const DelayRanges::Stats half = ranges.secondHalfStats(table->updates());
    const UnitDelayStats stats{stages, unit, half.max, half.mean};
    const std::lock_guard<std::mutex> lock(cacheMutex());
    unitCache().emplace(std::make_pair(stages, unit), stats);
    return stats;
}

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

bool DelayByStagesWorker::request(const std::vector<int>& stages, std::function<void()> done,
                                  DelayUnit unit) {
    workers_.cancelAll();  // an older request's S may no longer be wanted
    workers_.reapFinished();
    std::vector<int> missing;
    for (int s : stages) {
        if (!cachedPipeDreamDelayStats(s, unit)) missing.push_back(s);
    }
    if (missing.empty()) return false;
    workers_.start([missing, unit, done = std::move(done)](const CancelFlag& cancel) {
        for (int s : missing) {
            if (cancel->load()) return;
            pipeDreamDelayStatsCached(s, unit);
        }
        if (!cancel->load()) done();
    });
    return true;
}

}  // namespace pipelens::ui

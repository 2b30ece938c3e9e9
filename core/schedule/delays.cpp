#include "schedule/delays.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>

#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "util/parallel_for.hpp"

namespace pipelens {

const char* delayUnitWords(DelayUnit unit) {
    switch (unit) {
        case DelayUnit::BlockUpdates:
            return "block updates";
        case DelayUnit::OptimizerSteps:
            return "optimizer steps";
        case DelayUnit::Slots:
            return "slots";
    }
    return "block updates";
}

int stepMicrobatchesOf(const ScheduleParams& p) {
    // PD and an asynchronous imported schedule update a block per backward, as does a replica of
    // LocalSGD or SGD (its own updates): each a step of that block.
    if (p.kind == ScheduleKind::PipeDream || p.kind == ScheduleKind::LocalSgd) return 0;
    if (p.kind == ScheduleKind::Imported && p.asyncUpdate) return 0;
    // Fill-drain's flush groups, the synchronous programs' steps and 2BW's groups: flushGroup
    // (resolved) consecutive microbatches per step, whose partial updates land as one.
    return std::max(1, p.flushGroup > 0 ? p.flushGroup : p.microbatches);
}

DelayTable::DelayTable(const Timeline& timeline)
    : stages_(timeline.params.stages),
      microbatches_(timeline.params.microbatches),
      stepMicrobatches_(stepMicrobatchesOf(timeline.params)) {
    const size_t cells = static_cast<size_t>(stages_) * microbatches_;
    h_.assign(cells, -1);
    version_.assign(cells, 0);
    readSlot_.assign(cells, 0);
    if (stepMicrobatches_ > 0) groupSteps_.assign(cells, 0);
    updates_.reserve(cells);
    std::vector<int> blockVersion(stages_, 0);
    // Grouped steps: per block, the steps that began to land on it so far (they land in
    // microbatch-group order) and the last one.
    std::vector<int> stepsBegun(stepMicrobatches_ > 0 ? stages_ : 0, 0);
    std::vector<int> lastStep(stepMicrobatches_ > 0 ? stages_ : 0, -1);
    auto record = [&](OpKind op, int stage, int microbatch, int slot) {
        size_t i = static_cast<size_t>(microbatch) * stages_ + stage;
        if (op == OpKind::Forward) {
            h_[i] = static_cast<long long>(updates_.size());
            version_[i] = blockVersion[stage];
            readSlot_[i] = slot;
            if (stepMicrobatches_ > 0) {
                // The earlier steps of block `stage` that had not begun at the read.
                const int step = microbatch / stepMicrobatches_;
                groupSteps_[i] = std::max(0, step - stepsBegun[static_cast<size_t>(stage)]);
            }
        } else {
            updates_.push_back({stage, microbatch, slot});
            ++blockVersion[stage];
            if (stepMicrobatches_ > 0) {
                const int step = microbatch / stepMicrobatches_;
                if (step != lastStep[static_cast<size_t>(stage)]) {
                    lastStep[static_cast<size_t>(stage)] = step;
                    ++stepsBegun[static_cast<size_t>(stage)];
                }
            }
        }
    };
    if (timeline.events.empty() && timeline.params.costs.backwardSlots == 1) {
        // Every op acts in its start slot: the cells are already in replay order.
        for (const TimelineCell& c : timeline.cells)
            record(c.op, c.stage, c.microbatch, c.startSlot);
    } else {
        for (const ReplayEvent& e : replayOrder(timeline))
            record(e.op, e.stage, e.microbatch, e.slot);
    }
    if (timeline.params.kind == ScheduleKind::TwoBw) {
        // 2BW's forward events act where the version they read is current; the read's slot is
        // the forward's own start.
        for (const TimelineCell& c : timeline.cells) {
            if (c.op == OpKind::Forward)
                readSlot_[static_cast<size_t>(c.microbatch) * stages_ + c.stage] = c.startSlot;
        }
    }
    if (stepMicrobatches_ == 0) {
        // Each block's updates in order (a counting sort: blockVersion holds the counts), for
        // blockUpdatesBefore.
        blockStart_.resize(static_cast<size_t>(stages_) + 1);
        blockStart_[0] = 0;
        for (int j = 0; j < stages_; ++j) {
            blockStart_[static_cast<size_t>(j) + 1] =
                blockStart_[static_cast<size_t>(j)] + blockVersion[static_cast<size_t>(j)];
        }
        blockUpdates_.resize(updates_.size());
        std::vector<long long> next(blockStart_.begin(), blockStart_.end() - 1);
        long long k = 0;
        for (const BlockUpdateInfo& u : updates_)
            blockUpdates_[static_cast<size_t>(next[static_cast<size_t>(u.stage)]++)] = k++;
    }
}

long long DelayTable::blockUpdatesBefore(int block, long long k) const {
    if (stepMicrobatches_ > 0) {
        // Not indexed for grouped steps: count directly (tests and rare calls only).
        long long n = 0;
        for (long long i = 0; i < std::min(k, updates()); ++i) n += update(i).stage == block;
        return n;
    }
    const auto first = blockUpdates_.begin() + blockStart_[static_cast<size_t>(block)];
    const auto last = blockUpdates_.begin() + blockStart_[static_cast<size_t>(block) + 1];
    return std::lower_bound(first, last, k) - first;
}

long long DelayTable::delaySteps(long long k, int block) const {
    const int m = update(k).microbatch;
    if (stepMicrobatches_ > 0) return groupStepsDelay(m, block);
    return blockUpdatesBefore(block, k) - versionRead(m, block);
}

long long DelayTable::delayIn(DelayUnit unit, long long k, int block) const {
    switch (unit) {
        case DelayUnit::BlockUpdates:
            return delay(k, block);
        case DelayUnit::OptimizerSteps:
            return delaySteps(k, block);
        case DelayUnit::Slots:
            return delaySlots(k, block);
    }
    return delay(k, block);
}

DelayTable DelayTable::effective(const std::vector<char>& applies,
                                 const std::vector<long long>& closing) const {
    const auto K = static_cast<size_t>(updates());
    if (applies.size() != K || closing.size() != K) {
        throw std::invalid_argument("DelayTable::effective: one flag and one closing per update");
    }
    // before[t]: updates among the first t that took effect.
    std::vector<long long> before(K + 1, 0);
    for (size_t t = 0; t < K; ++t) before[t + 1] = before[t] + (applies[t] != 0 ? 1 : 0);
    DelayTable out = *this;
    // A cell the run never read (h = -1: a microbatch the timeline lists but the run stopped
    // before, as when a slot budget ends it) stays unread.
    for (long long& h : out.h_) {
        if (h >= 0) h = before[static_cast<size_t>(h)];
    }
    out.appliedAt_.resize(K);
    for (size_t k = 0; k < K; ++k) {
        out.appliedAt_[k] = closing[k] < 0 ? before[K] : before[static_cast<size_t>(closing[k])];
    }
    return out;
}

long long DelayTable::maxDelay() const {
    // max over j of k - h(m, j) is k - min_j h(m, j): one pass over h, one over the updates
    // (O(N S + K) instead of O(K S), which cost tens of milliseconds at S = 128).
    std::vector<long long> earliest(static_cast<size_t>(microbatches_),
                                    std::numeric_limits<long long>::max());
    for (int m = 0; m < microbatches_; ++m) {
        for (int j = 0; j < stages_; ++j)
            earliest[static_cast<size_t>(m)] =
                std::min(earliest[static_cast<size_t>(m)], forwardIndex(m, j));
    }
    long long best = 0;
    for (long long k = 0; k < updates(); ++k)
        best = std::max(best, appliedAt(k) - earliest[static_cast<size_t>(update(k).microbatch)]);
    return best;
}

long long pipeDreamMaxDelayFormula(int stages) {
    long long s = stages;
    // S^2 - S/2 for even S, S^2 - S/2 - 1/2 for odd S: both are floor(S^2 - S/2) = S^2 - ceil(S/2).
    return s * s - (s + 1) / 2;
}

namespace {

// A group of identical delay multisets: ascending update indices and ascending forward
// indices, both relative to the smallest forward index, and how many microbatches share them.
struct Pattern {
    std::vector<long long> k;
    std::vector<long long> h;
    long long count = 0;
};

// Number of pairs (k, h) in the pattern with k - h <= x.
long long pairsAtMost(const Pattern& p, long long x) {
    long long n = 0;
    // For ascending k, the threshold k - x ascends, so the first h >= k - x moves right.
    size_t first = 0;
    for (long long k : p.k) {
        while (first < p.h.size() && p.h[first] < k - x) ++first;
        n += static_cast<long long>(p.h.size() - first);
    }
    return n;
}

// Deduplicates per-microbatch (k, h) lists: in steady state every microbatch repeats the
// previous one shifted by a constant, so only startup and drain produce new patterns.
class PatternSet {
  public:
    void add(std::span<const long long> k, std::span<const long long> h) {
        if (k.empty()) return;
        const long long base = h.front();
        std::uint64_t hash = 1469598103934665603ULL;
        auto mix = [&hash](long long v) {
            hash ^=
                static_cast<std::uint64_t>(v) + 0x9E3779B97F4A7C15ULL + (hash << 6) + (hash >> 2);
        };
        for (long long v : k) mix(v - base);
        mix(-1);
        for (long long v : h) mix(v - base);
        auto [lo, hi] = index_.equal_range(hash);
        for (auto it = lo; it != hi; ++it) {
            Pattern& p = patterns_[it->second];
            if (sameShifted(p.k, k, base) && sameShifted(p.h, h, base)) {
                ++p.count;
                return;
            }
        }
        Pattern p;
        for (long long v : k) p.k.push_back(v - base);
        for (long long v : h) p.h.push_back(v - base);
        p.count = 1;
        index_.emplace(hash, patterns_.size());
        patterns_.push_back(std::move(p));
    }
    const std::vector<Pattern>& patterns() const { return patterns_; }

  private:
    static bool sameShifted(const std::vector<long long>& a, std::span<const long long> b,
                            long long base) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (a[i] != b[i] - base) return false;
        }
        return true;
    }
    std::vector<Pattern> patterns_;
    std::unordered_multimap<std::uint64_t, size_t> index_;
};

DelayStats statsFromPatterns(const std::vector<Pattern>& patterns, int stages, int microbatches) {
    DelayStats st;
    st.stages = stages;
    st.microbatches = microbatches;
    st.formulaMax = static_cast<double>(pipeDreamMaxDelayFormula(stages));
    st.formulaMean = static_cast<double>(stages) * stages / 2.0;
    long double sum = 0.0L;
    long long hi = 0;
    for (const Pattern& p : patterns) {
        long long sumK = 0;
        long long sumH = 0;
        for (long long k : p.k) sumK += k;
        for (long long h : p.h) sumH += h;
        const long long nk = static_cast<long long>(p.k.size());
        const long long nh = static_cast<long long>(p.h.size());
        st.samples += p.count * nk * nh;
        sum += static_cast<long double>(p.count) * (sumK * nh - sumH * nk);
        hi = std::max(hi, p.k.back() - p.h.front());
    }
    st.max = hi;
    st.mean = st.samples ? static_cast<double>(sum / st.samples) : 0.0;
    auto quantile = [&](double q) {
        long long need = static_cast<long long>(std::ceil(q * static_cast<double>(st.samples)));
        need = std::max<long long>(need, 1);
        long long lo = -1;  // count(<= lo) < need
        long long up = hi;  // count(<= up) >= need
        while (up - lo > 1) {
            long long mid = lo + (up - lo) / 2;
            long long c = 0;
            for (const Pattern& p : patterns) c += p.count * pairsAtMost(p, mid);
            (c >= need ? up : lo) = mid;
        }
        return up;
    };
    if (st.samples > 0) {
        st.p10 = quantile(0.10);
        st.p50 = quantile(0.50);
        st.p90 = quantile(0.90);
    }
    return st;
}

// Statistics from h(m, j) (N x S, row-major) and each microbatch's window updates
// (ks[m*S .. m*S + count[m]), ascending).
DelayStats statsFromLists(int S, int N, const std::vector<long long>& hAll,
                          const std::vector<long long>& ks, const std::vector<int>& count) {
    PatternSet patterns;
    std::vector<long long> h(S);
    long long bestDelay = -1;
    int bestBlock = 0;
    for (int m = 0; m < N; ++m) {
        if (count[m] == 0) continue;
        std::copy_n(hAll.begin() + static_cast<std::ptrdiff_t>(m) * S, S, h.begin());
        // The largest delay of this microbatch: its last update's read of the block whose forward
        // came first (the earliest block with the smallest h).
        const auto firstMin = std::min_element(h.begin(), h.end());
        const long long largest = ks[static_cast<size_t>(m) * S + count[m] - 1] - *firstMin;
        if (largest > bestDelay) {
            bestDelay = largest;
            bestBlock = static_cast<int>(firstMin - h.begin());
        }
        // Forwards run stage after stage, so h is already ascending; sort defensively if not.
        if (!std::is_sorted(h.begin(), h.end())) std::sort(h.begin(), h.end());
        patterns.add(std::span<const long long>(ks.data() + static_cast<size_t>(m) * S, count[m]),
                     h);
    }
    DelayStats st = statsFromPatterns(patterns.patterns(), S, N);
    st.maxBlock = bestBlock;  // SPEC: in steady state always a read of block 1 (index 0)
    return st;
}

}  // namespace

bool pipeDreamFormulaApplies(const ScheduleParams& p) {
    const bool unitCosts =
        p.costs.forwardSlots == 1 && p.costs.backwardSlots == 1 && p.costs.latencySlots == 0;
    return p.kind == ScheduleKind::PipeDream && (p.noam == 0 || p.noam == p.stages) && unitCosts;
}

SteadyState steadyState(long long measuredMax, long long formulaMax) {
    if (measuredMax > formulaMax) return SteadyState::StartUpStripe;
    if (measuredMax < formulaMax) return SteadyState::NotReached;
    return SteadyState::Reached;
}

DelayStats delayStats(const DelayTable& table, double fromFraction) {
    if (!(fromFraction >= 0.0 && fromFraction < 1.0)) {
        throw ConfigError("from_fraction = " + std::to_string(fromFraction) +
                          " is not allowed: a number in [0, 1)");
    }
    const int S = table.stages();
    const int N = table.microbatches();
    const long long first = static_cast<long long>(std::ceil(fromFraction * table.updates()));
    // Each microbatch has at most S updates (one per stage); gather its window updates in order.
    std::vector<long long> ks(static_cast<size_t>(N) * S);
    std::vector<int> count(N, 0);
    for (long long k = first; k < table.updates(); ++k) {
        const int m = table.update(k).microbatch;
        ks[static_cast<size_t>(m) * S + count[m]++] = k;
    }
    std::vector<long long> h(static_cast<size_t>(N) * S);
    for (int m = 0; m < N; ++m) {
        for (int j = 0; j < S; ++j) h[static_cast<size_t>(m) * S + j] = table.forwardIndex(m, j);
    }
    return statsFromLists(S, N, h, ks, count);
}

namespace {

// pipeDreamDelayStats's lists for one S: h and the update indices (8 bytes each per microbatch
// and stage) and the simulator's finish tables (4 + 4).
std::uint64_t delayStatsBytes(int stages, int microbatches) {
    const auto S = static_cast<std::uint64_t>(stages);
    const auto N = static_cast<std::uint64_t>(microbatches > 0 ? microbatches : 10 * stages);
    return bytesFor(S, N, 2 * sizeof(long long) + 2 * sizeof(int));
}

}  // namespace

void requireDelayStatsMemory(int firstStages, int lastStages, int microbatches, int threads) {
    // The largest S run side by side, one per thread.
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const int side =
        std::min(lastStages - firstStages + 1, threads > 0 ? threads : static_cast<int>(hardware));
    std::uint64_t bytes = 0;
    for (int S = lastStages; S > lastStages - side; --S) {
        const std::uint64_t one = delayStatsBytes(S, microbatches);
        bytes = bytes > UINT64_MAX - one ? UINT64_MAX : bytes + one;
    }
    if (bytes < (std::uint64_t{1} << 20)) return;
    // Built by appending: GCC 12 reports a false -Wrestrict on "literal" + std::string&& at -O3.
    std::string what = "the delay statistics for stages = ";
    what += std::to_string(firstStages);
    if (firstStages != lastStages) {
        what += ':';
        what += std::to_string(lastStages);
    }
    what += " with ";
    what += microbatches > 0 ? std::to_string(microbatches) : std::string("10 x S");
    what += " microbatches (";
    what += std::to_string(side);
    what += side == 1 ? " size at a time)" : " sizes at a time)";
    requireMemory(bytes, what, "fewer stages or microbatches");
}

DelayStats pipeDreamDelayStats(int stages, int microbatches, double fromFraction) {
    if (!(fromFraction >= 0.0 && fromFraction < 1.0)) {
        throw ConfigError("from_fraction = " + std::to_string(fromFraction) +
                          " is not allowed: a number in [0, 1)");
    }
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = stages;
    p.microbatches = microbatches > 0 ? microbatches : 10 * stages;
    const int S = p.stages;
    const int N = p.microbatches;
    // With unit costs the simulator emits cells in replay order, so h(m, j) and the update
    // indices can be recorded as the schedule is simulated, without a timeline or table.
    const long long K = static_cast<long long>(N) * S;
    const long long first =
        static_cast<long long>(std::ceil(fromFraction * static_cast<double>(K)));
    std::vector<long long> h(static_cast<size_t>(N) * S);
    std::vector<long long> ks(static_cast<size_t>(N) * S);
    std::vector<int> count(N, 0);
    long long k = 0;
    simulateSchedule(p, [&](const TimelineCell& c) {
        if (c.op == OpKind::Forward) {
            h[static_cast<size_t>(c.microbatch) * S + c.stage] = k;
        } else {
            if (k >= first) ks[static_cast<size_t>(c.microbatch) * S + count[c.microbatch]++] = k;
            ++k;
        }
    });
    return statsFromLists(S, N, h, ks, count);
}

std::vector<DelayStats> pipeDreamDelayStatsRange(int firstStages, int lastStages, int microbatches,
                                                 double fromFraction, int threads) {
    if (firstStages < 1 || lastStages < firstStages) {
        throw ConfigError("stages = " + std::to_string(firstStages) + ":" +
                          std::to_string(lastStages) + " is not allowed: A:B with 1 <= A <= B");
    }
    const int count = lastStages - firstStages + 1;
    requireDelayStatsMemory(firstStages, lastStages, microbatches, threads);
    std::vector<DelayStats> out(static_cast<size_t>(count));
    // Work is ~S^3 per S: hand out the largest S first so threads finish together.
    parallelFor(static_cast<size_t>(count), threads, [&](size_t i) {
        const int S = lastStages - static_cast<int>(i);
        out[static_cast<size_t>(S - firstStages)] =
            pipeDreamDelayStats(S, microbatches, fromFraction);
    });
    return out;
}

}  // namespace pipelens

#include "replay/delays.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "errors.hpp"

namespace pipelens {

DelayTable::DelayTable(const Timeline& timeline)
    : stages_(timeline.params.stages), microbatches_(timeline.params.microbatches) {
    const size_t cells = static_cast<size_t>(stages_) * microbatches_;
    h_.assign(cells, -1);
    version_.assign(cells, 0);
    updates_.reserve(cells);
    std::vector<int> blockVersion(stages_, 0);
    for (const ReplayEvent& e : replayOrder(timeline)) {
        size_t i = static_cast<size_t>(e.microbatch) * stages_ + e.stage;
        if (e.op == OpKind::Forward) {
            h_[i] = static_cast<long long>(updates_.size());
            version_[i] = blockVersion[e.stage];
        } else {
            updates_.push_back({e.stage, e.microbatch, e.slot});
            ++blockVersion[e.stage];
        }
    }
}

long long DelayTable::maxDelay() const {
    long long best = 0;
    for (long long k = 0; k < updates(); ++k) {
        for (int j = 0; j < stages_; ++j) best = std::max(best, delay(k, j));
    }
    return best;
}

long long pipeDreamMaxDelayFormula(int stages) {
    long long s = stages;
    // S^2 - S/2 for even S, S^2 - S/2 - 1/2 for odd S: both are floor(S^2 - S/2) = S^2 - ceil(S/2).
    return s * s - (s + 1) / 2;
}

namespace {

// A group of identical delay multisets: sorted update indices and sorted forward indices, both
// relative to the smallest forward index, and how many microbatches share them.
struct Pattern {
    std::vector<long long> k;  // ascending
    std::vector<long long> h;  // ascending
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

DelayStats statsFromPatterns(const std::map<std::vector<long long>, Pattern>& patterns, int stages,
                             int microbatches) {
    DelayStats st;
    st.stages = stages;
    st.microbatches = microbatches;
    st.formulaMax = static_cast<double>(stages) * stages - stages / 2.0 -
                    (stages % 2 == 1 ? 0.5 : 0.0);
    st.formulaMean = static_cast<double>(stages) * stages / 2.0;
    long double sum = 0.0L;
    long long hi = 0;
    for (const auto& [key, p] : patterns) {
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
            for (const auto& [key, p] : patterns) c += p.count * pairsAtMost(p, mid);
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

void addPattern(std::map<std::vector<long long>, Pattern>& patterns, std::vector<long long> k,
                std::vector<long long> h) {
    if (k.empty()) return;
    std::sort(k.begin(), k.end());
    std::sort(h.begin(), h.end());
    const long long base = h.front();
    for (auto& v : k) v -= base;
    for (auto& v : h) v -= base;
    std::vector<long long> key;
    key.reserve(k.size() + h.size() + 1);
    key.insert(key.end(), k.begin(), k.end());
    key.push_back(-1);
    key.insert(key.end(), h.begin(), h.end());
    auto [it, inserted] = patterns.try_emplace(std::move(key));
    if (inserted) {
        it->second.k = std::move(k);
        it->second.h = std::move(h);
    }
    ++it->second.count;
}

}  // namespace

DelayStats delayStats(const DelayTable& table, double fromFraction) {
    if (!(fromFraction >= 0.0 && fromFraction < 1.0)) {
        throw ConfigError("from_fraction = " + std::to_string(fromFraction) +
                          " is not allowed: a number in [0, 1)");
    }
    const int S = table.stages();
    const long long first = static_cast<long long>(std::ceil(fromFraction * table.updates()));
    // Updates of each microbatch that fall in the window.
    std::vector<std::vector<long long>> ks(table.microbatches());
    for (long long k = first; k < table.updates(); ++k) ks[table.update(k).microbatch].push_back(k);
    std::map<std::vector<long long>, Pattern> patterns;
    std::vector<long long> h(S);
    for (int m = 0; m < table.microbatches(); ++m) {
        if (ks[m].empty()) continue;
        for (int j = 0; j < S; ++j) h[j] = table.forwardIndex(m, j);
        addPattern(patterns, std::move(ks[m]), h);
    }
    DelayStats st = statsFromPatterns(patterns, S, table.microbatches());
    // Which block's read attains the maximum (SPEC: always block 1 in steady state).
    for (long long k = first; k < table.updates() && st.max > 0; ++k) {
        bool found = false;
        for (int j = 0; j < S; ++j) {
            if (table.delay(k, j) == st.max) {
                st.maxBlock = j;
                found = true;
                break;
            }
        }
        if (found) break;
    }
    return st;
}

DelayStats pipeDreamDelayStats(int stages, int microbatches, double fromFraction) {
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = stages;
    p.microbatches = microbatches > 0 ? microbatches : 10 * stages;
    return delayStats(DelayTable(buildTimeline(p)), fromFraction);
}

}  // namespace pipelens

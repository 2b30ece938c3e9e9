#include "schedule/delay_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace pipelens {
namespace {

// Bottom-up max segment tree over `n` leaves stored at [n, 2n), each node a row of `width`
// numbers maxed column by column.
void buildTree(std::int32_t* tree, long long n, int width) {
    for (long long i = n - 1; i >= 1; --i) {
        std::int32_t* out = tree + i * width;
        const std::int32_t* a = tree + 2 * i * width;
        const std::int32_t* b = a + width;
        for (int j = 0; j < width; ++j) out[j] = std::max(a[j], b[j]);
    }
}

// acc[j] = max(acc[j], max over leaves [lo, hi) of column j).
void treeRangeMax(const std::int32_t* tree, long long n, int width, long long lo, long long hi,
                  std::int32_t* acc) {
    auto take = [&](long long node) {
        const std::int32_t* row = tree + node * width;
        for (int j = 0; j < width; ++j) acc[j] = std::max(acc[j], row[j]);
    };
    for (lo += n, hi += n; lo < hi; lo >>= 1, hi >>= 1) {
        if (lo & 1) take(lo++);
        if (hi & 1) take(--hi);
    }
}

// acc[j] = max(acc[j], k - h[j]) for j < n: the inner loop of every delay maximum (S x K of
// them when a run is loaded), so it gets a wider-vector clone where the CPU has one.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void maxOfDifferences(std::int32_t* acc, std::int32_t k, const std::int32_t* h, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) acc[j] = std::max(acc[j], k - h[j]);
}

}  // namespace

void DelayRanges::reset(std::shared_ptr<const DelayTable> table, long long maxBinCells,
                        DelayUnit unit) {
    table_ = std::move(table);
    unit_ = unit;
    countedSteps_ = table_ && unit == DelayUnit::OptimizerSteps && table_->stepMicrobatches() == 0;
    blocks_ = table_ ? table_->stages() : 0;
    updates_ = table_ ? table_->updates() : 0;
    forward_.clear();
    forwardSum_.clear();
    binShift_ = 0;
    bins_ = 0;
    binTree_.clear();
    binSumPrefix_.clear();
    largest_ = 0;
    if (empty()) return;
    const auto S = static_cast<std::size_t>(blocks_);
    const int microbatches = table_->microbatches();
    forward_.resize(static_cast<std::size_t>(microbatches) * S);
    forwardSum_.resize(static_cast<std::size_t>(microbatches));
    for (int m = 0; m < microbatches; ++m) {
        long long sum = 0;
        for (int j = 0; j < blocks_; ++j) {
            long long h = table_->forwardIndex(m, j);
            if (unit_ == DelayUnit::Slots) {
                h = table_->readSlot(m, j);
            } else if (unit_ == DelayUnit::OptimizerSteps) {
                // Counted: block j's updates before the read; grouped: minus the steps delay.
                h = countedSteps_ ? table_->versionRead(m, j) : -table_->groupStepsDelay(m, j);
            }
            forward_[static_cast<std::size_t>(m) * S + static_cast<std::size_t>(j)] =
                static_cast<std::int32_t>(h);
            sum += h;
        }
        forwardSum_[static_cast<std::size_t>(m)] = sum;
    }
    maxBinCells = std::max<long long>(maxBinCells, blocks_);
    while (((updates_ + (1LL << binShift_) - 1) >> binShift_) * blocks_ > maxBinCells) ++binShift_;
    bins_ = (updates_ + (1LL << binShift_) - 1) >> binShift_;
    binTree_.assign(2 * static_cast<std::size_t>(bins_) * S, kNoValue);
    binSumPrefix_.assign(static_cast<std::size_t>(bins_) + 1, 0);
    for (long long bin = 0; bin < bins_; ++bin) {
        const long long lo = bin << binShift_;
        const long long hi = std::min(updates_, lo + (1LL << binShift_));
        directMax(lo, hi, binTree_.data() + static_cast<std::size_t>(bins_ + bin) * S);
        binSumPrefix_[static_cast<std::size_t>(bin) + 1] =
            binSumPrefix_[static_cast<std::size_t>(bin)] + delaySum(lo, hi);
    }
    buildTree(binTree_.data(), bins_, blocks_);
    // Node 1 (the root, or the only leaf) holds every block's largest delay.
    largest_ = *std::max_element(binTree_.begin() + static_cast<std::ptrdiff_t>(S),
                                 binTree_.begin() + static_cast<std::ptrdiff_t>(2 * S));
}

long long DelayRanges::delaySum(long long lo, long long hi) const {
    long long sum = 0;
    for (long long k = lo; k < hi; ++k) {
        // Counted steps: the blocks' updates before k sum to k (each update is a step).
        const long long term = countedSteps_ ? k : blocks_ * static_cast<long long>(updateTerm(k));
        sum += term - forwardSum_[static_cast<std::size_t>(table_->update(k).microbatch)];
    }
    return sum;
}

long long DelayRanges::sumBefore(long long x) const {
    const long long whole = x >> binShift_;
    return binSumPrefix_[static_cast<std::size_t>(whole)] + delaySum(whole << binShift_, x);
}

void DelayRanges::directMax(long long lo, long long hi, std::int32_t* acc) const {
    const auto S = static_cast<std::size_t>(blocks_);
    if (countedSteps_) {
        if (hi <= lo) return;
        // Each block's updates before k, advanced update by update.
        std::vector<std::int32_t> before(S);
        for (std::size_t j = 0; j < S; ++j)
            before[j] =
                static_cast<std::int32_t>(table_->blockUpdatesBefore(static_cast<int>(j), lo));
        for (long long k = lo; k < hi; ++k) {
            const BlockUpdateInfo& u = table_->update(k);
            const std::int32_t* read = forward_.data() + static_cast<std::size_t>(u.microbatch) * S;
            for (std::size_t j = 0; j < S; ++j) acc[j] = std::max(acc[j], before[j] - read[j]);
            ++before[static_cast<std::size_t>(u.stage)];
        }
        return;
    }
    for (long long k = lo; k < hi; ++k) {
        const std::int32_t* h =
            forward_.data() + static_cast<std::size_t>(table_->update(k).microbatch) * S;
        maxOfDifferences(acc, updateTerm(k), h, S);
    }
}

void DelayRanges::rangeMax(long long lo, long long hi, std::int32_t* acc) const {
    if (empty()) return;
    lo = std::clamp(lo, 0LL, updates_);
    hi = std::clamp(hi, 0LL, updates_);
    if (hi <= lo) return;
    // Partial bins at the ends directly, whole bins from the tree.
    const long long binSize = 1LL << binShift_;
    const long long firstWhole = (lo + binSize - 1) >> binShift_;
    const long long endWhole = hi >> binShift_;
    if (firstWhole >= endWhole) {
        directMax(lo, hi, acc);
        return;
    }
    directMax(lo, firstWhole << binShift_, acc);
    treeRangeMax(binTree_.data(), bins_, blocks_, firstWhole, endWhole, acc);
    directMax(endWhole << binShift_, hi, acc);
}

long long DelayRanges::argMax(long long lo, long long hi, int block) const {
    long long best = lo;
    for (long long k = lo + 1; k < hi; ++k) {
        if (delay(k, block) > delay(best, block)) best = k;
    }
    return best;
}

DelayRanges::Stats DelayRanges::secondHalfStats(long long shown) const {
    Stats s;
    if (empty()) return s;
    shown = std::clamp(shown, 0LL, updates_);
    const auto first = static_cast<long long>(std::ceil(0.5 * static_cast<double>(shown)));
    if (shown <= first) return s;
    std::vector<std::int32_t> acc(static_cast<std::size_t>(blocks_), kNoValue);
    rangeMax(first, shown, acc.data());
    s.max = *std::max_element(acc.begin(), acc.end());
    const long long sum = sumBefore(shown) - sumBefore(first);
    s.mean = static_cast<double>(sum) / (static_cast<double>(shown - first) * blocks_);
    return s;
}

}  // namespace pipelens

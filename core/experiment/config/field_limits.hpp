#pragma once
// The allowed range of every number of an experiment config (docs/config.md), written once. The
// file reader (ObjectReader), ExperimentConfig::validate() for the app's typed edits, and the
// app's fields all take their range and the text "what is allowed" from this table, so a value
// the app accepts is one the CLI accepts, with the same message when it is not.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "limits.hpp"

namespace pipelens {

struct IntLimit {
    long long lo;
    long long hi;
    std::string_view allowed;  // for messages: "an integer in [1, 4096]"
    constexpr bool allows(long long v) const { return v >= lo && v <= hi; }
};

struct RealLimit {
    double lo;
    double hi;
    bool openBelow;  // (lo, hi] instead of [lo, hi]
    std::string_view allowed;
    bool allows(double v) const {
        return std::isfinite(v) && (openBelow ? v > lo : v >= lo) && v <= hi;
    }
};

// A ConfigError "FIELD = VALUE is not allowed: ALLOWED" unless the limit allows the value.
void requireWithin(const std::string& field, long long value, const IntLimit& limit);
void requireWithin(const std::string& field, std::uint64_t value, const IntLimit& limit);
void requireWithin(const std::string& field, double value, const RealLimit& limit);

namespace limits {

static_assert(kMaxStages == 4096, "the texts of kStages and kReplicas state kMaxStages");

inline constexpr long long kBig = 1'000'000'000;

// Top level.
inline constexpr IntLimit kSeed{0, kBig * 1000, "an integer in [0, 1000000000000]"};
inline constexpr IntLimit kSeeds{1, 1000, "an integer in [1, 1000]"};
inline constexpr IntLimit kStages{1, kMaxStages, "an integer in [1, 4096]"};
inline constexpr IntLimit kBatchSize{1, kBig, "an integer in [1, 1000000000]"};
// objective (linear models)
inline constexpr RealLimit kL2{0.0, 1e12, false, "a number in [0, 1e12]"};
inline constexpr RealLimit kGradientNoise{0.0, 1e12, false, "a number in [0, 1e12] (sigma)"};
// data
inline constexpr IntLimit kRows{1, 100'000'000, "an integer in [1, 100000000]"};
inline constexpr IntLimit kDim{1, 10'000'000, "an integer in [1, 10000000]"};
inline constexpr RealLimit kLabelNoise{0.0, 1e12, false, "a number in [0, 1e12]"};
inline constexpr RealLimit kMu{0.0, 1e12, false, "a number in [0, 1e12]"};
inline constexpr RealLimit kConditionNumber{0.0, 1e300, false,
                                            "0 (use mu) or a number in (1, 1e300]"};
inline constexpr IntLimit kLabelColumn{-1, 1'000'000,
                                       "-1 (last) or a column index in [0, 1000000]"};
inline constexpr IntLimit kLibsvmDim{0, 10'000'000,
                                     "0 (largest index seen) or an integer in [1, 10000000]"};
// budget
inline constexpr IntLimit kSlots{0, kBig, "an integer in [0, 1000000000]"};
inline constexpr IntLimit kMicrobatches{0, kBig, "an integer in [0, 1000000000]"};
inline constexpr RealLimit kEpochs{0.0, 1e9, false, "a number in [0, 1e9]"};
// costs
inline constexpr IntLimit kOpSlots{1, 1000, "an integer in [1, 1000]"};
inline constexpr IntLimit kLatencySlots{0, 1000, "an integer in [0, 1000]"};
// sampling
inline constexpr IntLimit kGradNormEvery{0, kBig, "an integer in [0, 1000000000] (0: off)"};
inline constexpr RealLimit kBlowUpFactor{1.0, 1e300, false, "a number in [1, 1e300]"};
// methods[i]
inline constexpr RealLimit kStepSize{0.0, 1e12, true, "a number in (0, 1e12]"};
inline constexpr IntLimit kGridExponent{-60, 20, "integers with -60 <= a_min <= a_max <= 20"};
inline constexpr IntLimit kNoam{0, kBig, "0 (meaning S) or an integer in [1, 1000000000]"};
inline constexpr IntLimit kReplicas{0, kMaxStages, "0 (meaning S) or an integer in [1, 4096]"};
inline constexpr IntLimit kLocalSteps{1, kBig, "an integer in [1, 1000000000] (H)"};
inline constexpr IntLimit kFlushGroup{0, kBig, "0 (meaning S) or an integer in [1, 1000000000]"};
inline constexpr IntLimit kAccumulation{
    0, kBig, "0 (meaning S) or an integer in [S, 1000000000] (2bw sums m >= S microbatches)"};
inline constexpr IntLimit kVirtualStages{2, 64, "an integer in [2, 64] (chunks per device)"};
inline constexpr IntLimit kDelta{-1, 10'000'000,
                                 "-1 (meaning S^2 - S/2) or an integer in [0, 10000000]"};
// methods[i].optimizer. [0, 1) is written as [0, 1 - 2^-53]: the largest double below 1.
inline constexpr RealLimit kOptimizerBeta{0.0, 1.0 - 0x1p-53, false, "a number in [0, 1)"};
inline constexpr RealLimit kOptimizerEps{0.0, 1.0, true, "a number in (0, 1]"};
inline constexpr RealLimit kWeightDecay{0.0, 1e6, false, "a number in [0, 1e6]"};
inline constexpr RealLimit kTauRef{0.0, 1e9, false, "0 (meaning S) or a number in (0, 1e9]"};
inline constexpr RealLimit kDcLambda{0.0, 1e6, false, "a number in [0, 1e6]"};
inline constexpr IntLimit kAccumulateK{1, 1024, "an integer in [1, 1024] (1 = off)"};
// view
inline constexpr IntLimit kCursor{-1, kBig,
                                  "-1 (the end of the run) or a slot count in [0, 1000000000]"};
// objective (the language model)
inline constexpr IntLimit kWidth{1, 65536, "an integer in [1, 65536] (C)"};
inline constexpr IntLimit kHeads{1, 65536, "an integer in [1, 65536] that divides width"};
inline constexpr IntLimit kContext{1, 65536, "an integer in [1, 65536] (T)"};
inline constexpr IntLimit kCorpusCharacters{1000, 100'000'000, "an integer in [1000, 100000000]"};
inline constexpr RealLimit kHeldOutFraction{0.0, 0.9, false, "a number in [0, 0.9]"};
inline constexpr IntLimit kHeldOutEvery{0, kBig,
                                        "an integer in [0, 1000000000] (block updates; 0: never)"};
inline constexpr IntLimit kSampleLines{0, 100, "an integer in [0, 100]"};
inline constexpr IntLimit kSampleLength{1, 100'000, "an integer in [1, 100000]"};
inline constexpr RealLimit kSampleTemperature{1e-3, 1e3, false, "a number in [0.001, 1000]"};

}  // namespace limits
}  // namespace pipelens

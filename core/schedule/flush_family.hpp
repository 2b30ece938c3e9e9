#pragma once
// The flushing schedule family of SPEC section 2.1 as programs (program.hpp): GPipe, 1F1B with
// flush, interleaved 1F1B (virtual stages) and ZB-H1 (zero bubble). Each family writes the order
// in which every rank runs its ops during one flush (one optimizer step); the grid is that order
// timed with unit costs (timeProgram), so a column is a time and idle cells are bubbles.
//
// Costs: every op of a program is one step (one chunk op of an interleaved program is 1/v of a
// whole stage's time). GPipe and 1F1B run full backwards B; ZB-H1 runs I and W (I + W = B), so
// with F = I = W = 1 its "1F1B" counterpart costs B = I + W = 2: time the 1F1B program with
// ActionCosts{1, 2, 1, 1} to compare both on equal terms.
#include <cstdint>
#include <string>

#include "schedule/program.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

enum class FlushKind : std::uint8_t { GPipe, OneFOneB, Interleaved, ZeroBubbleH1 };

inline constexpr EnumNames<FlushKind, 4> kFlushKinds{{{FlushKind::GPipe, "gpipe"},
                                                      {FlushKind::OneFOneB, "1f1b"},
                                                      {FlushKind::Interleaved, "interleaved"},
                                                      {FlushKind::ZeroBubbleH1, "zb-h1"}}};
inline std::string flushKindName(FlushKind kind) {
    return std::string(enumName(kFlushKinds, kind));
}

struct FlushScheduleParams {
    FlushKind kind = FlushKind::OneFOneB;
    int devices = 4;        // S ranks ("stages" in a config)
    int microbatches = 8;   // M per flush (one optimizer step)
    int virtualStages = 1;  // v, interleaved only (chunks per device; the model has S·v stages)

    bool operator==(const FlushScheduleParams&) const = default;
};

// The most grid cells (ranks × steps of one flush) a built program may hold: about 240 MB.
inline constexpr long long kMaxFlushCells = 8'388'608;

// Throws ConfigError naming the field as a config does ("stages", "microbatches",
// "virtual_stages"): S in 1 … kMaxStages, M >= 1, v >= 2 for interleaved and 1 otherwise, M a
// multiple of S for interleaved, and ranks × flushLengthFormula at most kMaxFlushCells.
void validateFlushScheduleParams(const FlushScheduleParams& params);

// One flush of the family as a compute-only program (orderOnly = false): rank r's row holds its
// ops at their unit-cost start steps, idle elsewhere; every row is flushLengthFormula long.
// Stage (chunk) c of an interleaved program sits on rank c % S.
PipelineProgram buildFlushProgram(const FlushScheduleParams& params);

// Closed forms with unit costs (every op one step):
//   GPipe, 1F1B:  2(M + S − 1)
//   interleaved:  2(v·M + S − 1)
//   ZB-H1:        max(3M + S − 1, 2M + 2S − 1), so 3M + S − 1 for M >= S
long long flushLengthFormula(const FlushScheduleParams& params);
// Idle rank-steps over ranks × length: 1 − ops per rank / length, e.g. (S − 1)/(M + S − 1) for
// GPipe and 1F1B, (S − 1)/(v·M + S − 1) interleaved, (S − 1)/(3M + S − 1) for ZB-H1 (M >= S).
double flushBubbleFormula(const FlushScheduleParams& params);

// The per-rank order of each family (what buildFlushProgram times): order[r] lists rank r's ops.
using RankOrders = std::vector<std::vector<Action>>;
RankOrders gpipeOrder(int devices, int microbatches);
RankOrders oneFOneBOrder(int devices, int microbatches);
RankOrders interleavedOrder(int devices, int microbatches, int virtualStages);
RankOrders zeroBubbleH1Order(int devices, int microbatches);

// An order as an orderOnly program (one action per step, no idle steps), to time with costs.
PipelineProgram orderProgram(const RankOrders& order);

}  // namespace pipelens

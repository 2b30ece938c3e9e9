// Interleaved 1F1B (Megatron's virtual pipeline stages) as a per-rank order. The model has S·v
// chunks; device d holds chunks d, d + S, …, d + (v − 1)S (global stage c·S + d for its chunk
// c). Device d runs min((S − d − 1)·2 + (v − 1)·S, M·v) warm-up chunk forwards, then one forward
// and one backward while forwards remain, then the remaining backwards. Its k-th forward is
// chunk (k / S) mod v of microbatch (k / (S·v))·S + k mod S: microbatches enter in groups of S
// and each group passes every chunk in turn; its k-th backward is chunk v − 1 − (k / S) mod v
// of the same microbatch formula (SPEC section 2.1). Needs M a multiple of S.
#include <algorithm>
#include <cstddef>

#include "schedule/flush_family.hpp"

namespace pipelens {
namespace {

int microbatchOf(long long k, int devices, int virtualStages) {
    const long long group = static_cast<long long>(devices) * virtualStages;
    return static_cast<int>((k / group) * devices + k % devices);
}

Action forwardOp(long long k, int device, int devices, int virtualStages) {
    const auto chunk = static_cast<int>((k / devices) % virtualStages);
    return {ActionKind::Forward, chunk * devices + device, microbatchOf(k, devices, virtualStages)};
}

Action backwardOp(long long k, int device, int devices, int virtualStages) {
    const auto chunk = virtualStages - 1 - static_cast<int>((k / devices) % virtualStages);
    return {ActionKind::Backward, chunk * devices + device,
            microbatchOf(k, devices, virtualStages)};
}

}  // namespace

RankOrders interleavedOrder(int devices, int microbatches, int virtualStages) {
    RankOrders order(static_cast<std::size_t>(devices));
    const long long total = static_cast<long long>(microbatches) * virtualStages;
    for (int d = 0; d < devices; ++d) {
        std::vector<Action>& row = order[static_cast<std::size_t>(d)];
        row.reserve(2 * static_cast<std::size_t>(total));
        const long long warmup = std::min(static_cast<long long>(devices - d - 1) * 2 +
                                              static_cast<long long>(virtualStages - 1) * devices,
                                          total);
        long long forward = 0;
        long long backward = 0;
        while (forward < warmup) row.push_back(forwardOp(forward++, d, devices, virtualStages));
        while (forward < total) {
            row.push_back(forwardOp(forward++, d, devices, virtualStages));
            row.push_back(backwardOp(backward++, d, devices, virtualStages));
        }
        while (backward < total) {
            row.push_back(backwardOp(backward++, d, devices, virtualStages));
        }
    }
    return order;
}

}  // namespace pipelens

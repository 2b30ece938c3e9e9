// 1F1B with flush (PipeDream-Flush, Megatron's non-interleaved schedule) as a per-rank order:
// stage s (from 0) runs min(S − s − 1, M) warm-up forwards, then one forward and one backward
// while forwards remain, then the remaining backwards (SPEC section 2.1). Rank s holds stage s.
#include <algorithm>
#include <cstddef>

#include "schedule/flush_family.hpp"

namespace pipelens {

RankOrders oneFOneBOrder(int devices, int microbatches) {
    RankOrders order(static_cast<std::size_t>(devices));
    for (int s = 0; s < devices; ++s) {
        std::vector<Action>& row = order[static_cast<std::size_t>(s)];
        row.reserve(2 * static_cast<std::size_t>(microbatches));
        const int warmup = std::min(devices - s - 1, microbatches);
        int forward = 0;
        int backward = 0;
        while (forward < warmup) row.push_back({ActionKind::Forward, s, forward++});
        while (forward < microbatches) {
            row.push_back({ActionKind::Forward, s, forward++});
            row.push_back({ActionKind::Backward, s, backward++});
        }
        while (backward < microbatches) row.push_back({ActionKind::Backward, s, backward++});
    }
    return order;
}

}  // namespace pipelens

// ZB-H1 (Qi et al. 2023, "handcrafted 1") as a per-rank order. The backward splits into I (the
// gradient for the stage's input, which stage s − 1 waits for) and W (the weight gradient, which
// only the optimizer step waits for). Stage s (from 0) runs the warm-up forwards of 1F1B,
// min(S − s − 1, M), then for j = 0 … M − 1: the next forward (while any remain), I(j), and
// W(j − s) once j >= s, so W lags I by s microbatches on stage s (none on the first, S − 1 on
// the last); the W left over run at the end, where they fill what 1F1B leaves idle. Every stage
// holds at most S activations at once (from F until W), the first stage's 1F1B peak.
#include <algorithm>
#include <cstddef>

#include "schedule/flush_family.hpp"

namespace pipelens {

RankOrders zeroBubbleH1Order(int devices, int microbatches) {
    RankOrders order(static_cast<std::size_t>(devices));
    for (int s = 0; s < devices; ++s) {
        std::vector<Action>& row = order[static_cast<std::size_t>(s)];
        row.reserve(3 * static_cast<std::size_t>(microbatches));
        const int warmup = std::min(devices - s - 1, microbatches);
        int forward = 0;
        int weight = 0;
        while (forward < warmup) row.push_back({ActionKind::Forward, s, forward++});
        for (int j = 0; j < microbatches; ++j) {
            if (forward < microbatches) row.push_back({ActionKind::Forward, s, forward++});
            row.push_back({ActionKind::InputGrad, s, j});
            if (j >= s) row.push_back({ActionKind::WeightGrad, s, weight++});
        }
        while (weight < microbatches) row.push_back({ActionKind::WeightGrad, s, weight++});
    }
    return order;
}

}  // namespace pipelens

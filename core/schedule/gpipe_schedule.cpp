// GPipe (fill-drain) as a per-rank order: every stage runs all M forwards, then all M backwards
// in microbatch order (SPEC section 2.1). Rank s holds stage s.
#include <cstddef>

#include "schedule/flush_family.hpp"

namespace pipelens {

RankOrders gpipeOrder(int devices, int microbatches) {
    RankOrders order(static_cast<std::size_t>(devices));
    for (int s = 0; s < devices; ++s) {
        std::vector<Action>& row = order[static_cast<std::size_t>(s)];
        row.reserve(2 * static_cast<std::size_t>(microbatches));
        for (int m = 0; m < microbatches; ++m) row.push_back({ActionKind::Forward, s, m});
        for (int m = 0; m < microbatches; ++m) row.push_back({ActionKind::Backward, s, m});
    }
    return order;
}

}  // namespace pipelens

#include "experiment/budget_checks.hpp"

#include <cmath>

#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "schedule/run_length.hpp"
#include "schedule/timeline.hpp"
#include "util/format_number.hpp"

namespace pipelens {
namespace {

std::uint64_t addSat(std::uint64_t a, std::uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

std::string budgetFieldText(const BudgetSpec& b) {
    if (b.totalSlots > 0) return "budget.slots = " + std::to_string(b.totalSlots);
    if (b.microbatches > 0) return "budget.microbatches = " + std::to_string(b.microbatches);
    return "budget.epochs = " + formatNumber(b.epochs, 15);
}

int pipeDreamMicrobatchesFor(const ExperimentConfig& c, int batchesPerEpoch) {
    const int cap = maxMicrobatches(c.stages);
    // In double first: epochs * M can exceed any int (llround then a cast used to wrap).
    const double n = c.budget.microbatches > 0
                         ? static_cast<double>(c.budget.microbatches)
                         : std::round(c.budget.epochs * static_cast<double>(batchesPerEpoch));
    if (!(n >= 1.0)) {
        throw ConfigError(budgetFieldText(c.budget) + " is not allowed: it gives no microbatch (M = " +
                          std::to_string(batchesPerEpoch) + " batches per epoch)");
    }
    if (n > cap) {
        throw ConfigError(budgetFieldText(c.budget) + " is not allowed with stages = " +
                          std::to_string(c.stages) + ": it gives " + formatNumber(n, 15) +
                          " PipeDream microbatches, at most " + std::to_string(cap) +
                          " fit a timeline (microbatches x stages x 2 <= 400000000)");
    }
    return static_cast<int>(n);
}

std::uint64_t dataBytes(std::int64_t rows, std::int64_t cols) {
    const auto n = static_cast<std::uint64_t>(rows);
    const auto d = static_cast<std::uint64_t>(cols);
    const std::uint64_t small = std::min(n, d);
    // X, one working copy of it while f* and L are computed, and a Gram of the smaller side.
    const std::uint64_t x = bytesFor(n, d, sizeof(double));
    const std::uint64_t gram = bytesFor(small, small, sizeof(double));
    return addSat(addSat(x, x), gram);
}

std::uint64_t methodRunBytes(long long microbatches, int stages, long long slots,
                             std::int64_t dim) {
    const auto cells = bytesFor(static_cast<std::uint64_t>(std::max(0LL, microbatches)),
                                static_cast<std::uint64_t>(stages));
    // Per microbatch and stage: two timeline cells (20 bytes each), the delay table (24 bytes)
    // and f after each block update (8 bytes); f per slot; S + 4 model copies.
    const std::uint64_t perCell = 2 * 20 + 24 + 8;
    const std::uint64_t a = bytesFor(cells, perCell);
    const std::uint64_t b = bytesFor(static_cast<std::uint64_t>(std::max(0LL, slots)), 8);
    const std::uint64_t m = bytesFor(static_cast<std::uint64_t>(dim),
                                     static_cast<std::uint64_t>(stages) + 4, sizeof(double));
    return addSat(addSat(a, b), m);
}

}  // namespace pipelens

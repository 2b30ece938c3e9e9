#include "experiment/run/budget_checks.hpp"

#include <algorithm>
#include <cmath>

#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "objective/lm/lm_layout.hpp"
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
        throw ConfigError(budgetFieldText(c.budget) +
                          " is not allowed: it gives no microbatch (M = " +
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

std::uint64_t lmRunBytes(const LmLayout& layout, int realBytes, const std::vector<int>& replicas) {
    const LmDims& d = layout.dims();
    const auto P = static_cast<std::uint64_t>(layout.size());
    const auto S = static_cast<std::uint64_t>(d.stages);
    const auto N = static_cast<std::uint64_t>(d.tokens());
    const auto C = static_cast<std::uint64_t>(d.width);
    const auto V = static_cast<std::uint64_t>(d.vocab);
    const auto real = static_cast<std::uint64_t>(realBytes);
    std::uint64_t largest = 0;
    for (int s = 0; s < d.stages; ++s) {
        largest = std::max(largest, static_cast<std::uint64_t>(layout.stage(s).size));
    }
    // One microbatch on every stage: its input (N x C), a block's internals (q, k, v, the
    // attention output, two LayerNorms, the 4C-wide MLP before and after GELU: 16 N x C), the
    // attention weights (heads x b x T x T) on each block, and the logits with their gradient.
    const std::uint64_t attention =
        bytesFor(static_cast<std::uint64_t>(d.heads) * d.batch,
                 static_cast<std::uint64_t>(d.context), static_cast<std::uint64_t>(d.context));
    const std::uint64_t blocks = S > 2 ? S - 2 : 0;
    const std::uint64_t activations =
        addSat(addSat(bytesFor(S, N, C), bytesFor(blocks, addSat(bytesFor(16, N, C), attention))),
               bytesFor(2, N, V));
    std::uint64_t total = bytesFor(P, sizeof(double));  // the initial weights
    for (int r : replicas) {
        const std::uint64_t weights = bytesFor(static_cast<std::uint64_t>(std::max(r, 1)) + 1, P);
        const std::uint64_t perMethod = addSat(addSat(weights, largest), activations);
        total = addSat(total, bytesFor(perMethod, real));
    }
    return total;
}

void requireLmMemory(const LmLayout& layout, int realBytes, const std::vector<int>& replicas) {
    const LmDims& d = layout.dims();
    const std::size_t methods = replicas.size();
    requireMemory(
        lmRunBytes(layout, realBytes, replicas),
        "the language model (objective.width = " + std::to_string(d.width) +
            ", objective.context = " + std::to_string(d.context) +
            ", objective.heads = " + std::to_string(d.heads) +
            ", stages = " + std::to_string(d.stages) + ", batch_size = " + std::to_string(d.batch) +
            ", a vocabulary of " + std::to_string(d.vocab) + ": " +
            formatNumber(static_cast<double>(layout.size()), 4) + " parameters) with " +
            std::to_string(methods) + (methods == 1 ? " method" : " methods side by side"),
        "a smaller objective.width, objective.context or batch_size, fewer stages or "
        "fewer methods");
}

}  // namespace pipelens

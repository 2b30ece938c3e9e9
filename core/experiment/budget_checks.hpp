#pragma once
// Budget planning checks (the budget rules themselves are in budget.hpp): the budget field the user set, PipeDream's microbatch count from a
// microbatch or epoch budget without int overflow, and the memory a run needs, estimated before
// anything large is allocated.
#include <cstdint>
#include <string>

#include "experiment/config.hpp"

namespace pipelens {

// The budget field the user set with its value, e.g. "budget.slots = 1000000000".
std::string budgetFieldText(const BudgetSpec& budget);

// PD's N for a budget in microbatches or epochs (M batches per epoch). ConfigError naming the
// budget field when it gives no microbatch or more than the timeline cap allows with S stages.
int pipeDreamMicrobatchesFor(const ExperimentConfig& config, int batchesPerEpoch);

// Bytes for the data set (n x d) and the objective's set-up (f*, L).
std::uint64_t dataBytes(std::int64_t rows, std::int64_t cols);

// Bytes for one run of a method: timeline, delay table, sampled curves and the model copies.
std::uint64_t methodRunBytes(long long microbatches, int stages, long long slots,
                             std::int64_t dim);

}  // namespace pipelens

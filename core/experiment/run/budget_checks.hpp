#pragma once
// Budget planning checks (the budget rules themselves are in budget.hpp): the budget field the user
// set, PipeDream's microbatch count from a microbatch or epoch budget without int overflow, and the
// memory a run needs, estimated before anything large is allocated.
#include <cstdint>
#include <string>
#include <vector>

#include "experiment/config/config.hpp"

namespace pipelens {

class LmLayout;

// The budget field the user set with its value, e.g. "budget.slots = 1000000000".
std::string budgetFieldText(const BudgetSpec& budget);

// PD's N for a budget in microbatches or epochs (M batches per epoch). ConfigError naming the
// budget field when it gives no microbatch or more than the timeline cap allows with S stages.
int pipeDreamMicrobatchesFor(const ExperimentConfig& config, int batchesPerEpoch);

// Bytes for the data set (n x d) and the objective's set-up (f*, L).
std::uint64_t dataBytes(std::int64_t rows, std::int64_t cols);

// Bytes for one run of a method: timeline, delay table, sampled curves and the model copies.
std::uint64_t methodRunBytes(long long microbatches, int stages, long long slots, std::int64_t dim);

// Bytes the language model surely takes before its first step: the initial weights (double), and
// per method its replicas' weights, one stash of every stage, the weight gradient and one
// microbatch's activations on every stage (inputs, block internals, attention, logits). A lower
// estimate: runs keep more stashes and activations as the pipeline fills.
std::uint64_t lmRunBytes(const LmLayout& layout, int realBytes, const std::vector<int>& replicas);

// Refuses (ResourceError naming width, context, heads, stages, batch_size and the vocabulary)
// a language model whose lmRunBytes exceeds memoryLimitBytes().
void requireLmMemory(const LmLayout& layout, int realBytes, const std::vector<int>& replicas);

}  // namespace pipelens

#pragma once
// Checks of run settings shared by every replay (linear and language model), so each message
// is written once. All throw ConfigError naming the field, its value and what is allowed.
#include <memory>

#include "schedule/delays.hpp"

namespace pipelens {

enum class DelayMode;
enum class StageOrder;

void requireStepSize(double stepSize);  // finite and >= 0
void requireReplicas(int replicas);     // >= 1

// RPD: checks that PipeDream delays or order come with a table of `stages` stages and that the
// update count is >= 0; caps `updates` at the table's; sets `maxDelay` for PipeDream (the
// table's maximum) and zero delays, and checks it lies in [0, 10^7].
void resolveRpdSettings(int stages, DelayMode delayMode, StageOrder order,
                        const std::shared_ptr<const DelayTable>& pipeDream, long long& updates,
                        long long& maxDelay);

}  // namespace pipelens

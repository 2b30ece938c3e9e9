#include "replay/replay_checks.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "errors.hpp"
#include "replay/rpd_replay.hpp"

namespace pipelens {

void requireStepSize(double stepSize) {
    if (!std::isfinite(stepSize) || stepSize < 0.0) {
        std::ostringstream s;
        s << "step_size = " << stepSize << " is not allowed: a finite number >= 0";
        throw ConfigError(s.str());
    }
}

void requireReplicas(int replicas) {
    if (replicas < 1) {
        throw ConfigError("replicas = " + std::to_string(replicas) +
                          " is not allowed: an integer >= 1");
    }
}

void resolveRpdSettings(int stages, DelayMode delayMode, StageOrder order,
                        const std::shared_ptr<const DelayTable>& pipeDream, long long& updates,
                        long long& maxDelay) {
    const bool needsTable = delayMode == DelayMode::PipeDream || order == StageOrder::PipeDream;
    if (needsTable && !pipeDream) {
        throw ConfigError("delay_mode/order = pd needs a PipeDream timeline to follow");
    }
    if (needsTable && pipeDream->stages() != stages) {
        throw ConfigError("stages = " + std::to_string(stages) +
                          " does not match the PipeDream timeline's " +
                          std::to_string(pipeDream->stages()));
    }
    if (updates < 0) {
        throw ConfigError("updates = " + std::to_string(updates) +
                          " is not allowed: an integer >= 0");
    }
    if (needsTable) updates = std::min(updates, pipeDream->updates());
    if (delayMode == DelayMode::PipeDream) {
        maxDelay = pipeDream->maxDelay();
    } else if (delayMode == DelayMode::Zero) {
        maxDelay = 0;
    }
    if (maxDelay < 0 || maxDelay > 10'000'000) {
        throw ConfigError("delta = " + std::to_string(maxDelay) +
                          " is not allowed: an integer in [0, 10000000]");
    }
}

}  // namespace pipelens

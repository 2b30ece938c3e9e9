#include "replay/lm_pipeline_executor.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipelens {

int LmSlotPool::acquire(int key) {
    if (std::find(owner_.begin(), owner_.end(), key) != owner_.end()) {
        throw std::logic_error("buffer of microbatch " + std::to_string(key) + " already in use");
    }
    auto freeSlot = std::find(owner_.begin(), owner_.end(), -1);
    int i = 0;
    if (freeSlot == owner_.end()) {
        owner_.push_back(key);
        i = static_cast<int>(owner_.size()) - 1;
    } else {
        *freeSlot = key;
        i = static_cast<int>(freeSlot - owner_.begin());
    }
    peak_ = std::max(peak_, ++inUse_);
    return i;
}

int LmSlotPool::get(int key) const {
    auto it = std::find(owner_.begin(), owner_.end(), key);
    if (it == owner_.end()) {
        throw std::logic_error("no buffer held for microbatch " + std::to_string(key));
    }
    return static_cast<int>(it - owner_.begin());
}

void LmSlotPool::release(int key) {
    auto it = std::find(owner_.begin(), owner_.end(), key);
    if (it == owner_.end()) {
        throw std::logic_error("releasing a buffer microbatch " + std::to_string(key) +
                               " does not hold");
    }
    *it = -1;
    --inUse_;
}

}  // namespace pipelens

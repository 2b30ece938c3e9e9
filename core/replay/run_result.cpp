#include "replay/run_result.hpp"

#include <sstream>

namespace pipelens {

Divergence divergenceRecord(long long update, int slot, double value, const std::string& why,
                            double stepSize, bool seenAfter) {
    Divergence d;
    d.diverged = true;
    d.update = update;
    d.slot = slot;
    d.value = value;
    std::ostringstream msg;
    msg << "diverged " << (seenAfter ? "after" : "at") << " block update " << update;
    if (slot >= 0) msg << " (slot " << slot << ")";
    msg << ": " << why << " (step size " << stepSize << ")";
    d.reason = msg.str();
    return d;
}

}  // namespace pipelens

#include "experiment/run/run_warnings.hpp"

namespace pipelens {

std::optional<std::string> neverAveragesWarning(const MethodRun& run) {
    if (run.spec.method != Method::LocalSgd) return std::nullopt;
    const ScheduleParams& p = run.schedule;
    const long long round = static_cast<long long>(p.replicas) * p.localSteps;
    if (p.microbatches >= round) return std::nullopt;
    std::string text = run.label + ": the run (N = " + std::to_string(p.microbatches) +
                       " microbatches) is shorter than one round (R·H = " + std::to_string(round) +
                       " microbatches";
    const bool unitCosts =
        p.costs.forwardSlots == 1 && p.costs.backwardSlots == 1 && p.costs.latencySlots == 0;
    if (p.replicas == p.stages && unitCosts) {
        // 2SH + 2(S - 1) in 64 bits: S = 2, H = 10^9 already overflows an int.
        const long long stages = p.stages;
        const long long roundSlots = 2 * stages * p.localSteps + 2 * (stages - 1);
        text += ", 2SH + 2(S − 1) = ";
        text += std::to_string(roundSlots);
        text += " slots";
    }
    text += "): it never averages, so it is " + std::to_string(p.replicas) +
            " independent runs of plain SGD; lower H or raise the budget";
    return text;
}

std::vector<std::string> experimentWarnings(const ExperimentResult& result) {
    std::vector<std::string> out;
    for (const MethodRun& run : result.methods) {
        if (auto w = neverAveragesWarning(run)) out.push_back(*w);
    }
    return out;
}

}  // namespace pipelens

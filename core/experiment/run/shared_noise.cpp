#include "experiment/run/shared_noise.hpp"

#include <algorithm>
#include <memory>

#include "random/numpy_random.hpp"

namespace pipelens {

std::int64_t noiseNormalsOf(const ExperimentConfig& config, const MethodRun& run,
                            const LinearObjective& objective) {
    if (!run.pipeline()) {
        // The step size changes no draw of stages, batches or delays: any one will do.
        return rpdNoiseNormals(rpdReplayConfig(config, run, 1.0, objective), objective);
    }
    // The plan's shared timeline when it has one (not copied); else the planned one, built.
    Timeline built;
    if (!run.sharedTimeline) built = plannedTimeline(run);
    const Timeline& timeline = run.sharedTimeline ? *run.sharedTimeline : built;
    const auto blocks = splitBlocks(objective.dim(), timeline.params.stages);
    std::int64_t total = 0;
    for (const TimelineCell& cell : timeline.cells) {
        // A backward acts (and draws) in its last slot; the replay stops at totalSlots.
        if (cell.op == OpKind::Backward && cell.endSlot < timeline.totalSlots)
            total += blocks[static_cast<size_t>(cell.stage)].size;
    }
    return total;
}

void skipNormals(NumpyRandom& rng, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) rng.standardNormal();
}

void placeSharedNoise(const ExperimentConfig& config, std::vector<MethodRun>& runs,
                      const LinearObjective& objective) {
    for (MethodRun& run : runs) run.noiseStarts.clear();
    if (config.objective.noiseStream != NoiseStream::Shared ||
        !(config.objective.gradientNoise > 0.0))
        return;
    const int seeds = std::max(1, config.seeds);
    // A pipeline's count is the same for every seed (its timeline is); RPD's draws are seeded.
    std::vector<std::int64_t> pipelineCounts(runs.size(), 0);
    for (size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].pipeline()) pipelineCounts[i] = noiseNormalsOf(config, runs[i], objective);
    }
    for (int s = 0; s < seeds; ++s) {
        const ExperimentConfig seeded = seededConfig(config, s);
        NumpyRandom stream(noiseFor(seeded).seed);
        for (size_t i = 0; i < runs.size(); ++i) {
            MethodRun& run = runs[i];
            const size_t steps = stepSizesOf(run.spec.step).size();
            const std::int64_t each = run.pipeline()
                                          ? pipelineCounts[i]
                                          : noiseNormalsOf(seeded, seededPlan(run, s), objective);
            for (size_t t = 0; t < steps; ++t) {
                run.noiseStarts.push_back(std::make_shared<const NumpyRandom>(stream));
                // Nothing comes after the seed's last run on its stream.
                if (i + 1 < runs.size() || t + 1 < steps) skipNormals(stream, each);
            }
        }
    }
}

}  // namespace pipelens

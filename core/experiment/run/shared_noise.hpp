#pragma once
// objective.noise_stream = shared (docs/config.md): the gradient noise of an experiment's runs
// comes from one generator per seed, as the authors' E4 driver drew it from the one objective it
// made per S. The runs are put in a fixed order (methods in config order, each method's step
// sizes ascending, one run for a fixed step size) and run j's generator starts where runs
// 0 ... j-1 leave default_rng(noise seed) after drawing all their normals one after another.
// What a run draws is known before it runs, so the runs still run side by side: each gets the
// generator advanced past the others' counts (a run that diverges would have stopped drawing;
// in the authors' code it keeps drawing, so the counts are always those of the whole run).
#include <cstdint>
#include <vector>

#include "experiment/run/experiment.hpp"

namespace pipelens {

// The normals a run of planned method `run` draws with gradient noise, the same for every step
// size: a pipeline method one block's worth per backward of its timeline (N x d for a whole
// run), RPD the sizes of blocks s_k ... S-1 for each update k (rpdNoiseNormals). `config` is
// the seed's (seededConfig), `run` the seed's plan (seededPlan).
std::int64_t noiseNormalsOf(const ExperimentConfig& config, const MethodRun& run,
                            const LinearObjective& objective);

// Fills each planned run's noiseStarts when config.objective.noiseStream is shared (does nothing
// otherwise): for seed s (0 ... seeds-1) the stream default_rng(noise seed of seed s), for step
// index t of method i the stream advanced past every normal of the runs before it in the order
// above; runs[i].noiseStarts[s * steps + t]. Advancing is drawing and discarding (NumPy's
// ziggurat takes a varying number of raw draws per normal): one pass over every normal the
// experiment's runs draw, minus each seed's last run's.
void placeSharedNoise(const ExperimentConfig& config, std::vector<MethodRun>& runs,
                      const LinearObjective& objective);

// Draws and discards `count` standard normals.
void skipNormals(NumpyRandom& rng, std::int64_t count);

}  // namespace pipelens

#pragma once
// The cost model behind `backend: auto` for the language model: how long one microbatch takes
// through every stage (forward and backward, SGD included) on the CPU engine and on an OpenCL
// device, measured for the run's width, heads, context, batch, vocabulary and precision, and
// kept in a cache file so each device is measured once per model shape.
//
// A cycle of S stages costs base + (S - 2) block: base (the embedding and the head) and block
// (one transformer block) come from timing PipeDream on S = 3 and S = 4 models. An experiment's
// methods run side by side: on the CPU engine each gets its share of the cores (the calibration
// times it on that many threads) and they share the wall time; on a device they share the
// device. So the predicted time is cycles (lmRunCycles) times the cycle cost, divided on the CPU
// by the runs that proceed at once; `auto` picks the smaller.
#include <optional>
#include <string>

#include "compute/lm_pipeline_executor.hpp"
#include "experiment/config/config.hpp"

namespace pipelens {

struct LmCycleCost {
    double base = 0.0;   // seconds: embedding + head, one microbatch forward and backward
    double block = 0.0;  // seconds: one transformer block, the same
    double cycle(int stages) const { return base + (stages - 2) * block; }
};

// Microbatch cycles of the whole experiment, counting every method, grid point and seed: a
// pipeline completes one microbatch per two slots; an RPD update is a forward through all
// stages and a backward down to the drawn one, about 3/4 of a cycle.
double lmRunCycles(const ExperimentConfig& config, long long trainBatches);

// Estimated floating-point work of the run, 6 x parameters x tokens per cycle (the threshold
// under which `auto` runs the CPU engine without measuring anything).
double lmRunFlops(const ExperimentConfig& config, long long trainBatches, long long parameters);

// Times `executor` (empty: the CPU engine, its ops split over `threads` threads) on PipeDream
// runs of S = 3 and S = 4 models of the config's shape, per microbatch: a short run first
// (warm-up), then one of about `seconds`.
LmCycleCost measureLmCycles(const ExperimentConfig& config, const LmExecutorFactory& executor,
                            double seconds = 0.3, int threads = 1);

// The cache file: $PIPELENS_CACHE_DIR, else $XDG_CACHE_HOME/pipelens, else
// $HOME/.cache/pipelens; lm-calibration.json there.
std::string lmCalibrationCachePath();
// The revision of the language-model engines' speed, part of every cache key: raised whenever a
// change makes the CPU engine or the OpenCL kernels faster or slower, so measurements made
// before it are taken again instead of reused (2: the OpenCL GELU on vectors of 8; 3: fused bias
// kernels, the float erf and the per-precision CLBlast parameters; 4: the blocks' products in
// CLBlast's copy-free form and float's 2 work-items along m; 5: a queue per stage, fused output
// gradient preparation, vector cross-entropy and embedding, and the calibration itself timing
// PipeDream pipelines, the CPU engine on its runs' threads).
inline constexpr int kLmEngineRevision = 5;
// The key of a measurement: the engines' revision, the backend's description (for OpenCL the
// device, the precision and the CLBlast parameters) and the model's shape.
std::string lmCalibrationKey(const ExperimentConfig& config, const std::string& backend);
std::optional<LmCycleCost> cachedLmCycles(const std::string& key);
// Written to a temporary name and renamed; a cache that cannot be written is only a notice.
bool storeLmCycles(const std::string& key, const LmCycleCost& cost, std::string* error = nullptr);

}  // namespace pipelens

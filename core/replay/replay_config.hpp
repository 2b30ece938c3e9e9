#pragma once
// What a replay is told, whatever the objective it runs on. The linear models' replays
// (pipeline_replay.hpp, rpd_replay.hpp) and the language model's (lm_pipeline_replay.hpp,
// lm_rpd_replay.hpp) extend these with what only they have (sampling and gradient noise; the
// language model's logs), and the experiment fills them in one place (experiment.hpp:
// fillPipelineConfig, fillRpdConfig).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compute/corrector.hpp"
#include "compute/optimizer.hpp"
#include "method.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

enum class DelayMode { Uniform, Max, Zero, PipeDream };
enum class StageOrder { Uniform, PipeDream };
DelayMode parseDelayMode(const std::string& text);
std::string delayModeName(DelayMode mode);
StageOrder parseStageOrder(const std::string& text);
std::string stageOrderName(StageOrder order);

// A pipeline method walking a slot timeline: PipeDream, LocalSGD, sequential SGD, fill-drain.
struct PipelineRunConfig {
    Method method = Method::PipeDream;  // any but RPD (a label: the timeline decides the order)
    std::string label;
    Timeline timeline;
    int replicas = 1;  // LocalSGD: R (microbatch m acts on replica m mod R)
    double stepSize = 0.1;
    // Each block update applies stepSize * stepScale * g: 1/G for fill-drain and 1/M (1/m) for
    // the synchronous steps of the program schedules, so a step applies the mean gradient.
    double stepScale = 1.0;
    std::vector<int> batchOf;  // data batch of each microbatch (empty: m mod M)
    // Per block update (docs/correctors.md). Not plain: a synchronous step (stepScale != 1)
    // applies it once to stepScale * (the step's gradient sum), with step size stepSize.
    OptimizerSpec optimizer;
    // Staleness correctors (compute/corrector.hpp); the experiment allows them only where
    // stepScale = 1 (each block update is a step of its own).
    CorrectorSpec correctors;
};

// Randomized PipeDream (SPEC section 4): K block updates with drawn delays and stage order.
struct RpdRunConfig {
    std::string label;
    long long updates = 100;  // K (PipeDream delays or order: at most the table's updates)
    double stepSize = 0.1;
    DelayMode delayMode = DelayMode::Uniform;
    long long maxDelay = 0;  // delta (ignored for DelayMode::PipeDream: the table's maximum)
    StageOrder order = StageOrder::Uniform;
    std::uint64_t seed = 0;
    // Needed for DelayMode::PipeDream or StageOrder::PipeDream.
    std::shared_ptr<const DelayTable> pipeDream;
    std::vector<int> batchOf;  // PD's batch schedule (data batch of each PD microbatch)
    OptimizerSpec optimizer;   // one optimizer step per update (docs/correctors.md)
    CorrectorSpec correctors;  // delay_adaptive and dc only (compute/corrector.hpp)
};

}  // namespace pipelens

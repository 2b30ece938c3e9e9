#pragma once
// The tiny language model the optimizer and corrector tests walk by hand (C = 4 or `width`,
// 2 heads, T = 4, b = 2, 600 built-in characters), its batch order, a block of its gradient
// taken straight from the model (every stage forward, backward down to the block), the CPU
// executors' run of it, the comparisons those suites make, and the same model as a config's
// objective (1,000 corpus characters) for the suites that go through the config.
#include <Eigen/Dense>
#include <algorithm>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "objective/lm/char_transformer.hpp"
#include "replay/lm_pipeline_replay.hpp"

namespace pipelens::test {

inline std::shared_ptr<const CharTransformerProblem> tinyLmProblem(
    int stages, LmPrecision precision = LmPrecision::Double, int width = 4) {
    CharTransformerParams p;
    p.stages = stages;
    p.width = width;
    p.heads = 2;
    p.context = 4;
    p.batch = 2;
    p.builtInCharacters = 600;
    p.initSeed = 3;
    p.precision = precision;
    return std::make_shared<const CharTransformerProblem>(makeCharTransformerProblem(p));
}

inline std::vector<int> lmBatchesOf(const CharTransformerProblem& p, int microbatches) {
    std::vector<int> out(static_cast<size_t>(microbatches));
    for (int m = 0; m < microbatches; ++m) out[static_cast<size_t>(m)] = m % p.train.batches();
    return out;
}

// The gradient of block `stage` of `batch`'s loss at the point whose block j is `point`'s
// block j.
inline Eigen::VectorXd lmStageGradient(const CharTransformerProblem& p,
                                       const Eigen::VectorXd& point, int stage, int batch) {
    CharTransformer<double> model(p.layout);
    std::vector<const double*> blocks;
    blocks.reserve(static_cast<size_t>(p.layout.stages()));
    for (int j = 0; j < p.layout.stages(); ++j)
        blocks.push_back(point.data() + p.layout.stage(j).offset);
    Eigen::VectorXd g(p.layout.stage(stage).size);
    model.lossAndStageGradient(blocks, p.train.tokens(batch), p.train.targets(batch), stage,
                               g.data());
    return g;
}

// The CPU executors' run of `cfg` on `p`, microbatch m on batch m % batches (lmBatchesOf);
// throws unless it finished.
inline std::unique_ptr<LmReplay> runTinyLmPipeline(
    const std::shared_ptr<const CharTransformerProblem>& p, LmPipelineConfig cfg) {
    cfg.batchOf = lmBatchesOf(*p, cfg.timeline.params.microbatches);
    auto run = makeLmPipelineReplay(p, std::move(cfg));
    run->runToEnd();
    if (!run->result().finished) throw std::runtime_error("the engine's run did not finish");
    return run;
}

// max |a - b| / max(1, max |b|).
inline double relError(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

inline bool sameBits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(double)) == 0;
}

// The config's "objective" for this model: C = 4, 2 heads, T = 4, 1,000 corpus characters.
inline nlohmann::json tinyLmObjectiveJson() {
    return {{"kind", "char_transformer"}, {"width", 4},       {"heads", 2}, {"context", 4},
            {"corpus_characters", 1000},  {"sample_lines", 0}};
}

}  // namespace pipelens::test

#pragma once
// The tiny language model the optimizer and corrector tests walk by hand (C = 4 or `width`,
// 2 heads, T = 4, b = 2, 600 built-in characters), its batch order, and a block of its
// gradient taken straight from the model (every stage forward, backward down to the block).
#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "objective/lm/char_transformer.hpp"

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

}  // namespace pipelens::test

#pragma once
// The small language model on the built-in corpus that the LM tests train: S = 4, C = 32,
// 2 heads, T = 16, b = 8, 24,000 characters with the last 10 % held out.
#include <memory>

#include "objective/lm/char_transformer.hpp"

inline std::shared_ptr<const pipelens::CharTransformerProblem> builtInProblem(
    pipelens::LmPrecision precision) {
    pipelens::CharTransformerParams p;
    p.stages = 4;
    p.width = 32;
    p.heads = 2;
    p.context = 16;
    p.batch = 8;
    p.builtInCharacters = 24'000;
    p.heldOutFraction = 0.1;
    p.initSeed = 1;
    p.precision = precision;
    return std::make_shared<const pipelens::CharTransformerProblem>(
        pipelens::makeCharTransformerProblem(p));
}

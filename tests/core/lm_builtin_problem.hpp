#pragma once
// The small language model on the built-in corpus that the LM tests train: S = 4, C = 32,
// 2 heads, T = 16, b = 8, 24,000 characters (or `characters`) with the last 10 % (or
// `heldOut`) held out.
#include <memory>

#include "objective/lm/char_transformer.hpp"

inline std::shared_ptr<const pipelens::CharTransformerProblem> builtInProblem(
    pipelens::LmPrecision precision, long long characters = 24'000, double heldOut = 0.1) {
    pipelens::CharTransformerParams p;
    p.stages = 4;
    p.width = 32;
    p.heads = 2;
    p.context = 16;
    p.batch = 8;
    p.builtInCharacters = characters;
    p.heldOutFraction = heldOut;
    p.initSeed = 1;
    p.precision = precision;
    return std::make_shared<const pipelens::CharTransformerProblem>(
        pipelens::makeCharTransformerProblem(p));
}

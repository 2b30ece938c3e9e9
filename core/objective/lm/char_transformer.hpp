#pragma once
// Everything a language-model run needs before it starts, built from one parameter struct (what
// a config's `objective.kind: "char_transformer"` will hold): the corpus and its batches (plus an
// optional held-out part), the model's sizes and layout, and the initial weights.
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "data/text_corpus.hpp"
#include "objective/lm/lm_layout.hpp"

namespace pipelens {

enum class LmPrecision { Double, Float };
std::string lmPrecisionName(LmPrecision precision);

struct CharTransformerParams {
    int stages = 4;
    int width = 64;
    int heads = 4;
    int context = 32;
    int batch = 16;
    std::string corpusPath;        // empty: the built-in corpus
    std::uint64_t corpusSeed = 0;  // the built-in corpus's seed
    long long builtInCharacters = 200'000;
    double heldOutFraction = 0.0;  // > 0: the corpus's last part is held out from training
    std::string w0Path;            // non-empty: initial weights from this .npy
    std::uint64_t initSeed = 0;    // otherwise: seeded initialisation
    LmPrecision precision = LmPrecision::Double;
    // Called once the layout is known and before the weights are allocated, so a caller can
    // refuse a model that would not fit in memory without having allocated any of it.
    std::function<void(const LmLayout&)> beforeWeights;
};

struct CharTransformerProblem {
    CharTransformerParams params;
    TextCorpus corpus;   // the whole corpus (vocabulary from all of it)
    TokenBatches train;  // the dataset batches (M of them)
    std::optional<TokenBatches> heldOut;
    LmLayout layout;
    Eigen::VectorXd w0;  // in double; float runs round it once
};

// Loads or generates the corpus, sizes the model from it and makes w0. Throws ConfigError or
// DataError naming the bad field or file.
CharTransformerProblem makeCharTransformerProblem(const CharTransformerParams& params);

// PyTorch's default distributions for these layers, drawn from LmRandom(seed) in layout order:
// embeddings ~ N(0, 1); linear weights and biases ~ U(-1/sqrt(in), 1/sqrt(in)); LayerNorm
// weight 1, bias 0. The stream is not PyTorch's: use a w0 file to match its numbers.
Eigen::VectorXd seededLmInit(const LmLayout& layout, std::uint64_t seed);

// A flat float64/float32 .npy vector in layout order; its length must be the layout's size.
Eigen::VectorXd loadLmWeights(const std::string& path, const LmLayout& layout);

}  // namespace pipelens

#include "objective/lm/char_transformer.hpp"

#include <cmath>
#include <sstream>

#include "data/loaders.hpp"
#include "errors.hpp"
#include "objective/lm/lm_random.hpp"

namespace pipelens {

std::string lmPrecisionName(LmPrecision precision) {
    return precision == LmPrecision::Double ? "double" : "float";
}

Eigen::VectorXd seededLmInit(const LmLayout& layout, std::uint64_t seed) {
    LmRandom rng(seed);
    Eigen::VectorXd w(layout.size());
    for (int s = 0; s < layout.stages(); ++s) {
        for (const LmTensor& t : layout.stage(s).tensors) {
            auto span = w.segment(t.offset, t.numel);
            const bool isWeight = t.name.ends_with(".weight");
            if (t.name.starts_with("tok_emb") || t.name.starts_with("pos_emb")) {
                for (auto& v : span) v = rng.normal();
            } else if (t.name.starts_with("ln_")) {
                span.setConstant(isWeight ? 1.0 : 0.0);
            } else {
                // A linear layer's fan-in: the weight's second dimension (the bias shares it).
                const int in =
                    t.name.starts_with("mlp.2") ? 4 * layout.dims().width : layout.dims().width;
                const double bound = 1.0 / std::sqrt(static_cast<double>(in));
                for (auto& v : span) v = (2.0 * rng.uniform() - 1.0) * bound;
            }
        }
    }
    return w;
}

Eigen::VectorXd loadLmWeights(const std::string& path, const LmLayout& layout) {
    Eigen::VectorXd w = loadNpyVector(path);
    if (w.size() != layout.size()) {
        const LmDims& d = layout.dims();
        std::ostringstream s;
        s << "initial weights \"" << path << "\" have " << w.size() << " values, the model needs "
          << layout.size() << " (S = " << d.stages << ", C = " << d.width << ", T = " << d.context
          << ", V = " << d.vocab << " in the documented parameter order)";
        throw DataError(s.str());
    }
    return w;
}

CharTransformerProblem makeCharTransformerProblem(const CharTransformerParams& params) {
    CharTransformerProblem p;
    p.params = params;
    p.corpus = params.corpusPath.empty()
                   ? builtInCorpus(params.corpusSeed, params.builtInCharacters)
                   : loadTextCorpus(params.corpusPath);
    LmDims dims{params.stages,  params.width, params.heads,
                params.context, params.batch, p.corpus.vocabSize()};
    p.layout = LmLayout(dims);
    if (params.beforeWeights) params.beforeWeights(p.layout);
    if (params.heldOutFraction > 0.0) {
        auto [train, held] = splitHeldOut(p.corpus, params.heldOutFraction);
        p.train = TokenBatches(train, params.batch, params.context);
        p.heldOut = TokenBatches(held, params.batch, params.context);
    } else {
        p.train = TokenBatches(p.corpus, params.batch, params.context);
    }
    p.w0 = params.w0Path.empty() ? seededLmInit(p.layout, params.initSeed)
                                 : loadLmWeights(params.w0Path, p.layout);
    return p;
}

}  // namespace pipelens

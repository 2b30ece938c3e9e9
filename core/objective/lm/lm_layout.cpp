#include "objective/lm/lm_layout.hpp"

#include "errors.hpp"
#include "limits.hpp"

namespace pipelens {

namespace {

void requireRange(const std::string& field, int value, int lo, int hi, const std::string& what) {
    if (value < lo || value > hi) {
        throw ConfigError(field + " = " + std::to_string(value) + " is not allowed: " + what);
    }
}

}  // namespace

void validateLmDims(const LmDims& d) {
    requireRange("stages", d.stages, 3, kMaxStages,
                 std::string("an integer in [3, ")
                     .append(std::to_string(kMaxStages))
                     .append("] (embedding, blocks, head)"));
    requireRange("width", d.width, 1, 65536, "an integer in [1, 65536]");
    requireRange("heads", d.heads, 1, d.width, "an integer in [1, width] that divides width");
    if (d.width % d.heads != 0) {
        throw ConfigError("heads = " + std::to_string(d.heads) +
                          " is not allowed: it must divide width = " + std::to_string(d.width));
    }
    requireRange("context", d.context, 1, 65536, "an integer in [1, 65536]");
    requireRange("batch_size", d.batch, 1, 1 << 20, "an integer in [1, 1048576]");
    requireRange("vocabulary size", d.vocab, 1, 1 << 21, "between 1 and 2097152 characters");
}

LmBlockOffsets::LmBlockOffsets(int width) {
    const long long C = width;
    long long at = 0;
    auto take = [&at](long long n) {
        const long long o = at;
        at += n;
        return o;
    };
    ln1Weight = take(C);
    ln1Bias = take(C);
    attnWeight = take(3 * C * C);
    attnBias = take(3 * C);
    projWeight = take(C * C);
    projBias = take(C);
    ln2Weight = take(C);
    ln2Bias = take(C);
    fcWeight = take(4 * C * C);
    fcBias = take(4 * C);
    outWeight = take(4 * C * C);
    outBias = take(C);
    size = at;
}

long long LmLayout::embeddingSize(const LmDims& d) {
    return static_cast<long long>(d.vocab + d.context) * d.width;
}
long long LmLayout::blockSize(const LmDims& d) {
    return LmBlockOffsets(d.width).size;
}
long long LmLayout::headSize(const LmDims& d) {
    return static_cast<long long>(d.vocab + 2) * d.width;
}

LmLayout::LmLayout(const LmDims& dims) : dims_(dims) {
    validateLmDims(dims);
    const int C = dims.width;
    const int V = dims.vocab;
    long long at = 0;
    auto stageOf = [&at](LmStageKind kind,
                         const std::vector<std::pair<std::string, std::vector<int>>>& tensors) {
        LmStageLayout st;
        st.kind = kind;
        st.offset = at;
        for (const auto& [name, shape] : tensors) {
            long long n = 1;
            for (int e : shape) n *= e;
            st.tensors.push_back({name, shape, at, n});
            at += n;
        }
        st.size = at - st.offset;
        return st;
    };
    stages_.push_back(stageOf(LmStageKind::Embedding,
                              {{"tok_emb.weight", {V, C}}, {"pos_emb.weight", {dims.context, C}}}));
    for (int s = 1; s + 1 < dims.stages; ++s) {
        stages_.push_back(stageOf(LmStageKind::Block, {{"ln_1.weight", {C}},
                                                       {"ln_1.bias", {C}},
                                                       {"attn.c_attn.weight", {3 * C, C}},
                                                       {"attn.c_attn.bias", {3 * C}},
                                                       {"attn.c_proj.weight", {C, C}},
                                                       {"attn.c_proj.bias", {C}},
                                                       {"ln_2.weight", {C}},
                                                       {"ln_2.bias", {C}},
                                                       {"mlp.0.weight", {4 * C, C}},
                                                       {"mlp.0.bias", {4 * C}},
                                                       {"mlp.2.weight", {C, 4 * C}},
                                                       {"mlp.2.bias", {C}}}));
    }
    stages_.push_back(stageOf(
        LmStageKind::Head, {{"ln_f.weight", {C}}, {"ln_f.bias", {C}}, {"lm_head.weight", {V, C}}}));
    size_ = at;
}

}  // namespace pipelens

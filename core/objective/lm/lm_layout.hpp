#pragma once
// Sizes and the flat parameter layout of the character transformer (SPEC section 1, objective 3;
// ../shared/golden-lm/README.md, "Parameter order"). All parameters live in one flat buffer:
// stage 0's tensors, then stage 1's, ...; each tensor row-major in PyTorch's shape (a linear
// layer's weight is [out, in]). Each stage's tensors are one contiguous block, the pipeline block.
#include <string>
#include <vector>

namespace pipelens {

struct LmDims {
    int stages = 4;  // S >= 3: embedding, S - 2 transformer blocks, head
    int width = 64;  // C, a multiple of heads
    int heads = 4;
    int context = 32;  // T: tokens per sequence (the position table has exactly T rows)
    int batch = 16;    // b: sequences per microbatch
    int vocab = 0;     // V: from the corpus

    int headDim() const { return width / heads; }
    int tokens() const { return batch * context; }  // N = b T rows per microbatch
};

// Throws ConfigError naming the field when a size is out of range.
void validateLmDims(const LmDims& dims);

enum class LmStageKind { Embedding, Block, Head };

struct LmTensor {
    std::string name;        // PyTorch's name, e.g. "attn.c_attn.weight"
    std::vector<int> shape;  // PyTorch's shape
    long long offset = 0;    // in the flat vector
    long long numel = 0;
};

struct LmStageLayout {
    LmStageKind kind = LmStageKind::Block;
    long long offset = 0;
    long long size = 0;
    std::vector<LmTensor> tensors;
};

class LmLayout {
  public:
    LmLayout() = default;  // empty: no stages
    explicit LmLayout(const LmDims& dims);
    const LmDims& dims() const { return dims_; }
    int stages() const { return static_cast<int>(stages_.size()); }
    const LmStageLayout& stage(int s) const { return stages_[static_cast<std::size_t>(s)]; }
    long long size() const { return size_; }

    // Sizes of one stage's block: V C + T C; 12 C^2 + 13 C; 2 C + V C.
    static long long embeddingSize(const LmDims& d);
    static long long blockSize(const LmDims& d);
    static long long headSize(const LmDims& d);

  private:
    LmDims dims_;
    std::vector<LmStageLayout> stages_;
    long long size_ = 0;
};

// Offsets inside one transformer block's parameters, in layout order.
struct LmBlockOffsets {
    long long ln1Weight, ln1Bias, attnWeight, attnBias, projWeight, projBias;
    long long ln2Weight, ln2Bias, fcWeight, fcBias, outWeight, outBias, size;
    explicit LmBlockOffsets(int width);
};

}  // namespace pipelens

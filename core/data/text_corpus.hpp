#pragma once
// A character-level corpus for the language model (SPEC section 1, objective 3): any UTF-8 text
// file, or a built-in text the project generates itself. The vocabulary is the sorted set of the
// text's code points; batches are consecutive b x T chunks whose targets are the same window
// shifted by one character (../shared/golden-lm/README.md, "Data").
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipelens {

struct TextCorpus {
    std::string source;    // the file path, or a description of the built-in text
    std::u32string vocab;  // distinct code points, ascending
    std::vector<int> ids;  // the text as token ids (positions in vocab)

    int vocabSize() const { return static_cast<int>(vocab.size()); }
    long long length() const { return static_cast<long long>(ids.size()); }
    // The vocabulary as UTF-8 (for messages, files and comparisons with case.json).
    std::string vocabUtf8() const;
};

// Decodes strict UTF-8 (no overlong forms, surrogates or code points above U+10FFFF); a leading
// byte-order mark is dropped and CRLF / CR line ends become LF (as the authors' loader does).
// Throws DataError naming `source` for text that is empty, contains NUL bytes (a binary file) or
// is not valid UTF-8 (with the byte offset of the first bad byte).
TextCorpus corpusFromUtf8(std::string_view bytes, const std::string& source);
// Reads a file and decodes it as above (DataError if it is missing or unreadable).
TextCorpus loadTextCorpus(const std::string& path);

// A seeded text from a small grammar (subjects, verbs, objects, adverbs, punctuation, line and
// paragraph breaks) of at least `characters` characters. Its words repeat with structure, so a
// small model's loss falls well below log(vocabulary). Same seed, same text, on every platform.
TextCorpus builtInCorpus(std::uint64_t seed = 0, long long characters = 200'000);

// The training batches of a corpus: M = floor((len - 1) / (b T)) consecutive, non-overlapping
// windows; batch i has tokens ids[i b T, (i+1) b T) as [b, T] rows and targets one further on.
class TokenBatches {
  public:
    TokenBatches() = default;
    // Throws DataError (naming the corpus source and how many characters one batch needs) when
    // the corpus is shorter than b T + 1 characters; ConfigError for b or T < 1.
    TokenBatches(const TextCorpus& corpus, int batchSize, int context);

    int batches() const { return batches_; }
    int batchSize() const { return batchSize_; }
    int context() const { return context_; }
    int tokensPerBatch() const { return batchSize_ * context_; }
    // Row-major [b, T] token ids and targets of batch i (pointers into the corpus's ids).
    const int* tokens(int batch) const { return ids_.data() + offset(batch); }
    const int* targets(int batch) const { return ids_.data() + offset(batch) + 1; }

  private:
    std::size_t offset(int batch) const;

    std::vector<int> ids_;  // a copy: batches outlive the corpus they came from
    int batches_ = 0;
    int batchSize_ = 0;
    int context_ = 0;
};

// Splits a corpus into a training part (the first 1 - heldOutFraction of its characters) and a
// held-out part (the rest); both keep the whole corpus's vocabulary, so token ids agree.
std::pair<TextCorpus, TextCorpus> splitHeldOut(const TextCorpus& corpus, double heldOutFraction);

// Encodes code points as UTF-8.
std::string utf8Encode(std::u32string_view text);

}  // namespace pipelens

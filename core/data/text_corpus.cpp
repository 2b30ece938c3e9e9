#include "data/text_corpus.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "objective/lm/lm_random.hpp"
#include "util/input_file.hpp"

namespace pipelens {

namespace {

std::string hexByte(unsigned char c) {
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

[[noreturn]] void notText(const std::string& source, const std::string& what) {
    throw DataError("text corpus " + source + " " + what + ": a corpus must be a UTF-8 text file");
}

// Decodes one strict UTF-8 sequence at bytes[i]; returns its length, or 0 if it is invalid.
int decodeOne(std::string_view bytes, std::size_t i, char32_t& cp) {
    const auto b0 = static_cast<unsigned char>(bytes[i]);
    int len = 0;
    char32_t min = 0;
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    } else if ((b0 & 0xE0) == 0xC0) {
        len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (i + static_cast<std::size_t>(len) > bytes.size()) return 0;
    for (int k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(bytes[i + static_cast<std::size_t>(k)]);
        if ((b & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b & 0x3F);
    }
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (cp < min || cp > 0x10FFFF || surrogate) return 0;  // overlong, out of range, surrogate
    return len;
}

}  // namespace

std::string utf8Encode(std::u32string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t c : text) {
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return out;
}

std::string TextCorpus::vocabUtf8() const {
    return utf8Encode(vocab);
}

TextCorpus corpusFromUtf8(std::string_view bytes, const std::string& source) {
    if (bytes.empty()) {
        throw DataError("text corpus " + source + " is empty: it needs at least one batch of text");
    }
    std::size_t i = 0;
    if (bytes.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // byte-order mark
    std::u32string text;
    text.reserve(bytes.size());
    for (; i < bytes.size();) {
        if (bytes[i] == '\0') {
            notText(source,
                    "contains a NUL byte at offset " + std::to_string(i) + " (a binary file?)");
        }
        char32_t cp = 0;
        const int len = decodeOne(bytes, i, cp);
        if (len == 0) {
            notText(source, "is not valid UTF-8: byte " +
                                hexByte(static_cast<unsigned char>(bytes[i])) + " at offset " +
                                std::to_string(i) + " does not start a valid character");
        }
        i += static_cast<std::size_t>(len);
        if (cp == U'\r') {  // CRLF and lone CR become LF, as the authors' loader does
            cp = U'\n';
            if (i < bytes.size() && bytes[i] == '\n') ++i;
        }
        text += cp;
    }
    if (text.empty()) {
        throw DataError("text corpus " + source + " is empty: it needs at least one batch of text");
    }
    TextCorpus corpus;
    corpus.source = source;
    corpus.vocab = text;
    std::sort(corpus.vocab.begin(), corpus.vocab.end());
    corpus.vocab.erase(std::unique(corpus.vocab.begin(), corpus.vocab.end()), corpus.vocab.end());
    corpus.ids.resize(text.size());
    for (std::size_t k = 0; k < text.size(); ++k) {
        corpus.ids[k] =
            static_cast<int>(std::lower_bound(corpus.vocab.begin(), corpus.vocab.end(), text[k]) -
                             corpus.vocab.begin());
    }
    return corpus;
}

TextCorpus loadTextCorpus(const std::string& path) {
    // Appended, not "\"" + escapeBytes(...): GCC 12's false -Wrestrict (see loader_support.cpp).
    std::string named = "\"";
    named += escapeBytes(path, 1024);
    named += '"';
    // A FIFO or a device (/dev/zero) is refused before any read; the bytes read are capped
    // (the text is held again as 32-bit characters and ids, hence an eighth of the memory).
    const std::uint64_t cap = memoryLimitBytes() / 8;
    const std::string bytes =
        readInputFile(path, "text corpus", &throwAs<DataError>, cap,
                      "a text corpus may use at most an eighth of the " +
                          formatBytes(memoryLimitBytes()) + " of memory PipeLens may use");
    return corpusFromUtf8(bytes, named);
}

TextCorpus builtInCorpus(std::uint64_t seed, long long characters) {
    // A play-like text: a speaker's name, then one to three sentences of a tiny grammar.
    static const std::array<const char*, 6> speakers = {"ANNA",   "BORIS", "CLARA",
                                                        "DMITRI", "ELENA", "FYODOR"};
    static const std::array<const char*, 8> subjects = {
        "the cat",      "a dog",      "my old friend", "the king",
        "a small bird", "the farmer", "her sister",    "the miller"};
    static const std::array<const char*, 7> verbs = {"sees",    "likes",     "follows", "finds",
                                                     "watches", "remembers", "calls"};
    static const std::array<const char*, 8> objects = {
        "the river",     "a red apple", "the green hill", "his horse",
        "the tall tree", "our village", "the quiet sea",  "a warm fire"};
    static const std::array<const char*, 6> endings = {"",          " slowly", " today",
                                                       " at night", " again",  " with joy"};
    LmRandom rng(seed);
    auto pick = [&rng](const auto& list) {
        return std::string(list[static_cast<std::size_t>(rng.below(list.size()))]);
    };
    std::string text;
    while (static_cast<long long>(text.size()) < characters) {
        text += pick(speakers) + ":\n";
        const auto sentences = 1 + rng.below(3);
        for (std::uint64_t k = 0; k < sentences; ++k) {
            std::string sentence =
                pick(subjects) + " " + pick(verbs) + " " + pick(objects) + pick(endings);
            sentence[0] = static_cast<char>(sentence[0] - 'a' + 'A');
            text += sentence + (rng.below(4) == 0 ? "!" : ".");
            text += k + 1 < sentences ? " " : "\n";
        }
        text += "\n";
    }
    std::ostringstream name;
    name << "(built-in text, seed " << seed << ", " << text.size() << " characters)";
    return corpusFromUtf8(text, name.str());
}

std::pair<TextCorpus, TextCorpus> splitHeldOut(const TextCorpus& corpus, double heldOutFraction) {
    if (!(heldOutFraction > 0.0 && heldOutFraction < 1.0)) {
        std::ostringstream s;
        s << "held_out_fraction = " << heldOutFraction << " is not allowed: a number in (0, 1)";
        throw ConfigError(s.str());
    }
    const auto n = corpus.ids.size();
    const auto cut =
        static_cast<std::size_t>(std::llround(static_cast<double>(n) * (1.0 - heldOutFraction)));
    TextCorpus train = corpus;
    TextCorpus held = corpus;
    train.ids.assign(corpus.ids.begin(), corpus.ids.begin() + static_cast<std::ptrdiff_t>(cut));
    held.ids.assign(corpus.ids.begin() + static_cast<std::ptrdiff_t>(cut), corpus.ids.end());
    train.source += " (training part)";
    held.source += " (held-out part)";
    return {std::move(train), std::move(held)};
}

TokenBatches::TokenBatches(const TextCorpus& corpus, int batchSize, int context)
    : batchSize_(batchSize), context_(context) {
    if (batchSize < 1) {
        throw ConfigError("batch_size = " + std::to_string(batchSize) +
                          " is not allowed: an integer >= 1");
    }
    if (context < 1) {
        throw ConfigError("context = " + std::to_string(context) +
                          " is not allowed: an integer >= 1");
    }
    const long long perBatch = static_cast<long long>(batchSize) * context;
    if (corpus.length() < perBatch + 1) {
        throw DataError("text corpus " + corpus.source + " has " + std::to_string(corpus.length()) +
                        " characters, too short for one batch: " + "batch_size x context = " +
                        std::to_string(batchSize) + " x " + std::to_string(context) +
                        " needs at least " + std::to_string(perBatch + 1) + " characters");
    }
    batches_ = static_cast<int>(std::min<long long>((corpus.length() - 1) / perBatch, 1 << 30));
    ids_ = corpus.ids;
}

std::size_t TokenBatches::offset(int batch) const {
    return static_cast<std::size_t>(batch) * static_cast<std::size_t>(tokensPerBatch());
}

}  // namespace pipelens

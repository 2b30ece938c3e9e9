// libFuzzer target: the language model's text corpus reader (strict UTF-8, BOM, CR/CRLF) on
// arbitrary bytes, then batching the decoded text; the vocabulary must round-trip as UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "data/text_corpus.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    pipelens::fuzz::expectTypedErrorsOnly([&] {
        const pipelens::TextCorpus corpus = pipelens::corpusFromUtf8(bytes, "fuzz.txt");
        for (int id : corpus.ids) {
            if (id < 0 || id >= corpus.vocabSize()) std::abort();
        }
        // Every code point of the vocabulary decodes back to itself. A leading BOM is read as a
        // byte order mark, not text, so one goes first: a vocabulary can start with U+FEFF.
        const std::string vocabText = "\xEF\xBB\xBF" + corpus.vocabUtf8();
        if (pipelens::corpusFromUtf8(vocabText, "vocab").vocab != corpus.vocab) std::abort();
        (void)pipelens::TokenBatches(corpus, 2, 3);
    });
    return 0;
}

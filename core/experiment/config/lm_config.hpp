#pragma once
// The keys of `objective.kind: "char_transformer"` (docs/config.md, docs/language-model.md): the
// language model's sizes, its corpus, held-out evaluation, initial weights and text samples. S
// comes from the experiment's `stages`, b from `batch_size`, the precision from `precision`.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace pipelens {

class ObjectReader;
struct ExperimentConfig;
struct CharTransformerParams;

struct LanguageModelSpec {
    int width = 64;  // C
    int heads = 4;
    int context = 32;              // T
    std::string corpus;            // a UTF-8 text file; empty: the built-in corpus
    std::uint64_t corpusSeed = 1;  // the built-in corpus's seed
    long long corpusCharacters = 200'000;
    double heldOutFraction = 0.0;  // the corpus's last part, kept out of training
    long long heldOutEvery = 0;    // held-out loss every this many block updates (0: never)
    std::string w0;                // a .npy of initial weights; empty: seeded
    std::uint64_t initSeed = 1;    // the seeded initialisation's seed
    bool fullObjective = false;    // the mean loss over all batches after every slot/update
    int sampleLines = 3;           // samples.txt: lines per method (0: none)
    int sampleLength = 200;        // characters per line
    double sampleTemperature = 1.0;

    bool operator==(const LanguageModelSpec&) const = default;
};

// Reads the keys after `kind` (the reader is objective's); `seed` is the experiment's, the
// default of the corpus and init seeds.
LanguageModelSpec readLanguageModel(ObjectReader& objective, std::uint64_t seed);
// The objective's JSON (kind included): readLanguageModel reads it back to the same spec.
nlohmann::json languageModelJson(const LanguageModelSpec& spec);

// Refuses (ConfigError naming the key) a `data` object in a language model's config: the corpus
// is objective.corpus. `json` is the config as read.
void refuseLinearOnlyKeys(const nlohmann::json& json);
// Every key's range (field_limits.hpp), the sizes' checks (S >= 3, heads divide C, ...), the
// held-out settings, and what the linear models have and the language model does not
// (`shuffle: true`, `seeds` > 1, gradient norms, `objective_per_update: false`, the sgd and
// fill-drain methods), before any corpus is read.
void validateLanguageModel(const ExperimentConfig& config);

// What the engine needs (relative paths resolved against the config's folder).
CharTransformerParams charTransformerParams(const ExperimentConfig& config);

}  // namespace pipelens

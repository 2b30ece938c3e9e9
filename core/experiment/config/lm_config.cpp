#include "experiment/config/lm_config.hpp"

#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/config/field_limits.hpp"
#include "experiment/config/object_reader.hpp"
#include "experiment/run/budget_checks.hpp"
#include "experiment/run/run_work.hpp"
#include "objective/lm/char_transformer.hpp"

namespace pipelens {
using nlohmann::json;

namespace {

constexpr const char* kWith = " is not allowed with objective.kind = char_transformer: ";

}  // namespace

LanguageModelSpec readLanguageModel(ObjectReader& o, std::uint64_t seed) {
    // The linear losses' keys get a message of their own rather than "unknown key".
    for (const char* key : {"l2", "gradient_noise", "noise_seed", "noise_stream"}) {
        if (o.has(key)) {
            throw ConfigError(o.field(key) + " = " + showConfigValue(o.at(key)) + kWith +
                              "the language model has no regulariser and no gradient noise; "
                              "remove the key");
        }
    }
    LanguageModelSpec m;
    m.width = static_cast<int>(o.integer("width", 64, limits::kWidth));
    m.heads = static_cast<int>(o.integer("heads", 4, limits::kHeads));
    m.context = static_cast<int>(o.integer("context", 32, limits::kContext));
    m.corpus = o.text("corpus", "");
    m.corpusSeed = static_cast<std::uint64_t>(
        o.integer("corpus_seed", static_cast<long long>(seed), limits::kSeed));
    m.corpusCharacters = o.integer("corpus_characters", 200'000, limits::kCorpusCharacters);
    m.heldOutFraction = o.number("held_out_fraction", 0.0, limits::kHeldOutFraction);
    m.heldOutEvery = o.integer("held_out_every", 0, limits::kHeldOutEvery);
    m.w0 = o.text("w0", "");
    m.initSeed = static_cast<std::uint64_t>(
        o.integer("init_seed", static_cast<long long>(seed), limits::kSeed));
    m.fullObjective = o.boolean("full_objective", false);
    m.sampleLines = static_cast<int>(o.integer("sample_lines", 3, limits::kSampleLines));
    m.sampleLength = static_cast<int>(o.integer("sample_length", 200, limits::kSampleLength));
    m.sampleTemperature = o.number("sample_temperature", 1.0, limits::kSampleTemperature);
    return m;
}

json languageModelJson(const LanguageModelSpec& m) {
    json j{{"kind", "char_transformer"},
           {"width", m.width},
           {"heads", m.heads},
           {"context", m.context},
           {"corpus_seed", m.corpusSeed},
           {"corpus_characters", m.corpusCharacters},
           {"held_out_fraction", m.heldOutFraction},
           {"held_out_every", m.heldOutEvery},
           {"init_seed", m.initSeed},
           {"full_objective", m.fullObjective},
           {"sample_lines", m.sampleLines},
           {"sample_length", m.sampleLength},
           {"sample_temperature", m.sampleTemperature}};
    if (!m.corpus.empty()) j["corpus"] = m.corpus;
    if (!m.w0.empty()) j["w0"] = m.w0;
    return j;
}

void refuseLinearOnlyKeys(const json& j) {
    if (j.contains("data")) {
        throw ConfigError(std::string("data") + kWith +
                          "the corpus is objective.corpus (or the built-in corpus)");
    }
}

namespace {

void checkLanguageModelFields(const LanguageModelSpec& m) {
    requireWithin("objective.width", static_cast<long long>(m.width), limits::kWidth);
    requireWithin("objective.heads", static_cast<long long>(m.heads), limits::kHeads);
    requireWithin("objective.context", static_cast<long long>(m.context), limits::kContext);
    requireWithin("objective.corpus_seed", m.corpusSeed, limits::kSeed);
    requireWithin("objective.corpus_characters", m.corpusCharacters, limits::kCorpusCharacters);
    requireWithin("objective.held_out_fraction", m.heldOutFraction, limits::kHeldOutFraction);
    requireWithin("objective.held_out_every", m.heldOutEvery, limits::kHeldOutEvery);
    requireWithin("objective.init_seed", m.initSeed, limits::kSeed);
    requireWithin("objective.sample_lines", static_cast<long long>(m.sampleLines),
                  limits::kSampleLines);
    requireWithin("objective.sample_length", static_cast<long long>(m.sampleLength),
                  limits::kSampleLength);
    requireWithin("objective.sample_temperature", m.sampleTemperature, limits::kSampleTemperature);
    if (m.heldOutEvery > 0 && m.heldOutFraction == 0.0) {
        throw ConfigError("objective.held_out_every = " + std::to_string(m.heldOutEvery) +
                          " is not allowed with held_out_fraction = 0: set held_out_fraction > 0 "
                          "(the part of the corpus to evaluate) or held_out_every = 0");
    }
}

// What the linear models have and the language model does not.
void refuseLinearOnlySettings(const ExperimentConfig& c) {
    if (c.shuffle) {
        throw ConfigError(std::string("shuffle = true") + kWith +
                          "batches are consecutive windows of the corpus, microbatch j uses "
                          "batch j mod M (false)");
    }
    if (c.seeds != 1) {
        throw ConfigError("seeds = " + std::to_string(c.seeds) + kWith +
                          "1 (one run per step size; change objective.init_seed instead)");
    }
    if (c.sampling.gradNormEvery != 0) {
        throw ConfigError("sampling.grad_norm_every = " + std::to_string(c.sampling.gradNormEvery) +
                          kWith +
                          "0 (the full gradient norm is not computed for the language model)");
    }
    if (!c.sampling.objectivePerUpdate) {
        throw ConfigError(std::string("sampling.objective_per_update = false") + kWith +
                          "true (the forward loss of every update is always logged)");
    }
}

}  // namespace

void validateLanguageModel(const ExperimentConfig& c) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    checkLanguageModelFields(m);
    refuseLinearOnlySettings(c);
    LmDims dims{c.stages, m.width, m.heads, m.context, c.batchSize, 1};
    try {
        validateLmDims(dims);
    } catch (const ConfigError& e) {
        // validateLmDims names the engine's field; say where it is in the config.
        const std::string what = e.what();
        const bool top = what.starts_with("stages") || what.starts_with("batch_size");
        throw ConfigError(top ? what : "objective." + what);
    }
    for (size_t i = 0; i < c.methods.size(); ++i) {
        const Method method = c.methods[i].method;
        if (method == Method::Interleaved) {
            throw ConfigError("methods[" + std::to_string(i) + "].method = \"interleaved\"" +
                              kWith +
                              "the language model is split into `stages` blocks (embedding "
                              "first, head last), not into stages x virtual_stages chunks; use "
                              "pd, rpd, localsgd, 1f1b, zb-h1, 2bw or imported");
        }
        if (method == Method::Sgd || method == Method::FillDrain) {
            throw ConfigError("methods[" + std::to_string(i) + "].method = \"" +
                              methodName(method) + "\"" + kWith +
                              "pd, rpd, localsgd, 1f1b, zb-h1, 2bw or imported");
        }
    }
}

CharTransformerParams charTransformerParams(const ExperimentConfig& c) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    CharTransformerParams p;
    p.stages = c.stages;
    p.width = m.width;
    p.heads = m.heads;
    p.context = m.context;
    p.batch = c.batchSize;
    p.corpusPath = m.corpus.empty() ? "" : resolveDataPath(c, m.corpus);
    p.corpusSeed = m.corpusSeed;
    p.builtInCharacters = m.corpusCharacters;
    p.heldOutFraction = m.heldOutFraction;
    p.w0Path = m.w0.empty() ? "" : resolveDataPath(c, m.w0);
    p.initSeed = m.initSeed;
    p.precision = c.precision == Precision::Float ? LmPrecision::Float : LmPrecision::Double;
    // Every method's replicas, for the memory check made before the weights are allocated.
    std::vector<int> replicas;
    for (const MethodSpec& method : c.methods) {
        const bool local = method.method == Method::LocalSgd;
        replicas.push_back(local ? replicasFor(method, c.stages) : 1);
    }
    const int realBytes = p.precision == LmPrecision::Float ? 4 : 8;
    p.beforeWeights = [replicas, realBytes](const LmLayout& layout) {
        requireLmMemory(layout, realBytes, replicas);
    };
    return p;
}

}  // namespace pipelens

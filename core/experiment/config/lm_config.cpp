#include "experiment/config/lm_config.hpp"

#include "errors.hpp"
#include "experiment/config/config.hpp"
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
    for (const char* key : {"l2", "gradient_noise", "noise_seed"}) {
        if (o.has(key)) {
            throw ConfigError(o.field(key) + " = " + showConfigValue(o.at(key)) + kWith +
                              "the language model has no regulariser and no gradient noise; "
                              "remove the key");
        }
    }
    LanguageModelSpec m;
    const auto big = kConfigBig;
    m.width = static_cast<int>(o.integer("width", 64, 1, 65536, "an integer in [1, 65536] (C)"));
    m.heads = static_cast<int>(
        o.integer("heads", 4, 1, 65536, "an integer in [1, 65536] that divides width"));
    m.context =
        static_cast<int>(o.integer("context", 32, 1, 65536, "an integer in [1, 65536] (T)"));
    m.corpus = o.text("corpus", "");
    m.corpusSeed =
        static_cast<std::uint64_t>(o.integer("corpus_seed", static_cast<long long>(seed), 0,
                                             big * 1000, "an integer in [0, 1000000000000]"));
    m.corpusCharacters = o.integer("corpus_characters", 200'000, 1000, 100'000'000,
                                   "an integer in [1000, 100000000]");
    m.heldOutFraction = o.number("held_out_fraction", 0.0, 0.0, 0.9, "a number in [0, 0.9]");
    m.heldOutEvery = o.integer("held_out_every", 0, 0, big,
                               "an integer in [0, 1000000000] (block updates; 0: never)");
    m.w0 = o.text("w0", "");
    m.initSeed =
        static_cast<std::uint64_t>(o.integer("init_seed", static_cast<long long>(seed), 0,
                                             big * 1000, "an integer in [0, 1000000000000]"));
    m.fullObjective = o.boolean("full_objective", false);
    m.sampleLines =
        static_cast<int>(o.integer("sample_lines", 3, 0, 100, "an integer in [0, 100]"));
    m.sampleLength =
        static_cast<int>(o.integer("sample_length", 200, 1, 100'000, "an integer in [1, 100000]"));
    m.sampleTemperature =
        o.number("sample_temperature", 1.0, 1e-3, 1e3, "a number in [0.001, 1000]");
    if (m.heldOutEvery > 0 && m.heldOutFraction == 0.0) {
        throw ConfigError(o.field("held_out_every") + " = " + std::to_string(m.heldOutEvery) +
                          " is not allowed with held_out_fraction = 0: set held_out_fraction > 0 "
                          "(the part of the corpus to evaluate) or held_out_every = 0");
    }
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
    if (j.contains("shuffle") && j.at("shuffle") == json(true)) {
        throw ConfigError(std::string("shuffle = true") + kWith +
                          "batches are consecutive windows of the corpus, microbatch j uses "
                          "batch j mod M (false)");
    }
    if (j.contains("seeds") && j.at("seeds") != json(1)) {
        throw ConfigError("seeds = " + showConfigValue(j.at("seeds")) + kWith +
                          "1 (one run per step size; change objective.init_seed instead)");
    }
    if (j.contains("sampling") && j.at("sampling").is_object()) {
        const json& s = j.at("sampling");
        if (s.contains("grad_norm_every") && s.at("grad_norm_every") != json(0)) {
            throw ConfigError(
                "sampling.grad_norm_every = " + showConfigValue(s.at("grad_norm_every")) + kWith +
                "0 (the full gradient norm is not computed for the language model)");
        }
        if (s.contains("objective_per_update") && s.at("objective_per_update") == json(false)) {
            throw ConfigError(std::string("sampling.objective_per_update = false") + kWith +
                              "true (the forward loss of every update is always logged)");
        }
    }
}

void validateLanguageModel(const ExperimentConfig& c) {
    const LanguageModelSpec& m = *c.objective.languageModel;
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
        if (method == Method::Sgd || method == Method::FillDrain) {
            throw ConfigError("methods[" + std::to_string(i) + "].method = \"" +
                              methodName(method) + "\"" + kWith + "pd, rpd or localsgd");
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
        replicas.push_back(local ? (method.replicas > 0 ? method.replicas : c.stages) : 1);
    }
    const int realBytes = p.precision == LmPrecision::Float ? 4 : 8;
    p.beforeWeights = [replicas, realBytes](const LmLayout& layout) {
        requireLmMemory(layout, realBytes, replicas);
    };
    return p;
}

}  // namespace pipelens

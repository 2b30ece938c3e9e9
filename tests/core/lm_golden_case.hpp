#pragma once
// Loads one folder of ../shared/golden-lm (the language-model reference cases, the sibling of
// ../shared/golden): its problem, timeline and arrays, and measures relative errors.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "data/loaders.hpp"
#include "golden_case.hpp"
#include "objective/lm/char_transformer.hpp"

namespace golden_lm {

inline std::string dir(const std::string& name) {
    return std::string(PIPELENS_GOLDEN_DIR) + "/../golden-lm/" + name;
}

inline nlohmann::json caseJson(const std::string& name) {
    std::ifstream in(dir(name) + "/case.json");
    return nlohmann::json::parse(in);
}

inline const std::vector<std::string>& cases() {
    static const std::vector<std::string> names = {"lm-pd-S4", "lm-localsgd-S4-R2-H2",
                                                   "lm-pd-S5-C12-heads3"};
    return names;
}

inline pipelens::CharTransformerParams params(const std::string& name,
                                              pipelens::LmPrecision precision) {
    const auto c = caseJson(name);
    const auto& model = c["objective"]["model"];
    pipelens::CharTransformerParams p;
    p.stages = model["stages"];
    p.width = model["embed_dim"];
    p.heads = model["num_heads"];
    p.context = model["seq_len"];
    p.batch = c["batch_size"];
    p.corpusPath = dir(name) + "/corpus.txt";
    p.w0Path = dir(name) + "/w0.npy";
    p.precision = precision;
    return p;
}

inline std::shared_ptr<const pipelens::CharTransformerProblem> problem(
    const std::string& name, pipelens::LmPrecision precision = pipelens::LmPrecision::Double) {
    return std::make_shared<const pipelens::CharTransformerProblem>(
        pipelens::makeCharTransformerProblem(params(name, precision)));
}

inline std::vector<double> npy(const std::string& name, const std::string& file) {
    return pipelens::loadNpyArray(dir(name) + "/" + file).values;
}

// max |a - b| / max |b|: the error relative to the array's scale.
template <typename A, typename B>
double maxRelError(const A& a, const B& b) {
    if (static_cast<std::size_t>(a.size()) != static_cast<std::size_t>(b.size())) return INFINITY;
    double diff = 0.0;
    double scale = 0.0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(b.size()); ++i) {
        diff = std::max(diff, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
        scale = std::max(scale, std::abs(static_cast<double>(b[i])));
    }
    return diff / std::max(scale, 1e-300);
}

// Largest elementwise relative error of two curves; NaN must meet NaN.
inline double curveRelError(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) {
            if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
            continue;
        }
        worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(std::abs(b[i]), 1e-300));
    }
    return worst;
}

}  // namespace golden_lm

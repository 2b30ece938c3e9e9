#include "objective/lm/lm_sampling.hpp"

#include <algorithm>
#include <cmath>

#include "errors.hpp"
#include "objective/lm/lm_model.hpp"
#include "random/numpy_random.hpp"

namespace pipelens {

std::vector<int> sampleTokens(const CharTransformerProblem& problem, const Eigen::VectorXd& weights,
                              std::uint64_t seed, int length, double temperature,
                              std::vector<int> prompt) {
    if (!(temperature > 0.0) || !std::isfinite(temperature)) {
        throw ConfigError("sample temperature = " + std::to_string(temperature) +
                          " is not allowed: a number > 0");
    }
    if (length < 0)
        throw ConfigError("sample length = " + std::to_string(length) + " is not allowed: >= 0");
    const int V = problem.corpus.vocabSize();
    if (prompt.empty())
        prompt.push_back(problem.corpus.ids.empty() ? 0 : problem.corpus.ids.front());
    for (int id : prompt) {
        if (id < 0 || id >= V) {
            throw ConfigError("prompt token " + std::to_string(id) +
                              " is outside the vocabulary of " + std::to_string(V) + " characters");
        }
    }
    LmDims one = problem.layout.dims();
    one.batch = 1;  // the parameters do not depend on b
    CharTransformer<double> model{LmLayout(one)};
    const int T = one.context;
    std::vector<int> window(static_cast<std::size_t>(T), 0);
    std::vector<double> p(static_cast<std::size_t>(V));
    NumpyRandom rng(seed);
    std::vector<int> text = std::move(prompt);
    text.reserve(text.size() + static_cast<std::size_t>(length));
    for (int i = 0; i < length; ++i) {
        const std::size_t L = std::min<std::size_t>(text.size(), static_cast<std::size_t>(T));
        std::copy(text.end() - static_cast<std::ptrdiff_t>(L), text.end(), window.begin());
        const double* row =
            model.logits(weights.data(), window.data()) + (L - 1) * static_cast<std::size_t>(V);
        const double top = *std::max_element(row, row + V);
        double total = 0.0;
        for (int v = 0; v < V; ++v)
            total += p[static_cast<std::size_t>(v)] = std::exp((row[v] - top) / temperature);
        // Inverse CDF on one uniform draw; the last character takes any rounding remainder.
        double u = rng.random() * total;
        int next = V - 1;
        for (int v = 0; v < V; ++v) {
            u -= p[static_cast<std::size_t>(v)];
            if (u < 0.0) {
                next = v;
                break;
            }
        }
        text.push_back(next);
    }
    return text;
}

std::string sampleText(const CharTransformerProblem& problem, const Eigen::VectorXd& weights,
                       std::uint64_t seed, int length, double temperature) {
    std::u32string chars;
    for (int id : sampleTokens(problem, weights, seed, length, temperature)) {
        chars.push_back(problem.corpus.vocab[static_cast<std::size_t>(id)]);
    }
    return utf8Encode(chars);
}

}  // namespace pipelens

#pragma once
// Text sampled from a trained character model: each next character is drawn from the softmax of
// the last position's logits (divided by the temperature) given a window of the last T
// characters, autoregressively. Seeded (NumPy's stream) and deterministic.
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "objective/lm/char_transformer.hpp"

namespace pipelens {

// `length` token ids drawn after `prompt` (token ids; empty: the corpus's first character). The
// model runs in double on a batch of one sequence; a window shorter than T sits at positions
// 0 .. L-1 and is padded after them, which causal attention never reads. ConfigError for a
// temperature <= 0, a negative length or a prompt id outside the vocabulary.
std::vector<int> sampleTokens(const CharTransformerProblem& problem, const Eigen::VectorXd& weights,
                              std::uint64_t seed, int length, double temperature = 1.0,
                              std::vector<int> prompt = {});

// The same as UTF-8 text: the prompt's characters, then the sampled ones.
std::string sampleText(const CharTransformerProblem& problem, const Eigen::VectorXd& weights,
                       std::uint64_t seed, int length, double temperature = 1.0);

}  // namespace pipelens

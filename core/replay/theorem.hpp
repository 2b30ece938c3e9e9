#pragma once
// The convergence bound of SPEC section 4 for Randomized PipeDream:
//   (1/K) sum_{k<K} E||grad f(w_k)||^2 <= 2 S D0 / (gamma K) + gamma S L G^2 + gamma^2 L^2 delta^2
//   G^2.
// It holds for the randomized proxy under 0 < gamma <= 1/L, not for deterministic PipeDream.

namespace pipelens {

struct TheoremInputs {
    int stages = 1;              // S
    double stepSize = 0.0;       // gamma
    double smoothness = 0.0;     // L
    double gradientBound = 0.0;  // G, largest block-gradient norm seen
    long long maxDelay = 0;      // delta
    long long updates = 0;       // K
    double initialGap = 0.0;     // D0 = f(w0) - f*
};

struct TheoremBound {
    double optimisation = 0.0;  // 2 S D0 / (gamma K)
    double noise = 0.0;         // gamma S L G^2
    double staleness = 0.0;     // gamma^2 L^2 delta^2 G^2
    double total = 0.0;
    bool stepSizeAllowed = false;  // 0 < gamma <= 1/L
};

TheoremBound theoremBound(const TheoremInputs& in);
// gamma = min{1/L, sqrt(2 D0 / (L G^2 K))}
double tunedStepSize(double smoothness, double gradientBound, long long updates, double initialGap);

}  // namespace pipelens

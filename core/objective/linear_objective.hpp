#pragma once
// The finite-sum linear models of SPEC section 1: least squares and L2-regularised logistic
// regression, f(w) = (1/M) sum_m f_m(w) over M consecutive batches of b rows.
#include <Eigen/Dense>
#include <atomic>
#include <future>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "util/once_value.hpp"

namespace pipelens {

enum class LossKind { Quadratic, Logistic };
LossKind parseLossKind(const std::string& text);  // "quadratic" | "logistic"
std::string lossKindName(LossKind kind);
// 1 / (1 + e^-z) per entry, without overflow for large |z|.
Eigen::ArrayXd logisticSigmoid(const Eigen::ArrayXd& z);

// A contiguous slice of coordinates owned by one stage.
struct BlockRange {
    int offset = 0;
    int size = 0;
};
// Near-equal contiguous blocks; the first (d mod S) get one extra coordinate. d < S is a
// ConfigError.
std::vector<BlockRange> splitBlocks(int dim, int stages);

class LinearObjective {
  public:
    // Validates shapes (DataError) and batch size / l2 (ConfigError): n must be a multiple of b.
    LinearObjective(Dataset data, LossKind loss, double l2, int batchSize);

    const Eigen::MatrixXd& X() const { return data_.X; }
    const Eigen::VectorXd& y() const { return data_.y; }
    const Dataset& data() const { return data_; }
    LossKind loss() const { return loss_; }
    double l2() const { return l2_; }
    int rows() const { return static_cast<int>(data_.X.rows()); }
    int dim() const { return static_cast<int>(data_.X.cols()); }
    int batchSize() const { return batchSize_; }
    int batches() const { return rows() / batchSize_; }  // M

    double value(const Eigen::VectorXd& w) const;
    Eigen::VectorXd gradient(const Eigen::VectorXd& w) const;
    // f from the activation z = Xw over all rows and ||w||^2 (used for cheap incremental logging).
    double valueFromActivation(const Eigen::VectorXd& z, double weightNormSq) const;
    // The same with a caller-owned scratch array (no allocation on the per-update path).
    double valueFromActivation(const Eigen::VectorXd& z, double weightNormSq,
                               Eigen::ArrayXd& scratch) const;

    double batchValue(int batch, const Eigen::VectorXd& w) const;
    Eigen::VectorXd batchGradient(int batch, const Eigen::VectorXd& w) const;
    // The gradient passed back from the last stage: (a - y_b)/b or (sigmoid(a) - y_b)/b.
    void outputGradient(int batch, const Eigen::VectorXd& activation, Eigen::VectorXd& g) const;

    // L = lambda_max(X^T X / n) (quadratic) or 1/4 lambda_max + l2 (logistic); computed once.
    // Exact for small data, else a Lanczos upper bound at most 1e-10 (relative) above it.
    // Thread-safe: a second caller waits for the first one's result.
    double smoothness() const;
    // f* at the minimiser (least squares, or Newton-CG to gradient norm <= 1e-10); computed once,
    // thread-safe like smoothness().
    double optimum() const;
    const Eigen::VectorXd& minimizer() const;
    // An upper bound on f*, costing a few products with X: f after one backtracking gradient
    // step from w = 0 (or f(0) itself when that step gains nothing). Computed once, thread-safe.
    double optimumUpperBound() const;
    bool hasOptimum() const { return optimum_.ready(); }
    bool hasSmoothness() const { return smoothness_.ready(); }
    // Starts computing f* and then L on a thread of their own, so that runs can start meanwhile
    // (the future waits for it; its exceptions are left for the next optimum() or smoothness()
    // caller to meet again). Until f* is known, replays judge divergence from bounds on it.
    // `startWhen` (tests) holds the thread back until it is ready.
    std::future<void> computeConstantsAside(std::shared_future<void> startWhen = {}) const;
    // f* is known or on its way from computeConstantsAside().
    bool optimumComing() const { return hasOptimum() || constantsAside_.load(); }
    // Known constants (e.g. from a golden case or a generator) skip the computation; set them
    // before the objective is shared between threads.
    void setSmoothness(double L) { smoothness_.set(L); }
    void setOptimum(double fStar) { optimum_.set(fStar); }

  private:
    Dataset data_;
    LossKind loss_;
    double l2_;
    int batchSize_;
    OnceValue<double> smoothness_;
    OnceValue<double> optimum_;
    OnceValue<Eigen::VectorXd> minimizer_;
    OnceValue<double> optimumUpperBound_;
    // Set by computeConstantsAside(); a copy starts without it (nothing computes for the copy).
    struct AsideFlag {
        std::atomic<bool> on{false};
        AsideFlag() = default;
        AsideFlag(const AsideFlag&) {}
        AsideFlag& operator=(const AsideFlag&) { return *this; }
        bool load() const { return on.load(); }
    };
    mutable AsideFlag constantsAside_;
};

// Reference solvers: lambda_max(X^T X / n) (objective/gram_spectrum.cpp) and the minimiser
// behind f* (objective/solvers.cpp).
double largestEigenvalueOfGram(const Eigen::MatrixXd& X);
Eigen::VectorXd solveMinimizer(const LinearObjective& objective);

}  // namespace pipelens

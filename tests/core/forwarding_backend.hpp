#pragma once
// A ComputeBackend that does its work on a CpuBackend but keeps the base class's defaults for
// setOptimizer and setCorrectors, as a backend without optimizers or correctors does: the tests
// of the engines' refusals and fallbacks use it (tst_optimizers, tst_correctors).
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compute/cpu_backend.hpp"

namespace pipelens::test {

class ForwardingCpuBackend : public ComputeBackend {
  public:
    explicit ForwardingCpuBackend(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_; }
    void preparePipeline(const LinearObjective& o, const PipelineLayout& l,
                         const Eigen::VectorXd& w0) override {
        inner_.preparePipeline(o, l, w0);
    }
    void runOps(std::span<const PipelineOp> ops, double step, bool sample,
                std::vector<UpdateSample>& samples) override {
        inner_.runOps(ops, step, sample, samples);
    }
    void averageReplicas() override { inner_.averageReplicas(); }
    void prepareRpd(const LinearObjective& o, const std::vector<BlockRange>& b, int depth,
                    const Eigen::VectorXd& w0) override {
        inner_.prepareRpd(o, b, depth, w0);
    }
    UpdateSample rpdStep(std::span<const int> d, int stage, int batch, double step,
                         bool sample) override {
        return inner_.rpdStep(d, stage, batch, step, sample);
    }
    double objective() override { return inner_.objective(); }
    double gradientNormSquared() override { return inner_.gradientNormSquared(); }
    Eigen::VectorXd weights() override { return inner_.weights(); }

  protected:
    CpuBackend& inner() { return inner_; }

  private:
    std::string name_;
    CpuBackend inner_;
};

}  // namespace pipelens::test

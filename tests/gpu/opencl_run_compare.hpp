#pragma once
// Shared by the suites that run whole experiments on OpenCL and on the CPU engine and compare
// them (tst_opencl_runs, tst_opencl_optimizers, tst_opencl_correctors): the small linear problem
// they run, the OpenCL backend provider, the comparison of two runs' curves at the documented
// tolerances (docs/opencl.md), and the language model's RPD run and curve error.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/lm_golden_case.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "opencl_backend.hpp"
#include "opencl_test_support.hpp"
#include "replay/lm_rpd_replay.hpp"

namespace opencl_test {

// Whole float runs: |f_ocl - f_cpu| <= 1e-4 |f_cpu| + 1e-5 f(w0) (docs/opencl.md).
inline constexpr double kFloatRunRel = 1e-4;
inline constexpr double kFloatRunAbsOfInitial = 1e-5;

// 264 rows (33 batches of 8) of dimension 45 (blocks of 8 and 7 for S = 6), 40 microbatches,
// gradient norms every 17 updates; no method yet.
inline pipelens::ExperimentConfig baseConfig(bool logistic) {
    pipelens::ExperimentConfig c;
    c.name = "opencl-vs-cpu";
    c.data.kind = logistic ? "logistic" : "random";
    c.data.rows = 264;
    c.data.dim = 45;
    c.data.seed = 5;
    c.objective.loss = logistic ? pipelens::LossKind::Logistic : pipelens::LossKind::Quadratic;
    c.objective.l2 = logistic ? 1e-3 : 0.0;
    c.stages = 6;
    c.batchSize = 8;
    c.budget.microbatches = 40;
    c.sampling.gradNormEvery = 17;
    return c;
}

inline pipelens::BackendProvider openCl(pipelens::gpu::Precision p) {
    return [p]() -> std::unique_ptr<pipelens::ComputeBackend> {
        pipelens::gpu::OpenClBackendOptions o;
        o.precision = p;
        return std::make_unique<pipelens::gpu::OpenClBackend>(context(), o);
    };
}

// `c` with `m` as its only method, run on `backend`.
inline pipelens::RunResult runOn(const pipelens::ExperimentConfig& c, const pipelens::MethodSpec& m,
                                 const pipelens::BackendProvider& backend) {
    pipelens::ExperimentConfig cc = c;
    cc.methods = {m};
    auto objective = pipelens::buildObjective(cc);
    pipelens::ExperimentPlan plan = pipelens::planExperiment(cc, *objective);
    return pipelens::runOne(cc, plan.runs.front(), m.step.value, objective, backend);
}

inline void compareSeries(const std::vector<double>& got, const std::vector<double>& want,
                          double rel, double abs, const char* what) {
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        if (!close(got[i], want[i], rel, abs)) {
            QFAIL(qPrintable(QString("%1 row %2: OpenCL %3, CPU %4")
                                 .arg(what)
                                 .arg(i)
                                 .arg(got[i], 0, 'g', 17)
                                 .arg(want[i], 0, 'g', 17)));
        }
    }
}

// Both runs finished with the same updates; the objective per slot and per update agree to
// relative 1e-9 in double, the run tolerance in float; the block gradient norms (differences of
// nearly equal sums) to 1e-8 in double and 1e-2 in float, with a floor relative to the largest.
inline void compareRunCurves(const pipelens::RunResult& ocl, const pipelens::RunResult& cpu,
                             pipelens::gpu::Precision p) {
    QVERIFY(cpu.finished);
    QVERIFY(ocl.finished);
    QCOMPARE(ocl.updates, cpu.updates);
    QVERIFY(cpu.updates > 0);
    const double f0 = std::abs(cpu.initialObjective);
    const bool dbl = p == pipelens::gpu::Precision::Double;
    const double rel = dbl ? 1e-9 : kFloatRunRel;
    const double abs = dbl ? 0.0 : kFloatRunAbsOfInitial * f0;
    compareSeries(ocl.objectivePerSlot, cpu.objectivePerSlot, rel, abs, "objective_per_slot");
    compareSeries(ocl.objectivePerUpdate, cpu.objectivePerUpdate, rel, abs, "objective_per_update");
    const double gmax = *std::max_element(cpu.blockGradNormSq.begin(), cpu.blockGradNormSq.end());
    compareSeries(ocl.blockGradNormSq, cpu.blockGradNormSq, dbl ? 1e-8 : 1e-2,
                  dbl ? 1e-14 * gmax : 1e-3 * gmax, "block_grad_norm_sq");
}

// The language model's RPD: 40 updates, uniform delays up to 5 (seed 7), on `executor` (null:
// the CPU's), with `optimizer` and `correctors`.
inline std::unique_ptr<pipelens::LmReplay> lmRpd(
    const std::shared_ptr<const pipelens::CharTransformerProblem>& p,
    const pipelens::OptimizerSpec& optimizer, const pipelens::CorrectorSpec& correctors,
    double gamma, const pipelens::LmRpdExecutorFactory& executor) {
    pipelens::LmRpdConfig cfg;
    cfg.updates = 40;
    cfg.stepSize = gamma;
    cfg.maxDelay = 5;
    cfg.delayMode = pipelens::DelayMode::Uniform;
    cfg.seed = 7;
    cfg.optimizer = optimizer;
    cfg.correctors = correctors;
    cfg.options.fullObjectivePerUpdate = true;
    auto run = pipelens::makeLmRpdReplay(p, cfg, executor);
    run->runToEnd();
    return run;
}

// The golden cases' curve error; infinite for curves of different lengths or none.
inline double curveError(const std::vector<double>& got, const std::vector<double>& want) {
    if (got.size() != want.size() || got.empty()) return std::numeric_limits<double>::infinity();
    return golden_lm::curveRelError(got, want);
}

}  // namespace opencl_test

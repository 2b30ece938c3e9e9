#pragma once
// A whole golden-lm PD or LocalSGD run and its errors against the authors' logs, shared by the
// CPU engine's test (tst_lm_pipeline) and the OpenCL executor's (tst_opencl_lm_golden_runs_double
// and _float); RPD with PD's delays and order against a golden PD run (tst_lm_pipeline,
// tst_opencl_lm_rpd).
#include <QString>

#include <memory>
#include <string>
#include <vector>

#include "lm_golden_case.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "schedule/timeline.hpp"

namespace golden_lm {

// The case's run on `executor` (empty: the CPU engine), advanced in uneven chunks: a result
// must not depend on how a caller steps a run.
inline std::unique_ptr<pipelens::LmReplay> runPipeline(
    const std::string& name, pipelens::LmPrecision precision, bool logFull,
    const pipelens::LmExecutorFactory& executor = {}) {
    const auto c = caseJson(name);
    pipelens::LmPipelineConfig cfg;
    cfg.method = pipelens::parseMethod(c["method"].get<std::string>());
    cfg.timeline = pipelens::buildTimeline(golden::scheduleParams(c));
    cfg.replicas = c.value("replicas", 1);
    cfg.stepSize = c["step_size"];
    cfg.options.fullObjectivePerSlot = logFull;
    cfg.options.fullObjectivePerUpdate = logFull;
    auto run = pipelens::makeLmPipelineReplay(problem(name, precision), cfg, executor);
    for (long long chunk = 1; !run->done(); chunk = chunk % 7 + 2) {
        if (run->advance(chunk) == 0) break;
    }
    return run;
}

inline std::vector<double> column(const std::string& name, const std::string& file,
                                  std::size_t col) {
    return golden::csvColumn(dir(name) + "/" + file, col);
}

// RPD with PipeDream's delays and order on golden PD case `name` (its run on `executor`,
// empty: the CPU engine) is PD: its final weights and its per-update losses (update k's loss
// at z_k is the forward loss of k's microbatch) against the authors' run.
struct RpdAsPdErrors {
    bool finished = false;
    long long updates = 0;
    long long expectedUpdates = 0;
    double wFinal = 0.0;
    double perUpdate = 0.0;
};
inline RpdAsPdErrors rpdAsPipeDream(const std::string& name,
                                    const pipelens::LmRpdExecutorFactory& executor = {}) {
    const auto c = caseJson(name);
    pipelens::LmRpdConfig cfg;
    cfg.updates = 1'000'000;
    cfg.stepSize = c["step_size"];
    cfg.delayMode = pipelens::DelayMode::PipeDream;
    cfg.order = pipelens::StageOrder::PipeDream;
    cfg.pipeDream = std::make_shared<const pipelens::DelayTable>(
        pipelens::buildTimeline(golden::scheduleParams(c)));
    auto rpd = pipelens::makeLmRpdReplay(problem(name), cfg, executor);
    rpd->runToEnd(5);
    RpdAsPdErrors e;
    e.finished = rpd->result().finished;
    e.updates = rpd->result().updates;
    e.expectedUpdates = c["block_updates"].get<long long>();
    e.wFinal = maxRelError(rpd->weights(), npy(name, "w_final.npy"));
    const auto losses = column(name, "forward_loss_per_microbatch.csv", 3);
    std::vector<double> expected;
    for (long long k = 0; k < cfg.pipeDream->updates(); ++k) {
        expected.push_back(losses[static_cast<std::size_t>(cfg.pipeDream->update(k).microbatch)]);
    }
    e.perUpdate = curveRelError(rpd->result().objectivePerUpdate, expected);
    return e;
}

// Relative errors of every logged curve of a finished run; rowMismatch names the first
// forward-loss row whose microbatch, slot or batch differs from the authors' (empty if none).
struct PipelineErrors {
    double perSlot = 0, perUpdate = 0, forwardLosses = 0, fullSlot = 0, fullUpdate = 0, wFinal = 0;
    QString rowMismatch;
    std::vector<double> all() const {
        return {perSlot, perUpdate, forwardLosses, fullSlot, fullUpdate, wFinal};
    }
};

inline PipelineErrors pipelineErrors(const std::string& n, const pipelens::LmReplay& run) {
    const pipelens::RunResult& r = run.result();
    const pipelens::LmLog& log = run.log();
    PipelineErrors e;
    e.perSlot = curveRelError(r.objectivePerSlot, column(n, "objective_per_slot.csv", 1));
    e.perUpdate =
        curveRelError(r.objectivePerUpdate, column(n, "objective_per_block_update.csv", 1));
    e.fullSlot =
        curveRelError(log.fullObjectivePerSlot, column(n, "full_objective_per_slot.csv", 1));
    e.fullUpdate = curveRelError(log.fullObjectivePerBlockUpdate,
                                 column(n, "full_objective_per_block_update.csv", 1));
    const auto rows = golden::csvRows(dir(n) + "/forward_loss_per_microbatch.csv");
    if (log.forwardLosses.size() != rows.size()) {
        e.rowMismatch = QString("%1 forward losses, the authors logged %2")
                            .arg(log.forwardLosses.size())
                            .arg(rows.size());
    }
    std::vector<double> losses;
    for (std::size_t i = 0; i < rows.size() && i < log.forwardLosses.size(); ++i) {
        const auto& f = log.forwardLosses[i];
        if (e.rowMismatch.isEmpty() &&
            (f.microbatch != std::stoi(rows[i][0]) || f.slot != std::stoi(rows[i][1]) ||
             f.batch != std::stoi(rows[i][2]))) {
            e.rowMismatch = QString("forward loss row %1: microbatch %2, slot %3, batch %4")
                                .arg(i)
                                .arg(f.microbatch)
                                .arg(f.slot)
                                .arg(f.batch);
        }
        losses.push_back(f.loss);
    }
    e.forwardLosses = curveRelError(losses, column(n, "forward_loss_per_microbatch.csv", 3));
    e.wFinal = maxRelError(run.weights(), npy(n, "w_final.npy"));
    return e;
}

}  // namespace golden_lm

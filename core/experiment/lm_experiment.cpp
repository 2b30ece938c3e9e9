#include "experiment/lm_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "errors.hpp"
#include "experiment/lm_config.hpp"
#include "experiment/run_warnings.hpp"
#include "objective/lm/lm_sampling.hpp"
#include "objective/lm/lm_threads.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "util/format_number.hpp"
#include "util/parallel_for.hpp"

namespace pipelens {
namespace {

using Problem = std::shared_ptr<const CharTransformerProblem>;

struct LmRunOutcome {
    RunResult result;
    LmLog log;
    Eigen::VectorXd weights;
    double finalLoss = 0.0;
};

LmRunOptions lmRunOptions(const ExperimentConfig& c, const MethodRun& plan) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    LmRunOptions o;
    // Pipelines log the full objective after every slot, RPD (no slots) after every update.
    o.fullObjectivePerSlot = m.fullObjective && plan.pipeline();
    o.fullObjectivePerUpdate = m.fullObjective && !plan.pipeline();
    o.heldOutEvery = m.heldOutEvery;
    o.blowUpFactor = c.sampling.blowUpFactor;
    return o;
}

std::unique_ptr<LmReplay> makeLmReplay(const ExperimentConfig& c, const MethodRun& plan,
                                       double stepSize, const Problem& problem,
                                       const LmExecutorFactory& executor,
                                       const LmRpdExecutorFactory& rpdExecutor) {
    if (plan.pipeline()) {
        LmPipelineConfig cfg;
        fillPipelineConfig(cfg, plan, stepSize);
        cfg.options = lmRunOptions(c, plan);
        return makeLmPipelineReplay(problem, std::move(cfg), executor);
    }
    LmRpdConfig cfg;
    fillRpdConfig(cfg, c, plan, stepSize);
    cfg.options = lmRunOptions(c, plan);
    return makeLmRpdReplay(problem, std::move(cfg), rpdExecutor);
}

LmRunOutcome runLmOnce(const ExperimentConfig& c, const MethodRun& plan, double stepSize,
                       const Problem& problem, const RunOptions& options, ChunkPosition position) {
    auto replay = makeLmReplay(c, plan, stepSize, problem, options.lmExecutor, options.lmRpdExecutor);
    std::function<void(const RunResult&, double)> onChunk;
    if (options.onChunk) {
        onChunk = [&](const RunResult& r, double done) {
            position.fraction = done;
            options.onChunk(position, r);
        };
    }
    advanceInChunks(*replay, options.cancel, onChunk);
    LmRunOutcome out;
    out.log = replay->log();
    out.weights = replay->weights();
    out.result = replay->takeResult();
    out.finalLoss = lmFinalLoss(out.result, out.log);
    return out;
}

bool lmRunDiverged(const LmRunOutcome& o) {
    const auto& f = o.log.forwardLosses;
    return o.result.divergence.diverged || !std::isfinite(o.finalLoss) || f.empty() ||
           o.finalLoss > f.front().loss;
}

std::vector<LmStageMemory> stageMemory(const CharTransformerProblem& p, const RunResult& r,
                                       const LmLog& log) {
    std::vector<LmStageMemory> out;
    if (log.peakStashedWeights.empty()) return out;  // a pipeline run stopped before its end
    const long long real = p.params.precision == LmPrecision::Float ? 4 : 8;
    const LmDims& d = p.layout.dims();
    for (int s = 0; s < p.layout.stages(); ++s) {
        const auto i = static_cast<std::size_t>(s);
        LmStageMemory m;
        m.stashedWeights = i < log.peakStashedWeights.size() ? log.peakStashedWeights[i] : 0;
        if (r.timeline) {
            m.predictedStash = i < r.timeline->peakStash.size() ? r.timeline->peakStash[i] : 0;
        } else {
            m.predictedStash = static_cast<int>(std::min<long long>(r.maxDelay + 1, r.updates + 1));
        }
        m.keptInputs = i < log.peakKeptInputs.size() ? log.peakKeptInputs[i] : 0;
        m.weightBytes = m.stashedWeights * p.layout.stage(s).size * real;
        // Stage 0 keeps its token ids (ints), the others N C activations.
        m.activationBytes = s == 0 ? m.keptInputs * static_cast<long long>(d.tokens()) * 4
                                   : m.keptInputs * static_cast<long long>(d.tokens()) * d.width * real;
        out.push_back(m);
    }
    return out;
}

LmMethodResult runLmMethod(const ExperimentConfig& c, const MethodRun& planned,
                           const Problem& problem, const RunOptions& options, std::size_t index) {
    LmMethodResult out;
    out.run = planned;
    const StepSpec& step = planned.spec.step;
    std::vector<double> steps;
    if (step.grid) {
        for (int a = step.gridMin; a <= step.gridMax; ++a) steps.push_back(std::ldexp(1.0, a));
    } else {
        steps.push_back(step.value);
    }
    std::vector<LmRunOutcome> runs;
    std::vector<GridCandidate> candidates;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (options.cancel && options.cancel->load()) break;
        ChunkPosition position{index, static_cast<int>(i), static_cast<int>(steps.size()), 0.0};
        runs.push_back(runLmOnce(c, planned, steps[i], problem, options, position));
        const LmRunOutcome& r = runs.back();
        GridStep g;
        g.stepSize = steps[i];
        g.finalGap = {r.finalLoss, 0.0};  // the language model has no f*: the loss itself
        g.finalObjective = {r.finalLoss, 0.0};
        g.diverged = lmRunDiverged(r);
        g.tail = checkTail(lmRuleCurve(r.result));
        out.run.grid.push_back(g);
        candidates.push_back({g.stepSize, r.finalLoss, g.diverged, g.tail});
    }
    if (runs.empty()) {
        out.run.result.cancelled = true;
        return out;
    }
    int pick = step.grid ? pickStep(step.rule, candidates) : 0;
    if (pick < 0) {
        out.run.allDiverged = true;
        pick = 0;
    }
    LmRunOutcome& chosen = runs[static_cast<std::size_t>(pick)];
    out.run.chosen = pick;
    out.run.result = std::move(chosen.result);
    out.run.result.cancelled = out.run.result.cancelled || runs.size() < steps.size();
    out.log = std::move(chosen.log);
    out.weights = std::move(chosen.weights);
    out.finalLoss = chosen.finalLoss;
    out.memory = stageMemory(*problem, out.run.result, out.log);
    const LanguageModelSpec& m = *c.objective.languageModel;
    if (out.weights.allFinite()) {
        // Line l of every method uses seed + l, so the methods' samples differ only by weights.
        for (int l = 0; l < m.sampleLines; ++l) {
            if (options.cancel && options.cancel->load()) break;
            out.samples.push_back(sampleText(*problem, out.weights, c.seed + static_cast<std::uint64_t>(l),
                                             m.sampleLength, m.sampleTemperature));
        }
    }
    return out;
}

// Each sampled character is one forward pass of the model over a window of T tokens, which
// costs about a third of one training sequence (forward and backward). Sampling may cost as much
// as the training run, or kSampleAllowance characters when that is more, never an hour of
// silence after a run of seconds.
constexpr long long kSampleAllowance = 20'000;

void checkSamplingWork(const ExperimentConfig& c, const ExperimentBudget& budget) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    const long long characters = static_cast<long long>(m.sampleLines) * m.sampleLength;
    const long long training =
        3LL * static_cast<long long>(budget.pipeDreamMicrobatches) * c.batchSize;
    const long long allowed = std::max(kSampleAllowance, training);
    if (characters <= allowed) return;
    throw ConfigError("objective.sample_lines x objective.sample_length = " +
                      std::to_string(m.sampleLines) + " x " + std::to_string(m.sampleLength) +
                      " = " + std::to_string(characters) +
                      " characters per method is not allowed with this budget: each character "
                      "is a forward pass of the model, and sampling would take longer than "
                      "training (" + std::to_string(budget.pipeDreamMicrobatches) +
                      " microbatches of " + std::to_string(c.batchSize) +
                      " sequences); at most " + std::to_string(allowed) +
                      " characters: fewer or shorter lines, or a larger budget");
}

// ", then sampling 3 lines of 200 characters per method", so a long sampling is announced.
std::string samplingNote(const ExperimentConfig& c) {
    const LanguageModelSpec& m = *c.objective.languageModel;
    if (m.sampleLines == 0) return "";
    return ", then sampling " + std::to_string(m.sampleLines) +
           (m.sampleLines == 1 ? " line of " : " lines of ") + std::to_string(m.sampleLength) +
           " characters per method";
}

}  // namespace

double lmFinalLoss(const RunResult& result, const LmLog& log) {
    const auto& f = log.forwardLosses;
    if (result.divergence.diverged || f.empty()) return std::numeric_limits<double>::infinity();
    const std::size_t tail = std::max<std::size_t>(1, (f.size() + 9) / 10);
    double sum = 0.0;
    for (std::size_t i = f.size() - tail; i < f.size(); ++i) sum += f[i].loss;
    return sum / static_cast<double>(tail);
}

std::vector<double> lmRuleCurve(const RunResult& r) {
    std::vector<double> curve;
    const auto& source = r.objectivePerSlot.empty() ? r.objectivePerUpdate : r.objectivePerSlot;
    for (double v : source) {
        if (!std::isnan(v) || !curve.empty()) curve.push_back(v);  // leading NaN: no forward yet
    }
    if (r.divergence.diverged) curve.push_back(std::numeric_limits<double>::infinity());
    return curve;
}

LmExperimentResult runLmExperiment(const ExperimentConfig& c, const RunOptions& options) {
    LmExperimentResult res;
    res.config = c;
    if (options.onStage) options.onStage("loading the corpus and building the model");
    res.problem = std::make_shared<const CharTransformerProblem>(
        makeCharTransformerProblem(charTransformerParams(c)));
    const CharTransformerProblem& p = *res.problem;
    ExperimentPlan plan = planExperiment(c, PlanSizes{p.train.batches(), 0, p.layout.size()});
    res.budget = plan.budget;
    checkSamplingWork(c, res.budget);
    if (options.lmExecutor) {
        res.backend = options.lmExecutorName;
        res.engine = options.lmEngine;
    }
    if (options.lmExecutor) {
        for (const MethodRun& run : plan.runs) {
            if (!run.pipeline() && !options.lmRpdExecutor) {
                res.warnings.push_back(run.label + ": RPD on the language model runs on the CPU "
                                       "engine (PD and LocalSGD run on " +
                                       options.lmExecutorName + ")");
            }
        }
    } else if (c.backend == "opencl") {
        res.warnings.push_back("backend = opencl: the language model runs on the CPU engine "
                               "(no OpenCL executor was given to this run)");
    }
    for (const MethodRun& run : plan.runs) {
        if (auto w = neverAveragesWarning(run)) res.warnings.push_back(*w);
    }
    if (options.onStage) {
        options.onStage("running " + std::to_string(plan.runs.size()) + " methods over " +
                        std::to_string(res.budget.slotBudget) + " slots on the language model (" +
                        std::to_string(p.layout.size()) + " parameters)" + samplingNote(c));
    }
    if (options.onPlanned) {
        // The plan as the linear experiments announce it (the app's schedule views, live curves).
        ExperimentResult planned;
        planned.config = c;
        planned.budget = res.budget;
        planned.methods = plan.runs;
        planned.backendName = "cpu";
        planned.warnings = res.warnings;
        options.onPlanned(planned);
    }
    res.methods.resize(plan.runs.size());
    std::mutex progressMutex;
    // Methods run side by side; the threads they leave over split each method's stages
    // (lm_threads.hpp: bit-identical to one thread), e.g. both cores for a single method.
    const int opThreads = lmk::threadsPerRun(options.threads, plan.runs.size());
    parallelFor(plan.runs.size(), options.threads, [&](std::size_t i) {
        lmk::ScopedThreads team(opThreads);
        LmMethodResult& m = res.methods[i];
        m = runLmMethod(c, plan.runs[i], res.problem, options, i);
        if (options.progress) {
            std::string line = m.run.label + ": " + std::to_string(m.run.result.updates) +
                               " block updates, final loss " + formatNumber(m.finalLoss, 5);
            if (m.run.result.divergence.diverged) line += ", " + m.run.result.divergence.reason;
            std::lock_guard<std::mutex> lock(progressMutex);
            options.progress(line);
        }
    });
    res.cancelled = options.cancel && options.cancel->load();
    return res;
}

}  // namespace pipelens

#include "experiment/run/lm_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "errors.hpp"
#include "experiment/config/lm_config.hpp"
#include "experiment/run/objective_run.hpp"
#include "experiment/run/run_warnings.hpp"
#include "objective/lm/lm_sampling.hpp"
#include "objective/lm/lm_threads.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "schedule/program_schedules.hpp"
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
    auto replay =
        makeLmReplay(c, plan, stepSize, problem, options.lmExecutor, options.lmRpdExecutor);
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
        m.activationBytes =
            s == 0 ? m.keptInputs * static_cast<long long>(d.tokens()) * 4
                   : m.keptInputs * static_cast<long long>(d.tokens()) * d.width * real;
        out.push_back(m);
    }
    return out;
}

MethodRun runLmMethod(const ExperimentConfig& c, const MethodRun& planned, const Problem& problem,
                      const RunOptions& options, std::size_t index) {
    MethodRun out = planned;
    auto extras = std::make_shared<LmMethodExtras>();
    const StepSpec& step = planned.spec.step;
    const std::vector<double> steps = stepSizesOf(step);
    // One timeline (or delay table) for the whole grid; a single run builds its own.
    const MethodRun shared = steps.size() > 1 ? withSharedSchedules(c, planned) : planned;
    std::vector<LmRunOutcome> runs;
    std::vector<GridCandidate> candidates;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (options.cancel && options.cancel->load()) break;
        ChunkPosition position{index, static_cast<int>(i), static_cast<int>(steps.size()), 0.0};
        runs.push_back(runLmOnce(c, shared, steps[i], problem, options, position));
        const LmRunOutcome& r = runs.back();
        GridStep g;
        g.stepSize = steps[i];
        g.finalGap = {r.finalLoss, 0.0};  // the language model has no f*: the loss itself
        g.finalObjective = {r.finalLoss, 0.0};
        g.diverged = lmRunDiverged(r);
        g.tail = checkTail(lmRuleCurve(r.result), step.rule.stable);
        out.grid.push_back(g);
        candidates.push_back({g.stepSize, r.finalLoss, g.diverged, g.tail});
    }
    if (runs.empty()) {
        out.result.cancelled = true;
        out.lm = std::move(extras);
        return out;
    }
    int pick = step.grid ? pickStep(step.rule, candidates) : 0;
    if (pick < 0) {
        out.allDiverged = true;
        pick = 0;
    }
    LmRunOutcome& chosen = runs[static_cast<std::size_t>(pick)];
    out.chosen = pick;
    out.result = std::move(chosen.result);
    out.result.cancelled = out.result.cancelled || runs.size() < steps.size();
    extras->log = std::move(chosen.log);
    extras->weights = std::move(chosen.weights);
    extras->finalLoss = chosen.finalLoss;
    extras->memory = stageMemory(*problem, out.result, extras->log);
    const LanguageModelSpec& m = *c.objective.languageModel;
    if (extras->weights.allFinite()) {
        // Line l of every method uses seed + l, so the methods' samples differ only by weights.
        for (int l = 0; l < m.sampleLines; ++l) {
            if (options.cancel && options.cancel->load()) break;
            extras->samples.push_back(sampleText(*problem, extras->weights,
                                                 c.seed + static_cast<std::uint64_t>(l),
                                                 m.sampleLength, m.sampleTemperature));
        }
    }
    out.lm = std::move(extras);
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
    throw ConfigError(
        "objective.sample_lines x objective.sample_length = " + std::to_string(m.sampleLines) +
        " x " + std::to_string(m.sampleLength) + " = " + std::to_string(characters) +
        " characters per method is not allowed with this budget: each character "
        "is a forward pass of the model, and sampling would take longer than "
        "training (" +
        std::to_string(budget.pipeDreamMicrobatches) + " microbatches of " +
        std::to_string(c.batchSize) + " sequences); at most " + std::to_string(allowed) +
        " characters: fewer or shorter lines, or a larger budget");
}

// The model's backward of block s needs the gradient from block s + 1: an asynchronous imported
// schedule whose weight updates run from the first stage up cannot train it. Refused here,
// naming the method, before any method has run (the replay would refuse it only when its turn
// came). The first step's program decides the order; every full step repeats it.
void requireLmBackpropOrder(const ExperimentPlan& plan) {
    for (std::size_t i = 0; i < plan.runs.size(); ++i) {
        const MethodRun& r = plan.runs[i];
        if (r.schedule.kind != ScheduleKind::Imported || !r.schedule.asyncUpdate) continue;
        ScheduleParams step = r.schedule;
        step.microbatches =
            std::max(1, std::min(programStepMicrobatches(step), r.schedule.microbatches));
        if (auto bad = backpropOrderViolation(buildTimeline(step))) {
            throw ConfigError(
                "methods[" + std::to_string(i) +
                "].update = \"async\" is not allowed with schedule_file \"" + r.spec.scheduleFile +
                "\" on the language model: " + *bad +
                ", but the backward of a block needs the gradient of the block "
                "after it first; allowed: update = \"sync\", or a schedule whose "
                "weight updates of a microbatch run from the last stage to the first");
        }
    }
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

const LmMethodExtras& lmOf(const MethodRun& run) {
    static const LmMethodExtras none;
    return run.lm ? *run.lm : none;
}

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

namespace {

class LanguageModelRun final : public ObjectiveRun {
  public:
    LanguageModelRun(const ExperimentConfig& c, const RunOptions& options)
        : config_(c), options_(options) {}

    ExperimentPlan prepare(ExperimentResult& res) override {
        if (options_.onStage) options_.onStage("loading the corpus and building the model");
        problem_ = std::make_shared<const CharTransformerProblem>(
            makeCharTransformerProblem(charTransformerParams(config_)));
        res.lmProblem = problem_;
        const CharTransformerProblem& p = *problem_;
        ExperimentPlan plan =
            planExperiment(config_, PlanSizes{p.train.batches(), 0, p.layout.size()});
        checkSamplingWork(config_, plan.budget);
        requireLmBackpropOrder(plan);
        // Methods run side by side; the threads they leave over split each method's stages
        // (lm_threads.hpp: bit-identical to one thread), e.g. both cores for a single method.
        opThreads_ = lmk::threadsPerRun(options_.threads, plan.runs.size());
        return plan;
    }

    std::vector<std::string> warnings(const ExperimentResult& res) const override {
        std::vector<std::string> out;
        if (options_.lmExecutor) {
            for (const MethodRun& run : res.methods) {
                if (!run.pipeline() && !options_.lmRpdExecutor) {
                    out.push_back(run.label +
                                  ": RPD on the language model runs on the CPU "
                                  "engine (PD and LocalSGD run on " +
                                  options_.backendName + ")");
                }
            }
        } else if (config_.backend == BackendKind::OpenCl) {
            out.push_back(
                "backend = opencl: the language model runs on the CPU engine "
                "(no OpenCL executor was given to this run)");
        }
        for (const MethodRun& run : res.methods) {
            if (auto w = neverAveragesWarning(run)) out.push_back(*w);
        }
        return out;
    }

    std::string runningLine(const ExperimentResult& res) const override {
        return "running " + std::to_string(res.methods.size()) + " methods over " +
               std::to_string(res.budget.slotBudget) + " slots on the language model (" +
               std::to_string(problem_->layout.size()) + " parameters)" + samplingNote(config_);
    }

    MethodRun run(const MethodRun& planned, std::size_t index) override {
        lmk::ScopedThreads team(opThreads_);
        return runLmMethod(config_, planned, problem_, options_, index);
    }

    std::string doneDetail(const MethodRun& run) const override {
        return ", final loss " + formatNumber(run.lm ? run.lm->finalLoss : 0.0, 5);
    }

    void finish(ExperimentResult&) override {}

  private:
    const ExperimentConfig& config_;
    const RunOptions& options_;
    Problem problem_;
    int opThreads_ = 1;
};

}  // namespace

std::unique_ptr<ObjectiveRun> languageModelRun(const ExperimentConfig& config,
                                               const RunOptions& options) {
    return std::make_unique<LanguageModelRun>(config, options);
}

}  // namespace pipelens

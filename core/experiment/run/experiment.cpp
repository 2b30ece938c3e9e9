#include "experiment/run/experiment.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <new>

#include "compute/cpu_backend.hpp"
#include "data/loaders.hpp"
#include "data/memory_limit.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "experiment/run/budget.hpp"
#include "experiment/run/budget_checks.hpp"
#include "experiment/run/objective_run.hpp"
#include "experiment/run/run_reuse.hpp"
#include "experiment/run/run_warnings.hpp"
#include "experiment/run/run_work.hpp"
#include "experiment/run/shared_noise.hpp"
#include "experiment/step_size/step_tuning.hpp"
#include "replay/pipeline_replay.hpp"
#include "replay/rpd_replay.hpp"
#include "replay/schedule_views.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/run_length.hpp"
#include "util/format_number.hpp"
#include "util/input_file.hpp"
#include "util/parallel_for.hpp"

namespace pipelens {
namespace {

ScheduleParams scheduleFor(const ExperimentConfig& c, const MethodSpec& m) {
    ScheduleParams p;
    p.stages = c.stages;
    p.costs = c.costs;
    p.kind = methodInfo(m.method).schedule.value_or(ScheduleKind::PipeDream);
    switch (m.method) {
        case Method::PipeDream:
            p.noam = m.noam;
            break;
        case Method::RandomizedPipeDream:  // no slots of its own
            break;
        case Method::LocalSgd:
            p.replicas = replicasFor(m, c.stages);
            p.localSteps = m.localSteps;
            break;
        case Method::Sgd:
            // Sequential SGD: one replica, never averaged, so each microbatch waits for the last.
            p.replicas = 1;
            p.localSteps = 1 << 29;
            break;
        case Method::FillDrain:
        case Method::OneFOneB:
        case Method::ZeroBubbleH1:
            p.flushGroup = flushGroupFor(m, c.stages);
            break;
        case Method::TwoBw:
            p.flushGroup = accumulationFor(m, c.stages);
            break;
        case Method::Interleaved:
            // The model's chunks: v per device, each chunk a block of the objective.
            p.flushGroup = flushGroupFor(m, c.stages);
            p.virtualStages = m.virtualStages;
            p.stages = c.stages * m.virtualStages;
            break;
        case Method::Imported:
            p.program = importedProgram(c, m);
            p.asyncUpdate = m.asyncUpdate;
            break;
    }
    return p;
}

// Logistic regression needs labels 0 or 1 (LIBSVM files are mapped onto them when read): a
// CSV or .npy label that is neither is refused naming the file, the row and the column.
void requireZeroOneLabels(const ExperimentConfig& c, const Dataset& data) {
    const DataSpec& d = c.data;
    if (c.objective.loss != LossKind::Logistic ||
        (d.source != DataSource::Csv && d.source != DataSource::Npy))
        return;
    for (Eigen::Index i = 0; i < data.y.size(); ++i) {
        const double v = data.y[i];
        if (v == 0.0 || v == 1.0) continue;
        std::string where;
        if (d.source == DataSource::Npy) {
            where = "npy file " + showPath(resolveDataPath(c, d.y)) + ", row " + std::to_string(i) +
                    " (counting from 0)";
        } else {
            const bool pair = !d.y.empty();
            const long long column =
                pair ? 1 : (d.labelColumn < 0 ? data.X.cols() + 1 : d.labelColumn + 1);
            where = "CSV file " + showPath(resolveDataPath(c, pair ? d.y : d.x)) + ", data row " +
                    std::to_string(i + 1) + " (not counting a header), column " +
                    std::to_string(column);
        }
        throw DataError(where + ": label " + formatNumber(v) +
                        " is not allowed with objective.kind = logistic: labels must be 0 or 1");
    }
}

// Budget rule reach: the smallest N whose whole run lasts at least `slots` slots. A run's
// length never shrinks as N grows (stage 0 runs its microbatches' operations one after another),
// so that N is one more than the largest N that fits in slots - 1. ConfigError, naming the
// budget field and `who`, when that N is past the most a timeline holds.
int reachMicrobatches(const ExperimentConfig& c, const ScheduleParams& params, int slots,
                      const std::string& who) {
    const BudgetFit below = fitBudget(params, static_cast<long long>(slots) - 1);
    if (below.capped || below.microbatches >= maxMicrobatches(params.stages)) {
        throw ConfigError(
            budgetFieldText(c.budget) + " is not allowed with budget.rule = reach: " + who +
            " would run more than " + std::to_string(maxMicrobatches(params.stages)) +
            " microbatches to reach " + std::to_string(slots) +
            " slots, the most a timeline holds with stages = " + std::to_string(c.stages) +
            " (microbatches x stages x 2 <= 400000000)");
    }
    return below.microbatches + 1;
}

}  // namespace

// The noise generator is seeded with the data seed (0 for data from files) unless overridden.
GradientNoiseSpec noiseFor(const ExperimentConfig& c) {
    GradientNoiseSpec n;
    n.sigma = c.objective.gradientNoise;
    n.seed =
        c.objective.noiseSeed.value_or(c.data.source == DataSource::Synthetic ? c.data.seed : 0);
    return n;
}

void ChunkSizer::took(std::chrono::steady_clock::duration elapsed) {
    if (elapsed > kChunkTarget && steps_ > 1) {
        steps_ /= 2;
    } else if (elapsed < kChunkTarget / 4 && steps_ < kMaxSteps) {
        steps_ *= 2;
    }
}

BackendProvider cpuBackendProvider() {
    return [] { return std::make_unique<CpuBackend>(); };
}

std::shared_ptr<LinearObjective> buildObjective(const ExperimentConfig& c) {
    if (c.languageModel()) {
        // runExperiment builds the language model through its ObjectiveRun, never through here.
        throw ConfigError(
            "objective.kind = char_transformer is not allowed here: this step "
            "needs a linear model's data set (quadratic or logistic)");
    }
    Dataset data;
    const DataSpec& d = c.data;
    // Checked before the data set is allocated: a small input must not ask for a huge matrix.
    const ShapeCheck fits = [&](std::int64_t rows, std::int64_t cols) {
        // The data set, plus the model copies every method keeps (the rest is known after
        // planning).
        const std::uint64_t models = methodRunBytes(0, c.stages, 0, cols);
        const std::uint64_t all = dataBytes(rows, cols);
        requireMemory(all + std::min(models, UINT64_MAX - all),
                      "the data set (n = " + std::to_string(rows) +
                          " x d = " + std::to_string(cols) + ") and its set-up",
                      "use fewer rows or features");
    };
    if (d.source == DataSource::Synthetic) {
        fits(d.rows, d.dim);
        SyntheticSpec s;
        s.kind = d.kind;
        s.rows = d.rows;
        s.dim = d.dim;
        s.seed = d.seed;
        s.labelNoise = d.labelNoise;
        s.mu = d.mu;
        s.conditionNumber = d.conditionNumber;
        data = makeSynthetic(s);
    } else if (d.source == DataSource::Npy) {
        data = loadNpyPair(resolveDataPath(c, d.x), resolveDataPath(c, d.y), fits);
    } else if (d.source == DataSource::Csv) {
        data = d.y.empty() ? loadCsv(resolveDataPath(c, d.x), d.labelColumn, fits)
                           : loadCsvPair(resolveDataPath(c, d.x), resolveDataPath(c, d.y), fits);
    } else {
        data = loadLibsvm(resolveDataPath(c, d.x), d.libsvmDim, fits);
    }
    if (c.objective.loss == LossKind::Logistic && d.source == DataSource::Synthetic &&
        d.kind != "logistic") {
        throw ConfigError("data.kind = \"" + d.kind +
                          "\" is not allowed with objective.kind = logistic: use logistic data");
    }
    requireZeroOneLabels(c, data);
    auto obj = std::make_shared<LinearObjective>(std::move(data), c.objective.loss, c.objective.l2,
                                                 c.batchSize);
    splitBlocks(obj->dim(), c.stages);  // S <= d, with the standard message
    return obj;
}

std::optional<PlanSizes> planSizesFromConfig(const ExperimentConfig& c) {
    if (c.languageModel() || c.data.source != DataSource::Synthetic || c.batchSize < 1)
        return std::nullopt;
    return PlanSizes{static_cast<int>(c.data.rows / c.batchSize), c.data.rows, c.data.dim};
}

ExperimentPlan planExperiment(const ExperimentConfig& c, const LinearObjective& objective) {
    return planExperiment(c, PlanSizes{objective.batches(), objective.rows(), objective.dim()});
}

ExperimentPlan planExperiment(const ExperimentConfig& c, const PlanSizes& sizes) {
    ExperimentPlan plan;
    ExperimentBudget& budget = plan.budget;
    const int M = sizes.batches;
    MethodSpec pdSpec;
    pdSpec.method = Method::PipeDream;
    for (const MethodSpec& m : c.methods) {
        if (m.method == Method::PipeDream) {
            pdSpec = m;
            break;
        }
    }
    ScheduleParams pd = scheduleFor(c, pdSpec);
    // Run lengths come from closed forms (or one simulated round), never from timelines built
    // at each step of a search; every count is capped before anything is built, and an error
    // names the budget field the user set.
    if (c.budget.totalSlots > 0) {
        budget.slotBudget = c.budget.totalSlots;
        const BudgetFit fit = fitBudget(pd, budget.slotBudget);
        if (fit.capped) {
            throw ConfigError(budgetFieldText(c.budget) + " is not allowed with stages = " +
                              std::to_string(c.stages) + ": PipeDream would run more than " +
                              std::to_string(fit.microbatches) +
                              " microbatches, the most a timeline holds (microbatches x stages "
                              "x 2 <= 400000000)");
        }
        budget.pipeDreamMicrobatches = fit.microbatches;
    } else {
        budget.pipeDreamMicrobatches = pipeDreamMicrobatchesFor(c, M);
        pd.microbatches = budget.pipeDreamMicrobatches;
        const long long slots = runLengthSlots(pd);
        if (slots > std::numeric_limits<int>::max()) {
            throw ConfigError(budgetFieldText(c.budget) +
                              " is not allowed: PipeDream's run would "
                              "last more than 2147483647 slots");
        }
        budget.slotBudget = static_cast<int>(slots);
    }
    if (budget.pipeDreamMicrobatches < 1) {
        throw ConfigError(budgetFieldText(c.budget) +
                          " is not allowed: too short for a single PipeDream microbatch");
    }
    const bool truncate =
        c.budget.rule == BudgetRule::Truncate && c.budget.compare == BudgetCompare::Time;
    const bool reach =
        c.budget.rule == BudgetRule::Reach && c.budget.compare == BudgetCompare::Time;
    if (reach) {
        // PD runs the smallest N reaching the budget (its own N when the budget is PD's run
        // length: PD's run grows with every microbatch); RPD gets that run's N x S updates.
        budget.pipeDreamMicrobatches = reachMicrobatches(c, pd, budget.slotBudget, "PipeDream");
    }
    budget.updateBudget = static_cast<long long>(budget.pipeDreamMicrobatches) * c.stages;
    // Truncate with PD's N given (a microbatch or epoch budget, whose slot budget is PD's run
    // length): every pipeline method runs those N microbatches and a timeline longer than PD's is
    // cut there, as the authors' E3 notebook cuts every method's run of the same N to the
    // shortest. PD's own run is whole. With a slot budget every method runs the endless timeline
    // cut at the budget.
    const bool truncateSameN = truncate && c.budget.totalSlots == 0;
    if (truncate && !truncateSameN) {
        // RPD gets as many block updates as PD makes inside the budget.
        pd.microbatches = budget.pipeDreamMicrobatches;
        budget.updateBudget =
            updatesWithin(truncatedTimeline(pd, budget.slotBudget), budget.slotBudget);
    }
    for (const MethodSpec& m : c.methods) {
        MethodRun r;
        r.spec = m;
        r.label = m.label.empty() ? defaultMethodLabel(m, c.stages) : m.label;
        if (!r.pipeline()) {
            r.updates = budget.updateBudget;
            r.delta = deltaFor(m, c.stages);
        } else {
            r.schedule = scheduleFor(c, m);
            r.replicas = m.method == Method::LocalSgd ? r.schedule.replicas : 1;
            if (m.method == Method::FillDrain) r.stepScale = 1.0 / r.schedule.flushGroup;
            // Synchronous steps and 2BW apply the mean gradient of a step's microbatches.
            if (isProgramKind(r.schedule.kind) && !r.schedule.asyncUpdate)
                r.stepScale = 1.0 / programStepMicrobatches(r.schedule);
            if (c.budget.compare == BudgetCompare::Updates) {
                r.schedule.microbatches = budget.pipeDreamMicrobatches;
            } else if (truncateSameN) {
                r.schedule.microbatches = budget.pipeDreamMicrobatches;
                if (runLengthSlots(r.schedule) > budget.slotBudget) {
                    r.truncateSlots = budget.slotBudget;
                    r.cutOwnRun = true;
                }
            } else if (truncate) {
                r.truncateSlots = budget.slotBudget;
                r.schedule = truncatedTimeline(r.schedule, budget.slotBudget).params;
            } else if (reach) {
                r.schedule.microbatches =
                    reachMicrobatches(c, r.schedule, budget.slotBudget, r.label);
            } else {
                const BudgetFit fit = fitBudget(r.schedule, budget.slotBudget);
                if (fit.capped) {
                    throw ConfigError(budgetFieldText(c.budget) + " is not allowed: " + r.label +
                                      " would run more than " + std::to_string(fit.microbatches) +
                                      " microbatches in " + std::to_string(budget.slotBudget) +
                                      " slots, the most a timeline holds with stages = " +
                                      std::to_string(c.stages));
                }
                r.schedule.microbatches = fit.microbatches;
                if (r.schedule.microbatches < 1) {
                    throw ConfigError("budget of " + std::to_string(budget.slotBudget) +
                                      " slots is too short for one microbatch of " + r.label);
                }
            }
            if (m.method == Method::Sgd && !(truncate && !truncateSameN))
                r.schedule.localSteps = r.schedule.microbatches;
        }
        plan.runs.push_back(r);
    }
    // The methods run side by side: their memory adds up, on top of the data set's.
    std::uint64_t bytes = dataBytes(sizes.rows, sizes.dim);
    for (const MethodRun& r : plan.runs) {
        const long long n = r.pipeline() ? r.schedule.microbatches : budget.pipeDreamMicrobatches;
        // A reach run may last longer than the budget: its per-slot curve is its own length.
        const long long slots =
            reach && r.pipeline() ? runLengthSlots(r.schedule) : budget.slotBudget;
        const std::uint64_t run = methodRunBytes(n, c.stages, slots, sizes.dim);
        bytes = bytes > UINT64_MAX - run ? UINT64_MAX : bytes + run;
    }
    requireMemory(bytes,
                  "this experiment (" + budgetFieldText(c.budget) + ", stages = " +
                      std::to_string(c.stages) + ", " + std::to_string(plan.runs.size()) +
                      (plan.runs.size() == 1 ? " method)" : " methods side by side)"),
                  "a smaller budget, fewer stages or fewer methods");
    return plan;
}

std::unique_ptr<Replay> makeReplay(const ExperimentConfig& c, const MethodRun& plan,
                                   double stepSize,
                                   std::shared_ptr<const LinearObjective> objective,
                                   const BackendProvider& backend) {
    if (plan.pipeline()) {
        PipelineReplayConfig cfg;
        fillPipelineConfig(cfg, plan, stepSize);
        cfg.batchOf =
            batchSequence(plan.schedule.microbatches, objective->batches(), c.shuffle, c.seed);
        cfg.sampling = c.sampling;
        cfg.noise = noiseFor(c);
        cfg.noise.start = plan.noiseStart;
        return std::make_unique<PipelineReplay>(std::move(objective), backend(), std::move(cfg));
    }
    RpdReplayConfig cfg = rpdReplayConfig(c, plan, stepSize, *objective);
    return std::make_unique<RpdReplay>(std::move(objective), backend(), std::move(cfg));
}

RpdReplayConfig rpdReplayConfig(const ExperimentConfig& c, const MethodRun& plan, double stepSize,
                                const LinearObjective& objective) {
    RpdReplayConfig cfg;
    fillRpdConfig(cfg, c, plan, stepSize);
    cfg.stages = c.stages;
    cfg.sampling = c.sampling;
    cfg.noise = noiseFor(c);
    cfg.noise.start = plan.noiseStart;
    // RPD draws its batches from PD's schedule of N = ceil(K / S) microbatches (SPEC section 6).
    const int pdMicrobatches = static_cast<int>(pipeDreamMicrobatchesFor(plan.updates, c.stages));
    cfg.batchOf = batchSequence(pdMicrobatches, objective.batches(), c.shuffle, c.seed);
    return cfg;
}

void fillPipelineConfig(PipelineRunConfig& cfg, const MethodRun& plan, double stepSize) {
    cfg.method = plan.spec.method;
    cfg.label = plan.label;
    cfg.timeline = plan.sharedTimeline ? *plan.sharedTimeline : plannedTimeline(plan);
    cfg.replicas = plan.replicas;
    cfg.stepSize = stepSize;
    cfg.stepScale = plan.stepScale;
    cfg.optimizer = plan.spec.optimizer;
    cfg.correctors = plan.spec.correctors;
}

void fillRpdConfig(RpdRunConfig& cfg, const ExperimentConfig& c, const MethodRun& plan,
                   double stepSize) {
    cfg.label = plan.label;
    cfg.updates = plan.updates;
    cfg.stepSize = stepSize;
    cfg.delayMode = plan.spec.delayMode;
    cfg.maxDelay = plan.delta;
    cfg.order = plan.spec.order;
    cfg.seed = plan.spec.seed != 0 ? plan.spec.seed : c.seed;
    cfg.optimizer = plan.spec.optimizer;
    cfg.correctors = plan.spec.correctors;
    if (cfg.delayMode == DelayMode::PipeDream || cfg.order == StageOrder::PipeDream) {
        cfg.pipeDream = plan.sharedPipeDreamTable ? plan.sharedPipeDreamTable
                                                  : pipeDreamDelayTable(c, plan.updates);
    }
}

MethodRun withSharedSchedules(const ExperimentConfig& c, const MethodRun& planned) {
    MethodRun out = planned;
    if (planned.pipeline()) {
        if (!out.sharedTimeline)
            out.sharedTimeline = std::make_shared<const Timeline>(plannedTimeline(planned));
    } else if ((planned.spec.delayMode == DelayMode::PipeDream ||
                planned.spec.order == StageOrder::PipeDream) &&
               !out.sharedPipeDreamTable) {
        out.sharedPipeDreamTable = pipeDreamDelayTable(c, planned.updates);
    }
    return out;
}

Timeline plannedTimeline(const MethodRun& run) {
    if (run.truncateSlots <= 0) return buildTimeline(run.schedule);
    return run.cutOwnRun ? cutTimeline(buildTimeline(run.schedule), run.truncateSlots)
                         : truncatedTimeline(run.schedule, run.truncateSlots);
}

std::shared_ptr<const DelayTable> pipeDreamDelayTable(const ExperimentConfig& c,
                                                      long long updates) {
    ScheduleParams pd;
    pd.kind = ScheduleKind::PipeDream;
    pd.stages = c.stages;
    pd.costs = c.costs;
    pd.microbatches = static_cast<int>(pipeDreamMicrobatchesFor(updates, c.stages));
    return std::make_shared<DelayTable>(buildTimeline(pd));
}

RunResult runOne(const ExperimentConfig& c, const MethodRun& plan, double stepSize,
                 std::shared_ptr<const LinearObjective> objective, const BackendProvider& backend,
                 const std::atomic<bool>* cancel,
                 const std::function<void(const RunResult&, double)>& onChunk) {
    auto replay = makeReplay(c, plan, stepSize, std::move(objective), backend);
    advanceInChunks(*replay, cancel, onChunk);
    return replay->takeResult();
}

void advanceInChunks(Replay& replay, const std::atomic<bool>* cancel,
                     const std::function<void(const RunResult&, double)>& onChunk) {
    // Advance in chunks so a cancel request is seen between them. A step costs anything from
    // microseconds (S = 2, d = 8) to milliseconds (S = 128, d = 512, f after every update), so
    // the chunk is sized by time: a superseded run stops within about kChunkTarget.
    ChunkSizer chunk;
    while (!replay.done()) {
        if (cancel && cancel->load()) {
            replay.cancel();
            replay.advance(1);
            break;
        }
        const auto started = std::chrono::steady_clock::now();
        if (replay.advance(chunk.steps()) == 0) break;
        chunk.took(std::chrono::steady_clock::now() - started);
        if (onChunk) {
            const long long total = std::max(1LL, replay.totalSteps());
            onChunk(replay.result(), static_cast<double>(replay.stepsDone()) / total);
        }
    }
}

ExperimentConfig seededConfig(const ExperimentConfig& c, int seed) {
    ExperimentConfig out = c;
    if (seed == 0) return out;
    const auto add = static_cast<std::uint64_t>(seed);
    out.seed += add;
    out.objective.noiseSeed = noiseFor(c).seed + add;
    return out;
}

MethodRun seededPlan(const MethodRun& planned, int seed) {
    MethodRun out = planned;
    // 0 follows the experiment seed, which seededConfig already moved.
    if (seed != 0 && out.spec.seed != 0) out.spec.seed += static_cast<std::uint64_t>(seed);
    return out;
}

MethodRun runMethod(const ExperimentConfig& c, const MethodRun& planned,
                    std::shared_ptr<const LinearObjective> objective, const RunOptions& options,
                    size_t method) {
    MethodRun out = planned;
    out.noiseStarts.clear();  // the plan's, not the result's
    BackendProvider backend = options.backend ? options.backend : cpuBackendProvider();
    const StepSpec& step = planned.spec.step;
    const std::vector<double> steps = stepSizesOf(step);
    const int seeds = std::max(1, c.seeds);
    // One timeline (or delay table) for every step size and seed below; a single run builds
    // its own (sharing would only add a copy).
    const bool several = steps.size() > 1 || seeds > 1;
    const MethodRun shared = several ? withSharedSchedules(c, planned) : planned;
    // The stable rule reads RPD's curve after every update.
    ExperimentConfig base = c;
    if (!planned.pipeline() && step.grid && step.rule.kind == StepRule::Stable) {
        base.sampling.objectivePerUpdate = true;
    }
    ChunkPosition position;
    position.method = method;
    position.gridPoints = static_cast<int>(steps.size());
    auto one = [&](size_t stepIndex, int seed) {
        std::function<void(const RunResult&, double)> onChunk;
        if (options.onChunk && seed == 0) {  // live views follow seed 0
            position.gridIndex = static_cast<int>(stepIndex);
            onChunk = [&](const RunResult& r, double done) {
                position.fraction = done;
                options.onChunk(position, r);
            };
        }
        MethodRun plan = seededPlan(shared, seed);
        // A shared noise stream: this run's start (placeSharedNoise's order, seed-major).
        const size_t start = static_cast<size_t>(seed) * steps.size() + stepIndex;
        if (start < shared.noiseStarts.size()) plan.noiseStart = shared.noiseStarts[start];
        return runOne(seededConfig(base, seed), plan, steps[stepIndex], objective, backend,
                      options.cancel, onChunk);
    };
    TunedSteps t = tuneSteps(steps, seeds, step.rule, one, options.cancel);
    out.result = std::move(t.run);
    // A grid or seed cut short leaves the chosen run whole: the method still did not finish.
    out.result.cancelled = out.result.cancelled || t.cancelled;
    out.allDiverged = step.grid && t.allDiverged;
    out.grid = std::move(t.grid);
    out.chosen = t.chosen;
    out.curve = std::move(t.chosenCurve);
    if (step.grid) {
        for (const GridStep& g : out.grid) {
            out.sweep.push_back({g.stepSize, g.finalGap.mean, g.diverged});
        }
    }
    return out;
}

void fillPlannedViews(ExperimentResult& planned) {
    for (MethodRun& run : planned.methods) {
        RunResult& r = run.result;
        r.method = run.spec.method;
        r.label = run.label;
        r.stages = planned.config.stages;
        if (!run.pipeline()) {
            r.updates = run.updates;
            continue;
        }
        Timeline tl = plannedTimeline(run);
        r.microbatches = tl.params.microbatches;
        r.totalSlots = tl.totalSlots;
        fillScheduleViews(r, std::move(tl), run.replicas == 1);
    }
}

ExperimentResult plannedViews(const ExperimentConfig& c, const LinearObjective& objective) {
    ExperimentResult res;
    res.config = c;
    ExperimentPlan plan = planExperiment(c, objective);
    res.budget = plan.budget;
    res.methods = std::move(plan.runs);
    res.warnings = experimentWarnings(res);
    fillPlannedViews(res);
    placeUpdates(res);
    return res;
}

namespace {

class LinearModelRun final : public ObjectiveRun {
  public:
    LinearModelRun(const ExperimentConfig& c, const RunOptions& options)
        : config_(c), options_(options) {}

    ExperimentPlan prepare(ExperimentResult& res) override {
        // Synthetic data's sizes are in the config: the plan's budget and memory checks run
        // before the data set is made (generating d = 4096 takes half a minute, and a plan that
        // cannot fit must not wait for it). File data is checked against its header's shape
        // when read.
        if (const std::optional<PlanSizes> sizes = planSizesFromConfig(config_)) {
            planExperiment(config_, *sizes);
        }
        // From the cache (the app) f* and L come computed. Otherwise (the CLI) they are computed
        // on a thread of their own while the runs start: on a small problem they cost a third
        // of the run.
        try {
            if (options_.objectives) {
                objective_ = options_.objectives->get(config_, options_.onStage);
            } else {
                ObjectiveAside prepared = prepareObjectiveAside(config_, options_.onStage);
                objective_ = std::move(prepared.objective);
                constantsAside_ = std::move(prepared.constants);
            }
        } catch (const std::bad_alloc&) {
            throw outOfMemory();
        }
        if (objective_->hasOptimum() && objective_->hasSmoothness()) takeConstants(res);
        ExperimentPlan plan = planExperiment(config_, *objective_);
        placeSharedNoise(config_, plan.runs, *objective_);
        return plan;
    }

    std::vector<std::string> warnings(const ExperimentResult& res) const override {
        return experimentWarnings(res);
    }

    std::string runningLine(const ExperimentResult& res) const override {
        const size_t methods = res.methods.size();
        return "running " + std::to_string(methods) + (methods == 1 ? " method" : " methods") +
               " over " + std::to_string(res.budget.slotBudget) + " slots";
    }

    MethodRun run(const MethodRun& planned, std::size_t index) override {
        return runMethod(config_, planned, objective_, options_, index);
    }

    std::string doneDetail(const MethodRun&) const override { return ""; }

    void finish(ExperimentResult& res) override { takeConstants(res); }

  private:
    static ResourceError outOfMemory() {
        return ResourceError(
            "setting up the data set and the objective ran out of memory; "
            "use fewer rows or features");
    }

    void takeConstants(ExperimentResult& res) const {
        try {
            res.optimum = objective_->optimum();  // waits for the thread computing it, if any
            res.smoothness = objective_->smoothness();
        } catch (const std::bad_alloc&) {
            throw outOfMemory();
        }
    }

    const ExperimentConfig& config_;
    const RunOptions& options_;
    std::shared_ptr<const LinearObjective> objective_;
    std::future<void> constantsAside_;
};

}  // namespace

std::unique_ptr<ObjectiveRun> linearModelRun(const ExperimentConfig& config,
                                             const RunOptions& options) {
    return std::make_unique<LinearModelRun>(config, options);
}

ExperimentResult runExperiment(const ExperimentConfig& c, const RunOptions& options) {
    const std::unique_ptr<ObjectiveRun> objective =
        c.languageModel() ? languageModelRun(c, options) : linearModelRun(c, options);
    ExperimentResult res;
    res.config = c;
    res.backendName = options.backendName;
    res.engine = options.engine;
    ExperimentPlan plan = objective->prepare(res);
    res.budget = plan.budget;
    res.methods = std::move(plan.runs);
    res.warnings = objective->warnings(res);
    if (options.onStage) options.onStage(objective->runningLine(res));
    if (options.onPlanned) options.onPlanned(res);
    std::mutex progressMutex;
    parallelFor(res.methods.size(), options.threads, [&](size_t i) {
        MethodRun& run = res.methods[i];
        const MethodRun* reused =
            options.previous ? reusableRun(*options.previous, c, res.budget, run.spec) : nullptr;
        if (reused) {
            run = *reused;
            if (options.onChunk) {
                ChunkPosition whole{i, 0, 1, 1.0};
                options.onChunk(whole, run.result);
            }
        } else {
            run = objective->run(run, i);
        }
        if (options.progress) {
            std::string line = run.label + ": " + std::to_string(run.result.updates) +
                               " block updates" + objective->doneDetail(run);
            if (run.result.divergence.diverged) line += ", " + run.result.divergence.reason;
            std::lock_guard<std::mutex> lock(progressMutex);
            options.progress(line);
        }
    });
    res.cancelled = options.cancel && options.cancel->load();
    objective->finish(res);
    return res;
}

}  // namespace pipelens

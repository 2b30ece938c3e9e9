#include "experiment/sweep/sweep.hpp"

#include "experiment/run/objective_run.hpp"

#include <chrono>
#include <mutex>

#include "errors.hpp"
#include "experiment/output/schedule_comparison.hpp"
#include "util/format_number.hpp"
#include "util/parallel_for.hpp"

namespace pipelens {
namespace {

// One point being computed: its experiment, planned once (by whichever method gets there
// first) through its objective's ObjectiveRun, as runExperiment plans one.
struct PointWork {
    std::size_t index = 0;
    ExperimentConfig config;
    RunOptions run;  // the engine, one thread per method, the sweep's cancel flag
    std::once_flag built;
    std::unique_ptr<ObjectiveRun> objective;
    double optimum = 0.0;
    ExperimentPlan plan;
    std::vector<MethodRun> methods;
    std::size_t remaining = 0;  // methods not finished (guarded by the sweep's mutex)
    bool cancelled = false;
};

void build(PointWork& w, const SweepRunOptions& o) {
    std::call_once(w.built, [&] {
        w.run.backend = o.backend;
        w.run.lmExecutor = o.lmExecutor;
        w.run.lmRpdExecutor = o.lmRpdExecutor;
        w.run.cancel = o.cancel;
        w.run.threads = 1;
        w.objective = w.config.languageModel() ? languageModelRun(w.config, w.run)
                                               : linearModelRun(w.config, w.run);
        ExperimentResult planned;
        planned.config = w.config;
        w.plan = w.objective->prepare(planned);
        w.objective->finish(planned);  // f* and L before threads share the objective
        w.optimum = planned.optimum;
    });
}

MethodRun runPointMethod(PointWork& w, std::size_t method, const SweepRunOptions& o) {
    build(w, o);
    return w.objective->run(w.plan.runs[method], method);
}

bool outcomeCancelled(const MethodRun& m) {
    return m.result.cancelled || m.grid.empty();
}

// Work of one method of a point, for progress: its runs.
double methodWeight(const ExperimentConfig& c, std::size_t method) {
    const std::size_t steps = stepSizesOf(c.methods[method].step).size();
    return static_cast<double>(steps) * std::max(1, c.seeds);
}

}  // namespace

std::string sweepProgressLine(const SweepProgress& p) {
    std::string line = "points " + std::to_string(p.pointsDone) + "/" + std::to_string(p.points) +
                       ", " + std::to_string(std::lround(100.0 * p.fractionDone)) +
                       "% of the work, " + formatDuration(p.elapsedSeconds) + " elapsed";
    if (p.remainingSeconds >= 0) line += ", about " + formatDuration(p.remainingSeconds) + " left";
    return line;
}

PointResult makePointResult(const SweepSpec& spec, std::size_t index, double optimum,
                            const std::vector<MethodRun>& methods) {
    PointResult p;
    p.index = index;
    p.value = spec.values.at(index);
    p.seeds = spec.seeds;
    p.optimum = optimum;
    for (const MethodRun& o : methods) {
        MethodPoint m;
        m.label = o.label;
        m.method = methodName(o.spec.method);
        m.rule = o.spec.step.rule;
        m.tuned = o.spec.step.grid;
        m.chosen = o.chosen;
        m.grid = o.grid;
        const GridStep& g = o.grid.at(static_cast<std::size_t>(o.chosen));
        m.stepSize = g.stepSize;
        m.allDiverged = o.allDiverged;
        m.finalGap = g.finalGap;
        m.finalObjective = g.finalObjective;
        m.updates = o.result.updates;
        m.totalSlots = o.pipeline() ? o.result.totalSlots : 0;
        m.curveAxis = o.pipeline() ? "slot" : "update";
        m.curveMean = o.curve.mean;
        m.curveSd = o.curve.sd;
        if (spec.axis == SweepAxis::Schedule) m.schedule = scheduleStatsOf(o);
        p.methods.push_back(std::move(m));
    }
    return p;
}

std::optional<PointResult> runSweepPoint(const SweepSpec& spec, std::size_t index,
                                         const SweepRunOptions& options) {
    PointWork w;
    w.index = index;
    w.config = spec.pointConfig(index);
    for (std::size_t m = 0; m < w.config.methods.size(); ++m) {
        MethodRun o = runPointMethod(w, m, options);
        if (outcomeCancelled(o)) return std::nullopt;
        w.methods.push_back(std::move(o));
    }
    return makePointResult(spec, index, w.optimum, w.methods);
}

SweepOutcome runSweep(const SweepSpec& spec, SweepPoints done, const SweepRunOptions& options) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    SweepOutcome out;
    out.points = std::move(done);
    out.points.resize(spec.points());
    std::vector<std::unique_ptr<PointWork>> work;
    struct Job {
        PointWork* point;
        std::size_t method;
        double weight;
    };
    std::vector<Job> jobs;
    double totalWeight = 0.0;
    std::size_t pointsDone = 0;
    for (std::size_t i = 0; i < spec.points(); ++i) {
        if (out.points[i]) {
            ++pointsDone;
            continue;
        }
        auto w = std::make_unique<PointWork>();
        w->index = i;
        w->config = spec.pointConfig(i);
        w->methods.resize(w->config.methods.size());
        w->remaining = w->config.methods.size();
        for (std::size_t m = 0; m < w->config.methods.size(); ++m) {
            jobs.push_back({w.get(), m, methodWeight(w->config, m)});
            totalWeight += jobs.back().weight;
        }
        work.push_back(std::move(w));
    }
    std::mutex mutex;  // guards the points' state and the progress counters
    double weightDone = 0.0;
    parallelFor(jobs.size(), options.threads, [&](std::size_t j) {
        if (options.cancel && options.cancel->load()) return;  // jobs not started are skipped
        const Job& job = jobs[j];
        MethodRun o = runPointMethod(*job.point, job.method, options);
        std::lock_guard<std::mutex> lock(mutex);
        PointWork& w = *job.point;
        w.cancelled = w.cancelled || outcomeCancelled(o);
        w.methods[job.method] = std::move(o);
        weightDone += job.weight;
        if (--w.remaining == 0 && !w.cancelled) {
            out.points[w.index] = makePointResult(spec, w.index, w.optimum, w.methods);
            w.methods.clear();  // free the runs: the point result has what is kept
            ++pointsDone;
            if (options.onPoint) options.onPoint(*out.points[w.index]);
        }
        if (options.onProgress) {
            SweepProgress p;
            p.pointsDone = pointsDone;
            p.points = spec.points();
            p.fractionDone = totalWeight > 0 ? weightDone / totalWeight : 1.0;
            p.elapsedSeconds = std::chrono::duration<double>(Clock::now() - start).count();
            if (weightDone > 0) {
                p.remainingSeconds = p.elapsedSeconds * (totalWeight - weightDone) / weightDone;
            }
            options.onProgress(p);
        }
    });
    for (const auto& p : out.points) out.cancelled = out.cancelled || !p;
    return out;
}

}  // namespace pipelens

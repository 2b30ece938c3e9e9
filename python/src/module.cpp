// pipelens._core: the engine's entry points for the Python package (python/pipelens). The
// pure-Python side turns what these return into the public API (docs/python.md); everything here
// calls the functions the CLI calls, so validation, messages and written files are the CLI's.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_select.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/protocols/paper_protocols.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/sweep/sweep.hpp"
#include "experiment/sweep/sweep_folder.hpp"
#include "experiment/sweep/sweep_spec.hpp"
#include "limits.hpp"
#include "run_in_background.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"
#include "sweep_command.hpp"

namespace py = pybind11;

namespace pipelens::python {
namespace {

using ResultPtr = std::shared_ptr<const ExperimentResult>;

// A read-only NumPy view of `values`, kept alive by `owner` (no copy).
template <class T, class Owner>
py::array_t<T> viewOf(const std::shared_ptr<Owner>& owner, const std::vector<T>& values) {
    auto* keep = new std::shared_ptr<Owner>(owner);
    const py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Owner>*>(p); });
    py::array_t<T> array({static_cast<py::ssize_t>(values.size())}, {sizeof(T)}, values.data(),
                         base);
    array.attr("flags").attr("writeable") = false;
    return array;
}

template <class T>
py::array_t<T> copyOf(const std::vector<T>& values) {
    return py::array_t<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

const MethodRun& methodAt(const ExperimentResult& r, std::size_t i) {
    if (i >= r.methods.size()) {
        throw py::index_error("method index " + std::to_string(i) +
                              " is out of range: the result has " +
                              std::to_string(r.methods.size()) + " methods");
    }
    return r.methods[i];
}

py::dict methodInfoDict(const ExperimentResult& r, std::size_t i) {
    const MethodRun& m = methodAt(r, i);
    const RunResult& res = m.result;
    py::dict d;
    d["label"] = m.label;
    d["method"] = methodName(m.spec.method);
    d["step_size"] = res.stepSize;
    d["final_objective"] = res.finalObjective();
    d["final_gap"] = res.finalObjective() - r.optimum;
    d["initial_objective"] = res.initialObjective;
    d["updates"] = res.updates;
    d["total_slots"] = res.totalSlots;
    d["microbatches"] = res.microbatches;
    d["max_delay"] = res.maxDelay;
    d["diverged"] = res.divergence.diverged;
    d["divergence"] = res.divergence.diverged ? py::object(py::str(res.divergence.reason))
                                              : py::object(py::none());
    d["all_diverged"] = m.allDiverged;
    d["pipeline"] = m.pipeline();
    if (res.theorem) {
        py::dict t;
        t["optimisation"] = res.theorem->optimisation;
        t["noise"] = res.theorem->noise;
        t["staleness"] = res.theorem->staleness;
        t["total"] = res.theorem->total;
        d["theorem"] = t;
    } else {
        d["theorem"] = py::none();
    }
    std::vector<double> steps;
    std::vector<double> gaps;
    std::vector<bool> diverged;
    for (const SweepPoint& p : m.sweep) {
        steps.push_back(p.stepSize);
        gaps.push_back(p.finalGap);
        diverged.push_back(p.diverged);
    }
    // Lists, not arrays: a result is made without loading NumPy (pipelens imports it lazily).
    d["grid_step_size"] = steps;
    d["grid_final_gap"] = gaps;
    d["grid_diverged"] = diverged;
    return d;
}

// A curve of method i by name, as a view of the engine's own vector.
py::array curve(const ResultPtr& r, std::size_t i, const std::string& name) {
    const RunResult& res = methodAt(*r, i).result;
    if (name == "objective_per_slot") return viewOf(r, res.objectivePerSlot);
    if (name == "objective_per_update") return viewOf(r, res.objectivePerUpdate);
    if (name == "block_grad_norm_sq") return viewOf(r, res.blockGradNormSq);
    if (name == "grad_norm_sq") return viewOf(r, res.gradNormSq);
    if (name == "grad_norm_running_mean") return viewOf(r, res.gradNormRunningMean);
    if (name == "grad_norm_updates") return viewOf(r, res.gradNormUpdates);
    throw py::value_error("curve = \"" + name + "\" is not allowed: one of objective_per_slot, " +
                          "objective_per_update, block_grad_norm_sq, grad_norm_sq, " +
                          "grad_norm_running_mean, grad_norm_updates");
}

// Slot of each block update of method i (as the app's views place them): a pipeline method's
// backward slots; RPD, which has no slots, at the slots of PipeDream's updates with the same K.
// Placed on a copy, so that the result (and what save writes) stays as the run left it.
py::array_t<int> updateSlots(const ExperimentResult& r, std::size_t i) {
    const MethodRun& m = methodAt(r, i);
    ExperimentResult one;
    one.config = r.config;
    MethodRun run;
    run.spec = m.spec;
    run.updates = m.updates > 0 ? m.updates : m.result.updates;
    if (m.result.timeline) run.result.timeline = m.result.timeline;
    one.methods.push_back(std::move(run));
    placeUpdates(one);
    return copyOf(one.methods.front().updateSlot);
}

// Index of the block update that B(m, j) made, per microbatch x stage (-1: none).
std::vector<long long> updateIndex(const DelayTable& d) {
    std::vector<long long> of(static_cast<std::size_t>(d.microbatches()) * d.stages(), -1);
    for (long long k = 0; k < d.updates(); ++k) {
        const BlockUpdateInfo& u = d.update(k);
        of[static_cast<std::size_t>(u.microbatch) * d.stages() + u.stage] = k;
    }
    return of;
}

// The cells of a timeline as columns (stages from 1, as timeline_<i>.csv); version_read and
// staleness (-1 where none) from `delays` when given.
py::dict timelineColumns(const Timeline& tl, const DelayTable* delays) {
    const std::size_t n = tl.cells.size();
    std::vector<std::int32_t> slot(n), endSlot(n), stage(n), microbatch(n), version(n, -1);
    std::vector<std::int64_t> staleness(n, -1);
    std::vector<std::uint8_t> op(n);
    const std::vector<long long> updateOf =
        delays ? updateIndex(*delays) : std::vector<long long>{};
    for (std::size_t c = 0; c < n; ++c) {
        const TimelineCell& cell = tl.cells[c];
        slot[c] = cell.startSlot;
        endSlot[c] = cell.endSlot;
        stage[c] = cell.stage + 1;
        microbatch[c] = cell.microbatch;
        op[c] = static_cast<std::uint8_t>(cell.op);
        if (delays && cell.microbatch >= 0 && cell.microbatch < delays->microbatches() &&
            cell.stage < delays->stages()) {
            version[c] = delays->versionRead(cell.microbatch, cell.stage);
            if (cell.op != OpKind::Forward) {
                const long long k =
                    updateOf[static_cast<std::size_t>(cell.microbatch) * delays->stages() +
                             cell.stage];
                if (k >= 0) staleness[c] = delays->delay(k, cell.stage);
            }
        }
    }
    py::dict d;
    d["slot"] = copyOf(slot);
    d["end_slot"] = copyOf(endSlot);
    d["stage"] = copyOf(stage);
    d["op"] = copyOf(op);
    d["microbatch"] = copyOf(microbatch);
    d["version_read"] = copyOf(version);
    d["staleness"] = copyOf(staleness);
    d["averaging_slots"] = copyOf(tl.averagingSlots);
    d["total_slots"] = tl.totalSlots;
    return d;
}

py::object methodTimeline(const ExperimentResult& r, std::size_t i) {
    const RunResult& res = methodAt(r, i).result;
    if (!res.timeline) return py::none();
    return timelineColumns(*res.timeline, res.delays ? &*res.delays : nullptr);
}

// delays_<i>.csv as arrays: the K x S delays and, per update, the stage (from 1), microbatch
// and slot.
py::object methodDelays(const ExperimentResult& r, std::size_t i) {
    const RunResult& res = methodAt(r, i).result;
    if (!res.delays) return py::none();
    const DelayTable& d = *res.delays;
    const auto k = static_cast<py::ssize_t>(d.updates());
    const auto s = static_cast<py::ssize_t>(d.stages());
    py::array_t<std::int64_t> delays({k, s});
    py::array_t<std::int32_t> stage(k), microbatch(k), slot(k);
    auto dv = delays.mutable_unchecked<2>();
    auto st = stage.mutable_unchecked<1>();
    auto mb = microbatch.mutable_unchecked<1>();
    auto sl = slot.mutable_unchecked<1>();
    for (py::ssize_t u = 0; u < k; ++u) {
        const BlockUpdateInfo& info = d.update(u);
        st(u) = info.stage + 1;
        mb(u) = info.microbatch;
        sl(u) = info.slot;
        for (py::ssize_t j = 0; j < s; ++j) dv(u, j) = d.delay(u, static_cast<int>(j));
    }
    py::dict out;
    out["delays"] = delays;
    if (res.effectiveDelays) {
        // Accumulation's delays counted in the updates that took effect (docs/correctors.md).
        py::array_t<std::int64_t> effective({k, s});
        auto ev = effective.mutable_unchecked<2>();
        for (py::ssize_t u = 0; u < k; ++u) {
            for (py::ssize_t j = 0; j < s; ++j)
                ev(u, j) = res.effectiveDelays->delay(u, static_cast<int>(j));
        }
        out["effective_delays"] = effective;
    }
    out["updated_stage"] = stage;
    out["microbatch"] = microbatch;
    out["slot"] = slot;
    return out;
}

// The fraction done of a run in flight: per method, per point of its step-size grid (the grid's
// runs may go in parallel), written by the engine's threads and read by the caller.
class RunProgress {
  public:
    explicit RunProgress(const ExperimentConfig& config) {
        for (const MethodSpec& m : config.methods) {
            points_.emplace_back(std::max<std::size_t>(1, stepSizesOf(m.step).size()));
        }
    }
    void set(const ChunkPosition& at) {
        if (at.method >= points_.size()) return;
        auto& grid = points_[at.method];
        const auto i = static_cast<std::size_t>(at.gridIndex);
        if (i < grid.size()) grid[i].store(at.fraction);
    }
    double fraction() const {
        if (points_.empty()) return 0.0;
        double sum = 0.0;
        for (const auto& grid : points_) {
            double method = 0.0;
            for (const auto& f : grid) method += f.load();
            sum += method / static_cast<double>(grid.size());
        }
        return sum / static_cast<double>(points_.size());
    }

  private:
    std::vector<std::vector<std::atomic<double>>> points_;
};

// Calls progress(fraction) when the fraction moved by at least a thousandth, below 1.
std::function<void()> progressPoll(const py::object& progress, const std::function<double()>& now) {
    if (progress.is_none()) return {};
    auto last = std::make_shared<double>(-1.0);
    return [progress, now, last] {
        const double f = now();
        if (f - *last >= 1e-3 && f < 1.0) {  // 1.0 is reported once, by the caller
            *last = f;
            progress(f);
        }
    };
}

ResultPtr runConfig(const ExperimentConfig& config, int threads, const py::object& progress) {
    RunOptions options;
    options.threads = threads;
    std::atomic<bool> cancel{false};
    options.cancel = &cancel;
    auto state = std::make_shared<RunProgress>(config);
    if (!progress.is_none()) {
        options.onChunk = [state](const ChunkPosition& at, const RunResult&) { state->set(at); };
        options.progress = [](const std::string&) {};
    }
    auto result = runInBackground<ResultPtr>(
        [&]() -> ResultPtr {
            return std::make_shared<ExperimentResult>(runOnChosenEngine(config, options));
        },
        cancel, progressPoll(progress, [state] { return state->fraction(); }));
    return result;
}

// Result.save: the checks and the writer of `pipelens-cli run --out DIR`.
std::vector<std::string> saveResult(const ExperimentResult& r, const std::string& folder) {
    const std::string target = prepareResultsFolder(folder, "dir");
    const py::gil_scoped_release release;
    return writeResults(r, target);
}

py::tuple runSweepSpec(const SweepSpec& spec, int threads, const py::object& progress) {
    std::vector<std::string> notices;
    const BackendChoice backend = selectSweepBackend(spec, notices);
    SweepRunOptions options;
    options.backend = backend.provider;
    options.threads = threads;
    std::atomic<bool> cancel{false};
    options.cancel = &cancel;
    auto done = std::make_shared<std::atomic<double>>(0.0);
    options.onProgress = [done](const SweepProgress& p) { done->store(p.fractionDone); };
    const SweepOutcome outcome =
        runInBackground<SweepOutcome>([&] { return runSweep(spec, {}, options); }, cancel,
                                      progressPoll(progress, [done] { return done->load(); }));
    return py::make_tuple(sweepSummaryCsv(spec, outcome.points),
                          sweepSummaryJson(spec, outcome.points).dump(), notices);
}

py::dict reproduction(const std::string& id, bool quick, int threads, const std::string& protocol,
                      int seeds) {
    ReproduceInputs inputs;
    inputs.protocol = parseReproduceProtocol(protocol);
    inputs.seeds = seeds;
    RunOptions options;
    options.threads = threads;
    std::atomic<bool> cancel{false};
    options.cancel = &cancel;
    const Reproduction rep = runInBackground<Reproduction>(
        [&] { return reproduce(id, quick, options, inputs); }, cancel, {});
    py::list figures;
    for (const FigurePanel& f : rep.figures) {
        py::list series;
        for (const FigureSeries& s : f.series) {
            py::dict one;
            one["name"] = s.name;
            one["x"] = copyOf(s.x);
            one["y"] = copyOf(s.y);
            one["y_error"] = copyOf(s.yError);
            one["reference"] = s.reference;
            series.append(one);
        }
        py::dict fig;
        fig["file"] = f.file;
        fig["title"] = f.title;
        fig["x_title"] = f.xTitle;
        fig["y_title"] = f.yTitle;
        fig["log_x"] = f.logX;
        fig["log_y"] = f.logY;
        fig["series"] = series;
        fig["csv"] = figureCsv(f);
        figures.append(fig);
    }
    py::dict out;
    out["id"] = rep.id;
    out["figures"] = figures;
    out["summary"] = rep.summary.dump();
    return out;
}

py::dict schedule(const std::string& kind, int stages, int microbatches, int noam, int replicas,
                  int localSteps, int flushGroup, int virtualStages, int forwardSlots,
                  int backwardSlots, int weightSlots, int latencySlots, bool withDelays) {
    ScheduleParams p;
    p.kind = parseScheduleKind(kind);
    if (p.kind == ScheduleKind::Imported) {
        throw ConfigError(
            "kind = \"imported\" is not allowed here: an imported schedule comes "
            "from a file (a config's methods[i].schedule_file)");
    }
    p.stages = stages;
    p.microbatches = microbatches;
    p.noam = noam;
    p.replicas = replicas;
    p.localSteps = localSteps;
    p.flushGroup = flushGroup;
    p.virtualStages = p.kind == ScheduleKind::Interleaved ? virtualStages : 1;
    p.costs.forwardSlots = forwardSlots;
    p.costs.backwardSlots = backwardSlots;
    p.costs.weightSlots = weightSlots;
    p.costs.latencySlots = latencySlots;
    const Timeline tl = buildTimeline(p);
    std::optional<DelayTable> delays;
    if (withDelays) delays.emplace(tl);
    py::dict d = timelineColumns(tl, delays ? &*delays : nullptr);
    const Utilization u = utilization(tl);
    d["utilization"] = u.overall;
    d["bubble_fraction"] = u.bubbleFraction;
    d["per_stage_utilization"] = copyOf(u.perStage);
    d["peak_stash"] = copyOf(tl.peakStash);
    d["kind"] = scheduleKindName(tl.params.kind);
    d["stages"] = tl.params.stages;
    d["microbatches"] = tl.params.microbatches;
    return d;
}

py::list delayStatsRows(int first, int last, int microbatches, double fromFraction, int threads) {
    if (first < 1 || last > kMaxStages || first > last) {
        throw ConfigError("stages = " + std::to_string(first) + ":" + std::to_string(last) +
                          " is not allowed: integers in [1, " + std::to_string(kMaxStages) +
                          "], first <= last");
    }
    if (!(fromFraction >= 0.0 && fromFraction < 1.0)) {
        throw ConfigError("from_fraction = " + std::to_string(fromFraction) +
                          " is not allowed: a number in [0, 1)");
    }
    requireDelayStatsMemory(first, last, microbatches, threads);
    std::atomic<bool> never{false};
    const auto all = runInBackground<std::vector<DelayStats>>(
        [&] { return pipeDreamDelayStatsRange(first, last, microbatches, fromFraction, threads); },
        never, {});
    py::list out;
    for (const DelayStats& s : all) {
        py::dict d;
        d["stages"] = s.stages;
        d["microbatches"] = s.microbatches;
        d["max"] = s.max;
        d["mean"] = s.mean;
        d["p10"] = s.p10;
        d["p50"] = s.p50;
        d["p90"] = s.p90;
        d["formula"] = s.formulaMax;
        d["formula_mean"] = s.formulaMean;
        d["samples"] = s.samples;
        out.append(d);
    }
    return out;
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): pybind11 requires this exact signature
void translateErrors(std::exception_ptr error) {
    try {
        if (error) std::rethrow_exception(error);
    } catch (const ConfigError& e) {
        PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const DataError& e) {
        PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ResourceError& e) {
        PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const IoError& e) {
        PyErr_SetString(PyExc_OSError, e.what());
    } catch (const Interrupted& e) {
        PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
}

}  // namespace
}  // namespace pipelens::python

PYBIND11_MODULE(_core, m) {
    using namespace pipelens;
    using namespace pipelens::python;
    m.doc() = "PipeLens engine (C++); use the `pipelens` package, not this module.";
    py::register_exception_translator(&translateErrors);

    py::class_<ExperimentConfig>(m, "Config")
        .def_static("from_text", &ExperimentConfig::fromText, py::arg("text"), py::arg("source"),
                    py::arg("base_dir") = "")
        .def_static("from_file", &ExperimentConfig::fromFile, py::arg("path"))
        .def_static("default", &defaultExperiment)
        .def("to_json", [](const ExperimentConfig& c) { return c.toJson().dump(2); })
        .def_property_readonly("name", [](const ExperimentConfig& c) { return c.name; })
        .def_property_readonly("stages", [](const ExperimentConfig& c) { return c.stages; })
        .def_property_readonly("base_dir", [](const ExperimentConfig& c) { return c.baseDir; })
        .def("__eq__", [](const ExperimentConfig& a, const ExperimentConfig& b) {
            ExperimentConfig x = a;
            ExperimentConfig y = b;
            x.normalize();
            y.normalize();
            x.baseDir.clear();
            y.baseDir.clear();
            return x == y;
        });

    py::class_<SweepSpec>(m, "SweepSpec")
        .def_static("from_text", &SweepSpec::fromText, py::arg("text"), py::arg("source"),
                    py::arg("base_dir") = "")
        .def_static("from_file", &SweepSpec::fromFile, py::arg("path"))
        .def("to_json", [](const SweepSpec& s) { return s.toJson().dump(2); })
        .def_property_readonly("points", &SweepSpec::points);

    py::class_<ExperimentResult, std::shared_ptr<ExperimentResult>>(m, "Result")
        .def_property_readonly("config", [](const ExperimentResult& r) { return r.config; })
        .def_property_readonly("method_count",
                               [](const ExperimentResult& r) { return r.methods.size(); })
        .def_property_readonly("optimum", [](const ExperimentResult& r) { return r.optimum; })
        .def_property_readonly("smoothness", [](const ExperimentResult& r) { return r.smoothness; })
        .def_property_readonly("slot_budget",
                               [](const ExperimentResult& r) { return r.budget.slotBudget; })
        .def_property_readonly("update_budget",
                               [](const ExperimentResult& r) { return r.budget.updateBudget; })
        .def_property_readonly("backend", [](const ExperimentResult& r) { return r.backendName; })
        .def_property_readonly("engine", [](const ExperimentResult& r) { return r.engine; })
        .def_property_readonly("notices", [](const ExperimentResult& r) { return r.notices; })
        .def_property_readonly("warnings", [](const ExperimentResult& r) { return r.warnings; })
        .def_property_readonly("language_model",
                               [](const ExperimentResult& r) { return r.config.languageModel(); })
        .def("method_info", &methodInfoDict, py::arg("index"))
        .def(
            "curve",
            [](const std::shared_ptr<ExperimentResult>& r, std::size_t i, const std::string& name) {
                return curve(r, i, name);
            },
            py::arg("index"), py::arg("name"))
        .def("timeline", &methodTimeline, py::arg("index"))
        .def("update_slots", &updateSlots, py::arg("index"))
        .def("delays", &methodDelays, py::arg("index"))
        .def("summary_json", [](const ExperimentResult& r) { return summaryJson(r).dump(); })
        .def("summary_text", &summaryText)
        .def("save", &saveResult, py::arg("folder"));

    m.def(
        "run",
        [](const ExperimentConfig& c, int threads, const py::object& progress) {
            return std::const_pointer_cast<ExperimentResult>(runConfig(c, threads, progress));
        },
        py::arg("config"), py::arg("threads") = 0, py::arg("progress") = py::none());
    m.def("sweep", &runSweepSpec, py::arg("spec"), py::arg("threads") = 0,
          py::arg("progress") = py::none());
    m.def("reproduce", &reproduction, py::arg("id"), py::arg("quick"), py::arg("threads"),
          py::arg("protocol"), py::arg("seeds"));
    m.def("reproduction_ids", &knownReproductionIds);
    m.def("schedule", &schedule, py::arg("kind"), py::arg("stages"), py::arg("microbatches"),
          py::arg("noam"), py::arg("replicas"), py::arg("local_steps"), py::arg("flush_group"),
          py::arg("virtual_stages"), py::arg("forward_slots"), py::arg("backward_slots"),
          py::arg("weight_slots"), py::arg("latency_slots"), py::arg("with_delays"));
    m.def("delay_stats", &delayStatsRows, py::arg("first"), py::arg("last"),
          py::arg("microbatches"), py::arg("from_fraction"), py::arg("threads"));
    m.def("max_delay_formula", &pipeDreamMaxDelayFormula, py::arg("stages"));
}

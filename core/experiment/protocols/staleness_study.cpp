#include "experiment/protocols/staleness_study.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "cmdline/args.hpp"
#include "errors.hpp"
#include "experiment/step_size/seed_stats.hpp"
#include "util/csv_writer.hpp"
#include "util/format_number.hpp"

namespace pipelens {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxCurvePoints = 1200;
constexpr double kLogFloor = 1e-16;
constexpr int kCurveStages = 8;  // the S of the loss-curve figures

// One method of the study: its key, its label in figures and its config entry (the step size is
// added per problem).
struct StudyMethod {
    const char* key;
    const char* label;
    json spec;  // without step_size
};

std::vector<StudyMethod> studyMethods(bool languageModel) {
    const json pd = {{"method", "pd"}};
    auto corrected = [&](const json& correctors) {
        json m = pd;
        m["correctors"] = correctors;
        return m;
    };
    // LocalSGD as in the paper: R = S, H = 5 on the logistic problem (E4), H = 4 on the language
    // model (E5's middle period).
    const int localSteps = languageModel ? 4 : 5;
    return {
        {"pd", "PD", pd},
        {"pd+delay_adaptive", "PD + delay-adaptive", corrected({{{"kind", "delay_adaptive"}}})},
        {"pd+prediction_exact", "PD + prediction (exact s)",
         corrected({{{"kind", "prediction"}, {"s", "exact"}}})},
        {"pd+prediction_pipeoptim", "PD + prediction (PipeOptim s)",
         corrected({{{"kind", "prediction"}, {"s", "pipeoptim"}}})},
        {"pd+dc", "PD + DC (lambda = 0.5)", corrected({{{"kind", "dc"}}})},
        {"pd+lookahead", "PD + lookahead (beta = 0.99)", corrected({{{"kind", "lookahead"}}})},
        {"pd+accumulate_k2", "PD + accumulate (k = 2)",
         corrected({{{"kind", "accumulate"}, {"k", 2}}})},
        {"rpd",
         "RPD (delta = S^2 - S/2)",
         {{"method", "rpd"}, {"delta", -1}, {"delay_mode", "uniform"}, {"seed", 0}}},
        {"localsgd",
         languageModel ? "LocalSGD (R = S, H = 4)" : "LocalSGD (R = S, H = 5)",
         {{"method", "localsgd"}, {"local_steps", localSteps}}},
        {"1f1b", "1F1B (flush every S)", {{"method", "1f1b"}}},
    };
}

json grid(int lo, int hi) {
    return json{{"grid", json::array({lo, hi})}, {"rule", "stable"}};
}

// The problem's sizes, budget and grids.
// NOLINTNEXTLINE(bugprone-exception-escape): json's destructor may allocate (nlohmann's destroy)
struct Problem {
    std::string key;    // "logistic", "language_model"
    std::string title;  // for figures and the table
    bool languageModel = false;
    int seeds = 1;
    int slots = 0;
    int rows = 0;  // the logistic problem's n
    json pdGrid, localGrid;
    // Lookahead's update is w + beta d - gamma g: with beta = 0.99 its steady step is about
    // gamma / (1 - beta) = 100 gamma, so its grid reaches further down.
    json lookaheadGrid;
};

Problem logisticProblem(const StudyInputs& in) {
    Problem p;
    p.key = "logistic";
    p.title = in.quick ? "logistic (E4 setting, n = 20, d = 512, b = 1, sigma = 0.5)"
                       : "logistic (E4 setting, n = 50, d = 512, b = 1, sigma = 0.5)";
    p.seeds = in.seeds > 0 ? in.seeds : (in.quick ? 2 : 3);
    p.slots = in.quick ? 1000 : 3180;
    p.rows = in.quick ? 20 : 50;
    // E4's grids (the notebook's 2^-12 ... 2^-3 for PD and RPD, 2^-8 ... 2^2 for LocalSGD),
    // shortened under --quick around where E4's rule picks.
    p.pdGrid = in.quick ? grid(-9, -4) : grid(-12, -3);
    p.localGrid = in.quick ? grid(-6, -1) : grid(-8, 2);
    p.lookaheadGrid = in.quick ? grid(-15, -4) : grid(-18, -3);
    return p;
}

Problem languageModelProblem(const StudyInputs& in) {
    Problem p;
    p.key = "language_model";
    p.languageModel = true;
    p.title = "language model (C = 32, T = 16, b = 8, built-in corpus)";
    p.seeds = in.seeds > 0 ? in.seeds : 1;
    p.slots = in.quick ? 300 : 1200;
    p.pdGrid = in.quick ? grid(-4, -1) : grid(-5, -1);  // E5's grid; quick: its top four
    p.localGrid = p.pdGrid;
    p.lookaheadGrid = in.quick ? grid(-7, -2) : grid(-8, -1);
    return p;
}

json experimentConfig(const Problem& p, int stages, int seed) {
    json methods = json::array();
    for (const StudyMethod& m : studyMethods(p.languageModel)) {
        json one = m.spec;
        one["label"] = m.label;
        const std::string key = m.key;
        one["step_size"] = key == "localsgd"       ? p.localGrid
                           : key == "pd+lookahead" ? p.lookaheadGrid
                                                   : p.pdGrid;
        methods.push_back(one);
    }
    // Equal time: every method runs the same number of slots (RPD as many block updates as
    // PD's run makes in them).
    const json budget = {{"slots", p.slots}, {"compare", "time"}, {"rule", "truncate"}};
    if (p.languageModel) {
        return json{{"name", "study-staleness-lm"},
                    {"seed", 1},
                    {"stages", stages},
                    {"batch_size", 8},
                    {"backend", "cpu"},
                    {"objective",
                     {{"kind", "char_transformer"},
                      {"width", 32},
                      {"heads", 4},
                      {"context", 16},
                      {"corpus_characters", 40000},
                      {"init_seed", 1 + seed},
                      {"sample_lines", 0}}},
                    {"budget", budget},
                    {"methods", methods}};
    }
    return json{{"name", "study-staleness-logistic"},
                {"seed", 1},
                {"seeds", p.seeds},
                {"data",
                 {{"source", "synthetic"},
                  {"kind", "logistic"},
                  {"rows", p.rows},
                  {"dim", 512},
                  {"seed", 0}}},
                {"objective", {{"kind", "logistic"}, {"l2", 1e-4}, {"gradient_noise", 0.5}}},
                {"stages", stages},
                {"batch_size", 1},
                {"shuffle", false},
                {"backend", "cpu"},
                {"budget", budget},
                {"methods", methods}};
}

// The seed-mean loss curve of one method (linear models: f, from f - f* + f*), and the clock
// it runs on.
struct MethodCurves {
    std::vector<double> mean, sd;
    bool perSlot = true;  // false: per block update (RPD)
};

// The first index at which `curve` is finite and <= target, or -1.
long long firstAtOrBelow(const std::vector<double>& curve, double target) {
    for (std::size_t i = 0; i < curve.size(); ++i) {
        if (std::isfinite(curve[i]) && curve[i] <= target) return static_cast<long long>(i);
    }
    return -1;
}

FigureSeries thinned(const std::string& name, const std::vector<double>& values,
                     const std::vector<double>& sd, bool logY) {
    FigureSeries s;
    s.name = name;
    s.band = !sd.empty();
    const std::size_t n = values.size();
    const std::size_t stride =
        std::max<std::size_t>(1, (n + kMaxCurvePoints - 1) / kMaxCurvePoints);
    const auto add = [&](std::size_t i) {
        if (!std::isfinite(values[i])) return;  // before the language model's first loss
        s.x.push_back(static_cast<double>(i));
        s.y.push_back(logY ? std::max(values[i], kLogFloor) : values[i]);
        if (s.band) s.yError.push_back(std::isfinite(sd[i]) ? sd[i] : 0.0);
    };
    for (std::size_t i = 0; i < n; i += stride) add(i);
    if (n > 0 && (n - 1) % stride != 0) add(n - 1);
    return s;
}

std::string divergenceText(const MethodRun& m) {
    if (m.allDiverged) return "every step size of the grid";
    const Divergence& d = m.result.divergence;
    if (!d.diverged) return "";
    std::string s;
    if (d.slot >= 0) s = "slot " + std::to_string(d.slot);
    if (d.update >= 0) {
        s += (s.empty() ? "" : " (") + std::string("block update ") + std::to_string(d.update) +
             (s.empty() ? "" : ")");
    }
    return s.empty() ? "yes" : s;
}

// A run's loss curve: the linear models' seed-mean f - f* of the chosen step; the language
// model's logged loss after each slot (NaN before the first last-stage forward) or, for RPD,
// after each block update.
std::vector<double> lossCurve(const MethodRun& run, bool languageModel) {
    if (!languageModel) return run.curve.mean;
    return run.pipeline() ? run.result.objectivePerSlot : run.result.objectivePerUpdate;
}

// The language model's logged loss is one microbatch's: for the target and the time to it, a
// trailing mean over the last ceil(5 %) logged values (NaN until the first).
std::vector<double> trailingMean(const std::vector<double>& curve) {
    const std::size_t window = std::max<std::size_t>(1, (curve.size() + 19) / 20);
    std::vector<double> out(curve.size(), std::numeric_limits<double>::quiet_NaN());
    std::vector<double> last;
    double sum = 0.0;
    std::size_t head = 0;
    for (std::size_t i = 0; i < curve.size(); ++i) {
        if (!std::isfinite(curve[i])) continue;
        last.push_back(curve[i]);
        sum += curve[i];
        if (last.size() - head > window) sum -= last[head++];
        out[i] = sum / static_cast<double>(last.size() - head);
    }
    return out;
}

// Runs one (problem, S): every method, tuned; the language model once per seed (its config
// takes one seed: seed k changes init_seed; seeds after the first run at seed 0's step).
struct StageOutcome {
    std::vector<StudyRow> rows;
    std::vector<MethodCurves> curves;  // per method, in the f/loss unit
    // What the target and the time to it read: the curves, the language model's smoothed.
    std::vector<std::vector<double>> timed;
};

StageOutcome runStage(const Problem& p, int stages, const RunOptions& options) {
    const std::vector<StudyMethod> methods = studyMethods(p.languageModel);
    std::vector<ExperimentResult> runs;
    const int passes = p.languageModel ? p.seeds : 1;
    for (int k = 0; k < passes; ++k) {
        json config = experimentConfig(p, stages, k);
        if (k > 0) {
            for (std::size_t m = 0; m < methods.size(); ++m) {
                config["methods"][m]["step_size"] = runs.front().methods.at(m).result.stepSize;
            }
        }
        runs.push_back(runExperiment(ExperimentConfig::fromJson(config), options));
        if (runs.back().cancelled) throw Interrupted("study: stopped");
        placeUpdates(runs.back());  // the slot of every block update, for the time to target
    }
    const ExperimentResult& first = runs.front();
    // The language model has no f*: its curves are the loss itself.
    const double optimum = p.languageModel || !std::isfinite(first.optimum) ? 0.0 : first.optimum;
    StageOutcome out;
    for (std::size_t m = 0; m < methods.size(); ++m) {
        const MethodRun& run = first.methods.at(m);
        MethodCurves c;
        c.perSlot = run.pipeline();
        std::vector<double> finals;
        if (passes == 1) {
            c.mean = lossCurve(run, p.languageModel);
            if (!p.languageModel) c.sd = run.curve.sd;
        } else {
            std::vector<std::vector<double>> curves;
            std::size_t length = 0;
            for (const ExperimentResult& res : runs) {
                const MethodRun& one = res.methods.at(m);
                curves.push_back(lossCurve(one, p.languageModel));
                length = std::max(length, curves.back().size());
                finals.push_back(
                    one.grid.at(static_cast<std::size_t>(one.chosen)).finalObjective.mean);
            }
            const CurveStats stats = curveMeanAndSd(curves, length);
            c.mean = stats.mean;
            c.sd = stats.sd;
        }
        for (double& v : c.mean) v += optimum;  // f - f* back to f (the language model: f* = 0)
        StudyRow r;
        r.problem = p.key;
        r.stages = stages;
        r.method = methods[m].key;
        r.label = methods[m].label;
        r.stepSize = run.result.stepSize;
        r.tuned = run.spec.step.grid;
        r.seeds = p.seeds;
        if (passes == 1) {
            const GridStep& g = run.grid.at(static_cast<std::size_t>(run.chosen));
            r.finalMean = g.finalObjective.mean;
            r.finalSd = g.finalObjective.sd;
        } else {
            const MeanSd s = meanAndSd(finals);
            r.finalMean = s.mean;
            r.finalSd = s.sd;
        }
        r.atGridEdge =
            run.spec.step.grid && run.grid.size() > 1 &&
            (run.chosen == 0 || static_cast<std::size_t>(run.chosen) + 1 == run.grid.size());
        r.diverged = run.allDiverged || run.result.divergence.diverged;
        r.divergedAt = divergenceText(run);
        r.updates = run.result.updates;
        r.runSlots = run.pipeline() ? run.result.totalSlots : 0;
        out.rows.push_back(r);
        out.timed.push_back(p.languageModel ? trailingMean(c.mean) : c.mean);
        out.curves.push_back(std::move(c));
    }
    // The target: the loss the synchronous schedule (1F1B) reaches at half its budget (its
    // seed-mean curve at slot slots / 2, or the first loss after it where none is logged there).
    const auto oneFOneB = static_cast<std::size_t>(
        std::find_if(methods.begin(), methods.end(),
                     [](const StudyMethod& m) { return std::string(m.key) == "1f1b"; }) -
        methods.begin());
    const std::vector<double>& sync = out.timed.at(oneFOneB);
    double target = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t t = sync.size() / 2; t < sync.size(); ++t) {
        if (std::isfinite(sync[t])) {
            target = sync[t];
            break;
        }
    }
    for (std::size_t m = 0; m < methods.size(); ++m) {
        StudyRow& r = out.rows[m];
        const MethodRun& run = first.methods.at(m);
        r.target = target;
        const long long at = std::isfinite(target) ? firstAtOrBelow(out.timed[m], target) : -1;
        if (at < 0) continue;
        if (out.curves[m].perSlot) {
            r.timeSlots = at;
            if (!run.updateSlot.empty()) r.timeUpdates = run.updatesBefore(static_cast<int>(at));
        } else {
            // RPD: after `at` block updates; its update k sits at PipeDream's slot of update k.
            r.timeUpdates = at;
            if (at == 0) {
                r.timeSlots = 0;
            } else if (static_cast<std::size_t>(at) <= run.updateSlot.size()) {
                r.timeSlots = run.updateSlot[static_cast<std::size_t>(at - 1)] + 1;
            }
        }
    }
    return out;
}

std::string meanText(double mean, double sd, int seeds) {
    if (!std::isfinite(mean)) return "diverged";
    std::string s = formatNumber(mean, 4);
    if (seeds > 1) s += " ± " + formatNumber(sd, 2);
    return s;
}

std::string targetDefinition() {
    return "target = the loss 1F1B (the synchronous flush schedule) reaches at half its budget "
           "(its seed-mean curve at slot slots/2), per problem and S; time to target = the first "
           "slot after which the method's seed-mean loss is at or below it, and the block "
           "updates done by then (RPD: on PipeDream's clock of the same updates); the language "
           "model's curves read as a trailing mean over the last 5 % of logged losses";
}

}  // namespace

std::vector<std::string> studyProblems() {
    return {"logistic", "language_model"};
}

std::vector<int> studyStages(bool quick) {
    return quick ? std::vector<int>{4, 8} : std::vector<int>{4, 8, 16, 32};
}

std::vector<std::string> studyMethodKeys() {
    std::vector<std::string> keys;
    for (const StudyMethod& m : studyMethods(false)) keys.emplace_back(m.key);
    return keys;
}

StalenessStudy runStalenessStudy(const StudyInputs& inputs, const RunOptions& options,
                                 const std::function<void(const std::string&)>& progress) {
    if (inputs.seeds < 0 || inputs.seeds > kMaxStudySeeds) {
        throw ConfigError("--seeds = " + std::to_string(inputs.seeds) + " is not allowed: 1 ... " +
                          std::to_string(kMaxStudySeeds));
    }
    const std::vector<std::string> known = studyProblems();
    for (const std::string& key : inputs.problems) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            throw ConfigError("--problem = \"" + cmdline::shownValue(key) +
                              "\" is not allowed: logistic or language_model");
        }
        if (std::count(inputs.problems.begin(), inputs.problems.end(), key) > 1) {
            throw ConfigError("--problem = \"" + cmdline::shownValue(key) +
                              "\" is given twice: name each problem once");
        }
    }
    const auto wanted = [&](const std::string& key) {
        return inputs.problems.empty() || std::find(inputs.problems.begin(), inputs.problems.end(),
                                                    key) != inputs.problems.end();
    };
    std::vector<Problem> selected;
    for (const Problem& p : {logisticProblem(inputs), languageModelProblem(inputs)}) {
        if (wanted(p.key)) selected.push_back(p);
    }
    StalenessStudy study;
    const std::vector<int> stages = studyStages(inputs.quick);
    json problems = json::array();
    for (const Problem& p : selected) {
        const std::vector<StudyMethod> methods = studyMethods(p.languageModel);
        const bool logY = !p.languageModel;
        FigurePanel finals{"final_loss_" + p.key,
                           "Final loss vs S: " + p.title,
                           "stages S",
                           p.languageModel ? "final training loss (nats)" : "final f",
                           true,
                           logY,
                           {}};
        for (const StudyMethod& m : methods)
            finals.series.push_back({m.label, {}, {}, false, true, {}});
        FigurePanel curves{
            "curves_" + p.key + "_s" + std::to_string(kCurveStages),
            "Loss curves at S = " + std::to_string(kCurveStages) + ": " + p.title,
            "simulated time (slots)",
            p.languageModel ? "last-stage forward loss, trailing mean over 5 % (nats)" : "f",
            false,
            logY,
            {}};
        for (const int s : stages) {
            const StageOutcome o = runStage(p, s, options);
            for (std::size_t m = 0; m < o.rows.size(); ++m) {
                const StudyRow& r = o.rows[m];
                if (std::isfinite(r.finalMean)) {
                    finals.series[m].x.push_back(s);
                    finals.series[m].y.push_back(logY ? std::max(r.finalMean, kLogFloor)
                                                      : r.finalMean);
                    finals.series[m].yError.push_back(std::isfinite(r.finalSd) ? r.finalSd : 0.0);
                }
                study.rows.push_back(r);
                const std::string key = methods[m].key;
                const bool curve = key == "pd" || key.rfind("pd+", 0) == 0 || key == "1f1b";
                if (s == kCurveStages && curve) {
                    curves.series.push_back(thinned(
                        r.label, p.languageModel ? o.timed[m] : o.curves[m].mean,
                        p.seeds > 1 && !p.languageModel ? o.curves[m].sd : std::vector<double>{},
                        logY));
                }
            }
            if (progress) progress(p.key + ", S = " + std::to_string(s) + " done");
        }
        study.figures.push_back(finals);
        if (!curves.series.empty()) study.figures.push_back(curves);
        problems.push_back({{"problem", p.key},
                            {"title", p.title},
                            {"seeds", p.seeds},
                            {"slots", p.slots},
                            {"grid_pd_rpd_1f1b", p.pdGrid},
                            {"grid_localsgd", p.localGrid},
                            {"example_config", experimentConfig(p, stages.front(), 0)}});
    }
    json rows = json::array();
    for (const StudyRow& r : study.rows) {
        const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(); };
        const auto count = [](long long v) { return v >= 0 ? json(v) : json(); };
        rows.push_back({{"problem", r.problem},
                        {"stages", r.stages},
                        {"method", r.method},
                        {"label", r.label},
                        {"step_size", r.stepSize},
                        {"seeds", r.seeds},
                        {"final_loss_mean", num(r.finalMean)},
                        {"final_loss_sd", num(r.finalSd)},
                        {"target", num(r.target)},
                        {"time_to_target_slots", count(r.timeSlots)},
                        {"time_to_target_block_updates", count(r.timeUpdates)},
                        {"step_at_grid_edge", r.atGridEdge},
                        {"diverged", r.diverged},
                        {"diverged_at", r.divergedAt},
                        {"updates", r.updates},
                        {"slots", r.runSlots}});
    }
    study.summary = {{"study", "staleness"},
                     {"quick", inputs.quick},
                     {"stages", stages},
                     {"step_rule", "stable over each method's grid, per (method, S)"},
                     {"target", targetDefinition()},
                     {"problems", problems},
                     {"rows", rows}};
    return study;
}

std::string studyCsv(const StalenessStudy& study) {
    CsvWriter s;
    s.plain(
         "problem,stages,method,label,step_size,seeds,final_loss_mean,final_loss_sd,target,"
         "time_to_target_slots,time_to_target_block_updates,diverged,diverged_at,updates,slots,"
         "step_at_grid_edge")
        .endRow();
    for (const StudyRow& r : study.rows) {
        s.text(r.problem).integer(r.stages).text(r.method).label(r.label).number(r.stepSize);
        s.integer(r.seeds).number(r.finalMean).number(r.finalSd).number(r.target);
        if (r.timeSlots >= 0) {
            s.integer(r.timeSlots);
        } else {
            s.empty();
        }
        if (r.timeUpdates >= 0) {
            s.integer(r.timeUpdates);
        } else {
            s.empty();
        }
        s.text(r.diverged ? "yes" : "no")
            .label(r.divergedAt)
            .integer(r.updates)
            .integer(r.runSlots)
            .text(r.atGridEdge ? "yes" : "no");
        s.endRow();
    }
    return s.take();
}

std::string studyMarkdown(const StalenessStudy& study) {
    std::ostringstream md;
    md << "# Staleness study" << (study.summary.value("quick", false) ? " (--quick)" : "")
       << "\n\nWritten by `pipelens-cli study staleness` (docs/correctors.md, \"Study\"). Each "
          "method's step size γ is tuned per (method, S) by the stable rule over its grid; the "
          "final loss is the mean ± sd over seeds (linear model: f; language model: the final "
          "training loss). "
       << targetDefinition()
       << ". \"not reached\": never at or below the target within the budget. Diverged: the "
          "chosen run diverged (where), or every step size of the grid did. γ*: the rule chose an "
          "end of the grid.\n";
    std::string problem;
    int stages = -1;
    for (const StudyRow& r : study.rows) {
        if (r.problem != problem || r.stages != stages) {
            problem = r.problem;
            stages = r.stages;
            md << "\n## " << r.problem << ", S = " << r.stages << " (target "
               << (std::isfinite(r.target) ? formatNumber(r.target, 4) : std::string("none"))
               << ")\n\n| method | γ | final loss | time to target (slots) | (block updates) | "
                  "diverged |\n|---|---|---|---|---|---|\n";
        }
        const auto time = [](long long v) {
            return v >= 0 ? std::to_string(v) : std::string("not reached");
        };
        md << "| " << r.label << " | " << formatNumber(r.stepSize, 4) << (r.atGridEdge ? "*" : "")
           << " | " << meanText(r.finalMean, r.finalSd, r.seeds) << " | "
           << (r.timeSlots < 0 && r.timeUpdates >= 0 ? std::string("—") : time(r.timeSlots))
           << " | "
           << (r.timeUpdates < 0 && r.timeSlots >= 0 ? std::string("—") : time(r.timeUpdates))
           << " | " << (r.diverged ? "yes: " + r.divergedAt : std::string("no")) << " |\n";
    }
    return md.str();
}

}  // namespace pipelens

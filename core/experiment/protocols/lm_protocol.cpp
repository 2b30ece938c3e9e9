#include "experiment/protocols/lm_protocol.hpp"

#include <chrono>
#include <cmath>

#include "errors.hpp"
#include "experiment/run/lm_experiment.hpp"

namespace pipelens {
namespace {

using nlohmann::json;

constexpr double kPaperStep = 0.125;

struct E5Size {
    int stages, width, heads, context, batch, slots;
    long long builtInCharacters;
};

json e5Config(const E5Size& z, const ReproduceInputs& in) {
    const json step =
        in.paperStep ? json(kPaperStep) : json{{"grid", json::array({-5, -1})}, {"rule", "stable"}};
    json objective = {{"kind", "char_transformer"}, {"width", z.width}, {"heads", z.heads},
                      {"context", z.context},       {"init_seed", 1},   {"sample_lines", 1},
                      {"sample_length", 120}};
    if (in.corpus.empty()) {
        objective["corpus_characters"] = z.builtInCharacters;
    } else {
        objective["corpus"] = in.corpus;
    }
    json methods = json::array({{{"method", "pd"}, {"step_size", step}}});
    for (int h : {1, 4, 8}) {
        methods.push_back({{"method", "localsgd"},
                           {"replicas", z.stages},
                           {"local_steps", h},
                           {"step_size", step}});
    }
    // Float, as the authors' PyTorch model; the truncate rule, the authors' budget rule.
    return json{{"name", "E5"},
                {"seed", 1},
                {"stages", z.stages},
                {"batch_size", z.batch},
                {"backend", "cpu"},
                {"precision", "float"},
                {"objective", objective},
                {"budget", {{"slots", z.slots}, {"compare", "time"}, {"rule", "truncate"}}},
                {"methods", methods}};
}

FigureSeries forwardLossCurve(const MethodRun& m) {
    FigureSeries s;
    s.name = m.label;
    const auto& perSlot = m.result.objectivePerSlot;
    for (std::size_t t = 0; t < perSlot.size(); ++t) {
        if (std::isnan(perSlot[t])) continue;  // before the first last-stage forward
        s.x.push_back(static_cast<double>(t));
        s.y.push_back(perSlot[t]);
    }
    return s;
}

json methodSummary(const MethodRun& m) {
    json grid = json::array();
    for (const GridStep& g : m.grid) {
        grid.push_back(
            {{"step_size", g.stepSize},
             {"final_loss",
              std::isfinite(g.finalObjective.mean) ? json(g.finalObjective.mean) : json(nullptr)},
             {"diverged", g.diverged},
             {"stable", g.tail.stable()},
             {"tail_mean",
              std::isfinite(g.tail.tailMean) ? json(g.tail.tailMean) : json(nullptr)}});
    }
    const RunResult& r = m.result;
    json j = {
        {"label", m.label},
        {"step_size", r.stepSize},
        {"final_loss", std::isfinite(lmOf(m).finalLoss) ? json(lmOf(m).finalLoss) : json(nullptr)},
        {"last_forward_loss", lmOf(m).log.forwardLosses.empty()
                                  ? json(nullptr)
                                  : json(lmOf(m).log.forwardLosses.back().loss)},
        {"updates", r.updates},
        {"microbatches_started", r.microbatches},
        {"diverged", r.divergence.diverged},
        {"all_diverged", m.allDiverged},
        {"grid", grid},
        {"sample", lmOf(m).samples.empty() ? json(nullptr) : json(lmOf(m).samples.front())}};
    if (r.divergence.diverged) j["divergence"] = r.divergence.reason;
    return j;
}

}  // namespace

Reproduction reproduceE5(bool quick, const ReproduceInputs& in, const RunOptions& options) {
    const E5Size z =
        quick ? E5Size{4, 32, 4, 16, 8, 600, 40'000} : E5Size{16, 256, 4, 32, 16, 2080, 1'000'000};
    const json config = e5Config(z, in);
    const auto started = std::chrono::steady_clock::now();
    const ExperimentResult res = runExperiment(ExperimentConfig::fromJson(config), options);
    if (res.cancelled) throw ConfigError("reproduce: cancelled");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    Reproduction r;
    r.id = "E5";
    FigurePanel f{"figure",
                  "E5: PD vs LocalSGD on the language model (S = " + std::to_string(z.stages) +
                      ", C = " + std::to_string(z.width) + ", equal time)",
                  "simulated time (slots)",
                  "last-stage forward loss (nats)",
                  false,
                  false,
                  {}};
    json methods = json::array();
    for (const MethodRun& m : res.methods) {
        f.series.push_back(forwardLossCurve(m));
        methods.push_back(methodSummary(m));
    }
    r.figures.push_back(f);
    const CharTransformerProblem& p = *res.lmProblem;
    r.summary = {
        {"experiment", "E5"},
        {"quick", quick},
        {"config", config},
        {"corpus", p.corpus.source},
        {"corpus_is_built_in", in.corpus.empty()},
        {"vocabulary", p.corpus.vocabSize()},
        {"parameters", p.layout.size()},
        {"slots", res.budget.slotBudget},
        {"step_size_choice", in.paperStep ? "the paper's 0.125 for every method (--paper-step)"
                                          : "stable rule over 2^-5 ... 2^-1 on each method's "
                                            "per-slot forward-loss curve"},
        {"final_loss_is", "mean of the last ceil(10 %) last-stage forward losses"},
        {"methods", methods},
        {"run_seconds", seconds},
        {"warnings", res.warnings},
        {"paper",
         {{"corpus", "Tiny Shakespeare"},
          {"step_size", kPaperStep},
          {"final_forward_loss",
           {{"pd", 2.6}, {"localsgd_h4", 2.75}, {"localsgd_h8", 2.75}, {"localsgd_h1", 2.9}}}}}};
    if (in.corpus.empty()) {
        r.summary["note"] =
            "no --corpus: the built-in corpus, not Tiny Shakespeare; its losses are "
            "not comparable with the paper's numbers, only the methods' order is";
    }
    return r;
}

}  // namespace pipelens

#include "experiment/config/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "errors.hpp"
#include "experiment/config/lm_config.hpp"
#include "experiment/config/object_reader.hpp"
#include "schedule/program.hpp"
#include "schedule/program_schedules.hpp"
#include "schedule/pytorch_csv.hpp"
#include "util/input_file.hpp"

namespace pipelens {
namespace {

using nlohmann::json;

const std::vector<std::string> kSyntheticKinds{"random", "simple", "tridiagonal", "logistic"};

std::string show(const json& v) {
    return showConfigValue(v);
}

// [first, last] with 0 <= first < last, finite.
std::optional<std::array<double, 2>> readRange(ObjectReader& r, const std::string& key) {
    if (!r.has(key)) return std::nullopt;
    const json& v = r.at(key);
    const std::string allowed = "[first, last], two finite numbers with 0 <= first < last";
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
        throw ConfigError(r.field(key) + " = " + show(v) + " is not allowed: " + allowed);
    }
    const std::array<double, 2> range{v[0].get<double>(), v[1].get<double>()};
    if (!std::isfinite(range[0]) || !std::isfinite(range[1]) || range[0] < 0.0 ||
        !(range[0] < range[1])) {
        throw ConfigError(r.field(key) + " = " + show(v) + " is not allowed: " + allowed);
    }
    return range;
}

ViewState readView(const json& j) {
    ObjectReader r(j, "view");
    ViewState v;
    v.ganttMethod = r.text("gantt_method", "");
    v.xAxis = r.choice("x_axis", LossXAxis::Slots, kLossXAxes);
    v.logY = r.boolean("log_y", true);
    v.logX = r.boolean("log_x", false);
    v.theoremChart = r.boolean("theorem_chart", false);
    v.cursor = static_cast<int>(r.integer("cursor", -1, limits::kCursor));
    v.ganttRange = readRange(r, "gantt_range");
    v.heatmapRange = readRange(r, "heatmap_range");
    r.rejectUnknown();
    return v;
}

json viewJson(const ViewState& v) {
    json j = {{"gantt_method", v.ganttMethod},
              {"x_axis", enumName(kLossXAxes, v.xAxis)},
              {"log_y", v.logY},
              {"log_x", v.logX},
              {"theorem_chart", v.theoremChart},
              {"cursor", v.cursor}};
    if (v.ganttRange) j["gantt_range"] = {(*v.ganttRange)[0], (*v.ganttRange)[1]};
    if (v.heatmapRange) j["heatmap_range"] = {(*v.heatmapRange)[0], (*v.heatmapRange)[1]};
    return j;
}

StepSpec readStep(ObjectReader& r) {
    StepSpec s;
    if (!r.has("step_size")) {
        throw ConfigError(r.field("step_size") +
                          " is missing: " + std::string(limits::kStepSize.allowed) +
                          ", or {\"grid\": [a_min, a_max]} for 2^a");
    }
    const json& v = r.at("step_size");
    if (v.is_number()) {
        s.value = r.number("step_size", 0.0, limits::kStepSize);
        return s;
    }
    if (!v.is_object()) {
        throw ConfigError(r.field("step_size") + " = " + show(v) +
                          " is not allowed: " + std::string(limits::kStepSize.allowed) +
                          ", or {\"grid\": [a_min, a_max]}");
    }
    ObjectReader g(v, r.field("step_size"));
    if (!g.has("grid")) throw ConfigError(r.field("step_size") + ".grid is missing");
    const json& range = g.at("grid");
    long long lo = 0;
    long long hi = 0;
    // Read as 64-bit and range-checked before narrowing: 2^32 must not become 0.
    if (!range.is_array() || range.size() != 2 || !range[0].is_number_integer() ||
        !range[1].is_number_integer() ||
        !wholeNumberIn(range[0], limits::kGridExponent.lo, limits::kGridExponent.hi, lo) ||
        !wholeNumberIn(range[1], limits::kGridExponent.lo, limits::kGridExponent.hi, hi) ||
        lo > hi) {
        throw ConfigError(r.field("step_size.grid") + " = " + show(range) +
                          " is not allowed: [a_min, a_max], " +
                          std::string(limits::kGridExponent.allowed));
    }
    if (g.has("rule")) s.rule = parseStepRuleSpec(g.at("rule"), g.field("rule"));
    g.rejectUnknown();
    s.grid = true;
    s.gridMin = static_cast<int>(lo);
    s.gridMax = static_cast<int>(hi);
    return s;
}

json stepJson(const StepSpec& s) {
    if (s.grid) return json{{"grid", {s.gridMin, s.gridMax}}, {"rule", stepRuleJson(s.rule)}};
    return s.value;
}

}  // namespace

OptimizerSpec readOptimizer(const json& v, const std::string& path) {
    ObjectReader r(v, path);
    OptimizerSpec o;
    if (!r.has("kind")) {
        throw ConfigError(path + ".kind is missing: one of " + enumNameList(kOptimizerKinds));
    }
    o.kind = r.choice("kind", OptimizerKind::Sgd, kOptimizerKinds);
    // Only the kind's own keys are read: another kind's key is refused as unknown, listing these.
    if (o.kind == OptimizerKind::Momentum || o.kind == OptimizerKind::Nesterov) {
        o.beta = r.number("beta", o.beta, limits::kOptimizerBeta);
    } else if (o.kind == OptimizerKind::Adam || o.kind == OptimizerKind::AdamW) {
        o.beta1 = r.number("beta1", o.beta1, limits::kOptimizerBeta);
        o.beta2 = r.number("beta2", o.beta2, limits::kOptimizerBeta);
        o.eps = r.number("eps", o.eps, limits::kOptimizerEps);
    }
    o.weightDecay = r.number("weight_decay", defaultWeightDecay(o.kind), limits::kWeightDecay);
    r.rejectUnknown();
    return o;
}

json optimizerJson(const OptimizerSpec& o) {
    json j{{"kind", enumName(kOptimizerKinds, o.kind)}};
    if (o.kind == OptimizerKind::Momentum || o.kind == OptimizerKind::Nesterov) j["beta"] = o.beta;
    if (o.kind == OptimizerKind::Adam || o.kind == OptimizerKind::AdamW) {
        j["beta1"] = o.beta1;
        j["beta2"] = o.beta2;
        j["eps"] = o.eps;
    }
    j["weight_decay"] = o.weightDecay;
    return j;
}

json correctorsJson(const CorrectorSpec& c) {
    json list = json::array();
    if (c.delayAdaptive) {
        list.push_back({{"kind", "delay_adaptive"},
                        {"tau_ref", c.tauRef},
                        {"per_block", c.perBlock},
                        {"unit", enumName(kDelayUnits, c.unit)}});
    }
    if (c.prediction) {
        list.push_back({{"kind", "prediction"}, {"s", enumName(kPredictionSteps, c.steps)}});
    }
    if (c.dc) list.push_back({{"kind", "dc"}, {"lambda", c.lambda}});
    if (c.lookahead) list.push_back({{"kind", "lookahead"}, {"beta", c.beta}});
    if (c.accumulate > 1) list.push_back({{"kind", "accumulate"}, {"k", c.accumulate}});
    return list;
}

CorrectorSpec readCorrectors(const json& v, const std::string& path,
                             std::vector<CorrectorKind>* order) {
    if (!v.is_array()) {
        throw ConfigError(path + " = " + show(v) +
                          " is not allowed: a list of correctors, each {\"kind\": one of " +
                          enumNameList(kCorrectorKinds) + ", ...}");
    }
    CorrectorSpec c;
    std::vector<CorrectorKind> seen;
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string at = path + "[" + std::to_string(i) + "]";
        ObjectReader r(v[i], at);
        if (!r.has("kind")) {
            throw ConfigError(at + ".kind is missing: one of " + enumNameList(kCorrectorKinds));
        }
        const CorrectorKind kind = r.choice("kind", CorrectorKind::DelayAdaptive, kCorrectorKinds);
        if (std::find(seen.begin(), seen.end(), kind) != seen.end()) {
            throw ConfigError(at + ".kind = " + show(json(enumName(kCorrectorKinds, kind))) +
                              " is not allowed: each corrector at most once per method");
        }
        seen.push_back(kind);
        if (order != nullptr) order->push_back(kind);
        switch (kind) {
            case CorrectorKind::DelayAdaptive:
                c.delayAdaptive = true;
                c.tauRef = r.number("tau_ref", 0.0, limits::kTauRef);
                c.perBlock = r.boolean("per_block", false);
                c.unit = r.choice("unit", DelayUnit::BlockUpdates, kDelayUnits);
                break;
            case CorrectorKind::Prediction:
                c.prediction = true;
                c.steps = r.choice("s", PredictionSteps::Exact, kPredictionSteps);
                break;
            case CorrectorKind::DelayCompensation:
                c.dc = true;
                c.lambda = r.number("lambda", c.lambda, limits::kDcLambda);
                break;
            case CorrectorKind::Lookahead:
                c.lookahead = true;
                c.beta = r.number("beta", c.beta, limits::kOptimizerBeta);
                break;
            case CorrectorKind::Accumulate:
                c.accumulate = static_cast<int>(r.integer("k", 2, limits::kAccumulateK));
                break;
        }
        r.rejectUnknown();
    }
    return c;
}

namespace {

void checkCorrectorsFit(const MethodSpec& m, const std::string& path,
                        const std::vector<CorrectorKind>& order);

MethodSpec readMethod(const json& v, const std::string& path) {
    ObjectReader r(v, path);
    MethodSpec m;
    if (!r.has("method")) throw ConfigError(path + ".method is missing: one of " + methodKeyList());
    std::vector<std::string> keys;
    keys.reserve(kMethods.size());
    for (const MethodInfo& info : kMethods) keys.emplace_back(info.key);
    m.method = parseMethod(r.text("method", "", keys), r.field("method"));
    m.label = r.text("label", "");
    m.step = readStep(r);
    if (m.method == Method::PipeDream) {
        m.noam = static_cast<int>(r.integer("noam", 0, limits::kNoam));
    } else if (m.method == Method::LocalSgd) {
        m.replicas = static_cast<int>(r.integer("replicas", 0, limits::kReplicas));
        m.localSteps = static_cast<int>(r.integer("local_steps", 5, limits::kLocalSteps));
    } else if (m.method == Method::FillDrain || m.method == Method::OneFOneB ||
               m.method == Method::ZeroBubbleH1) {
        m.flushGroup = static_cast<int>(r.integer("flush_group", 0, limits::kFlushGroup));
    } else if (m.method == Method::Interleaved) {
        m.flushGroup = static_cast<int>(r.integer("flush_group", 0, limits::kFlushGroup));
        m.virtualStages = static_cast<int>(r.integer("virtual_stages", 2, limits::kVirtualStages));
    } else if (m.method == Method::TwoBw) {
        m.accumulation = static_cast<int>(r.integer("accumulation", 0, limits::kAccumulation));
    } else if (m.method == Method::Imported) {
        if (!r.has("schedule_file")) {
            throw ConfigError(path +
                              ".schedule_file is missing: the PyTorch schedule CSV to train on");
        }
        m.scheduleFile = r.text("schedule_file", "");
        if (m.scheduleFile.empty()) {
            throw ConfigError(path + ".schedule_file = \"\" is not allowed: a CSV file's path");
        }
        m.asyncUpdate = r.text("update", "sync", {"sync", "async"}) == "async";
    } else if (m.method == Method::RandomizedPipeDream) {
        m.delayMode =
            parseDelayMode(r.text("delay_mode", "uniform", {"uniform", "max", "zero", "pd"}));
        m.delta = r.integer("delta", -1, limits::kDelta);
        m.order = parseStageOrder(r.text("order", "uniform", {"uniform", "pd"}));
        m.seed = static_cast<std::uint64_t>(r.integer("seed", 0, limits::kSeed));
    }
    if (r.has("optimizer")) m.optimizer = readOptimizer(r.at("optimizer"), r.field("optimizer"));
    if (r.has("correctors")) {
        // Checked against the method here, while the file's order of the list is known, so a
        // message points at the entry the file has there (validate() checks again).
        std::vector<CorrectorKind> order;
        m.correctors = readCorrectors(r.at("correctors"), r.field("correctors"), &order);
        checkCorrectorsFit(m, path, order);
    }
    r.rejectUnknown();
    return m;
}

}  // namespace

std::string resolveDataPath(const ExperimentConfig& c, const std::string& p) {
    if (p.empty() || c.baseDir.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (std::filesystem::path(c.baseDir) / p).string();
}

std::string defaultMethodLabel(const MethodSpec& m, int stages) {
    std::ostringstream s;
    if (m.method == Method::PipeDream) {
        s << "PipeDream";
        if (m.noam > 0 && m.noam != stages) s << " (NOAM=" << m.noam << ")";
    } else if (m.method == Method::RandomizedPipeDream) {
        s << "RPD (" << delayModeName(m.delayMode);
        if (m.delayMode != DelayMode::PipeDream && m.delayMode != DelayMode::Zero) {
            s << ", delta=" << deltaFor(m, stages);
        }
        if (m.order == StageOrder::PipeDream) s << ", PD order";
        s << ")";
    } else if (m.method == Method::LocalSgd) {
        s << "LocalSGD (R=" << replicasFor(m, stages) << ", H=" << m.localSteps << ")";
    } else if (m.method == Method::Sgd) {
        s << "SGD (sequential)";
    } else if (m.method == Method::OneFOneB) {
        s << "1F1B flush (M=" << flushGroupFor(m, stages) << ")";
    } else if (m.method == Method::ZeroBubbleH1) {
        s << "ZB-H1 (M=" << flushGroupFor(m, stages) << ")";
    } else if (m.method == Method::Interleaved) {
        s << "Interleaved (v=" << m.virtualStages << ", M=" << flushGroupFor(m, stages) << ")";
    } else if (m.method == Method::TwoBw) {
        s << "2BW (m=" << accumulationFor(m, stages) << ")";
    } else if (m.method == Method::Imported) {
        s << std::filesystem::path(m.scheduleFile).filename().string() << " ("
          << (m.asyncUpdate ? "async" : "sync") << ")";
    } else {
        s << "Fill-drain (G=" << flushGroupFor(m, stages) << ")";
    }
    const OptimizerSpec& o = m.optimizer;
    if (o.kind == OptimizerKind::Momentum || o.kind == OptimizerKind::Nesterov) {
        s << " + " << (o.kind == OptimizerKind::Momentum ? "momentum" : "Nesterov")
          << " (beta=" << o.beta << ")";
    } else if (o.kind == OptimizerKind::Adam || o.kind == OptimizerKind::AdamW) {
        s << " + " << (o.kind == OptimizerKind::Adam ? "Adam" : "AdamW");
    }
    if (o.weightDecay != defaultWeightDecay(o.kind)) s << " (wd=" << o.weightDecay << ")";
    if (m.correctors.any()) s << " + " << correctorSummary(m.correctors);
    return s.str();
}

namespace {

// fromJson's steps, one per top-level object; each marks the keys it reads on `r`.
void readObjectiveInto(ObjectReader& r, const json& j, ExperimentConfig& c) {
    if (r.has("objective")) {
        ObjectReader o(r.at("objective"), "objective");
        const std::string kind =
            o.text("kind", "quadratic", {"quadratic", "logistic", "char_transformer"});
        if (kind == "char_transformer") {
            refuseLinearOnlyKeys(j);
            c.objective.languageModel = readLanguageModel(o, c.seed);
            o.rejectUnknown();
        }
    }
    if (r.has("objective") && !c.languageModel()) {
        ObjectReader o(r.at("objective"), "objective");
        c.objective.loss = parseLossKind(o.text("kind", "quadratic", {"quadratic", "logistic"}));
        c.objective.l2 =
            o.number("l2", c.objective.loss == LossKind::Logistic ? 1e-4 : 0.0, limits::kL2);
        c.objective.gradientNoise = o.number("gradient_noise", 0.0, limits::kGradientNoise);
        if (o.has("noise_seed")) {
            c.objective.noiseSeed =
                static_cast<std::uint64_t>(o.integer("noise_seed", 0, limits::kSeed));
        }
        c.objective.noiseStream = o.choice("noise_stream", NoiseStream::PerRun, kNoiseStreams);
        // A file asking for a shared stream of no noise has a key that would do nothing: refused.
        // (A sweep point or the app setting sigma to 0 later just runs without noise.)
        if (c.objective.noiseStream == NoiseStream::Shared && !(c.objective.gradientNoise > 0.0)) {
            throw ConfigError(
                "objective.noise_stream = \"shared\" is not allowed with "
                "objective.gradient_noise = " +
                (o.has("gradient_noise") ? show(o.at("gradient_noise")) : "0 (the default)") +
                ": a shared stream needs gradient noise (gradient_noise > 0); use \"per_run\" "
                "or leave the key out");
        }
        o.rejectUnknown();
    }
}

void readDataInto(ObjectReader& r, ExperimentConfig& c) {
    if (r.has("data")) {
        ObjectReader d(r.at("data"), "data");
        DataSpec& s = c.data;
        s.source = d.choice("source", DataSource::Synthetic, kDataSources);
        if (s.source == DataSource::Synthetic) {
            s.kind = d.text("kind", c.objective.loss == LossKind::Logistic ? "logistic" : "random",
                            kSyntheticKinds);
            s.rows = static_cast<int>(d.integer("rows", 600, limits::kRows));
            s.dim = static_cast<int>(d.integer("dim", 64, limits::kDim));
            s.seed = static_cast<std::uint64_t>(
                d.integer("seed", static_cast<long long>(c.seed), limits::kSeed));
            s.labelNoise = d.number("label_noise", 0.0, limits::kLabelNoise);
            s.mu = d.number("mu", 0.01, limits::kMu);
            s.conditionNumber = d.number("condition_number", 0.0, limits::kConditionNumber);
        } else {
            s.x = d.text("x", "");
            if (s.x.empty()) throw ConfigError("data.x is missing: the path of the data file");
            s.y = d.text("y", "");
            if (s.source == DataSource::Npy && s.y.empty()) {
                throw ConfigError("data.y is missing: the path of the labels .npy file");
            }
            s.labelColumn = static_cast<int>(d.integer("label_column", -1, limits::kLabelColumn));
            s.libsvmDim = static_cast<int>(d.integer("dim", 0, limits::kLibsvmDim));
        }
        d.rejectUnknown();
    } else if (c.objective.loss == LossKind::Logistic) {
        c.data.kind = "logistic";
    }
}

void readBudgetInto(ObjectReader& r, ExperimentConfig& c) {
    if (r.has("budget")) {
        ObjectReader b(r.at("budget"), "budget");
        c.budget.totalSlots = static_cast<int>(b.integer("slots", 0, limits::kSlots));
        c.budget.microbatches =
            static_cast<int>(b.integer("microbatches", 0, limits::kMicrobatches));
        c.budget.epochs = b.number("epochs", 0.0, limits::kEpochs);
        c.budget.compare = b.choice("compare", BudgetCompare::Time, kBudgetCompares);
        c.budget.rule = b.choice("rule", BudgetRule::Fit, kBudgetRules);
        b.rejectUnknown();
    } else {
        c.budget.epochs = 5;
    }
}

void readCostsAndSamplingInto(ObjectReader& r, ExperimentConfig& c) {
    if (r.has("costs")) {
        ObjectReader o(r.at("costs"), "costs");
        c.costs.forwardSlots = static_cast<int>(o.integer("forward_slots", 1, limits::kOpSlots));
        c.costs.backwardSlots = static_cast<int>(o.integer("backward_slots", 1, limits::kOpSlots));
        c.costs.latencySlots =
            static_cast<int>(o.integer("latency_slots", 0, limits::kLatencySlots));
        c.costs.weightSlots = static_cast<int>(o.integer("weight_slots", 1, limits::kOpSlots));
        o.rejectUnknown();
    }
    if (c.languageModel()) c.sampling.blowUpFactor = 100.0;
    if (r.has("sampling")) {
        ObjectReader o(r.at("sampling"), "sampling");
        c.sampling.objectivePerUpdate = o.boolean("objective_per_update", true);
        c.sampling.gradNormEvery = o.integer("grad_norm_every", 0, limits::kGradNormEvery);
        // The language model's factor multiplies log V (uniform guessing), the linear one's the
        // initial gap: different scales, different defaults.
        c.sampling.blowUpFactor =
            o.number("blow_up_factor", c.languageModel() ? 100.0 : 1e6, limits::kBlowUpFactor);
        o.rejectUnknown();
    }
}

}  // namespace

ExperimentConfig ExperimentConfig::fromJson(const json& j, const std::string& baseDir) {
    ExperimentConfig c;
    c.baseDir = baseDir;
    ObjectReader r(j, "");
    c.name = r.text("name", "experiment");
    c.seed = static_cast<std::uint64_t>(r.integer("seed", 1, limits::kSeed));
    c.seeds = static_cast<int>(r.integer("seeds", 1, limits::kSeeds));
    c.stages = static_cast<int>(r.integer("stages", 4, limits::kStages));
    c.batchSize = static_cast<int>(r.integer("batch_size", 10, limits::kBatchSize));
    c.shuffle = r.boolean("shuffle", false);
    c.backend = r.choice("backend", BackendKind::Auto, kBackends);
    if (r.has("device")) {
        const json& d = r.at("device");
        if (d.is_number_integer()) {
            c.device = std::to_string(d.get<long long>());
        } else if (d.is_string()) {
            c.device = d.get<std::string>();
        } else {
            throw ConfigError("device = " + show(d) + " is not allowed: an index or a name");
        }
    }
    c.allowCpuFallback = r.boolean("allow_cpu_fallback", true);
    c.precision = r.choice("precision", Precision::Double, kPrecisions);

    readObjectiveInto(r, j, c);
    readDataInto(r, c);
    readBudgetInto(r, c);
    readCostsAndSamplingInto(r, c);
    if (!r.has("methods")) throw ConfigError("methods is missing: a list of methods to run");
    const json& ms = r.at("methods");
    if (!ms.is_array() || ms.empty()) {
        throw ConfigError("methods = " + show(ms) + " is not allowed: a non-empty list");
    }
    for (size_t i = 0; i < ms.size(); ++i) {
        c.methods.push_back(readMethod(ms[i], "methods[" + std::to_string(i) + "]"));
    }
    // An imported schedule's stages are its file's: left out, stages takes them.
    if (!j.contains("stages")) {
        for (const MethodSpec& m : c.methods) {
            if (m.method != Method::Imported) continue;
            try {
                c.stages = summarizeProgram(*importedProgram(c, m)).stages;
            } catch (const std::exception&) {
                // validate() names the method and the file
            }
            break;
        }
    }
    if (r.has("view")) c.view = readView(r.at("view"));
    r.rejectUnknown();
    c.validate();
    return c;
}

namespace {

// The JSON library's message without its "[json.exception.parse_error.101] " tag, cut short
// (the library already writes control bytes of the text it quotes as <U+001B>).
std::string withoutLibraryTag(const std::string& what) {
    std::string_view text = what;
    if (text.starts_with("[json.exception.")) {
        const std::size_t end = text.find("] ");
        if (end != std::string_view::npos) text.remove_prefix(end + 2);
    }
    constexpr std::size_t kMax = 300;
    return std::string(text.substr(0, kMax)) + (text.size() > kMax ? "..." : "");
}

}  // namespace

json parseConfigText(std::string_view text, const std::string& source) {
    // Depth and duplicate keys are checked while parsing, so a hostile file can neither nest
    // deep enough to overflow the stack of code that walks the value nor hide a second "stages".
    std::vector<std::set<std::string>> keys;
    int depth = 0;
    auto check = [&](int, json::parse_event_t event, json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start:
                if (++depth > kMaxConfigDepth) {
                    throw ConfigError(source + " nests lists and objects more than " +
                                      std::to_string(kMaxConfigDepth) +
                                      " deep; a PipeLens config is at most 4 deep");
                }
                if (event == json::parse_event_t::object_start) keys.emplace_back();
                break;
            case json::parse_event_t::object_end:
                keys.pop_back();
                [[fallthrough]];
            case json::parse_event_t::array_end:
                --depth;
                break;
            case json::parse_event_t::key:
                if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
                    throw ConfigError(source + ": key " + show(parsed) +
                                      " appears twice in one object; give each key once");
                }
                break;
            case json::parse_event_t::value:
                break;
        }
        return true;
    };
    try {
        return json::parse(text.begin(), text.end(), check);
    } catch (const json::parse_error& e) {
        throw ConfigError(source + " is not valid JSON: " + withoutLibraryTag(e.what()));
    } catch (const json::out_of_range& e) {
        // A number beyond a double's range (e.g. 1e999): found by fuzz_config.
        throw ConfigError(source + " has a number that is not allowed: " +
                          withoutLibraryTag(e.what()) + " (numbers must lie within +-1.8e308)");
    }
}

ExperimentConfig ExperimentConfig::fromText(std::string_view text, const std::string& source,
                                            const std::string& baseDir) {
    return fromJson(parseConfigText(text, source), baseDir);
}

ExperimentConfig ExperimentConfig::fromFile(const std::string& path) {
    // A FIFO, a device (/dev/zero) or a folder is refused before any read; the 16 MiB limit
    // counts the bytes read, so a file that grows while read cannot get past it.
    const std::string text =
        readInputFile(path, "config file", &throwAs<ConfigError>, kMaxConfigBytes,
                      "a config is at most " + std::to_string(kMaxConfigBytes));
    return fromText(text, "config file " + showPath(path), folderOf(path));
}

void ExperimentConfig::checkBudgetSet() const {
    if (budget.totalSlots == 0 && budget.microbatches == 0 && !(budget.epochs > 0.0)) {
        throw ConfigError(
            "budget is empty: set budget.slots, budget.microbatches or budget.epochs "
            "> 0");
    }
}

namespace {

// The ranges of validate(), field by field, named as the file writes them.
void checkLinearFields(const ExperimentConfig& c) {
    requireWithin("objective.l2", c.objective.l2, limits::kL2);
    // Least squares has no regulariser in the model: a nonzero value would be silently lost.
    if (c.objective.loss == LossKind::Quadratic && c.objective.l2 != 0.0) {
        throw ConfigError("objective.l2 = " + show(json(c.objective.l2)) +
                          " is not allowed with objective.kind = quadratic: 0 (least squares "
                          "has no regulariser)");
    }
    requireWithin("objective.gradient_noise", c.objective.gradientNoise, limits::kGradientNoise);
    if (c.objective.noiseSeed) {
        requireWithin("objective.noise_seed", *c.objective.noiseSeed, limits::kSeed);
    }
    const DataSpec& d = c.data;
    if (d.source == DataSource::Synthetic) {
        if (std::find(kSyntheticKinds.begin(), kSyntheticKinds.end(), d.kind) ==
            kSyntheticKinds.end()) {
            throw ConfigError("data.kind = " + show(json(d.kind)) +
                              " is not allowed: one of random, simple, tridiagonal, logistic");
        }
        requireWithin("data.rows", static_cast<long long>(d.rows), limits::kRows);
        requireWithin("data.dim", static_cast<long long>(d.dim), limits::kDim);
        requireWithin("data.seed", d.seed, limits::kSeed);
        requireWithin("data.label_noise", d.labelNoise, limits::kLabelNoise);
        requireWithin("data.mu", d.mu, limits::kMu);
        requireWithin("data.condition_number", d.conditionNumber, limits::kConditionNumber);
    } else {
        if (d.x.empty()) throw ConfigError("data.x is missing: the path of the data file");
        if (d.source == DataSource::Npy && d.y.empty()) {
            throw ConfigError("data.y is missing: the path of the labels .npy file");
        }
        requireWithin("data.label_column", static_cast<long long>(d.labelColumn),
                      limits::kLabelColumn);
        requireWithin("data.dim", static_cast<long long>(d.libsvmDim), limits::kLibsvmDim);
    }
    requireWithin("sampling.grad_norm_every", c.sampling.gradNormEvery, limits::kGradNormEvery);
}

void checkMethod(const MethodSpec& m, const std::string& path) {
    const StepSpec& s = m.step;
    if (s.grid) {
        if (!limits::kGridExponent.allows(s.gridMin) || !limits::kGridExponent.allows(s.gridMax) ||
            s.gridMin > s.gridMax) {
            throw ConfigError(path + ".step_size.grid = " + show(json{s.gridMin, s.gridMax}) +
                              " is not allowed: [a_min, a_max], " +
                              std::string(limits::kGridExponent.allowed));
        }
        validateStepRule(s.rule, path + ".step_size.rule");
    } else {
        requireWithin(path + ".step_size", s.value, limits::kStepSize);
    }
    requireWithin(path + ".noam", static_cast<long long>(m.noam), limits::kNoam);
    requireWithin(path + ".replicas", static_cast<long long>(m.replicas), limits::kReplicas);
    requireWithin(path + ".local_steps", static_cast<long long>(m.localSteps), limits::kLocalSteps);
    requireWithin(path + ".flush_group", static_cast<long long>(m.flushGroup), limits::kFlushGroup);
    requireWithin(path + ".accumulation", static_cast<long long>(m.accumulation),
                  limits::kAccumulation);
    requireWithin(path + ".virtual_stages", static_cast<long long>(m.virtualStages),
                  limits::kVirtualStages);
    requireWithin(path + ".delta", m.delta, limits::kDelta);
    requireWithin(path + ".seed", m.seed, limits::kSeed);
    const OptimizerSpec& o = m.optimizer;
    requireWithin(path + ".optimizer.beta", o.beta, limits::kOptimizerBeta);
    requireWithin(path + ".optimizer.beta1", o.beta1, limits::kOptimizerBeta);
    requireWithin(path + ".optimizer.beta2", o.beta2, limits::kOptimizerBeta);
    requireWithin(path + ".optimizer.eps", o.eps, limits::kOptimizerEps);
    requireWithin(path + ".optimizer.weight_decay", o.weightDecay, limits::kWeightDecay);
    const CorrectorSpec& k = m.correctors;
    requireWithin(path + ".correctors.tau_ref", k.tauRef, limits::kTauRef);
    requireWithin(path + ".correctors.lambda", k.lambda, limits::kDcLambda);
    requireWithin(path + ".correctors.beta", k.beta, limits::kOptimizerBeta);
    requireWithin(path + ".correctors.k", static_cast<long long>(k.accumulate),
                  limits::kAccumulateK);
}

void checkCommonFields(const ExperimentConfig& c) {
    requireWithin("seed", c.seed, limits::kSeed);
    requireWithin("seeds", static_cast<long long>(c.seeds), limits::kSeeds);
    requireWithin("stages", static_cast<long long>(c.stages), limits::kStages);
    requireWithin("batch_size", static_cast<long long>(c.batchSize), limits::kBatchSize);
    requireWithin("budget.slots", static_cast<long long>(c.budget.totalSlots), limits::kSlots);
    requireWithin("budget.microbatches", static_cast<long long>(c.budget.microbatches),
                  limits::kMicrobatches);
    requireWithin("budget.epochs", c.budget.epochs, limits::kEpochs);
    requireWithin("costs.forward_slots", static_cast<long long>(c.costs.forwardSlots),
                  limits::kOpSlots);
    requireWithin("costs.backward_slots", static_cast<long long>(c.costs.backwardSlots),
                  limits::kOpSlots);
    requireWithin("costs.latency_slots", static_cast<long long>(c.costs.latencySlots),
                  limits::kLatencySlots);
    requireWithin("costs.weight_slots", static_cast<long long>(c.costs.weightSlots),
                  limits::kOpSlots);
    requireWithin("sampling.blow_up_factor", c.sampling.blowUpFactor, limits::kBlowUpFactor);
    if (c.methods.empty()) throw ConfigError("methods is missing: a list of methods to run");
    for (size_t i = 0; i < c.methods.size(); ++i) {
        checkMethod(c.methods[i], "methods[" + std::to_string(i) + "]");
    }
    if (c.view)
        requireWithin("view.cursor", static_cast<long long>(c.view->cursor), limits::kCursor);
}

// The program schedules (1f1b, zb-h1, 2bw, imported) against the costs and stages they run
// with: the rules core/schedule holds (program_schedules.hpp), named by method.
void checkProgramMethods(const ExperimentConfig& c) {
    for (size_t i = 0; i < c.methods.size(); ++i) {
        const MethodSpec& m = c.methods[i];
        const auto kind = methodInfo(m.method).schedule;
        if (!kind || !isProgramKind(*kind)) continue;
        const std::string path = "methods[" + std::to_string(i) + "]";
        ScheduleParams p;
        p.kind = *kind;
        p.stages = c.stages;
        p.costs = c.costs;
        p.flushGroup =
            m.method == Method::TwoBw ? accumulationFor(m, c.stages) : flushGroupFor(m, c.stages);
        if (m.method == Method::Interleaved) {
            p.virtualStages = m.virtualStages;
            p.stages = c.stages * m.virtualStages;
            if (!c.languageModel() && c.data.source == DataSource::Synthetic &&
                c.data.dim < p.stages) {
                throw ConfigError(
                    path + " (interleaved): the model has d = " + std::to_string(c.data.dim) +
                    " coordinates, fewer than its " + std::to_string(p.stages) +
                    " chunks (stages x virtual_stages = " + std::to_string(c.stages) + " x " +
                    std::to_string(m.virtualStages) + ")");
            }
        }
        if (m.method == Method::Imported) {
            try {
                p.program = importedProgram(c, m);
            } catch (const ConfigError& e) {
                throw ConfigError(path + ".schedule_file = " + show(json(m.scheduleFile)) + ": " +
                                  e.what());
            }
            p.flushGroup = 0;
            p.asyncUpdate = m.asyncUpdate;
        }
        try {
            validateProgramSchedule(p);
        } catch (const ConfigError& e) {
            throw ConfigError(path + " (" + methodName(m.method) + "): " + e.what());
        }
    }
}

}  // namespace

namespace {

// methods[i].correctors[j] for the entry of `kind`: j its place in `order`, the list as the
// file gave it (at parse time) or as correctorsJson writes it.
std::string correctorPath(const std::string& path, const std::vector<CorrectorKind>& order,
                          CorrectorKind kind) {
    const auto at = std::find(order.begin(), order.end(), kind) - order.begin();
    return path + ".correctors[" + std::to_string(at) + "]";
}

std::vector<CorrectorKind> listedOrder(const CorrectorSpec& k) {
    std::vector<CorrectorKind> order;
    for (const json& entry : correctorsJson(k)) {
        order.push_back(*parseEnum(kCorrectorKinds, entry["kind"].get<std::string>()));
    }
    return order;
}

// requireCorrectorsFit's rules, with the paths of `order`.
void checkCorrectorsFit(const MethodSpec& m, const std::string& path,
                        const std::vector<CorrectorKind>& order) {
    const CorrectorSpec& k = m.correctors;
    if (!k.any() || order.empty()) return;
    const std::string firstKind = correctorPath(path, order, order[0]) +
                                  ".kind = " + show(json(enumName(kCorrectorKinds, order[0])));
    const bool synchronousSteps = m.method == Method::FillDrain || m.method == Method::OneFOneB ||
                                  m.method == Method::ZeroBubbleH1 ||
                                  m.method == Method::Interleaved || m.method == Method::TwoBw ||
                                  (m.method == Method::Imported && !m.asyncUpdate);
    if (synchronousSteps) {
        throw ConfigError(firstKind + " is not allowed with method \"" + methodName(m.method) +
                          "\": correctors apply to the asynchronous methods (pd, localsgd, sgd, "
                          "imported with update \"async\") and rpd; a synchronous step reads "
                          "fresh weights");
    }
    if (m.method == Method::RandomizedPipeDream) {
        for (const CorrectorKind kind :
             {CorrectorKind::Prediction, CorrectorKind::Lookahead, CorrectorKind::Accumulate}) {
            const bool on = kind == CorrectorKind::Prediction  ? k.prediction
                            : kind == CorrectorKind::Lookahead ? k.lookahead
                                                               : k.accumulate > 1;
            if (!on) continue;
            throw ConfigError(correctorPath(path, order, kind) + ".kind = \"" +
                              std::string(enumName(kCorrectorKinds, kind)) +
                              "\" is not allowed with method \"rpd\": delay_adaptive or dc (RPD "
                              "draws its delays and has no forward pass to move)");
        }
        const std::string at = correctorPath(path, order, CorrectorKind::DelayAdaptive);
        if (k.delayAdaptive && k.perBlock) {
            throw ConfigError(at +
                              ".per_block = true is not allowed with method \"rpd\": false "
                              "(RPD draws its delays; a block has no steady delay)");
        }
        if (k.delayAdaptive && k.unit != DelayUnit::BlockUpdates) {
            throw ConfigError(at + ".unit = " + show(json(enumName(kDelayUnits, k.unit))) +
                              " is not allowed with method \"rpd\": \"block_updates\" (RPD's "
                              "delays count block updates)");
        }
    }
    if (k.prediction && k.lookahead) {
        throw ConfigError(correctorPath(path, order, CorrectorKind::Lookahead) +
                          ".kind = \"lookahead\" is not allowed together with prediction: one "
                          "of them (both move the point a forward reads)");
    }
    if (k.lookahead && m.optimizer.kind != OptimizerKind::Sgd) {
        throw ConfigError(correctorPath(path, order, CorrectorKind::Lookahead) +
                          ".kind = \"lookahead\" is not allowed with optimizer.kind = " +
                          show(json(enumName(kOptimizerKinds, m.optimizer.kind))) +
                          ": optimizer sgd (lookahead is Nesterov momentum itself)");
    }
}

}  // namespace

void requireCorrectorsFit(const MethodSpec& m, size_t index) {
    checkCorrectorsFit(m, "methods[" + std::to_string(index) + "]", listedOrder(m.correctors));
}

OptimizerSpec readOptimizerOrKind(const json& v, const std::string& path) {
    if (!v.is_string()) return readOptimizer(v, path);
    return readOptimizer(json{{"kind", v}}, path);
}

CorrectorSpec readCorrectorsOrKind(const json& v, const std::string& path) {
    if (v.is_string() && v.get<std::string>() == "none") return {};
    if (v.is_string()) {
        if (!parseEnum(kCorrectorKinds, v.get<std::string>())) {
            throw ConfigError(path + " = " + show(v) + " is not allowed: \"none\", one of " +
                              enumNameList(kCorrectorKinds) + " or a list of correctors");
        }
        return readCorrectors(json::array({json{{"kind", v}}}), path);
    }
    return readCorrectors(v, path);
}

int setCorrectorsWhereAllowed(ExperimentConfig& c, const CorrectorSpec& correctors) {
    int set = 0;
    for (size_t i = 0; i < c.methods.size(); ++i) {
        MethodSpec& m = c.methods[i];
        m.correctors = correctors;
        try {
            requireCorrectorsFit(m, i);
            if (correctors.any()) ++set;
        } catch (const ConfigError&) {
            m.correctors = {};
        }
    }
    return set;
}

void ExperimentConfig::validate() const {
    checkCommonFields(*this);
    checkProgramMethods(*this);
    for (size_t i = 0; i < methods.size(); ++i) requireCorrectorsFit(methods[i], i);
    if (languageModel()) {
        validateLanguageModel(*this);
        checkBudgetSet();
        return;
    }
    checkLinearFields(*this);
    if (data.source == DataSource::Synthetic && data.dim < stages) {
        throw ConfigError("stages = " + std::to_string(stages) +
                          " is not allowed: the model has d = " + std::to_string(data.dim) +
                          " coordinates and each stage needs at least one (S <= d)");
    }
    if (data.source == DataSource::Synthetic && data.rows % batchSize != 0) {
        throw ConfigError("batch_size = " + std::to_string(batchSize) +
                          " is not allowed: data.rows = " + std::to_string(data.rows) +
                          " must be a multiple of it");
    }
    checkBudgetSet();
}

MethodSpec normalizedMethod(const MethodSpec& m) {
    MethodSpec n;
    n.method = m.method;
    n.label = m.label;
    n.optimizer = normalizedOptimizer(m.optimizer);
    n.correctors = normalizedCorrectors(m.correctors);
    if (m.step.grid) {
        n.step.grid = true;
        n.step.gridMin = m.step.gridMin;
        n.step.gridMax = m.step.gridMax;
        n.step.rule = m.step.rule;
    } else {
        n.step.value = m.step.value;
    }
    switch (m.method) {
        case Method::PipeDream:
            n.noam = m.noam;
            break;
        case Method::LocalSgd:
            n.replicas = m.replicas;
            n.localSteps = m.localSteps;
            break;
        case Method::FillDrain:
        case Method::OneFOneB:
        case Method::ZeroBubbleH1:
            n.flushGroup = m.flushGroup;
            break;
        case Method::TwoBw:
            n.accumulation = m.accumulation;
            break;
        case Method::Interleaved:
            n.flushGroup = m.flushGroup;
            n.virtualStages = m.virtualStages;
            break;
        case Method::Imported:
            n.scheduleFile = m.scheduleFile;
            n.asyncUpdate = m.asyncUpdate;
            break;
        case Method::RandomizedPipeDream:
            n.delayMode = m.delayMode;
            n.delta = m.delta;
            n.order = m.order;
            n.seed = m.seed;
            break;
        case Method::Sgd:
            break;
    }
    return n;
}

void ExperimentConfig::normalize() {
    for (MethodSpec& m : methods) m = normalizedMethod(m);
    if (languageModel()) {
        // The objective is the language model's alone; there is no data object.
        ObjectiveSpec lm;
        lm.languageModel = objective.languageModel;
        objective = lm;
        data = DataSpec{};
        return;
    }
    if (data.source == DataSource::Synthetic) {
        const DataSpec defaults;
        data.x = defaults.x;
        data.y = defaults.y;
        data.labelColumn = defaults.labelColumn;
        data.libsvmDim = defaults.libsvmDim;
    } else {
        DataSpec files;
        files.source = data.source;
        files.x = data.x;
        files.y = data.y;
        if (data.source == DataSource::Csv) files.labelColumn = data.labelColumn;
        if (data.source == DataSource::Libsvm) files.libsvmDim = data.libsvmDim;
        data = files;
    }
}

int replicasFor(const MethodSpec& m, int stages) {
    return m.replicas > 0 ? m.replicas : stages;
}

int flushGroupFor(const MethodSpec& m, int stages) {
    return m.flushGroup > 0 ? m.flushGroup : stages;
}

int accumulationFor(const MethodSpec& m, int stages) {
    return m.accumulation > 0 ? m.accumulation : stages;
}

std::shared_ptr<const PipelineProgram> importedProgram(const ExperimentConfig& c,
                                                       const MethodSpec& m) {
    return readPytorchScheduleCsvShared(resolveDataPath(c, m.scheduleFile));
}

long long deltaFor(const MethodSpec& m, int stages) {
    return m.delta >= 0 ? m.delta : pipeDreamMaxDelayFormula(stages);
}

std::vector<double> stepSizesOf(const StepSpec& step) {
    if (!step.grid) return {step.value};
    std::vector<double> steps;
    for (int a = step.gridMin; a <= step.gridMax; ++a) steps.push_back(std::ldexp(1.0, a));
    return steps;
}

json ExperimentConfig::toJson() const {
    json j;
    j["name"] = name;
    j["seed"] = seed;
    j["seeds"] = seeds;
    j["stages"] = stages;
    j["batch_size"] = batchSize;
    j["shuffle"] = shuffle;
    j["backend"] = enumName(kBackends, backend);
    if (!device.empty()) j["device"] = device;
    j["allow_cpu_fallback"] = allowCpuFallback;
    j["precision"] = enumName(kPrecisions, precision);
    if (languageModel()) {
        j["objective"] = languageModelJson(*objective.languageModel);
    } else {
        j["objective"] = {{"kind", lossKindName(objective.loss)},
                          {"l2", objective.l2},
                          {"gradient_noise", objective.gradientNoise}};
        if (objective.noiseSeed) j["objective"]["noise_seed"] = *objective.noiseSeed;
        if (objective.noiseStream != NoiseStream::PerRun)
            j["objective"]["noise_stream"] = enumName(kNoiseStreams, objective.noiseStream);
    }
    json d;
    d["source"] = enumName(kDataSources, data.source);
    if (data.source == DataSource::Synthetic) {
        d["kind"] = data.kind;
        d["rows"] = data.rows;
        d["dim"] = data.dim;
        d["seed"] = data.seed;
        d["label_noise"] = data.labelNoise;
        d["mu"] = data.mu;
        d["condition_number"] = data.conditionNumber;
    } else {
        d["x"] = data.x;
        if (!data.y.empty()) d["y"] = data.y;
        if (data.source == DataSource::Csv) d["label_column"] = data.labelColumn;
        if (data.source == DataSource::Libsvm) d["dim"] = data.libsvmDim;
    }
    if (!languageModel()) j["data"] = d;
    json b;
    if (budget.totalSlots > 0) b["slots"] = budget.totalSlots;
    if (budget.microbatches > 0) b["microbatches"] = budget.microbatches;
    if (budget.epochs > 0) b["epochs"] = budget.epochs;
    b["compare"] = enumName(kBudgetCompares, budget.compare);
    b["rule"] = enumName(kBudgetRules, budget.rule);
    j["budget"] = b;
    j["costs"] = {{"forward_slots", costs.forwardSlots},
                  {"backward_slots", costs.backwardSlots},
                  {"latency_slots", costs.latencySlots},
                  {"weight_slots", costs.weightSlots}};
    j["sampling"] = {{"objective_per_update", sampling.objectivePerUpdate},
                     {"grad_norm_every", sampling.gradNormEvery},
                     {"blow_up_factor", sampling.blowUpFactor}};
    json ms = json::array();
    for (const MethodSpec& m : methods) {
        json o;
        o["method"] = methodName(m.method);
        if (!m.label.empty()) o["label"] = m.label;
        o["step_size"] = stepJson(m.step);
        if (m.method == Method::PipeDream) o["noam"] = m.noam;
        if (m.method == Method::LocalSgd) {
            o["replicas"] = m.replicas;
            o["local_steps"] = m.localSteps;
        }
        if (m.method == Method::FillDrain || m.method == Method::OneFOneB ||
            m.method == Method::ZeroBubbleH1)
            o["flush_group"] = m.flushGroup;
        if (m.method == Method::TwoBw) o["accumulation"] = m.accumulation;
        if (m.method == Method::Interleaved) {
            o["flush_group"] = m.flushGroup;
            o["virtual_stages"] = m.virtualStages;
        }
        if (m.method == Method::Imported) {
            o["schedule_file"] = m.scheduleFile;
            o["update"] = m.asyncUpdate ? "async" : "sync";
        }
        if (m.method == Method::RandomizedPipeDream) {
            o["delay_mode"] = delayModeName(m.delayMode);
            o["delta"] = m.delta;
            o["order"] = stageOrderName(m.order);
            o["seed"] = m.seed;
        }
        // Left out at the default, so configs and results without an optimizer stay as they were.
        const OptimizerSpec optimizer = normalizedOptimizer(m.optimizer);
        if (optimizer != OptimizerSpec{}) o["optimizer"] = optimizerJson(optimizer);
        if (m.correctors.any()) o["correctors"] = correctorsJson(m.correctors);
        ms.push_back(o);
    }
    j["methods"] = ms;
    if (view) j["view"] = viewJson(*view);
    return j;
}

ExperimentConfig defaultExperiment() {
    ExperimentConfig c;
    c.name = "default";
    c.seed = 1;
    c.objective.loss = LossKind::Logistic;
    c.objective.l2 = 1e-4;
    c.data.source = DataSource::Synthetic;
    c.data.kind = "logistic";
    c.data.rows = 600;
    c.data.dim = 64;
    c.data.seed = 1;
    c.stages = 8;
    c.batchSize = 10;
    c.budget.epochs = 5;
    MethodSpec pd;
    pd.method = Method::PipeDream;
    pd.step.value = 0.25;
    MethodSpec rpd;
    rpd.method = Method::RandomizedPipeDream;
    rpd.step.value = 0.25;
    rpd.delayMode = DelayMode::Uniform;
    MethodSpec local;
    local.method = Method::LocalSgd;
    local.step.value = 0.25;
    local.localSteps = 5;
    c.methods = {pd, rpd, local};
    return c;
}

}  // namespace pipelens

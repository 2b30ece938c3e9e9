// The experiment config (docs/config.md): every key parses, JSON round trips, and every bad input
// is a typed error whose message names the key, the value and what is allowed.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/expect_error.hpp"
#include "data/loaders.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/sweep/sweep_spec.hpp"
#include "objective/lm/char_transformer.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

json minimal() {
    return json::parse(R"({
        "stages": 2,
        "batch_size": 5,
        "data": {"rows": 20, "dim": 4},
        "budget": {"microbatches": 6},
        "methods": [{"method": "pd", "step_size": 0.1}]
    })");
}

json everyKey() {
    return json::parse(R"({
        "name": "all-keys", "seed": 42, "stages": 3, "batch_size": 4, "shuffle": true,
        "backend": "cpu", "device": "1", "allow_cpu_fallback": false, "precision": "float",
        "objective": {"kind": "logistic", "l2": 0.001},
        "data": {"source": "synthetic", "kind": "logistic", "rows": 48, "dim": 6, "seed": 9,
                 "label_noise": 0.5, "mu": 0.02, "condition_number": 100},
        "budget": {"slots": 200, "microbatches": 10, "epochs": 2.5, "compare": "updates"},
        "costs": {"forward_slots": 2, "backward_slots": 3, "latency_slots": 1},
        "sampling": {"objective_per_update": false, "grad_norm_every": 7, "blow_up_factor": 1000},
        "methods": [
            {"method": "pd", "label": "P", "step_size": 0.5, "noam": 2},
            {"method": "rpd", "step_size": {"grid": [-3, 1]}, "delay_mode": "max", "delta": 12,
             "order": "pd", "seed": 77},
            {"method": "localsgd", "step_size": 0.25, "replicas": 2, "local_steps": 3},
            {"method": "sgd", "step_size": 0.125},
            {"method": "fill-drain", "step_size": 1, "flush_group": 5}
        ]
    })");
}

json languageModel() {
    return json::parse(R"({
        "name": "lm", "stages": 4, "batch_size": 4, "precision": "float",
        "objective": {"kind": "char_transformer", "width": 16, "heads": 2, "context": 8,
                      "corpus_seed": 3, "corpus_characters": 5000, "held_out_fraction": 0.1,
                      "held_out_every": 20, "init_seed": 5, "full_objective": true,
                      "sample_lines": 2, "sample_length": 50, "sample_temperature": 0.8},
        "budget": {"slots": 100},
        "methods": [{"method": "pd", "step_size": 0.1},
                    {"method": "rpd", "step_size": {"grid": [-5, -1], "rule": "stable"}},
                    {"method": "localsgd", "step_size": 0.1, "replicas": 2, "local_steps": 4}]
    })");
}

void expectConfigError(const json& j, const QStringList& fragments) {
    expectError<ConfigError>([&] { ExperimentConfig::fromJson(j); }, fragments);
}

std::string writeText(const QTemporaryDir& dir, const QString& name, const std::string& text) {
    std::string path = dir.filePath(name).toStdString();
    std::ofstream out(path, std::ios::binary);
    out << text;
    return path;
}

// The message of the ConfigError `f` throws ("" when it throws none).
constexpr auto configErrorOf = &errorMessageOf<ConfigError>;

// A linear config with every method kind, for the per-field cases below.
json linearBase() {
    json j = minimal();
    j["objective"] = {{"kind", "logistic"}};
    j["methods"] = json::parse(R"([
        {"method": "pd", "step_size": 0.1},
        {"method": "rpd", "step_size": {"grid": [-3, 0]}},
        {"method": "localsgd", "step_size": 0.1},
        {"method": "fill-drain", "step_size": 0.1}])");
    return j;
}

// One bad value of one field, written into a file's JSON and typed into a config.
struct FieldCase {
    std::string field;    // as messages name it
    std::string pointer;  // where the file has it
    json bad;
    std::function<void(ExperimentConfig&)> type;  // the same value, typed
    bool languageModel = false;
};

}  // namespace

class TestConfig : public QObject {
    Q_OBJECT
  private slots:
    // One table names the methods: every key parses back to its method, aliases only where
    // asked, unknown names are refused with the list; the schedule kinds use the same keys.
    void methodTableRoundTrips() {
        for (const MethodInfo& info : kMethods) {
            QCOMPARE(parseMethod(info.key), info.method);
            QCOMPARE(methodName(info.method), std::string(info.key));
            QCOMPARE(isPipeline(info.method), info.method != Method::RandomizedPipeDream);
            MethodSpec m;
            m.method = info.method;
            m.step.value = 0.1;
            if (info.method == Method::Imported)
                m.scheduleFile = PIPELENS_SOURCE_DIR "/examples/schedules/1f1b_s4_m8.csv";
            ExperimentConfig c = defaultExperiment();
            if (info.method == Method::Imported) c.stages = 4;
            if (info.method == Method::Interleaved) c.costs = {2, 2, 0, 1};  // chunk ops: 1 slot
            c.methods = {m};
            QCOMPARE(c.toJson()["methods"][0]["method"].get<std::string>(), std::string(info.key));
            QCOMPARE(ExperimentConfig::fromJson(c.toJson()).methods[0].method, info.method);
        }
        QVERIFY(!findMethod("gpipe"));
        QVERIFY(findMethod("gpipe", true) == Method::FillDrain);
        QCOMPARE(methodKeyList(),
                 std::string("pd, rpd, localsgd, sgd, fill-drain, 1f1b, zb-h1, 2bw, imported, "
                             "interleaved"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseMethod("adam"));
        QCOMPARE(scheduleKindName(ScheduleKind::LocalSgd), std::string("localsgd"));
        QCOMPARE(parseScheduleKind("gpipe"), ScheduleKind::FillDrain);
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseScheduleKind("sgd"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseScheduleKind("rpd"));
        // Each schedule kind's name is the key of the method that walks it.
        for (const auto& kind : kScheduleKinds) {
            QCOMPARE(parseScheduleKind(std::string(kind.name)), kind.value);
            const auto method = parseMethod(kind.name);
            QVERIFY(methodInfo(method).schedule == kind.value);
        }
    }

    // The config's enumerations, one table of names each: every value has one name, names are
    // distinct, each reads back to its value, and a config file round-trips every value.
    void enumTablesRoundTrip() {
        auto check = [](const auto& table, const char* what) {
            std::set<std::string_view> names;
            for (const auto& e : table) {
                QVERIFY2(names.insert(e.name).second, what);
                QVERIFY2(parseEnum(table, e.name) == e.value, what);
                QVERIFY2(enumName(table, e.value) == e.name, what);
            }
            QVERIFY2(!parseEnum(table, "no-such-name"), what);
        };
        check(kDataSources, "data.source");
        check(kBudgetCompares, "budget.compare");
        check(kBudgetRules, "budget.rule");
        check(kBackends, "backend");
        check(kPrecisions, "precision");
        check(kLossXAxes, "view.x_axis");
        check(kScheduleKinds, "schedule kind");
        QCOMPARE(enumNameList(kBackends), std::string("auto, cpu, opencl"));
        for (const auto& b : kBackends) {
            for (const auto& p : kPrecisions) {
                for (const auto& cmp : kBudgetCompares) {
                    ExperimentConfig c = defaultExperiment();
                    c.backend = b.value;
                    c.precision = p.value;
                    c.budget.compare = cmp.value;
                    const json j = c.toJson();
                    QCOMPARE(j["backend"].get<std::string>(), std::string(b.name));
                    const ExperimentConfig back = ExperimentConfig::fromJson(j);
                    QVERIFY(back.backend == b.value && back.precision == p.value &&
                            back.budget.compare == cmp.value);
                }
            }
        }
        // A name outside the table is refused with the table's list.
        json j = defaultExperiment().toJson();
        j["backend"] = "gpu";
        expectConfigError(j, {"backend = \"gpu\"", "one of auto, cpu, opencl"});
    }

    void everyKeyParses() {
        const ExperimentConfig c = ExperimentConfig::fromJson(everyKey(), "/base");
        QCOMPARE(c.name, std::string("all-keys"));
        QCOMPARE(c.seed, 42ULL);
        QCOMPARE(c.stages, 3);
        QCOMPARE(c.batchSize, 4);
        QCOMPARE(c.shuffle, true);
        QCOMPARE(c.backend, BackendKind::Cpu);
        QCOMPARE(c.device, std::string("1"));
        QCOMPARE(c.allowCpuFallback, false);
        QCOMPARE(c.precision, Precision::Float);
        QCOMPARE(c.baseDir, std::string("/base"));
        QCOMPARE(c.objective.loss, LossKind::Logistic);
        QCOMPARE(c.objective.l2, 0.001);
        QCOMPARE(c.data.source, DataSource::Synthetic);
        QCOMPARE(c.data.kind, std::string("logistic"));
        QCOMPARE(c.data.rows, 48);
        QCOMPARE(c.data.dim, 6);
        QCOMPARE(c.data.seed, 9ULL);
        QCOMPARE(c.data.labelNoise, 0.5);
        QCOMPARE(c.data.mu, 0.02);
        QCOMPARE(c.data.conditionNumber, 100.0);
        QCOMPARE(c.budget.totalSlots, 200);
        QCOMPARE(c.budget.microbatches, 10);
        QCOMPARE(c.budget.epochs, 2.5);
        QCOMPARE(c.budget.compare, BudgetCompare::Updates);
        QCOMPARE(c.costs.forwardSlots, 2);
        QCOMPARE(c.costs.backwardSlots, 3);
        QCOMPARE(c.costs.latencySlots, 1);
        QCOMPARE(c.sampling.objectivePerUpdate, false);
        QCOMPARE(c.sampling.gradNormEvery, 7LL);
        QCOMPARE(c.sampling.blowUpFactor, 1000.0);
        QCOMPARE(c.methods.size(), size_t(5));
        const MethodSpec& pd = c.methods[0];
        QCOMPARE(pd.method, Method::PipeDream);
        QCOMPARE(pd.label, std::string("P"));
        QCOMPARE(pd.step.value, 0.5);
        QVERIFY(!pd.step.grid);
        QCOMPARE(pd.noam, 2);
        const MethodSpec& rpd = c.methods[1];
        QVERIFY(rpd.step.grid);
        QCOMPARE(rpd.step.gridMin, -3);
        QCOMPARE(rpd.step.gridMax, 1);
        QCOMPARE(rpd.delayMode, DelayMode::Max);
        QCOMPARE(rpd.delta, 12LL);
        QCOMPARE(rpd.order, StageOrder::PipeDream);
        QCOMPARE(rpd.seed, 77ULL);
        QCOMPARE(c.methods[2].replicas, 2);
        QCOMPARE(c.methods[2].localSteps, 3);
        QCOMPARE(c.methods[3].method, Method::Sgd);
        QCOMPARE(c.methods[3].step.value, 0.125);
        QCOMPARE(c.methods[4].flushGroup, 5);
        QCOMPARE(c.methods[4].step.value, 1.0);
    }

    void defaults() {
        const ExperimentConfig c = ExperimentConfig::fromJson(json::parse(
            R"({"methods": [{"method": "localsgd", "step_size": 0.1},
                            {"method": "rpd", "step_size": 0.1}]})"));
        QCOMPARE(c.name, std::string("experiment"));
        QCOMPARE(c.seed, 1ULL);
        QCOMPARE(c.stages, 4);
        QCOMPARE(c.batchSize, 10);
        QCOMPARE(c.shuffle, false);
        QCOMPARE(c.backend, BackendKind::Auto);
        QCOMPARE(c.allowCpuFallback, true);
        QCOMPARE(c.precision, Precision::Double);
        QCOMPARE(c.objective.loss, LossKind::Quadratic);
        QCOMPARE(c.objective.l2, 0.0);
        QCOMPARE(c.data.source, DataSource::Synthetic);
        QCOMPARE(c.data.kind, std::string("random"));
        QCOMPARE(c.data.rows, 600);
        QCOMPARE(c.data.dim, 64);
        QCOMPARE(c.data.seed, 1ULL);
        QCOMPARE(c.budget.epochs, 5.0);
        QCOMPARE(c.budget.compare, BudgetCompare::Time);
        QCOMPARE(c.costs.forwardSlots, 1);
        QCOMPARE(c.costs.backwardSlots, 1);
        QCOMPARE(c.costs.latencySlots, 0);
        QCOMPARE(c.sampling.objectivePerUpdate, true);
        QCOMPARE(c.sampling.gradNormEvery, 0LL);
        QCOMPARE(c.sampling.blowUpFactor, 1e6);
        QCOMPARE(c.methods[0].replicas, 0);
        QCOMPARE(c.methods[0].localSteps, 5);
        QCOMPARE(c.methods[1].delayMode, DelayMode::Uniform);
        QCOMPARE(c.methods[1].delta, -1LL);
        QCOMPARE(c.methods[1].order, StageOrder::Uniform);
        QCOMPARE(c.methods[1].seed, 0ULL);
        // A logistic objective defaults to logistic data and l2 = 1e-4; the data seed to the
        // experiment's.
        const ExperimentConfig l = ExperimentConfig::fromJson(json::parse(
            R"({"seed": 5, "objective": {"kind": "logistic"}, "data": {"rows": 60},
                "methods": [{"method": "pd", "step_size": 0.1}]})"));
        QCOMPARE(l.data.kind, std::string("logistic"));
        QCOMPARE(l.objective.l2, 1e-4);
        QCOMPARE(l.data.seed, 5ULL);
        const ExperimentConfig n = ExperimentConfig::fromJson(json::parse(
            R"({"objective": {"kind": "logistic"},
                "methods": [{"method": "pd", "step_size": 1}]})"));
        QCOMPARE(n.data.kind, std::string("logistic"));
    }

    void roundTrip() {
        auto check = [](const json& j) {
            const ExperimentConfig a = ExperimentConfig::fromJson(j);
            const json once = a.toJson();
            const ExperimentConfig b = ExperimentConfig::fromJson(once);
            QCOMPARE(QString::fromStdString(b.toJson().dump()),
                     QString::fromStdString(once.dump()));
        };
        check(everyKey());
        check(minimal());
        check(defaultExperiment().toJson());
        json files = minimal();
        files["data"] = {{"source", "npy"}, {"x", "X.npy"}, {"y", "y.npy"}};
        check(files);
        files["data"] = {{"source", "csv"}, {"x", "t.csv"}, {"label_column", 0}};
        check(files);
        files["data"] = {{"source", "csv"}, {"x", "X.csv"}, {"y", "y.csv"}};
        check(files);
        files["data"] = {{"source", "libsvm"}, {"x", "a.svm"}, {"dim", 12}};
        check(files);
        // Every field survives, not only the JSON text.
        const ExperimentConfig a = ExperimentConfig::fromJson(everyKey());
        const ExperimentConfig b = ExperimentConfig::fromJson(a.toJson());
        QCOMPARE(b.methods[1].delayMode, DelayMode::Max);
        QCOMPARE(b.methods[1].step.gridMin, -3);
        QCOMPARE(b.budget.epochs, 2.5);
        QCOMPARE(b.sampling.gradNormEvery, 7LL);
        QCOMPARE(b.device, std::string("1"));
    }

    // A grid's rule (issue 30): the plain strings are written back as strings, the object form
    // keeps its preset and every threshold, and bad keys or values name the full path.
    void stepRuleObjectFormLoadsAndWritesBack() {
        json j = minimal();
        j["methods"] = json::parse(R"([
            {"method": "pd", "step_size": {"grid": [-4, -1], "rule": "stable"}},
            {"method": "pd", "step_size": {"grid": [-4, -1],
             "rule": {"kind": "stable", "preset": "notebook", "tail_frac": 0.01,
                      "curve": "slots", "value": "objective", "within_best": 0.1}}},
            {"method": "pd", "step_size": {"grid": [-4, -1], "rule": {"kind": "best_final"}}}])");
        const ExperimentConfig a = ExperimentConfig::fromJson(j);
        QCOMPARE(a.methods[0].step.rule.kind, StepRule::Stable);
        QCOMPARE(a.methods[0].step.rule.stable, StableThresholds{});
        const StepRuleSpec& r = a.methods[1].step.rule;
        QCOMPARE(r.preset, std::string("notebook"));
        QCOMPARE(r.stable.tailFraction, 0.01);
        QCOMPARE(r.stable.minTail, 10);
        QCOMPARE(r.stable.withinBest, 0.1);
        QCOMPARE(r.curve, StepCurve::Slots);
        QCOMPARE(r.value, StepValue::Objective);
        QCOMPARE(a.methods[2].step.rule.kind, StepRule::BestFinal);
        const json written = a.toJson();
        // A plain rule is written as before; the object with every threshold.
        QCOMPARE(QString::fromStdString(written["methods"][0]["step_size"]["rule"].dump()),
                 QString("\"stable\""));
        QCOMPARE(QString::fromStdString(written["methods"][2]["step_size"]["rule"].dump()),
                 QString("\"best_final\""));
        const json& obj = written["methods"][1]["step_size"]["rule"];
        QCOMPARE(obj.at("max_cv").get<double>(), 0.15);
        QCOMPARE(obj.at("min_tail").get<int>(), 10);
        const ExperimentConfig b = ExperimentConfig::fromJson(written);
        QVERIFY(b == a);
        QCOMPARE(QString::fromStdString(b.toJson().dump()), QString::fromStdString(written.dump()));

        json bad = j;
        bad["methods"][1]["step_size"]["rule"]["tail_frac"] = 1.5;
        expectConfigError(bad, {"methods[1].step_size.rule.tail_frac = 1.5 is not allowed: a "
                                "number in (0, 1]"});
        bad = j;
        bad["methods"][1]["step_size"]["rule"]["max_cvv"] = 0.1;
        expectConfigError(bad, {"unknown key methods[1].step_size.rule.max_cvv", "max_cv"});
        bad = j;
        bad["methods"][2]["step_size"]["rule"]["preset"] = "notebook";
        expectConfigError(bad,
                          {"methods[2].step_size.rule.preset", "not allowed with kind best_final"});
        bad = j;
        bad["methods"][0]["step_size"]["rule"] = "stable:notebook";
        expectConfigError(
            bad, {"methods[0].step_size.rule = \"stable:notebook\"", "one of best_final, stable"});
        // A typed edit out of range is refused as the file's value is.
        ExperimentConfig typed = a;
        typed.methods[1].step.rule.stable.minTail = 0;
        expectError<ConfigError>([&] { typed.validate(); },
                                 {"methods[1].step_size.rule.min_tail = 0", "not allowed"});
    }

    // The app's view ("view"): parsed and checked like the rest, kept exactly, absent unless
    // given; the run itself does not depend on it.
    void viewStateParsesRoundTripsAndIsChecked() {
        json j = minimal();
        QVERIFY(!ExperimentConfig::fromJson(j).toJson().contains("view"));
        j["view"] = json::parse(R"j({"gantt_method": "LocalSGD (R=8, H=5)", "x_axis": "updates",
            "log_y": false, "log_x": true, "theorem_chart": true, "cursor": 37,
            "gantt_range": [10, 60.5], "heatmap_range": [0, 120]})j");
        const ExperimentConfig c = ExperimentConfig::fromJson(j);
        QVERIFY(c.view.has_value());
        QCOMPARE(c.view->ganttMethod, std::string("LocalSGD (R=8, H=5)"));
        QCOMPARE(c.view->xAxis, LossXAxis::Updates);
        QVERIFY(!c.view->logY && c.view->logX && c.view->theoremChart);
        QCOMPARE(c.view->cursor, 37);
        QVERIFY(c.view->ganttRange && (*c.view->ganttRange)[1] == 60.5);
        QVERIFY(c.view->heatmapRange && (*c.view->heatmapRange)[0] == 0.0);
        QCOMPARE(c.toJson()["view"], j["view"]);
        QVERIFY(ExperimentConfig::fromJson(c.toJson()).view == c.view);
        // Defaults for what is left out.
        j["view"] = json::object();
        const ViewState defaults = *ExperimentConfig::fromJson(j).view;
        QVERIFY(defaults == ViewState{});
        QCOMPARE(defaults.cursor, -1);

        const std::map<std::string, std::pair<json, QStringList>> bad = {
            {"x_axis", {"time", {"view.x_axis = \"time\"", "one of slots, updates"}}},
            {"log_y", {1, {"view.log_y = 1", "true or false"}}},
            {"cursor", {-2, {"view.cursor = -2", "-1 (the end of the run)"}}},
            {"gantt_range", {json::array({5, 2}), {"view.gantt_range = [5,2]", "first < last"}}},
            {"heatmap_range", {json::array({-1, 2}), {"view.heatmap_range", "0 <= first"}}},
            {"zoom", {2, {"unknown key view.zoom", "gantt_method"}}},
        };
        for (const auto& [key, value] : bad) {
            j = minimal();
            j["view"] = {{key, value.first}};
            expectConfigError(j, value.second);
        }
        j = minimal();
        j["view"] = "slots";
        expectConfigError(j, {"view = \"slots\"", "a JSON object"});
    }

    // One rule per field (field_limits.hpp): a bad value read from a file and the same value typed
    // into a config (an edit in the app, checked by validate()) are refused with the same
    // message, naming the field, the value and what is allowed. Every numeric field is here.
    void typedEditsAreCheckedAsFilesAre() {
        using C = ExperimentConfig;
        const std::uint64_t tooBigSeed = 1'000'000'000'001ULL;
        const std::vector<FieldCase> cases{
            {"seed", "/seed", json(tooBigSeed), [&](C& c) { c.seed = tooBigSeed; }},
            {"seeds", "/seeds", json(1001), [](C& c) { c.seeds = 1001; }},
            {"stages", "/stages", json(4097), [](C& c) { c.stages = 4097; }},
            {"stages", "/stages", json(0), [](C& c) { c.stages = 0; }},
            {"batch_size", "/batch_size", json(0), [](C& c) { c.batchSize = 0; }},
            {"objective.l2", "/objective/l2", json(-1.0), [](C& c) { c.objective.l2 = -1.0; }},
            {"objective.gradient_noise", "/objective/gradient_noise", json(-0.5),
             [](C& c) { c.objective.gradientNoise = -0.5; }},
            {"objective.noise_seed", "/objective/noise_seed", json(tooBigSeed),
             [&](C& c) { c.objective.noiseSeed = tooBigSeed; }},
            {"data.rows", "/data/rows", json(0), [](C& c) { c.data.rows = 0; }},
            {"data.dim", "/data/dim", json(10'000'001), [](C& c) { c.data.dim = 10'000'001; }},
            {"data.seed", "/data/seed", json(tooBigSeed), [&](C& c) { c.data.seed = tooBigSeed; }},
            {"data.label_noise", "/data/label_noise", json(-1.0),
             [](C& c) { c.data.labelNoise = -1.0; }},
            {"data.mu", "/data/mu", json(-1.0), [](C& c) { c.data.mu = -1.0; }},
            {"data.condition_number", "/data/condition_number", json(-2.0),
             [](C& c) { c.data.conditionNumber = -2.0; }},
            {"budget.slots", "/budget/slots", json(-1), [](C& c) { c.budget.totalSlots = -1; }},
            {"budget.microbatches", "/budget/microbatches", json(1'000'000'001),
             [](C& c) { c.budget.microbatches = 1'000'000'001; }},
            {"budget.epochs", "/budget/epochs", json(-1.0), [](C& c) { c.budget.epochs = -1.0; }},
            {"costs.forward_slots", "/costs/forward_slots", json(0),
             [](C& c) { c.costs.forwardSlots = 0; }},
            {"costs.backward_slots", "/costs/backward_slots", json(1001),
             [](C& c) { c.costs.backwardSlots = 1001; }},
            {"costs.latency_slots", "/costs/latency_slots", json(-1),
             [](C& c) { c.costs.latencySlots = -1; }},
            {"sampling.grad_norm_every", "/sampling/grad_norm_every", json(-1),
             [](C& c) { c.sampling.gradNormEvery = -1; }},
            {"sampling.blow_up_factor", "/sampling/blow_up_factor", json(0.5),
             [](C& c) { c.sampling.blowUpFactor = 0.5; }},
            {"methods[0].step_size", "/methods/0/step_size", json(0.0),
             [](C& c) { c.methods[0].step.value = 0.0; }},
            {"methods[0].step_size", "/methods/0/step_size", json(2e12),
             [](C& c) { c.methods[0].step.value = 2e12; }},
            {"methods[1].step_size.grid", "/methods/1/step_size/grid", json{-61, 0},
             [](C& c) { c.methods[1].step.gridMin = -61; }},
            {"methods[1].step_size.grid", "/methods/1/step_size/grid", json{2, 1},
             [](C& c) {
                 c.methods[1].step.gridMin = 2;
                 c.methods[1].step.gridMax = 1;
             }},
            {"methods[0].noam", "/methods/0/noam", json(-1), [](C& c) { c.methods[0].noam = -1; }},
            {"methods[1].delta", "/methods/1/delta", json(-2),
             [](C& c) { c.methods[1].delta = -2; }},
            {"methods[1].seed", "/methods/1/seed", json(tooBigSeed),
             [&](C& c) { c.methods[1].seed = tooBigSeed; }},
            {"methods[2].replicas", "/methods/2/replicas", json(4097),
             [](C& c) { c.methods[2].replicas = 4097; }},
            {"methods[2].local_steps", "/methods/2/local_steps", json(0),
             [](C& c) { c.methods[2].localSteps = 0; }},
            {"methods[3].flush_group", "/methods/3/flush_group", json(-1),
             [](C& c) { c.methods[3].flushGroup = -1; }},
            {"view.cursor", "/view/cursor", json(-2),
             [](C& c) {
                 c.view = ViewState{};
                 c.view->cursor = -2;
             }},
            {"objective.width", "/objective/width", json(0),
             [](C& c) { c.objective.languageModel->width = 0; }, true},
            {"objective.heads", "/objective/heads", json(65537),
             [](C& c) { c.objective.languageModel->heads = 65537; }, true},
            {"objective.context", "/objective/context", json(0),
             [](C& c) { c.objective.languageModel->context = 0; }, true},
            {"objective.corpus_seed", "/objective/corpus_seed", json(tooBigSeed),
             [&](C& c) { c.objective.languageModel->corpusSeed = tooBigSeed; }, true},
            {"objective.corpus_characters", "/objective/corpus_characters", json(999),
             [](C& c) { c.objective.languageModel->corpusCharacters = 999; }, true},
            {"objective.held_out_fraction", "/objective/held_out_fraction", json(0.95),
             [](C& c) { c.objective.languageModel->heldOutFraction = 0.95; }, true},
            {"objective.held_out_every", "/objective/held_out_every", json(-1),
             [](C& c) { c.objective.languageModel->heldOutEvery = -1; }, true},
            {"objective.init_seed", "/objective/init_seed", json(tooBigSeed),
             [&](C& c) { c.objective.languageModel->initSeed = tooBigSeed; }, true},
            {"objective.sample_lines", "/objective/sample_lines", json(101),
             [](C& c) { c.objective.languageModel->sampleLines = 101; }, true},
            {"objective.sample_length", "/objective/sample_length", json(0),
             [](C& c) { c.objective.languageModel->sampleLength = 0; }, true},
            {"objective.sample_temperature", "/objective/sample_temperature", json(0.0),
             [](C& c) { c.objective.languageModel->sampleTemperature = 0.0; }, true},
            // Rules that join fields, for the language model.
            {"seeds", "/seeds", json(2), [](C& c) { c.seeds = 2; }, true},
            {"shuffle", "/shuffle", json(true), [](C& c) { c.shuffle = true; }, true},
            {"sampling.grad_norm_every", "/sampling/grad_norm_every", json(3),
             [](C& c) { c.sampling.gradNormEvery = 3; }, true},
        };
        for (const FieldCase& t : cases) {
            const json base = t.languageModel ? languageModel() : linearBase();
            json file = base;
            file[json::json_pointer(t.pointer)] = t.bad;
            const std::string fromFile = configErrorOf([&] { ExperimentConfig::fromJson(file); });
            ExperimentConfig typed = ExperimentConfig::fromJson(base);
            t.type(typed);
            const std::string fromEdit = configErrorOf([&] { typed.validate(); });
            const QByteArray what =
                QByteArray::fromStdString(t.field + " <- " + t.bad.dump() + ": file says \"" +
                                          fromFile + "\", edit says \"" + fromEdit + "\"");
            QVERIFY2(fromFile.starts_with(t.field + " = ") || fromFile.starts_with(t.field + " "),
                     what.constData());
            QVERIFY2(fromFile.find("not allowed") != std::string::npos, what.constData());
            QVERIFY2(fromFile == fromEdit, what.constData());
        }
    }

    // normalize() resets exactly what the file form leaves out: a config with leftovers of other
    // methods, sources and objectives, normalized, equals the file round trip of itself; and two
    // configs that differ only there compare equal once normalized. Every example file included.
    void normalizeKeepsWhatTheFileKeeps() {
        std::vector<json> configs{minimal(), everyKey(), languageModel(), linearBase()};
        const QDir examples(QString(PIPELENS_SOURCE_DIR) + "/examples");
        for (const QString& f : examples.entryList({"*.json"}, QDir::Files)) {
            if (f.contains("sweep")) continue;
            QFile file(examples.filePath(f));
            QVERIFY(file.open(QIODevice::ReadOnly));
            configs.push_back(json::parse(file.readAll().toStdString()));
        }
        // The examples' schedule files are relative to their folder.
        const std::string base = examples.absolutePath().toStdString();
        for (const json& j : configs) {
            const ExperimentConfig read = ExperimentConfig::fromJson(j, base);
            ExperimentConfig leftovers = read;
            for (MethodSpec& m : leftovers.methods) {
                const bool flushes =
                    m.method == Method::FillDrain || m.method == Method::OneFOneB ||
                    m.method == Method::ZeroBubbleH1 || m.method == Method::Interleaved;
                if (m.method != Method::PipeDream) m.noam = 7;
                if (m.method != Method::LocalSgd) m.replicas = 3;
                if (!flushes) m.flushGroup = 9;
                if (m.method != Method::TwoBw) m.accumulation = 11;
                if (m.method != Method::Interleaved) m.virtualStages = 3;
                if (m.method != Method::Imported) m.scheduleFile = "unused.csv";
                if (m.method != Method::RandomizedPipeDream) m.delta = 5;
                if (m.step.grid) m.step.value = 0.5;
                if (!m.step.grid) m.step.gridMin = -4;
            }
            if (leftovers.languageModel()) {
                leftovers.data.rows = 5;
                leftovers.objective.l2 = 3.0;
            } else if (leftovers.data.source == DataSource::Synthetic) {
                leftovers.data.x = "unused.npy";
                leftovers.data.libsvmDim = 12;
            } else {
                leftovers.data.rows = 5;
                leftovers.data.kind = "simple";
            }
            const QByteArray name = QByteArray::fromStdString(read.name);
            QVERIFY2(leftovers.toJson() == read.toJson(), name.constData());  // all unused
            QVERIFY2(!(leftovers == read), name.constData());
            leftovers.normalize();
            QVERIFY2(leftovers == ExperimentConfig::fromJson(read.toJson(), base),
                     name.constData());
            ExperimentConfig again = read;
            again.normalize();
            QVERIFY2(again == read, name.constData());  // what a file gives is normalized
        }
    }

    void badValuesNameKeyValueAndAllowed() {
        json j = minimal();
        j["stages"] = 0;
        expectConfigError(j, {"stages = 0", "not allowed", "[1, 4096]"});
        j["stages"] = "4";
        expectConfigError(j, {"stages = \"4\"", "not allowed"});
        j = minimal();
        j["stages"] = 5;  // d = 4
        expectConfigError(j, {"stages = 5", "d = 4", "S <= d"});
        j = minimal();
        j["data"]["rows"] = 22;
        expectConfigError(j, {"batch_size = 5", "rows = 22", "multiple"});
        j = minimal();
        j["batch_size"] = 0;
        expectConfigError(j, {"batch_size = 0", "an integer in [1, 1000000000]"});
        for (const json& bad : {json(-0.5), json(0), json(0.0), json("0.1"), json(true),
                                json(std::nan("")), json(INFINITY)}) {
            j = minimal();
            j["methods"][0]["step_size"] = bad;
            expectConfigError(j, {"methods[0].step_size", "not allowed", "a number in (0, 1e12]"});
        }
        j = minimal();
        j["methods"][0]["step_size"] = -0.5;
        expectConfigError(j, {"methods[0].step_size = -0.5"});
        j["methods"][0]["step_size"] = "0.1";
        expectConfigError(j, {"methods[0].step_size = \"0.1\""});
        j = minimal();
        j["methods"][0].erase("step_size");
        expectConfigError(j, {"methods[0].step_size is missing"});
        j["methods"][0]["step_size"] = {{"grid", {2, 1}}};
        expectConfigError(j, {"methods[0].step_size.grid = [2,1]", "a_min <= a_max"});
        j["methods"][0]["step_size"] = {{"grid", {-1, 1}}, {"base", 3}};
        expectConfigError(j, {"unknown key methods[0].step_size.base"});
        j = minimal();
        j["methods"][0] = {{"method", "localsgd"}, {"step_size", 0.1}, {"local_steps", 0}};
        expectConfigError(
            j, {"methods[0].local_steps = 0", "not allowed", "an integer in [1, 1000000000]"});
        j["methods"][0]["local_steps"] = 2.5;
        expectConfigError(j, {"methods[0].local_steps = 2.5", "integer"});
        j = minimal();
        j["methods"][0]["noam"] = -1;
        expectConfigError(j, {"methods[0].noam = -1", "not allowed"});
        j = minimal();
        j["methods"].push_back({{"method", "rpd"}, {"step_size", 0.1}, {"delay_mode", "some"}});
        expectConfigError(j, {"methods[1].delay_mode = \"some\"", "uniform, max, zero, pd"});
        j["methods"][1]["delay_mode"] = "max";
        j["methods"][1]["delta"] = -2;
        expectConfigError(j, {"methods[1].delta = -2", "-1"});
        j["methods"][1]["delta"] = 3;
        j["methods"][1]["order"] = "random";
        expectConfigError(j, {"methods[1].order = \"random\"", "uniform, pd"});
        j = minimal();
        j["objective"] = {{"kind", "hinge"}};
        expectConfigError(j, {"objective.kind = \"hinge\"", "quadratic, logistic"});
        j = minimal();
        j["objective"] = {{"l2", -1}};
        expectConfigError(j, {"objective.l2 = -1", "a number in [0, 1e12]"});
        j = minimal();
        j["objective"] = {{"kind", "quadratic"}, {"l2", 0.5}};
        expectConfigError(j, {"objective.l2 = 0.5", "quadratic", "0"});
        j = minimal();
        j["data"]["source"] = "parquet";
        expectConfigError(j, {"data.source = \"parquet\"", "synthetic, npy, csv, libsvm"});
        j = minimal();
        j["data"]["kind"] = "spiral";
        expectConfigError(j, {"data.kind = \"spiral\"", "random, simple, tridiagonal, logistic"});
        j = minimal();
        j["budget"] = {{"compare", "energy"}};
        expectConfigError(j, {"budget.compare = \"energy\"", "time, updates"});
        j["budget"] = {{"compare", "time"}};
        expectConfigError(j, {"budget", "slots", "microbatches", "epochs"});
        j["budget"] = {{"epochs", -1}};
        expectConfigError(j, {"budget.epochs = -1"});
        j = minimal();
        j["costs"] = {{"backward_slots", 0}};
        expectConfigError(j, {"costs.backward_slots = 0", "[1, 1000]"});
        j = minimal();
        j["sampling"] = {{"blow_up_factor", 0.5}};
        expectConfigError(j, {"sampling.blow_up_factor = 0.5", "a number in [1, 1e300]"});
        j = minimal();
        j["shuffle"] = "yes";
        expectConfigError(j, {"shuffle = \"yes\"", "true or false"});
        j = minimal();
        j["backend"] = "cuda";
        expectConfigError(j, {"backend = \"cuda\"", "auto, cpu, opencl"});
        j = minimal();
        j["data"] = {{"source", "npy"}, {"x", "X.npy"}};
        expectConfigError(j, {"data.y is missing"});
        j["data"] = {{"source", "csv"}};
        expectConfigError(j, {"data.x is missing"});
        expectConfigError(json::array({1, 2}), {"config", "JSON object"});
    }

    void unknownKeysAndMethods() {
        json j = minimal();
        j["stagez"] = 4;
        expectConfigError(j, {"unknown key stagez", "stages"});
        j = minimal();
        j["data"]["rowz"] = 4;
        expectConfigError(j, {"unknown key data.rowz", "rows"});
        j = minimal();
        // noam belongs to pd; on a LocalSGD method it is a mistake, not silently ignored.
        j["methods"][0] = {{"method", "localsgd"}, {"step_size", 0.1}, {"noam", 2}};
        expectConfigError(j, {"unknown key methods[0].noam", "local_steps"});
        j = minimal();
        j["methods"][0]["method"] = "adam";
        expectConfigError(j,
                          {"methods[0].method = \"adam\"", "pd, rpd, localsgd, sgd, fill-drain"});
        j = minimal();
        j["methods"][0].erase("method");
        expectConfigError(j, {"methods[0].method is missing"});
        j = minimal();
        j.erase("methods");
        expectConfigError(j, {"methods is missing"});
        j["methods"] = json::array();
        expectConfigError(j, {"methods = []", "non-empty"});
    }

    void filesAndData() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // A malformed or missing config file.
        const std::string bad = writeText(dir, "bad.json", "{\"stages\": 4,,}");
        expectError<ConfigError>([&] { ExperimentConfig::fromFile(bad); },
                                 {QString::fromStdString(bad), "not valid JSON"});
        const std::string none = dir.filePath("none.json").toStdString();
        expectError<ConfigError>([&] { ExperimentConfig::fromFile(none); },
                                 {QString::fromStdString(none)});

        // Real data files, relative to the config's folder.
        Eigen::MatrixXd X = Eigen::MatrixXd::Random(12, 3);
        Eigen::VectorXd y = Eigen::VectorXd::Random(12);
        saveNpy(dir.filePath("X.npy").toStdString(), X);
        saveNpy(dir.filePath("y.npy").toStdString(), y);
        saveNpy(dir.filePath("y10.npy").toStdString(), Eigen::VectorXd(y.head(10)));
        json j = minimal();
        j["batch_size"] = 4;
        j["data"] = {{"source", "npy"}, {"x", "X.npy"}, {"y", "y.npy"}};
        writeText(dir, "ok.json", j.dump());
        ExperimentConfig ok = ExperimentConfig::fromFile(dir.filePath("ok.json").toStdString());
        auto obj = buildObjective(ok);
        QCOMPARE(obj->rows(), 12);
        QCOMPARE(obj->dim(), 3);
        QVERIFY((obj->X() - X).norm() == 0.0);

        auto fails = [&](const json& data, int stages, int batch) {
            json c = minimal();
            c["data"] = data;
            c["stages"] = stages;
            c["batch_size"] = batch;
            writeText(dir, "c.json", c.dump());
            ExperimentConfig cfg = ExperimentConfig::fromFile(dir.filePath("c.json").toStdString());
            return [cfg] { buildObjective(cfg); };
        };
        // S > d and n not a multiple of b, found only once the data is loaded.
        expectError<ConfigError>(fails({{"source", "npy"}, {"x", "X.npy"}, {"y", "y.npy"}}, 4, 4),
                                 {"stages = 4", "d = 3"});
        expectError<ConfigError>(fails({{"source", "npy"}, {"x", "X.npy"}, {"y", "y.npy"}}, 2, 5),
                                 {"batch_size = 5", "n = 12", "multiple"});
        // A missing file, mismatched lengths, malformed files: DataError naming the file.
        const QString missing = dir.filePath("missing.npy");
        expectError<DataError>(
            fails({{"source", "npy"}, {"x", "missing.npy"}, {"y", "y.npy"}}, 2, 4),
            {missing, "does not exist"});
        expectError<DataError>(fails({{"source", "npy"}, {"x", "X.npy"}, {"y", "y10.npy"}}, 2, 4),
                               {"X has 12 rows", "y has 10", dir.filePath("y10.npy")});
        writeText(dir, "junk.npy", "this is not a numpy file at all, just text\n");
        expectError<DataError>(fails({{"source", "npy"}, {"x", "junk.npy"}, {"y", "y.npy"}}, 2, 4),
                               {dir.filePath("junk.npy")});
        writeText(dir, "t.csv", "a,b,label\n1,2,3\n4,oops,6\n");
        expectError<DataError>(fails({{"source", "csv"}, {"x", "t.csv"}}, 2, 1),
                               {dir.filePath("t.csv"), "line 3"});
        writeText(dir, "Xc.csv", "1,2\n3,4\n5,6\n");
        writeText(dir, "yc.csv", "1\n2\n");
        expectError<DataError>(fails({{"source", "csv"}, {"x", "Xc.csv"}, {"y", "yc.csv"}}, 2, 1),
                               {"3 rows", "2", dir.filePath("yc.csv")});
        writeText(dir, "a.svm", "+1 1:0.5 2:1\n-1 1:x\n");
        expectError<DataError>(fails({{"source", "libsvm"}, {"x", "a.svm"}}, 2, 1),
                               {dir.filePath("a.svm"), "line 2"});
        expectError<DataError>(fails({{"source", "libsvm"}, {"x", "none.svm"}}, 2, 1),
                               {dir.filePath("none.svm")});
        // A good CSV and LIBSVM file load.
        writeText(dir, "good.csv", "x1,x2,y\n1,2,3\n4,5,6\n");
        json c = minimal();
        c["data"] = {{"source", "csv"}, {"x", "good.csv"}};
        c["batch_size"] = 1;
        writeText(dir, "c.json", c.dump());
        auto csv = buildObjective(ExperimentConfig::fromFile(dir.filePath("c.json").toStdString()));
        QCOMPARE(csv->rows(), 2);
        QCOMPARE(csv->y()[1], 6.0);
        writeText(dir, "good.svm", "+1 1:0.5 3:1\n-1 2:2\n");
        c["data"] = {{"source", "libsvm"}, {"x", "good.svm"}};
        c["objective"] = {{"kind", "logistic"}};
        writeText(dir, "c.json", c.dump());
        auto svm = buildObjective(ExperimentConfig::fromFile(dir.filePath("c.json").toStdString()));
        QCOMPARE(svm->dim(), 3);
        QCOMPARE(svm->y()[0], 1.0);
        QCOMPARE(svm->y()[1], 0.0);
    }

    void logisticNeedsLogisticData() {
        json j = minimal();
        j["objective"] = {{"kind", "logistic"}};
        j["data"]["kind"] = "random";
        const ExperimentConfig c = ExperimentConfig::fromJson(j);
        expectError<ConfigError>([&] { buildObjective(c); },
                                 {"data.kind = \"random\"", "logistic"});
    }

    void documentedExamplesParseAndMatchTheFiles() {
        // Every ```json block of docs/config.md is a valid config; the ones named like a file of
        // examples/ are that file, so the documentation cannot drift from what the tests run.
        QFile doc(QString(PIPELENS_SOURCE_DIR) + "/docs/config.md");
        QVERIFY(doc.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(doc.readAll());
        std::map<std::string, json> files;
        const QDir examples(QString(PIPELENS_SOURCE_DIR) + "/examples");
        for (const QString& f : examples.entryList({"*.json"}, QDir::Files)) {
            QFile file(examples.filePath(f));
            QVERIFY(file.open(QIODevice::ReadOnly));
            const json j = json::parse(file.readAll().toStdString());
            if (f.contains("sweep")) {
                // A sweep file (docs/sweeps.md): its experiment and every point must be valid.
                SweepSpec::fromJson(j, examples.absolutePath().toStdString());
                continue;
            }
            ExperimentConfig::fromJson(j, examples.absolutePath().toStdString());
            files[j.value("name", "")] = j;
        }
        int blocks = 0;
        int matched = 0;
        qsizetype at = 0;
        while ((at = text.indexOf("```json\n", at)) >= 0) {
            const qsizetype begin = at + 8;
            const qsizetype end = text.indexOf("```", begin);
            QVERIFY(end > begin);
            const json j = json::parse(text.mid(begin, end - begin).toStdString());
            try {
                // Schedule files are named as from examples/, where the blocks' files live.
                ExperimentConfig::fromJson(j, examples.absolutePath().toStdString());
            } catch (const ConfigError& e) {
                QFAIL(qPrintable(QString("docs/config.md block %1: %2").arg(blocks).arg(e.what())));
            }
            const auto it = files.find(j.value("name", ""));
            if (it != files.end()) {
                QCOMPARE(QString::fromStdString(j.dump()),
                         QString::fromStdString(it->second.dump()));
                ++matched;
            }
            ++blocks;
            at = end + 3;
        }
        QVERIFY(blocks >= 6);
        QCOMPARE(matched, static_cast<int>(files.size()));
    }

    // ---- the language model (issue 10) ------------------------------------------------------

    void languageModelKeysParseAndRoundTrip() {
        const ExperimentConfig c = ExperimentConfig::fromJson(languageModel());
        QVERIFY(c.languageModel());
        const LanguageModelSpec& m = *c.objective.languageModel;
        QCOMPARE(m.width, 16);
        QCOMPARE(m.heads, 2);
        QCOMPARE(m.context, 8);
        QCOMPARE(m.corpusSeed, std::uint64_t(3));
        QCOMPARE(m.corpusCharacters, 5000LL);
        QCOMPARE(m.heldOutFraction, 0.1);
        QCOMPARE(m.heldOutEvery, 20LL);
        QCOMPARE(m.initSeed, std::uint64_t(5));
        QVERIFY(m.fullObjective);
        QCOMPARE(m.sampleLines, 2);
        QCOMPARE(m.sampleLength, 50);
        QCOMPARE(m.sampleTemperature, 0.8);
        QCOMPARE(c.sampling.blowUpFactor, 100.0);  // x log V, not the linear 1e6
        const json once = c.toJson();
        QVERIFY(!once.contains("data"));
        QVERIFY(!once.at("objective").contains("l2"));
        const ExperimentConfig b = ExperimentConfig::fromJson(once);
        QCOMPARE(QString::fromStdString(b.toJson().dump()), QString::fromStdString(once.dump()));
        // The engine's parameters: S and b from the experiment, paths against the config's folder.
        json files = languageModel();
        files["objective"]["corpus"] = "text/play.txt";
        files["objective"]["w0"] = "w0.npy";
        const CharTransformerParams p =
            charTransformerParams(ExperimentConfig::fromJson(files, "/data/lm"));
        QCOMPARE(p.stages, 4);
        QCOMPARE(p.batch, 4);
        QCOMPARE(p.width, 16);
        QCOMPARE(p.corpusPath, std::string("/data/lm/text/play.txt"));
        QCOMPARE(p.w0Path, std::string("/data/lm/w0.npy"));
        QCOMPARE(p.precision, LmPrecision::Float);
        // Defaults: seeds follow the experiment seed, the built-in corpus.
        json bare = languageModel();
        bare["seed"] = 9;
        bare["objective"] = {{"kind", "char_transformer"}};
        const ExperimentConfig d = ExperimentConfig::fromJson(bare);
        QCOMPARE(d.objective.languageModel->initSeed, std::uint64_t(9));
        QCOMPARE(d.objective.languageModel->corpusSeed, std::uint64_t(9));
        QVERIFY(d.objective.languageModel->corpus.empty());
        QCOMPARE(d.objective.languageModel->width, 64);
    }

    void languageModelBadValuesNameKeyValueAndAllowed() {
        auto with = [](const char* key, const json& value) {
            json j = languageModel();
            j["objective"][key] = value;
            return j;
        };
        json j = languageModel();
        j["stages"] = 2;
        expectConfigError(j, {"stages = 2", "[3, 4096]"});
        expectConfigError(with("heads", 3), {"heads = 3", "divide width = 16"});
        expectConfigError(with("width", 0), {"objective.width = 0", "[1, 65536]"});
        expectConfigError(with("context", "8"), {"objective.context = \"8\"", "not allowed"});
        expectConfigError(with("held_out_fraction", 1.0),
                          {"objective.held_out_fraction = 1.0", "[0, 0.9]"});
        expectConfigError(with("sample_temperature", 0), {"objective.sample_temperature = 0"});
        expectConfigError(with("precision", "half"), {"unknown key objective.precision"});
        j = languageModel();
        j["objective"]["held_out_fraction"] = 0;
        expectConfigError(j, {"objective.held_out_every = 20", "held_out_fraction"});
        // The linear models' keys are refused, each with what to do instead.
        expectConfigError(with("l2", 0.1),
                          {"objective.l2 = 0.1", "char_transformer", "no regulariser"});
        expectConfigError(with("gradient_noise", 0.1), {"objective.gradient_noise = 0.1"});
        j = languageModel();
        j["data"] = {{"rows", 20}};
        expectConfigError(j, {"data", "char_transformer", "objective.corpus"});
        j = languageModel();
        j["shuffle"] = true;
        expectConfigError(j, {"shuffle = true", "consecutive"});
        j = languageModel();
        j["seeds"] = 3;
        expectConfigError(j, {"seeds = 3", "init_seed"});
        j = languageModel();
        j["sampling"] = {{"grad_norm_every", 5}};
        expectConfigError(j, {"sampling.grad_norm_every = 5", "char_transformer"});
        j = languageModel();
        j["sampling"] = {{"objective_per_update", false}};
        expectConfigError(j, {"sampling.objective_per_update = false"});
        j = languageModel();
        j["methods"].push_back({{"method", "fill-drain"}, {"step_size", 0.1}});
        expectConfigError(j, {"methods[3].method = \"fill-drain\"",
                              "pd, rpd, localsgd, 1f1b, zb-h1, 2bw or imported"});
        j["methods"][3]["method"] = "sgd";
        expectConfigError(j, {"methods[3].method = \"sgd\""});
        expectConfigError(with("widht", 8), {"unknown key objective.widht", "width"});
        j = languageModel();
        j["backend"] = "opencl";
        j["allow_cpu_fallback"] = false;
        QVERIFY(ExperimentConfig::fromJson(j).languageModel());  // PD, RPD, LocalSGD on OpenCL
    }

    // ---- hardened inputs (issue 7) ---------------------------------------------------------

    // About 58,000 levels used to overflow the stack (exit 139, no message).
    void deepNestingRefusedWithMessage() {
        const std::string deep =
            "{\"name\": " + std::string(58000, '[') + std::string(58000, ']') + "}";
        expectError<ConfigError>([&] { ExperimentConfig::fromText(deep, "deep.json"); },
                                 {"deep.json", "nests", "more than 64 deep"});
        QTemporaryDir dir;
        const std::string path = writeText(dir, "deep.json", deep);
        expectError<ConfigError>([&] { ExperimentConfig::fromFile(path); },
                                 {"deep.json", "64 deep"});
    }

    // A wrong-type message quotes a short excerpt, never the whole (nested) value.
    void wrongTypeMessageIsShort() {
        json j = minimal();
        json big = json::array();
        for (int i = 0; i < 2000; ++i) big.push_back(json::array({i, "long text value", i}));
        j["name"] = big;
        try {
            ExperimentConfig::fromJson(j);
            QFAIL("expected a ConfigError");
        } catch (const ConfigError& e) {
            const std::string m = e.what();
            QVERIFY2(m.size() < 200, m.c_str());
            QVERIFY2(m.find("name = [...] (a list of 2000)") != std::string::npos, m.c_str());
        }
        j = minimal();
        j["backend"] = std::string(500, 'x');
        expectError<ConfigError>([&] { ExperimentConfig::fromJson(j); },
                                 {"backend = \"xxxx", "..."});
    }

    void duplicateKeysRefused() {
        const std::string text =
            R"({"stages": 2, "stages": 3, "data": {"rows": 20, "dim": 4}, "batch_size": 5,
                "budget": {"microbatches": 6}, "methods": [{"method": "pd", "step_size": 0.1}]})";
        expectError<ConfigError>([&] { ExperimentConfig::fromText(text, "dup.json"); },
                                 {"dup.json", "key \"stages\" appears twice"});
        const std::string nested =
            R"({"stages": 2, "data": {"rows": 20, "rows": 40}, "methods": []})";
        expectError<ConfigError>([&] { ExperimentConfig::fromText(nested, "n.json"); },
                                 {"key \"rows\" appears twice"});
        // The same key in two different objects is fine.
        const std::string ok = minimal().dump();
        QCOMPARE(ExperimentConfig::fromText(ok, "ok.json").stages, 2);
    }

    // 2^32 used to become 0 through get<int>(); 1e300 was cast to an integer (undefined).
    void largeNumbersNeverWrap() {
        json j = minimal();
        j["methods"][0]["step_size"] = {{"grid", {4294967296LL, 4294967296LL}}};
        expectConfigError(j, {"methods[0].step_size.grid = [4294967296,4294967296]",
                              "-60 <= a_min <= a_max <= 20"});
        j = minimal();
        j["stages"] = 1e300;
        expectConfigError(j, {"stages = 1e+300", "[1, 4096]"});
        j = minimal();
        j["stages"] = 4294967298.0;
        expectConfigError(j, {"stages = 4294967298", "[1, 4096]"});
        j = minimal();
        j["seed"] = 18446744073709551615ULL;
        expectConfigError(j, {"seed = 18446744073709551615"});
    }

    // A number beyond a double's range escaped as nlohmann's out_of_range (found by fuzz_config).
    void numberOverflowIsAConfigError() {
        const std::string text = R"({"name": "x", "stages": 1e999})";
        try {
            ExperimentConfig::fromText(text, "big.json");
            QFAIL("a number beyond a double's range was accepted");
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("big.json has a number that is not allowed") != std::string::npos,
                     what.c_str());
        }
    }

    void configPathProblemsSayWhy() {
        QTemporaryDir dir;
        expectError<ConfigError>([&] { ExperimentConfig::fromFile(dir.path().toStdString()); },
                                 {"is a folder, not a file"});
        const std::string file = writeText(dir, "plain.json", "{}");
        expectError<ConfigError>([&] { ExperimentConfig::fromFile(file + "/inside.json"); },
                                 {"cannot open config file", "Not a directory"});
        // The data readers' wording, from the one input-file reader.
        expectError<ConfigError>(
            [&] { ExperimentConfig::fromFile(dir.filePath("gone.json").toStdString()); },
            {"config file '" + dir.filePath("gone.json") + "' does not exist"});
    }

    void defaultMethodLabels() {
        MethodSpec m;
        m.method = Method::RandomizedPipeDream;
        m.delayMode = DelayMode::Uniform;
        QCOMPARE(QString::fromStdString(defaultMethodLabel(m, 8)),
                 QString("RPD (uniform, delta=60)"));
        m.method = Method::LocalSgd;
        m.localSteps = 5;
        QCOMPARE(QString::fromStdString(defaultMethodLabel(m, 16)),
                 QString("LocalSGD (R=16, H=5)"));
    }
};

QTEST_APPLESS_MAIN(TestConfig)
#include "tst_config.moc"

// Sweeps (docs/sweeps.md) and what they stand on: a sweep equals its points run one by one, a
// cancelled and resumed sweep leaves the same folder as an uninterrupted one, point results read
// back exactly, seeds average separate runs, the truncate budget rule against fit on a
// hand-checked PipeDream timeline, and RPD's final value without per-update sampling.
#include <QtTest>

#include <QTemporaryDir>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "errors.hpp"
#include "experiment/run/budget.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "experiment/sweep/sweep.hpp"
#include "experiment/sweep/sweep_folder.hpp"
#include "experiment/sweep/sweep_plot.hpp"

using namespace pipelens;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json smallExperiment() {
    return {{"name", "small"},
            {"seed", 1},
            {"objective", {{"kind", "quadratic"}}},
            {"data",
             {{"source", "synthetic"}, {"kind", "random"}, {"rows", 40}, {"dim", 8}, {"seed", 2}}},
            {"stages", 2},
            {"batch_size", 4},
            {"shuffle", true},
            {"budget", {{"epochs", 3}}},
            {"sampling", {{"objective_per_update", false}}},
            {"backend", "cpu"},
            {"methods", json::array({{{"method", "pd"}, {"step_size", {{"grid", {-5, -2}}}}},
                                     {{"method", "rpd"},
                                      {"step_size", {{"grid", {-5, -2}}, {"rule", "stable"}}},
                                      {"delta", 1}}})}};
}

json smallSweep() {
    return {{"name", "tiny"},
            {"experiment", smallExperiment()},
            {"axis", {{"name", "delta"}, {"values", {0, 2, 5}}}},
            {"seeds", 2}};
}

std::string readFile(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Every file under a folder, by relative path, with its bytes.
std::map<std::string, std::string> folderFiles(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = readFile(e.path());
    }
    return out;
}

void writeSweepTo(const std::string& dir, const SweepSpec& spec, bool resume,
                  const std::atomic<bool>* cancel, std::function<void()> afterPoint = {}) {
    SweepFolder folder = SweepFolder::open(dir, spec, resume);
    SweepRunOptions o;
    o.threads = 2;
    o.cancel = cancel;
    o.onPoint = [&](const PointResult& p) {
        folder.writePoint(p);
        if (afterPoint) afterPoint();
    };
    SweepOutcome r = runSweep(spec, folder.finished(), o);
    folder.writeSummary(spec, r.points);
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

class TestSweep : public QObject {
    Q_OBJECT
  private slots:

    // The schedule axis: method keys as values, one point per key, each the base with its
    // methods replaced by one method of that key under the first method's step-size spec.
    void scheduleAxisParsesAndBuildsPoints() {
        json j = smallSweep();
        j["experiment"]["methods"][0]["noam"] = 3;  // not carried over: defaults only
        j["axis"] = {{"name", "schedule"},
                     {"values", {"pd", "1f1b", "zb-h1", "2bw", "fill-drain", "rpd"}}};
        const SweepSpec spec = SweepSpec::fromJson(j);
        QCOMPARE(spec.axis, SweepAxis::Schedule);
        QCOMPARE(spec.points(), std::size_t(6));
        QCOMPARE(spec.schedules[1], std::string("1f1b"));
        QCOMPARE(spec.values[4], 4.0);
        QCOMPARE(spec.valueText(2), std::string("zb-h1"));
        const std::vector<Method> methods{Method::PipeDream,    Method::OneFOneB,
                                          Method::ZeroBubbleH1, Method::TwoBw,
                                          Method::FillDrain,    Method::RandomizedPipeDream};
        const ExperimentConfig base = ExperimentConfig::fromJson(j["experiment"]);
        for (std::size_t i = 0; i < spec.points(); ++i) {
            const ExperimentConfig c = spec.pointConfig(i);
            QCOMPARE(c.methods.size(), std::size_t(1));
            QCOMPARE(c.methods[0].method, methods[i]);
            QCOMPARE(c.methods[0].step, base.methods[0].step);
            QCOMPARE(c.methods[0].noam, 0);
            QCOMPARE(c.methods[0].flushGroup, 0);
            QCOMPARE(c.methods[0].accumulation, 0);
            QCOMPARE(c.stages, base.stages);
            QCOMPARE(c.budget, base.budget);
            QCOMPARE(c.batchSize, base.batchSize);
        }
        // The normalised form writes the keys and reads back the same sweep.
        const json out = spec.toJson();
        QCOMPARE(out["axis"]["values"][3].get<std::string>(), std::string("2bw"));
        QVERIFY(SweepSpec::fromJson(out) == spec);
        QVERIFY(!spec.overlayConfig().has_value());
    }

    void scheduleAxisRefusesBadKeys() {
        json j = smallSweep();
        j["axis"] = {{"name", "schedule"}, {"values", {"pd", "gpipe2"}}};
        std::string e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(
            e.find("axis.values[1]") != std::string::npos &&
                e.find("\"gpipe2\"") != std::string::npos &&
                e.find("pd, rpd, localsgd, sgd, fill-drain, 1f1b, zb-h1, 2bw") != std::string::npos,
            e.c_str());
        j["axis"]["values"] = {"1f1b", "imported"};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[1]") != std::string::npos &&
                     e.find("schedule_file") != std::string::npos,
                 e.c_str());
        j["axis"]["values"] = {"pd", 4};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[1] = 4") != std::string::npos &&
                     e.find("a method key") != std::string::npos,
                 e.c_str());
        // A numeric axis still refuses keys, and the schedule axis an empty list.
        j["axis"] = {{"name", "stages"}, {"values", {"pd"}}};
        QVERIFY(errorOf([&] { SweepSpec::fromJson(j); }).find("axis.values[0]") !=
                std::string::npos);
        j["axis"] = {{"name", "schedule"}, {"values", json::array()}};
        QVERIFY(errorOf([&] { SweepSpec::fromJson(j); }).find("method keys") != std::string::npos);
        // A spec put together in code must keep values and keys in step.
        SweepSpec s = SweepSpec::fromJson(smallSweep());
        s.axis = SweepAxis::Schedule;
        s.schedules = {"pd", "1f1b"};
        s.values = {0, 1, 2};
        QVERIFY(errorOf([&] { s.validate(); }).find("one key per point") != std::string::npos);
    }

    // The optimizer axis: an optimizer object or a bare kind per point; every method of the
    // point gets it, the names are short, and the normalised form reads back the same sweep.
    void optimizerAxisParsesAndBuildsPoints() {
        json j = smallSweep();
        j["axis"] = {{"name", "optimizer"},
                     {"values",
                      {"sgd",
                       "momentum",
                       {{"kind", "adam"}, {"beta1", 0.8}},
                       {{"kind", "adamw"}, {"weight_decay", 0.01}}}}};
        const SweepSpec spec = SweepSpec::fromJson(j);
        QCOMPARE(spec.axis, SweepAxis::Optimizer);
        QCOMPARE(spec.points(), std::size_t(4));
        QCOMPARE(spec.values, (std::vector<double>{0, 1, 2, 3}));
        QCOMPARE(spec.valueText(0), std::string("sgd"));
        QCOMPARE(spec.valueText(1), std::string("momentum"));
        QCOMPARE(spec.valueText(2), std::string("adam (beta1=0.8)"));
        QCOMPARE(spec.valueText(3), std::string("adamw"));  // 0.01 is adamw's default decay
        const std::vector<OptimizerKind> kinds{OptimizerKind::Sgd, OptimizerKind::Momentum,
                                               OptimizerKind::Adam, OptimizerKind::AdamW};
        for (std::size_t i = 0; i < spec.points(); ++i) {
            const ExperimentConfig c = spec.pointConfig(i);
            QCOMPARE(c.methods.size(), std::size_t(2));
            for (const MethodSpec& m : c.methods) {
                QCOMPARE(m.optimizer.kind, kinds[i]);
                QCOMPARE(m.optimizer, spec.optimizers[i]);
            }
        }
        QCOMPARE(spec.pointConfig(2).methods[1].optimizer.beta1, 0.8);
        const json out = spec.toJson();
        QCOMPARE(out["axis"]["values"][1]["kind"].get<std::string>(), std::string("momentum"));
        QCOMPARE(out["axis"]["values"][1]["beta"].get<double>(), 0.9);
        QVERIFY(SweepSpec::fromJson(out) == spec);
        QVERIFY(SweepSpec::fromJson(out).toJson() == out);
        // The chart is categorical: the points named, one series per method of the base.
        const SweepPlot plot = sweepPlot(spec, {}, SweepMetric::FinalGap);
        QCOMPARE(plot.xLabels,
                 (std::vector<std::string>{"sgd", "momentum", "adam (beta1=0.8)", "adamw"}));
        QVERIFY(!plot.logX);
        QCOMPARE(plot.series.size(), std::size_t(2));
        QCOMPARE(plot.series[0].method, std::string("pd"));
    }

    void optimizerAxisRefusesBadValues() {
        json j = smallSweep();
        j["axis"] = {{"name", "optimizer"}, {"values", {"sgd", "rmsprop"}}};
        std::string e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[1].kind = \"rmsprop\"") != std::string::npos &&
                     e.find("sgd, momentum, nesterov, adam, adamw") != std::string::npos,
                 e.c_str());
        j["axis"]["values"] = {4};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[0] = 4") != std::string::npos &&
                     e.find("optimizer object") != std::string::npos,
                 e.c_str());
        j["axis"]["values"] = {{{"kind", "adam"}, {"beta1", 1.5}}};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[0].beta1 = 1.5") != std::string::npos, e.c_str());
        j["axis"]["values"] = {{{"kind", "momentum"}, {"beta1", 0.5}}};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(
            e.find("axis.values[0]") != std::string::npos && e.find("beta1") != std::string::npos,
            e.c_str());
        j["axis"]["values"] = json::array();
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values is missing") != std::string::npos &&
                     e.find("optimizer object") != std::string::npos,
                 e.c_str());
        // A point that does not validate names the point and the key: lookahead needs sgd.
        j["axis"]["values"] = {"sgd", "adam"};
        j["experiment"]["methods"][0]["correctors"] = {{{"kind", "lookahead"}}};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("point 1 (optimizer = adam)") != std::string::npos &&
                     e.find("methods[0].correctors[0].kind = \"lookahead\"") != std::string::npos &&
                     e.find("adam") != std::string::npos,
                 e.c_str());
        // Lists in step with the values, and none of another axis's.
        SweepSpec s = SweepSpec::fromJson(smallSweep());
        s.axis = SweepAxis::Optimizer;
        s.optimizers = {OptimizerSpec{}};
        s.values = {0, 1};
        e = errorOf([&] { s.validate(); });
        QVERIFY2(e.find("one optimizer per point") != std::string::npos, e.c_str());
        s.axis = SweepAxis::Delta;
        s.values = {0, 1};
        e = errorOf([&] { s.validate(); });
        QVERIFY2(e.find("use axis.name = \"optimizer\"") != std::string::npos, e.c_str());
    }

    // The corrector axis: a list per point (or a bare kind, or "none"); the asynchronous methods
    // get it, RPD where it takes every kind of it, the synchronous schedules none.
    void correctorAxisParsesAndBuildsPoints() {
        json j = smallSweep();
        j["experiment"]["methods"].push_back(
            {{"method", "1f1b"}, {"step_size", {{"grid", {-5, -2}}}}});
        j["axis"] = {{"name", "corrector"},
                     {"values",
                      {"none", "dc", json::array({{{"kind", "prediction"}, {"s", "pipeoptim"}}}),
                       json::array({{{"kind", "prediction"}}, {{"kind", "dc"}, {"lambda", 0.2}}}),
                       "accumulate", json::array()}}};
        const SweepSpec spec = SweepSpec::fromJson(j);
        QCOMPARE(spec.axis, SweepAxis::Corrector);
        QCOMPARE(spec.points(), std::size_t(6));
        const std::vector<std::string> names{"none",
                                             "dc",
                                             "prediction (pipeoptim)",
                                             "prediction + dc (lambda=0.2)",
                                             "accumulate (k=2)",
                                             "none"};
        for (std::size_t i = 0; i < names.size(); ++i) QCOMPARE(spec.valueText(i), names[i]);
        // methods: 0 pd, 1 rpd, 2 1f1b
        const ExperimentConfig none = spec.pointConfig(0);
        for (const MethodSpec& m : none.methods) QVERIFY(!m.correctors.any());
        const ExperimentConfig dc = spec.pointConfig(1);
        QVERIFY(dc.methods[0].correctors.dc && dc.methods[1].correctors.dc);
        QVERIFY(!dc.methods[2].correctors.any());
        const ExperimentConfig pred = spec.pointConfig(2);
        QVERIFY(pred.methods[0].correctors.prediction);
        QCOMPARE(pred.methods[0].correctors.steps, PredictionSteps::PipeOptim);
        QVERIFY(!pred.methods[1].correctors.any());  // RPD refuses prediction: none
        QVERIFY(!pred.methods[2].correctors.any());
        const ExperimentConfig both = spec.pointConfig(3);
        QVERIFY(both.methods[0].correctors.prediction && both.methods[0].correctors.dc);
        QCOMPARE(both.methods[0].correctors.lambda, 0.2);
        QVERIFY(!both.methods[1].correctors.any());  // not a part of the list: all or none
        QCOMPARE(spec.pointConfig(4).methods[0].correctors.accumulate, 2);
        const json out = spec.toJson();
        QCOMPARE(out["axis"]["values"][0], json::array());
        QCOMPARE(out["axis"]["values"][1][0]["kind"].get<std::string>(), std::string("dc"));
        QVERIFY(SweepSpec::fromJson(out) == spec);
        QVERIFY(SweepSpec::fromJson(out).toJson() == out);
        const SweepPlot plot = sweepPlot(spec, {}, SweepMetric::FinalGap);
        QCOMPARE(plot.xLabels, names);
        QCOMPARE(plot.series.size(), std::size_t(3));
        QCOMPARE(plot.series[2].method, std::string("1f1b"));
        // A base method's own correctors are replaced, not added to.
        j["experiment"]["methods"][0]["correctors"] = {{{"kind", "dc"}}};
        QVERIFY(!SweepSpec::fromJson(j).pointConfig(0).methods[0].correctors.any());
    }

    void correctorAxisRefusesBadValues() {
        json j = smallSweep();
        j["axis"] = {{"name", "corrector"}, {"values", {"dc", "momentum"}}};
        std::string e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[1] = \"momentum\"") != std::string::npos &&
                     e.find("delay_adaptive, prediction, dc, lookahead, accumulate") !=
                         std::string::npos,
                 e.c_str());
        j["axis"]["values"] = {json::array({{{"kind", "dc"}, {"lambda", -1}}})};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[0][0].lambda = -1") != std::string::npos, e.c_str());
        j["axis"]["values"] = {{{"kind", "dc"}}};  // an object, not a list
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("axis.values[0]") != std::string::npos &&
                     e.find("corrector list") != std::string::npos,
                 e.c_str());
        // Lookahead on a PD with Adam: PD cannot take it (nor RPD), so no method does.
        j["axis"]["values"] = {"none", "lookahead"};
        j["experiment"]["methods"][0]["optimizer"] = {{"kind", "adam"}};
        e = errorOf([&] { SweepSpec::fromJson(j); });
        QVERIFY2(e.find("point 1 (corrector = lookahead)") != std::string::npos &&
                     e.find("no method of the experiment takes it") != std::string::npos &&
                     e.find("optimizer sgd") != std::string::npos,
                 e.c_str());
        // A list no method takes is a mistake, not a run without it.
        json sync = smallSweep();
        sync["experiment"]["methods"] = {{{"method", "1f1b"}, {"step_size", 0.1}}};
        sync["axis"] = {{"name", "corrector"}, {"values", {"none", "dc"}}};
        e = errorOf([&] { SweepSpec::fromJson(sync); });
        QVERIFY2(e.find("point 1 (corrector = dc)") != std::string::npos &&
                     e.find("no method of the experiment takes it") != std::string::npos,
                 e.c_str());
    }

    // A tiny sweep over each new axis runs every point, and its files name the points.
    void optimizerAndCorrectorSweepsRun() {
        json j = smallSweep();
        j["seeds"] = 1;
        j["axis"] = {{"name", "optimizer"},
                     {"values", {"sgd", {{"kind", "momentum"}, {"beta", 0.5}}}}};
        SweepSpec spec = SweepSpec::fromJson(j);
        QTemporaryDir tmp;
        const std::string dir = tmp.filePath("o").toStdString();
        writeSweepTo(dir, spec, false, nullptr);
        SweepFolder folder = SweepFolder::open(dir, spec, true);
        const SweepPoints& points = folder.finished();
        QCOMPARE(points.size(), std::size_t(2));
        for (const auto& p : points) {
            QVERIFY(p.has_value());
            for (const MethodPoint& m : p->methods) QVERIFY(std::isfinite(m.finalGap.mean));
        }
        // Momentum changes the run (the engines apply optimizers).
        QVERIFY(points[0]->methods[0].curveMean != points[1]->methods[0].curveMean);
        std::string csv = readFile(fs::path(dir) / "summary.csv");
        QVERIFY2(csv.find("point,optimizer,method,") == 0, csv.c_str());
        QVERIFY2(csv.find("\n1,momentum (beta=0.5),pd,") != std::string::npos, csv.c_str());
        QCOMPARE(json::parse(readFile(fs::path(dir) / "summary.json"))["values"][1],
                 json("momentum (beta=0.5)"));

        j["axis"] = {{"name", "corrector"}, {"values", {"none", "dc"}}};
        spec = SweepSpec::fromJson(j);
        const std::string cdir = tmp.filePath("c").toStdString();
        writeSweepTo(cdir, spec, false, nullptr);
        SweepFolder cfolder = SweepFolder::open(cdir, spec, true);
        for (const auto& p : cfolder.finished()) {
            QVERIFY(p.has_value());
            QCOMPARE(p->methods.size(), std::size_t(2));
            for (const MethodPoint& m : p->methods) QVERIFY(std::isfinite(m.finalGap.mean));
        }
        csv = readFile(fs::path(cdir) / "summary.csv");
        QVERIFY2(csv.find("point,corrector,method,") == 0, csv.c_str());
        QVERIFY2(csv.find("\n1,dc,rpd,") != std::string::npos, csv.c_str());
        QVERIFY2(csv.find("+ DC") != std::string::npos || csv.find("+ dc") != std::string::npos,
                 csv.c_str());
    }

    // A schedule sweep's folder: the summary names each point's schedule and adds the
    // comparison columns; the point files keep the schedule's stats and read back exactly, and
    // --resume finishes it like an uninterrupted run.
    void scheduleSweepSummaryHasComparisonColumns() {
        json j = smallSweep();
        j["experiment"]["stages"] = 4;
        j["experiment"]["budget"] = {{"slots", 105}};  // five whole 1F1B steps of 21
        j["experiment"]["costs"] = {{"backward_slots", 2}, {"weight_slots", 1}};
        j["axis"] = {{"name", "schedule"},
                     {"values", {"pd", "1f1b", "zb-h1", "2bw", "fill-drain", "rpd"}}};
        j["seeds"] = 1;
        const SweepSpec spec = SweepSpec::fromJson(j);
        QTemporaryDir tmp;
        const std::string dir = tmp.filePath("s").toStdString();
        writeSweepTo(dir, spec, false, nullptr);
        const std::string csv = readFile(fs::path(dir) / "summary.csv");
        const std::string header =
            "point,schedule,method,label,step_rule,step_size,final_gap_mean,final_gap_sd,"
            "final_objective_mean,final_objective_sd,all_diverged,seeds,updates,slots,"
            "stages,microbatches_per_step,target,time_to_target_slots,bubble_fraction,"
            "peak_stage_memory_units\n";
        QCOMPARE(csv.substr(0, header.size()), header);
        QVERIFY(csv.find("\n1,1f1b,1f1b,") != std::string::npos);
        QVERIFY(csv.find("\n5,rpd,rpd,") != std::string::npos);
        SweepFolder folder = SweepFolder::open(dir, spec, true);
        const SweepPoints& points = folder.finished();
        QCOMPARE(points.size(), std::size_t(6));
        // 1F1B (F = 1, B = 2, M = S = 4): its schedule's bubble and memory, read back.
        const MethodPoint& one = points[1]->methods[0];
        QVERIFY(one.schedule.has_value());
        QCOMPARE(one.schedule->microbatchesPerStep, 4);
        QVERIFY(std::abs(one.schedule->bubbleFraction - 3.0 / 7.0) < 1e-12);
        QCOMPARE(one.schedule->peakStageMemoryUnits, 5);
        QCOMPARE(points[3]->methods[0].schedule->peakStageMemoryUnits, 6);  // 2BW: 2 versions
        QVERIFY(!points[5]->methods[0].schedule.has_value());               // RPD: no timeline
        // The target is 2 x the best final value, each time the first crossing.
        double best = std::numeric_limits<double>::infinity();
        for (const auto& p : points) best = std::min(best, p->methods[0].finalGap.mean);
        QCOMPARE(scheduleSweepTarget(points), 2.0 * best);
        for (const auto& p : points) {
            const MethodPoint& m = p->methods[0];
            const int t = pointTimeToTarget(m, 2.0 * best);
            if (m.method == "rpd") {
                QCOMPARE(t, -1);
                continue;
            }
            if (m.finalGap.mean == best) QVERIFY(t >= 0);
            if (t < 0) {
                for (double v : m.curveMean) QVERIFY(v > 2.0 * best);
                continue;
            }
            QVERIFY(m.curveMean[static_cast<std::size_t>(t)] <= 2.0 * best);
            for (int k = 0; k < t; ++k) {
                QVERIFY(m.curveMean[static_cast<std::size_t>(k)] > 2.0 * best);
            }
        }
        const json summary = json::parse(readFile(fs::path(dir) / "summary.json"));
        QCOMPARE(summary["values"][2].get<std::string>(), std::string("zb-h1"));
        QCOMPARE(summary["points"][2]["schedule"].get<std::string>(), std::string("zb-h1"));
        QVERIFY(summary["points"][2]["methods"][0].contains("time_to_target_slots"));
        // Resumed after a point file is removed: the same folder.
        const auto before = folderFiles(dir);
        fs::remove(fs::path(dir) / "points" / SweepFolder::pointFileName(2));
        writeSweepTo(dir, spec, true, nullptr);
        QVERIFY(folderFiles(dir) == before);
    }

    // The numeric axes' files keep their old form: no schedule column, no schedule_stats.
    void numericAxesKeepTheirFiles() {
        const SweepSpec spec = SweepSpec::fromJson(smallSweep());
        QTemporaryDir tmp;
        const std::string dir = tmp.filePath("d").toStdString();
        writeSweepTo(dir, spec, false, nullptr);
        const std::string csv = readFile(fs::path(dir) / "summary.csv");
        const std::string header =
            "point,delta,method,label,step_rule,step_size,final_gap_mean,final_gap_sd,"
            "final_objective_mean,final_objective_sd,all_diverged,seeds,updates,slots\n";
        QCOMPARE(csv.substr(0, header.size()), header);
        for (const auto& [name, text] : folderFiles(dir)) {
            QVERIFY2(text.find("schedule_stats") == std::string::npos, name.c_str());
            QVERIFY2(text.find("time_to_target") == std::string::npos, name.c_str());
        }
        QVERIFY(json::parse(readFile(fs::path(dir) / "summary.json"))["values"][1] == 2.0);
        QVERIFY(spec.schedules.empty());
        QCOMPARE(spec.valueText(1), std::string("2"));
    }
    void sweepEqualsItsPointsRunOneByOne() {
        const SweepSpec spec = SweepSpec::fromJson(smallSweep());
        SweepRunOptions o;
        o.threads = 3;
        size_t progressCalls = 0;
        o.onProgress = [&](const SweepProgress& p) {
            ++progressCalls;
            QVERIFY(p.fractionDone > 0.0 && p.fractionDone <= 1.0);
            QVERIFY(p.remainingSeconds >= 0.0);
        };
        const SweepOutcome all = runSweep(spec, {}, o);
        QVERIFY(!all.cancelled);
        QCOMPARE(progressCalls, size_t(6));  // 3 points x 2 methods
        for (size_t i = 0; i < spec.points(); ++i) {
            QVERIFY(all.points[i].has_value());
            // The unit of work alone, on this thread ...
            const auto alone = runSweepPoint(spec, i);
            QVERIFY(alone.has_value());
            QCOMPARE(pointResultToJson(*alone).dump(), pointResultToJson(*all.points[i]).dump());
            // ... and the experiment of that point run the ordinary way.
            const ExperimentConfig c = spec.pointConfig(i);
            QCOMPARE(c.methods[1].delta, static_cast<long long>(spec.values[i]));
            const ExperimentResult r = runExperiment(c);
            const PointResult p = makePointResult(spec, i, r.optimum, r.methods);
            QCOMPARE(pointResultToJson(p).dump(), pointResultToJson(*all.points[i]).dump());
        }
        // RPD's final value differs across delta (not f(w0) for every grid point).
        QVERIFY(all.points[0]->methods[1].finalGap.mean != all.points[2]->methods[1].finalGap.mean);
    }

    // The language model sweeps through the same engine (one ObjectiveRun per point): each point
    // is its experiment run the ordinary way, and its "final gap" is the final training loss
    // (the language model has no f*).
    void languageModelSweepEqualsItsExperiments() {
        const SweepSpec spec = SweepSpec::fromJson(nlohmann::json::parse(R"({
            "name": "lm-h",
            "experiment": {"name": "lm", "stages": 3, "batch_size": 4, "backend": "cpu",
                "objective": {"kind": "char_transformer", "width": 16, "heads": 2, "context": 8,
                              "corpus_characters": 5000, "sample_lines": 0},
                "budget": {"slots": 90},
                "methods": [{"method": "pd", "step_size": 0.5},
                            {"method": "localsgd", "step_size": 0.5, "local_steps": 2}]},
            "axis": {"name": "local_steps", "values": [1, 4]}})"));
        SweepRunOptions o;
        o.threads = 2;
        const SweepOutcome all = runSweep(spec, {}, o);
        QVERIFY(!all.cancelled);
        for (size_t i = 0; i < spec.points(); ++i) {
            QVERIFY(all.points[i].has_value());
            const ExperimentResult r = runExperiment(spec.pointConfig(i));
            QVERIFY(r.lmProblem);
            QCOMPARE(r.optimum, 0.0);
            const PointResult p = makePointResult(spec, i, r.optimum, r.methods);
            QCOMPARE(pointResultToJson(p).dump(), pointResultToJson(*all.points[i]).dump());
            for (size_t m = 0; m < r.methods.size(); ++m) {
                QVERIFY(r.methods[m].lm);
                QCOMPARE(all.points[i]->methods[m].finalGap.mean, r.methods[m].lm->finalLoss);
            }
        }
        // H changes LocalSGD's run, not PD's.
        QCOMPARE(all.points[0]->methods[0].finalGap.mean, all.points[1]->methods[0].finalGap.mean);
        QVERIFY(all.points[0]->methods[1].finalGap.mean != all.points[1]->methods[1].finalGap.mean);
    }

    void cancelledThenResumedEqualsUninterrupted() {
        const SweepSpec spec = SweepSpec::fromJson(smallSweep());
        QTemporaryDir tmp;
        const std::string whole = tmp.filePath("whole").toStdString();
        const std::string parts = tmp.filePath("parts").toStdString();
        writeSweepTo(whole, spec, false, nullptr);
        std::atomic<bool> cancel{false};
        writeSweepTo(parts, spec, false, &cancel, [&] { cancel.store(true); });
        const auto partial = SweepFolder::open(parts, spec, true).finished();
        const auto done = std::count_if(partial.begin(), partial.end(),
                                        [](const auto& p) { return p.has_value(); });
        QVERIFY2(done >= 1 && done < 3, qPrintable(QString("%1 points kept").arg(done)));
        QVERIFY(readFile(fs::path(parts) / "summary.json").find("\"complete\": false") !=
                std::string::npos);
        writeSweepTo(parts, spec, true, nullptr);
        const auto a = folderFiles(whole);
        const auto b = folderFiles(parts);
        QCOMPARE(a.size(), size_t(7));  // sweep.json, marker, 3 points, 2 summaries
        QVERIFY(a == b);
    }

    void folderRules() {
        const SweepSpec spec = SweepSpec::fromJson(smallSweep());
        QTemporaryDir tmp;
        const std::string user = tmp.filePath("user").toStdString();
        fs::create_directories(user);
        std::ofstream(fs::path(user) / "notes.txt") << "mine";
        QVERIFY(errorOf([&] {
                    SweepFolder::open(user, spec, false);
                }).find("is not a PipeLens sweep folder") != std::string::npos);
        QVERIFY(errorOf([&] {
                    SweepFolder::open(user, spec, true);
                }).find("is not a PipeLens sweep folder") != std::string::npos);
        QCOMPARE(readFile(fs::path(user) / "notes.txt"), std::string("mine"));
        const std::string mine = tmp.filePath("sweep").toStdString();
        SweepFolder::open(mine, spec, false);
        QVERIFY(fs::exists(fs::path(mine) / "sweep.json"));
        QVERIFY(errorOf([&] { SweepFolder::open(mine, spec, false); }).find("--resume") !=
                std::string::npos);
        json other = smallSweep();
        other["axis"]["values"] = {0, 2};
        QVERIFY(errorOf([&] {
                    SweepFolder::open(mine, SweepSpec::fromJson(other), true);
                }).find("holds a different sweep") != std::string::npos);
        // The stored sweep.json is itself a sweep file describing the same sweep.
        const SweepSpec again = SweepSpec::fromFile(mine + "/sweep.json");
        QCOMPARE(again.toJson(), spec.toJson());
    }

    void pointResultReadsBackExactly() {
        PointResult p;
        p.index = 4;
        p.value = 0.1;
        p.seeds = 3;
        p.optimum = 1.0 / 3.0;
        MethodPoint m;
        m.label = "RPD \"quoted\"";
        m.method = "rpd";
        m.rule.kind = StepRule::Stable;
        m.tuned = true;
        m.chosen = 1;
        m.stepSize = 0.125;
        m.finalGap = {std::nextafter(0.2, 1.0), 1e-300};
        m.finalObjective = {std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
        m.updates = 77;
        m.curveAxis = "update";
        m.curveMean = {1.0, 0.1 + 0.2, -std::numeric_limits<double>::infinity()};
        m.curveSd = {0.0, 0.0, 0.0};
        GridStep g;
        g.stepSize = 0.0625;
        g.tail = checkTail(std::vector<double>{3.0, 2.0, 1.5, 1.25, 1.2});
        m.grid = {g, g};
        p.methods = {m};
        const json j = pointResultToJson(p);
        const PointResult back = pointResultFromJson(json::parse(j.dump(2)));
        QCOMPARE(pointResultToJson(back).dump(), j.dump());
        QCOMPARE(back.methods[0].curveMean[1], 0.1 + 0.2);
        QVERIFY(std::isnan(back.methods[0].finalObjective.sd));
        QCOMPARE(back.methods[0].grid[1].tail.stable(), g.tail.stable());
        json broken = j;
        broken["methods"][0]["chosen"] = 5;
        QVERIFY(errorOf([&] { pointResultFromJson(broken); }).find("chosen = 5") !=
                std::string::npos);
    }

    void specErrorsNameTheProblem() {
        json bad = smallSweep();
        bad["axis"]["name"] = "gamma";
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("axis.name = \"gamma\"") !=
                std::string::npos);
        bad = smallSweep();
        bad["axis"] = {{"name", "local_steps"}, {"values", {1, 2}}};
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("no localsgd method") !=
                std::string::npos);
        bad = smallSweep();
        bad["axis"] = {{"name", "stages"}, {"values", {2, 2.5}}};
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("axis.values[1] = 2.5") !=
                std::string::npos);
        bad = smallSweep();
        bad["axis"] = {{"name", "stages"}, {"values", {2, 9}}};  // d = 8
        const std::string e = errorOf([&] { SweepSpec::fromJson(bad); });
        QVERIFY2(e.find("point 1 (stages = 9)") != std::string::npos, e.c_str());
        bad = smallSweep();
        bad["seeds"] = 0;
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("seeds = 0") != std::string::npos);
        bad = smallSweep();
        bad["colour"] = 1;
        QVERIFY(errorOf([&] { SweepSpec::fromJson(bad); }).find("unknown key colour") !=
                std::string::npos);
        // The sweep's step_rule overrides every method's rule.
        json rule = smallSweep();
        rule["step_rule"] = "stable";
        const SweepSpec s = SweepSpec::fromJson(rule);
        for (const MethodSpec& m : s.pointConfig(0).methods)
            QCOMPARE(m.step.rule.kind, StepRule::Stable);
    }

    // Issue 30: a point file keeps the whole rule (the object form with its thresholds) and
    // reads back equal; a point file of before, with the rule as a string, still loads; the
    // sweep's step_rule takes the object form too.
    void pointFilesKeepTheRuleObject() {
        PointResult p;
        p.value = 2.0;
        MethodPoint m;
        m.label = "PD";
        m.method = "pd";
        m.tuned = true;
        m.rule = parseStepRuleSpec(json{{"kind", "stable"},
                                        {"preset", "notebook"},
                                        {"tail_frac", 0.01},
                                        {"curve", "slots"}},
                                   "rule");
        GridStep g;
        g.stepSize = 0.5;
        g.tail = checkTail(std::vector<double>(40, 1.0), m.rule.stable);
        m.grid = {g};
        p.methods = {m};
        const json j = pointResultToJson(p);
        const json& rule = j["methods"][0]["step_rule"];
        QVERIFY(rule.is_object());
        QCOMPARE(rule.at("preset").get<std::string>(), std::string("notebook"));
        QCOMPARE(rule.at("min_tail").get<int>(), 10);
        QCOMPARE(rule.at("tail_frac").get<double>(), 0.01);
        const PointResult back = pointResultFromJson(json::parse(j.dump()));
        QVERIFY(back.methods[0].rule == m.rule);
        QCOMPARE(back.methods[0].grid[0].tail.tailLength, size_t{10});
        QCOMPARE(pointResultToJson(back).dump(), j.dump());
        // The summary's column: kind and preset in one cell, '*' for the overrides.
        SweepSpec spec = SweepSpec::fromJson(smallSweep());
        SweepPoints points(spec.points());
        points[0] = back;
        const std::string csv = sweepSummaryCsv(spec, points);
        QVERIFY2(csv.find(",pd,\"PD\",stable:notebook*,") != std::string::npos, csv.c_str());

        // A point file written before: the rule a string.
        json old = j;
        old["methods"][0]["step_rule"] = "stable";
        const PointResult plain = pointResultFromJson(old);
        QCOMPARE(plain.methods[0].rule.kind, StepRule::Stable);
        QCOMPARE(plain.methods[0].rule.stable, StableThresholds{});
        QCOMPARE(pointResultToJson(plain)["methods"][0]["step_rule"].dump(),
                 std::string("\"stable\""));
        old["methods"][0]["step_rule"] = {{"kind", "stable"}, {"max_cv", -1}};
        const std::string e = errorOf([&] { pointResultFromJson(old); });
        QVERIFY2(e.find("methods[0].step_rule.max_cv = -1 is not allowed") != std::string::npos,
                 e.c_str());

        // The sweep's step_rule as an object: every point's methods take it, sweep.json keeps
        // it, and a bad value is refused naming step_rule.
        json sweep = smallSweep();
        sweep["step_rule"] = {{"kind", "stable"}, {"preset", "notebook"}};
        const SweepSpec s = SweepSpec::fromJson(sweep);
        for (const MethodSpec& ms : s.pointConfig(1).methods) {
            QCOMPARE(ms.step.rule.preset, std::string("notebook"));
            QCOMPARE(ms.step.rule.stable.minTail, 10);
        }
        QVERIFY(SweepSpec::fromJson(s.toJson()).stepRule == s.stepRule);
        sweep["step_rule"] = {{"kind", "stable"}, {"tail_frac", 2}};
        const std::string se = errorOf([&] { SweepSpec::fromJson(sweep); });
        QVERIFY2(se.find("step_rule.tail_frac = 2 is not allowed: a number in (0, 1]") !=
                     std::string::npos,
                 se.c_str());
    }

    // curve and value choose what the rule reads: here f after every block update of PD, whose
    // tail under the notebook's thresholds is max(10, ceil(0.2 (updates + 1))) points of f.
    void ruleReadsTheCurveItNames() {
        json j = smallExperiment();
        j["sampling"] = {{"objective_per_update", true}};
        j["methods"] = json::array({{{"method", "pd"},
                                     {"step_size",
                                      {{"grid", {-5, -3}},
                                       {"rule",
                                        {{"kind", "stable"},
                                         {"preset", "notebook"},
                                         {"curve", "updates"},
                                         {"value", "objective"}}}}}}});
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        const MethodRun& o = r.methods[0];
        const std::vector<double>& f = o.result.objectivePerUpdate;
        const size_t length = f.size() + 1;
        const size_t tail = std::max<size_t>(10, static_cast<size_t>(std::ceil(0.2 * length)));
        QCOMPARE(o.grid[static_cast<size_t>(o.chosen)].tail.tailLength, tail);
        double mean = 0.0;
        for (size_t i = f.size() - tail; i < f.size(); ++i) mean += f[i];
        mean /= static_cast<double>(tail);
        QVERIFY(std::abs(o.grid[static_cast<size_t>(o.chosen)].tail.tailMean - mean) <=
                1e-12 * mean);
        // The shown curve stays f - f* per slot.
        QCOMPARE(o.curve.mean.size(), o.result.objectivePerSlot.size());
        // Without f after every update the rule has nothing to read.
        j["sampling"] = {{"objective_per_update", false}};
        const std::string e = errorOf([&] { runExperiment(ExperimentConfig::fromJson(j)); });
        QVERIFY2(e.find("sampling.objective_per_update = false") != std::string::npos, e.c_str());
    }

    void seedsAverageSeparateRuns() {
        ExperimentConfig c = ExperimentConfig::fromJson(smallExperiment());
        c.seeds = 3;
        c.methods.resize(1);  // PD, with a shuffled batch order that each seed changes
        const ExperimentResult r = runExperiment(c);
        const MethodRun& o = r.methods[0];
        QCOMPARE(o.grid.size(), size_t(4));
        const GridStep& g = o.grid[1];
        std::vector<double> gaps;
        for (int s = 0; s < 3; ++s) {
            const RunResult one = runOne(seededConfig(c, s), seededPlan(o, s), g.stepSize,
                                         buildObjective(c), cpuBackendProvider());
            gaps.push_back(one.finalObjective() - r.optimum);
        }
        QVERIFY(gaps[0] != gaps[1]);
        const MeanSd want = meanAndSd(gaps);
        QCOMPARE(g.finalGap.mean, want.mean);
        QCOMPARE(g.finalGap.sd, want.sd);
        QVERIFY(g.finalGap.sd > 0.0);
        // The reported run is seed 0 at the chosen step; its curve is the seed mean.
        QCOMPARE(o.curve.mean.size(), o.result.objectivePerSlot.size());
        QCOMPARE(o.result.stepSize, o.grid[static_cast<size_t>(o.chosen)].stepSize);
    }

    void stableRulePicksFromTheSeedMeanCurves() {
        json j = smallExperiment();
        j["methods"] = json::array({{{"method", "rpd"},
                                     {"step_size", {{"grid", {-6, 0}}, {"rule", "stable"}}},
                                     {"delta", 1}}});
        j["seeds"] = 2;
        const ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
        const MethodRun& o = r.methods[0];
        std::vector<GridCandidate> grid;
        for (const GridStep& g : o.grid)
            grid.push_back({g.stepSize, g.finalGap.mean, g.diverged, g.tail});
        QCOMPARE(o.chosen, pickStable(grid));
        // RPD's curve is after every update even though sampling said not to record it.
        QCOMPARE(o.curve.mean.size(), static_cast<size_t>(o.result.updates) + 1);
    }

    void rpdFinalValueWithoutPerUpdateSampling() {
        // Before the fix, RPD kept no objective without objective_per_update, its final value
        // was f(w0) for every step size and every grid point tied.
        json j = smallExperiment();
        j["methods"] =
            json::array({{{"method", "rpd"}, {"step_size", {{"grid", {-6, -1}}}}, {"delta", 1}}});
        const ExperimentResult sparse = runExperiment(ExperimentConfig::fromJson(j));
        j["sampling"]["objective_per_update"] = true;
        const ExperimentResult dense = runExperiment(ExperimentConfig::fromJson(j));
        const RunResult& a = sparse.methods[0].result;
        const RunResult& b = dense.methods[0].result;
        QVERIFY(a.objectivePerUpdate.empty());
        QVERIFY(a.finalObjective() < a.initialObjective);
        QCOMPARE(a.finalObjective(), b.objectivePerUpdate.back());
        QCOMPARE(sparse.methods[0].chosen, dense.methods[0].chosen);
        for (size_t i = 0; i < sparse.methods[0].grid.size(); ++i) {
            QCOMPARE(sparse.methods[0].grid[i].finalGap.mean,
                     dense.methods[0].grid[i].finalGap.mean);
        }
    }

    void truncateAgainstFit() {
        // PD, S = 4, 18 slots. fit: N = 6 (2N + 2(S-1) = 18), 24 updates, the last 6 slots
        // draining. truncate: the endless run's first 18 slots (pipelens-cli schedule --kind pd
        // --stages 4 --microbatches 16): F8 starts at slot 16, microbatches 0-5 complete and
        // B(6, 3), B(6, 2) end at slots 16 and 17: 26 updates; 6, 7, 8 never finish.
        ScheduleParams pd;
        pd.kind = ScheduleKind::PipeDream;
        pd.stages = 4;
        const Timeline cut = truncatedTimeline(pd, 18);
        QCOMPARE(cut.totalSlots, 18);
        QCOMPARE(updatesWithin(cut, 18), 26LL);
        QVERIFY(cut.params.microbatches > 9);
        int started = 0;
        for (const TimelineCell& c : cut.cells) {
            QVERIFY(c.endSlot < 18);
            if (c.stage == 0 && c.op == OpKind::Forward) ++started;
        }
        QCOMPARE(started, 9);

        json j = smallExperiment();
        j["stages"] = 4;
        j["budget"] = {{"slots", 18}};
        j["methods"] = json::array({{{"method", "pd"}, {"step_size", 0.05}},
                                    {{"method", "rpd"}, {"step_size", 0.05}, {"delta", 2}}});
        const ExperimentResult fit = runExperiment(ExperimentConfig::fromJson(j));
        j["budget"]["rule"] = "truncate";
        const ExperimentResult trunc = runExperiment(ExperimentConfig::fromJson(j));
        QCOMPARE(fit.methods[0].result.updates, 24LL);
        QCOMPARE(trunc.methods[0].result.updates, 26LL);
        QCOMPARE(fit.methods[0].result.totalSlots, 18);
        QCOMPARE(trunc.methods[0].result.totalSlots, 18);
        QCOMPARE(trunc.methods[0].result.objectivePerSlot.size(), size_t(19));
        // Until slot 12, where the truncated run starts F(6, 0) instead of idling, both walk
        // the same cells.
        for (size_t t = 0; t <= 12; ++t) {
            QCOMPARE(trunc.methods[0].result.objectivePerSlot[t],
                     fit.methods[0].result.objectivePerSlot[t]);
        }
        QVERIFY(trunc.methods[0].result.finalObjective() != fit.methods[0].result.finalObjective());
        // RPD gets PD's block updates inside the budget.
        QCOMPARE(fit.methods[1].result.updates, 24LL);
        QCOMPARE(trunc.methods[1].result.updates, 26LL);
    }

    // A sweep over stages under the reach budget rule (SPEC section 7.1, E4): at each S, PD runs
    // the smallest N with 2N + 2(S - 1) >= 19, whole (so it may end at slot 20), LocalSGD the
    // smallest N whose run reaches 19, and RPD N_PD x S block updates.
    void reachSweepOverStages() {
        json j = smallSweep();
        j["experiment"]["budget"] = {{"slots", 19}, {"rule", "reach"}};
        j["experiment"]["methods"] =
            json::array({{{"method", "pd"}, {"step_size", 0.05}},
                         {{"method", "localsgd"}, {"step_size", 0.05}, {"local_steps", 1}},
                         {{"method", "rpd"}, {"step_size", 0.05}, {"delta", 2}}});
        j["axis"] = {{"name", "stages"}, {"values", {2, 3, 4}}};
        j["seeds"] = 1;
        const SweepSpec spec = SweepSpec::fromJson(j);
        QCOMPARE(spec.toJson()["experiment"]["budget"]["rule"].get<std::string>(),
                 std::string("reach"));
        QVERIFY(SweepSpec::fromJson(spec.toJson()).toJson() == spec.toJson());
        SweepRunOptions o;
        o.threads = 2;
        const SweepOutcome out = runSweep(spec, {}, o);
        QCOMPARE(out.points.size(), size_t{3});
        for (std::size_t i = 0; i < 3; ++i) {
            const int S = 2 + static_cast<int>(i);
            QCOMPARE(spec.pointConfig(i).budget.rule, BudgetRule::Reach);
            const PointResult& p = *out.points[i];
            int n = 1;
            while (2 * n + 2 * (S - 1) < 19) ++n;
            const MethodPoint& pd = p.methods[0];
            QCOMPARE(pd.updates, static_cast<long long>(n) * S);
            QCOMPARE(pd.totalSlots, 2 * n + 2 * (S - 1));
            QVERIFY(pd.totalSlots >= 19);
            // LocalSGD (R = S, H = 1): its own smallest N reaching 19, found by trying each N.
            ScheduleParams local;
            local.kind = ScheduleKind::LocalSgd;
            local.stages = S;
            local.localSteps = 1;
            int m = 1;
            for (;; ++m) {
                local.microbatches = m;
                if (buildTimeline(local).totalSlots >= 19) break;
            }
            QCOMPARE(p.methods[1].totalSlots, buildTimeline(local).totalSlots);
            QCOMPARE(p.methods[1].updates, static_cast<long long>(m) * S);
            QCOMPARE(p.methods[2].updates, static_cast<long long>(n) * S);
        }
        json bad = j;
        bad["experiment"]["budget"]["rule"] = "stretch";
        const std::string e = errorOf([&] { SweepSpec::fromJson(bad); });
        QVERIFY2(e.find("budget.rule") != std::string::npos &&
                     e.find("fit, truncate, reach") != std::string::npos,
                 e.c_str());
    }
};

QTEST_APPLESS_MAIN(TestSweep)
#include "tst_sweep.moc"

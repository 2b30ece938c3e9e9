// What the app's Sweep view draws (core/experiment/sweep/sweep_plot.hpp), on hand-made point
// results: one series per method in axis order, mean ± sd error bars clamped for log axes, the
// chosen step carried along, labels merged across points, the axis ranges, and the experiment that
// reopens one point's run with its chosen steps.
#include <QtTest>

#include <cmath>
#include <limits>

#include "errors.hpp"
#include "experiment/sweep/sweep.hpp"
#include "experiment/sweep/sweep_plot.hpp"
#include "util/format_number.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

SweepSpec deltaSweep(std::vector<double> values) {
    const json experiment = {
        {"name", "plot"},
        {"objective", {{"kind", "quadratic"}}},
        {"data",
         {{"source", "synthetic"}, {"kind", "random"}, {"rows", 40}, {"dim", 8}, {"seed", 2}}},
        {"stages", 2},
        {"batch_size", 4},
        {"budget", {{"epochs", 2}}},
        {"backend", "cpu"},
        {"methods",
         json::array({{{"method", "pd"}, {"step_size", {{"grid", {-5, -2}}}}},
                      {{"method", "rpd"}, {"step_size", {{"grid", {-5, -2}}}}, {"delta", 1}}})}};
    return SweepSpec::fromJson({{"experiment", experiment},
                                {"axis", {{"name", "delta"}, {"values", values}}},
                                {"seeds", 2}});
}

MethodPoint method(const std::string& label, const std::string& key, double gap, double sd,
                   double step) {
    MethodPoint m;
    m.label = label;
    m.method = key;
    m.tuned = true;
    m.stepSize = step;
    m.finalGap = {gap, sd};
    m.finalObjective = {gap + 1.0, sd};
    return m;
}

PointResult point(std::size_t index, double value, double pdGap, double rpdGap, double rpdSd) {
    PointResult p;
    p.index = index;
    p.value = value;
    p.seeds = 2;
    p.methods = {method("PipeDream", "pd", pdGap, 0.0, 0.125),
                 method("RPD (uniform, delta=" + std::to_string(static_cast<int>(value)) + ")",
                        "rpd", rpdGap, rpdSd, 0.0625 / (index + 1))};
    return p;
}

}  // namespace

class TestSweepPlot : public QObject {
    Q_OBJECT
  private slots:

    // The schedule axis is categorical: x is the point's position named by xLabels, one series
    // per point (its one method), labelled and coloured by that method, on a linear x axis.
    void scheduleAxisIsCategorical() {
        SweepSpec spec = deltaSweep({0});
        json j = spec.toJson();
        j["axis"] = {{"name", "schedule"}, {"values", {"1f1b", "pd", "2bw"}}};
        spec = SweepSpec::fromJson(j);
        SweepPoints points(3);
        PointResult p;
        p.index = 2;
        p.value = 2.0;
        p.methods = {method("2BW (m=2)", "2bw", 0.5, 0.0, 0.25)};
        points[2] = p;
        const SweepPlot plot = sweepPlot(spec, points, SweepMetric::FinalGap);
        QCOMPARE(plot.xLabels, (std::vector<std::string>{"1f1b", "pd", "2bw"}));
        QVERIFY(!plot.logX);
        QCOMPARE(plot.xMin, 0.0);
        QCOMPARE(plot.xMax, 2.0);
        QCOMPARE(plot.xTitle, std::string("schedule"));
        QCOMPARE(plot.series.size(), std::size_t(3));
        QCOMPARE(plot.series[0].method, std::string("1f1b"));
        QCOMPARE(plot.series[1].label, std::string("PipeDream"));
        QVERIFY(plot.series[0].points.empty());
        QCOMPARE(plot.series[2].points.size(), std::size_t(1));
        QCOMPARE(plot.series[2].points[0].x, 2.0);
        QCOMPARE(plot.series[2].points[0].mean, 0.5);
        QCOMPARE(plot.pointsDone, std::size_t(1));
        // A numeric axis has no categories.
        QVERIFY(sweepPlot(deltaSweep({0, 2}), {}, SweepMetric::FinalGap).xLabels.empty());
    }
    void seriesFollowTheAxisOrderAndSkipUnfinishedPoints() {
        const SweepSpec spec = deltaSweep({60, 8, 420, 30});
        SweepPoints points(4);
        points[0] = point(0, 60, 1e-6, 2e-6, 1e-6);
        points[1] = point(1, 8, 1e-6, 1e-9, 0.0);
        points[3] = point(3, 30, 1e-6, 5e-9, 1e-9);  // 420 not finished yet
        const SweepPlot plot = sweepPlot(spec, points, SweepMetric::FinalGap);
        QCOMPARE(plot.points, std::size_t(4));
        QCOMPARE(plot.pointsDone, std::size_t(3));
        QCOMPARE(plot.series.size(), std::size_t(2));
        const SweepPlotSeries& rpd = plot.series[1];
        QCOMPARE(rpd.points.size(), std::size_t(3));
        QCOMPARE(rpd.points[0].x, 8.0);
        QCOMPARE(rpd.points[1].x, 30.0);
        QCOMPARE(rpd.points[2].x, 60.0);
        QCOMPARE(rpd.points[2].point, std::size_t(0));
        // The chosen step of that point travels with it (for the tooltip and the click).
        QCOMPARE(rpd.points[0].stepSize, 0.0625 / 2);
        QVERIFY(rpd.points[0].tuned);
        // x spans the whole sweep, finished or not.
        QCOMPARE(plot.xMin, 8.0);
        QCOMPARE(plot.xMax, 420.0);
        QVERIFY(plot.logX);
        QVERIFY(plot.logY);
        QCOMPARE(QString::fromStdString(plot.xTitle), QString("RPD delay bound δ"));
        QVERIFY(QString::fromStdString(plot.yTitle).contains("sd over 2 seeds"));
    }

    void errorBarsAreMeanPlusMinusSdClampedOnALogAxis() {
        const SweepSpec spec = deltaSweep({8, 30});
        SweepPoints points(2);
        points[0] = point(0, 8, 1e-6, 2e-6, 3e-6);  // sd larger than the mean
        points[1] = point(1, 30, 0.0, 4e-6, 1e-6);  // an exact optimum: 0 on a log axis
        const SweepPlot plot = sweepPlot(spec, points, SweepMetric::FinalGap);
        const SweepPlotPoint& wide = plot.series[1].points[0];
        QCOMPARE(wide.mean, 2e-6);
        QCOMPARE(wide.sd, 3e-6);
        QCOMPARE(wide.y, 2e-6);
        QCOMPARE(wide.high, 5e-6);
        QCOMPARE(wide.low, kSweepLogFloor);  // 2e-6 - 3e-6 < 0
        const SweepPlotPoint& narrow = plot.series[1].points[1];
        QCOMPARE(narrow.low, 3e-6);
        QCOMPARE(narrow.high, 5e-6);
        QCOMPARE(plot.series[0].points[1].y, kSweepLogFloor);
        QCOMPARE(plot.yMin, kSweepLogFloor);
        QCOMPARE(plot.yMax, 5e-6);
        // On a linear axis nothing is clamped.
        const SweepPlot linear = sweepPlot(spec, points, SweepMetric::FinalGap, false);
        QVERIFY(std::abs(linear.series[1].points[0].low - (-1e-6)) < 1e-18);
        QCOMPARE(linear.series[0].points[1].y, 0.0);
    }

    void theMetricPicksFinalGapOrFinalObjective() {
        const SweepSpec spec = deltaSweep({8});
        SweepPoints points{point(0, 8, 1e-3, 2e-3, 0.0)};
        QCOMPARE(sweepPlot(spec, points, SweepMetric::FinalGap).series[1].points[0].mean, 2e-3);
        QCOMPARE(sweepPlot(spec, points, SweepMetric::FinalObjective).series[1].points[0].mean,
                 1.002);
        QCOMPARE(parseSweepMetric("final_objective"), SweepMetric::FinalObjective);
        QCOMPARE(sweepMetricName(SweepMetric::FinalGap), std::string("final_gap"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseSweepMetric("final"));
    }

    void aDivergedMeanIsKeptButNotDrawn() {
        const SweepSpec spec = deltaSweep({8, 30});
        SweepPoints points(2);
        points[0] = point(0, 8, 1e-6, std::numeric_limits<double>::infinity(), 0.0);
        points[1] = point(1, 30, 1e-6, 1e-3, 0.0);
        const SweepPlot plot = sweepPlot(spec, points, SweepMetric::FinalGap);
        QVERIFY(!plot.series[1].points[0].finite);
        QVERIFY(plot.series[1].points[1].finite);
        QCOMPARE(plot.yMax, 1e-3);  // the infinite mean does not stretch the axis
    }

    void nothingFinishedGivesEmptySeriesNamedFromThePointsExperiments() {
        const SweepSpec spec = deltaSweep({1, 2, 3});
        const SweepPlot plot = sweepPlot(spec, SweepPoints(3), SweepMetric::FinalGap);
        QCOMPARE(plot.pointsDone, std::size_t(0));
        QCOMPARE(plot.series.size(), std::size_t(2));
        QVERIFY(plot.series[0].points.empty());
        QCOMPARE(QString::fromStdString(plot.series[0].label), QString("PipeDream"));
        // The legend is the same before and after the points arrive.
        QCOMPARE(QString::fromStdString(plot.series[1].label), QString("RPD (uniform, delta=*)"));
        QCOMPARE(QString::fromStdString(plot.series[1].method), QString("rpd"));
        QVERIFY(!plot.logX);  // 1 … 3 spans less than a factor of 8
    }

    void labelsMergeTheNumbersThatChange() {
        QCOMPARE(mergeLabels({"RPD (uniform, delta=8)", "RPD (uniform, delta=30)"}),
                 std::string("RPD (uniform, delta=*)"));
        QCOMPARE(
            mergeLabels({"LocalSGD (R=2, H=5)", "LocalSGD (R=32, H=5)", "LocalSGD (R=128, H=5)"}),
            std::string("LocalSGD (R=*, H=5)"));
        QCOMPARE(mergeLabels({"PipeDream", "PipeDream"}), std::string("PipeDream"));
        // Different shapes: the first label is kept rather than guessing.
        QCOMPARE(mergeLabels({"PipeDream", "PipeDream (NOAM=3)"}), std::string("PipeDream"));
        const SweepSpec spec = deltaSweep({8, 30});
        SweepPoints points{point(0, 8, 1, 1, 0), point(1, 30, 1, 1, 0)};
        QCOMPARE(sweepPlot(spec, points, SweepMetric::FinalGap).series[1].label,
                 std::string("RPD (uniform, delta=*)"));
    }

    void aPointsRunUsesItsChosenStepsAndOneSeed() {
        const SweepSpec spec = deltaSweep({8, 30});
        const PointResult p = point(1, 30, 1e-6, 1e-7, 0.0);
        const ExperimentConfig c = pointRunConfig(spec, p);
        QCOMPARE(c.seeds, 1);
        QCOMPARE(c.methods[1].delta, 30LL);
        for (std::size_t m = 0; m < 2; ++m) {
            QVERIFY(!c.methods[m].step.grid);
            QCOMPARE(c.methods[m].step.value, p.methods[m].stepSize);
        }
        SweepPoints points{std::nullopt, p};
        QVERIFY(sweepIncludes(spec, points, c));
        QVERIFY(sweepIncludes(spec, points, spec.pointConfig(0)));
        QVERIFY(sweepIncludes(spec, points, spec.experiment));
        ExperimentConfig other = c;
        other.stages = 3;
        QVERIFY(!sweepIncludes(spec, points, other));
    }

    // A sweep over δ as one run (the E2 preset's loss chart): the first point's methods with
    // RPD once per δ, in the axis's order; the Sweep view counts it as one of the sweep's.
    void aDeltaSweepOverlaysEveryDeltaInOneRun() {
        SweepSpec spec = deltaSweep({8, 30, 60});
        const std::optional<ExperimentConfig> overlay = spec.overlayConfig();
        QVERIFY(overlay);
        const ExperimentConfig first = spec.pointConfig(0);
        std::size_t rpd = 0;
        for (const MethodSpec& m : overlay->methods) {
            if (m.method != Method::RandomizedPipeDream) continue;
            QCOMPARE(m.delta, static_cast<long long>(spec.values[rpd]));
            ++rpd;
        }
        QCOMPARE(rpd, spec.values.size());
        QCOMPARE(overlay->methods.size(), first.methods.size() - 1 + spec.values.size());
        QCOMPARE(overlay->stages, first.stages);
        QVERIFY(sweepIncludes(spec, {}, *overlay));
        ExperimentConfig fewer = *overlay;
        fewer.methods.pop_back();
        QVERIFY(!sweepIncludes(spec, {}, fewer));
        spec.axis = SweepAxis::Stages;
        spec.values = {2, 4};
        QVERIFY(!spec.overlayConfig());
    }

    void typedAxisValuesAreNumbersOrAClearError() {
        QCOMPARE(parseAxisValues("2, 4,8  16;32"), (std::vector<double>{2, 4, 8, 16, 32}));
        QCOMPARE(parseAxisValues(" 0.5 1e-2 "), (std::vector<double>{0.5, 1e-2}));
        try {
            parseAxisValues("2, four, 8");
            QFAIL("accepted a word");
        } catch (const ConfigError& e) {
            QVERIFY(QString(e.what()).contains("\"four\""));
        }
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseAxisValues(" , "));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseAxisValues("1 inf"));
    }

    // The line the CLI prints after each method and the app shows under its Sweep view.
    void progressReadsAsPointsWorkAndTimeLeft() {
        QCOMPARE(formatDuration(41.4), std::string("41s"));
        QCOMPARE(formatDuration(72.0), std::string("1m12s"));
        QCOMPARE(formatDuration(7205.0), std::string("2h0m5s"));
        SweepProgress p;
        p.pointsDone = 3;
        p.points = 5;
        p.fractionDone = 0.636;
        p.elapsedSeconds = 72.2;
        p.remainingSeconds = 41.0;
        QCOMPARE(sweepProgressLine(p),
                 std::string("points 3/5, 64% of the work, 1m12s elapsed, about 41s left"));
        p.remainingSeconds = -1.0;  // no estimate before the first run ends
        QCOMPARE(sweepProgressLine(p), std::string("points 3/5, 64% of the work, 1m12s elapsed"));
    }

    void everyAxisHasASymbolAndATitle() {
        for (const char* name : {"stages", "delta", "local_steps", "replicas", "noam",
                                 "gradient_noise", "step_size", "rows", "dim"}) {
            const SweepAxis a = parseSweepAxis(name);
            QVERIFY2(!sweepAxisSymbol(a).empty(), name);
            QVERIFY2(!sweepAxisTitle(a).empty(), name);
        }
    }
};

QTEST_APPLESS_MAIN(TestSweepPlot)
#include "tst_sweep_plot.moc"

// Step-size rules (SPEC sections 6 and 7.1) on hand-made curves whose answer is known: each of
// the stable rule's five criteria failing on its own, each criterion just inside and just outside
// its threshold under both presets (lm_script, notebook), the tail length rule, the within-best
// window and the smallest-step choice, the fallback when none is stable, and best_final. The
// rule's config forms: parse / print round trips and every refused value. Plus the seed mean / sd
// helpers the rules use.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "errors.hpp"
#include "experiment/step_size/seed_stats.hpp"
#include "experiment/step_size/step_rules.hpp"

using namespace pipelens;

namespace {

// 40 points falling from 10 to the tail's first value, then the 10 tail points: 50 points, so
// ceil(0.2 * 50) = 10 is exactly the hand-made tail.
std::vector<double> withTail(const std::vector<double>& tail) {
    std::vector<double> c;
    c.reserve(40 + tail.size());
    for (int i = 0; i < 40; ++i) c.push_back(10.0 - (10.0 - tail.front()) * i / 40.0);
    c.insert(c.end(), tail.begin(), tail.end());
    return c;
}

std::vector<double> flatTail(double value) {
    return withTail(std::vector<double>(10, value));
}

GridCandidate candidate(double step, const std::vector<double>& curve, bool diverged = false) {
    GridCandidate g;
    g.stepSize = step;
    g.finalValue = curve.back();
    g.diverged = diverged;
    g.tail = checkTail(curve);
    return g;
}

// A curve of 5 n points whose last n (the tail under tail_frac 0.2, and under min_tail 10 for
// n >= 10) are `tail`: 4 n points falling linearly from 10 to the tail's first value first.
std::vector<double> curveWithTail(const std::vector<double>& tail) {
    const std::size_t head = 4 * tail.size();
    std::vector<double> c;
    c.reserve(head + tail.size());
    for (std::size_t i = 0; i < head; ++i) {
        c.push_back(10.0 -
                    (10.0 - tail.front()) * static_cast<double>(i) / static_cast<double>(head));
    }
    c.insert(c.end(), tail.begin(), tail.end());
    return c;
}

StepRuleSpec ruleOf(StepRule kind) {
    StepRuleSpec r;
    r.kind = kind;
    return r;
}

// The test's own numbers, independent of checkTail.
double meanOf(const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double slopeOf(const std::vector<double>& y) {
    const double n = static_cast<double>(y.size());
    const double xm = (n - 1.0) / 2.0;
    const double ym = meanOf(y);
    double sxy = 0.0;
    double sxx = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        const double dx = static_cast<double>(i) - xm;
        sxy += dx * (y[i] - ym);
        sxx += dx * dx;
    }
    return sxy / sxx;
}

// Values from `start` by the given steps.
std::vector<double> fromSteps(double start, const std::vector<double>& steps) {
    std::vector<double> v{start};
    for (double s : steps) v.push_back(v.back() + s);
    return v;
}

// A tail whose one criterion sits at `factor` x its threshold (0.99: just inside, 1.01: just
// outside) while the other criteria pass with room to spare.
std::vector<double> tailAt(const std::string& criterion, const StableThresholds& t, double factor) {
    if (criterion == "cv") {
        // Falls linearly around a mean of 1: std = a sqrt(8.25) over 10 points.
        const double a = t.maxRelativeStd * factor / std::sqrt(8.25);
        std::vector<double> v(10);
        for (int i = 0; i < 10; ++i) v[static_cast<size_t>(i)] = 1.0 + a * (4.5 - i);
        return v;
    }
    if (criterion == "rising_fraction") {
        // 99 steps, k of them small rises (1e-4) spread evenly, the rest falls of 3e-4; k is the
        // largest count within the threshold (inside) or one more (outside).
        const int within = static_cast<int>(std::floor(t.maxRisingFraction * 99.0));
        const int k = factor < 1.0 ? within : within + 1;
        std::vector<double> steps;
        for (int j = 0; j < 99; ++j) {
            const bool rise = (j + 1) * k / 99 > j * k / 99;
            steps.push_back(rise ? 1e-4 : -3e-4);
        }
        return fromSteps(1.0, steps);
    }
    if (criterion == "largest_rise") {
        // Falls of 0.03 with one rise h at step 4; h = q mean, mean linear in h.
        const auto tail = [](double h) {
            std::vector<double> steps(9, -0.03);
            steps[4] = h;
            return fromSteps(1.0, steps);
        };
        const double m0 = meanOf(tail(0.0));
        const double slope = meanOf(tail(1.0)) - m0;
        const double q = t.maxRiseOfMean * factor;
        return tail(q * m0 / (1.0 - q * slope));
    }
    if (criterion == "tv_ratio") {
        // 6 falls f and 3 rises r: TV / |net| = (6 f + 3 r) / (6 f - 3 r) = R.
        const double f = 0.005;
        const double ratio = t.maxVariationRatio * factor;
        const double r = 2.0 * f * (ratio - 1.0) / (ratio + 1.0);
        return fromSteps(1.0, {-f, -f, r, -f, -f, r, -f, -f, r});
    }
    if (criterion == "log_slope") {
        // In log space: 4 rises of u and 5 falls of u / 2 (rising fraction 4/9, TV / |net|
        // about 4.3), scaled so that the least-squares slope of log(tail) is the target.
        const std::vector<double> unit = fromSteps(0.0, {1, -0.5, 1, -0.5, 1, -0.5, 1, -0.5, -0.5});
        const double u = t.maxLogSlope * factor / slopeOf(unit);
        std::vector<double> v(unit.size());
        std::transform(unit.begin(), unit.end(), v.begin(),
                       [u](double w) { return std::exp(u * w); });
        return v;
    }
    // "finite": inside a flat tail, outside the same with a NaN.
    std::vector<double> v(10, 1.0);
    if (factor > 1.0) v[4] = std::numeric_limits<double>::quiet_NaN();
    return v;
}

}  // namespace

class TestStepRules : public QObject {
    Q_OBJECT
  private slots:
    void tailIsTheLastFifthRoundedUp() {
        QCOMPARE(checkTail(std::vector<double>(50, 1.0)).tailLength, size_t{10});
        QCOMPARE(checkTail(std::vector<double>(51, 1.0)).tailLength, size_t{11});
        QCOMPARE(checkTail(std::vector<double>(3, 1.0)).tailLength, size_t{1});
        QVERIFY(!checkTail(std::vector<double>{}).stable());
    }

    void steadyDecayIsStable() {
        std::vector<double> tail;
        tail.reserve(10);
        for (int i = 0; i < 10; ++i) tail.push_back(1.0 - 0.01 * i);
        const TailCheck t = checkTail(withTail(tail));
        QVERIFY(t.stable());
        QVERIFY(std::abs(t.tailMean - 0.955) < 1e-12);
    }

    void clampsBelowAt1e16() {
        // A curve that reached exactly 0 (and rounding noise below) is a flat, stable tail.
        std::vector<double> tail(10, 0.0);
        tail[3] = -1e-30;
        const TailCheck t = checkTail(withTail(tail));
        QVERIFY(t.stable());
        QCOMPARE(t.tailMean, 1e-16);
        QCOMPARE(t.largestRise, 0.0);
    }

    void eachCriterionFailsOnItsOwn_data() {
        QTest::addColumn<std::vector<double>>("tail");
        QTest::addColumn<QString>("failing");
        // std/mean = 0.32: falls steadily but too far within the tail.
        std::vector<double> spread;
        spread.reserve(10);
        for (int i = 0; i < 10; ++i) spread.push_back(3.0 - 2.0 * i / 9.0);
        QTest::newRow("spread") << spread << "spread";
        // 6 of 9 steps rise (by 0.001), the 3 falls are larger: rising fraction 0.67.
        QTest::newRow("rises") << std::vector<double>{1.0,   1.001, 0.991, 0.992, 0.993,
                                                      0.983, 0.984, 0.985, 0.975, 0.976}
                               << "rises";
        // One jump of 0.15 = 0.14 x the tail mean.
        QTest::newRow("jump") << std::vector<double>{1.2,  1.15, 1.1,  1.05, 1.0,
                                                     1.15, 1.1,  1.05, 1.0,  0.95}
                              << "jump";
        // Zig-zag that ends where it began: total variation 401 x the net change.
        QTest::newRow("zigzag") << std::vector<double>{1.0,  1.05, 1.0,  1.05, 1.0,
                                                       1.05, 1.0,  1.05, 1.0,  0.999}
                                << "zigzag";
        // Mostly falling steps, but the rises are larger: log slope +0.022.
        QTest::newRow("slope") << std::vector<double>{1.0,  0.99, 1.05, 1.04, 1.10,
                                                      1.09, 1.15, 1.14, 1.20, 1.19}
                               << "slope";
        std::vector<double> nan(10, 1.0);
        nan[4] = std::numeric_limits<double>::quiet_NaN();
        QTest::newRow("finite") << nan << "finite";
    }
    void eachCriterionFailsOnItsOwn() {
        QFETCH(std::vector<double>, tail);
        QFETCH(QString, failing);
        const TailCheck t = checkTail(withTail(tail));
        QVERIFY(!t.stable());
        QCOMPARE(t.finite, failing != "finite");
        if (failing == "finite") {
            QVERIFY(std::isinf(t.tailMean));
            return;
        }
        QCOMPARE(t.steadySpread, failing != "spread");
        QCOMPARE(t.fewRises, failing != "rises");
        QCOMPARE(t.smallRises, failing != "jump");
        QCOMPARE(t.smoothPath, failing != "zigzag");
        QCOMPARE(t.notRising, failing != "slope");
    }

    void criteriaAtTheirThresholds_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("criterion");
        QTest::addColumn<bool>("inside");
        for (const char* preset : {"lm_script", "notebook"}) {
            for (const char* criterion :
                 {"cv", "rising_fraction", "largest_rise", "tv_ratio", "log_slope", "finite"}) {
                for (const bool inside : {true, false}) {
                    const std::string row = std::string(preset) + " " + criterion +
                                            (inside ? " just inside" : " just outside");
                    QTest::newRow(row.c_str()) << preset << criterion << inside;
                }
            }
        }
    }
    void criteriaAtTheirThresholds() {
        QFETCH(QString, preset);
        QFETCH(QString, criterion);
        QFETCH(bool, inside);
        const StableThresholds th = stablePreset(preset.toStdString());
        const std::string c = criterion.toStdString();
        const std::vector<double> curve = curveWithTail(tailAt(c, th, inside ? 0.99 : 1.01));
        const TailCheck t = checkTail(curve, th);
        QCOMPARE(t.tailLength, curve.size() / 5);
        QCOMPARE(t.stable(), inside);
        // The criterion under test decides; every other one passes.
        QCOMPARE(t.finite, c != "finite" || inside);
        if (c == "finite") return;
        QCOMPARE(t.steadySpread, c != "cv" || inside);
        QCOMPARE(t.fewRises, c != "rising_fraction" || inside);
        QCOMPARE(t.smallRises, c != "largest_rise" || inside);
        QCOMPARE(t.smoothPath, c != "tv_ratio" || inside);
        QCOMPARE(t.notRising, c != "log_slope" || inside);
        // The numbers behind the verdict sit on the side of the threshold the row says.
        const auto side = [&](double value, double limit) {
            QVERIFY2(inside ? value <= limit : value > limit,
                     qPrintable(QString("%1 against %2").arg(value).arg(limit)));
        };
        if (c == "cv") side(t.tailStd / t.tailMean, th.maxRelativeStd);
        if (c == "rising_fraction") side(t.risingFraction, th.maxRisingFraction);
        if (c == "largest_rise") side(t.largestRise / t.tailMean, th.maxRiseOfMean);
        if (c == "tv_ratio") side(t.totalVariation / std::abs(t.netChange), th.maxVariationRatio);
        if (c == "log_slope") side(t.logSlope, th.maxLogSlope);
        // The notebook's thresholds are the tighter: what fails them passes lm_script's.
        if (preset == "notebook" && !inside) QVERIFY(checkTail(curve).stable());
    }

    void presetsHoldTheSpecNumbers() {
        const StableThresholds lm = stablePreset("lm_script");
        QCOMPARE(lm, StableThresholds{});
        QCOMPARE(lm.tailFraction, 0.2);
        QCOMPARE(lm.minTail, 1);
        QCOMPARE(lm.maxRelativeStd, 0.25);
        QCOMPARE(lm.maxRisingFraction, 0.55);
        QCOMPARE(lm.maxRiseOfMean, 0.10);
        QCOMPARE(lm.maxVariationRatio, 10.0);
        QCOMPARE(lm.maxLogSlope, 1e-3);
        QCOMPARE(lm.withinBest, 0.05);
        const StableThresholds nb = stablePreset("notebook");
        QCOMPARE(nb.tailFraction, 0.2);
        QCOMPARE(nb.minTail, 10);
        QCOMPARE(nb.maxRelativeStd, 0.15);
        QCOMPARE(nb.maxRisingFraction, 0.45);
        QCOMPARE(nb.maxRiseOfMean, 0.05);
        QCOMPARE(nb.maxVariationRatio, 5.0);
        QCOMPARE(nb.maxLogSlope, 1e-4);
        QCOMPARE(nb.withinBest, 0.05);
        QVERIFY(lm.applyTests && nb.applyTests);
        // As the authors' code ran: the notebook's thresholds, the tests reported only.
        StableThresholds asRun = stablePreset("notebook_as_run");
        QVERIFY(!asRun.applyTests);
        asRun.applyTests = true;
        QCOMPARE(asRun, nb);
        try {
            (void)stablePreset("paper", "--step-rule.preset");
            QFAIL("accepted an unknown preset");
        } catch (const ConfigError& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("--step-rule.preset = \"paper\" is not allowed: one of "
                                 "lm_script, notebook, notebook_as_run"));
        }
    }

    void tailLengthRule() {
        StableThresholds nb = stablePreset("notebook");
        // min_tail beats tail_frac on a short curve: ceil(0.2 * 20) = 4 < 10.
        QCOMPARE(checkTail(std::vector<double>(20, 1.0), nb).tailLength, size_t{10});
        QCOMPARE(checkTail(std::vector<double>(20, 1.0)).tailLength, size_t{4});
        // ... and is clamped to the curve.
        QCOMPARE(checkTail(std::vector<double>(6, 1.0), nb).tailLength, size_t{6});
        // tail_frac beats min_tail on a long one: ceil(0.2 * 60) = 12.
        QCOMPARE(checkTail(std::vector<double>(60, 1.0), nb).tailLength, size_t{12});
        // E4's: tail_frac 0.01 of 3181 points is ceil(31.81) = 32.
        nb.tailFraction = 0.01;
        QCOMPARE(checkTail(std::vector<double>(3181, 1.0), nb).tailLength, size_t{32});
        // tail_frac 1.0 is the whole curve: a curve that rises early is then not stable,
        // while its last fifth is.
        StableThresholds whole;
        whole.tailFraction = 1.0;
        std::vector<double> c{1.0, 2.0, 3.0};
        for (int i = 0; i < 12; ++i) c.push_back(3.0 - 0.1 * i);
        const TailCheck all = checkTail(c, whole);
        QCOMPARE(all.tailLength, c.size());
        QVERIFY(!all.stable());
        QVERIFY(checkTail(c).stable());
    }

    void withinBestWindow_data() {
        QTest::addColumn<double>("withinBest");
        QTest::addColumn<double>("factor");
        QTest::addColumn<int>("pick");
        for (const double w : {0.05, 0.2}) {
            const std::string at = QString::number(w).toStdString();
            QTest::newRow(("within " + at + ", just inside").c_str()) << w << 0.999 << 0;
            QTest::newRow(("within " + at + ", just outside").c_str()) << w << 1.001 << 1;
        }
    }
    void withinBestWindow() {
        QFETCH(double, withinBest);
        QFETCH(double, factor);
        QFETCH(int, pick);
        StableThresholds th;
        th.withinBest = withinBest;
        // Two flat (stable) tails: the smaller step's mean at factor x (1 + within_best) x the
        // best's.
        const double best = 0.8;
        std::vector<GridCandidate> grid(2);
        grid[0].stepSize = 0.1;
        grid[0].tail = checkTail(flatTail(best * (1.0 + withinBest) * factor), th);
        grid[1].stepSize = 0.2;
        grid[1].tail = checkTail(flatTail(best), th);
        QVERIFY(grid[0].tail.stable() && grid[1].tail.stable());
        QCOMPARE(pickStable(grid, th), pick);
        StepRuleSpec rule = ruleOf(StepRule::Stable);
        rule.stable = th;
        QCOMPARE(pickStep(rule, grid), pick);
    }

    void specStringsAndObjectsRoundTrip() {
        using nlohmann::json;
        // The plain strings stay strings.
        for (const char* text : {"best_final", "stable"}) {
            const StepRuleSpec r = parseStepRuleSpec(json(text), "rule");
            QCOMPARE(stepRuleName(r.kind), std::string(text));
            QCOMPARE(r.preset, std::string("lm_script"));
            QCOMPARE(r.stable, StableThresholds{});
            QVERIFY(stepRuleJson(r) == json(text));
            QCOMPARE(stepRuleLabel(r), std::string(text));
        }
        // {"kind": "stable"} alone is the plain string again.
        QVERIFY(stepRuleJson(parseStepRuleSpec(json{{"kind", "stable"}}, "rule")) ==
                json("stable"));
        QVERIFY(stepRuleJson(parseStepRuleSpec(json{{"kind", "best_final"}}, "rule")) ==
                json("best_final"));
        // A preset and overrides: every threshold written, reads back equal.
        const json in = {{"kind", "stable"}, {"preset", "notebook"}, {"tail_frac", 0.01},
                         {"curve", "slots"}, {"value", "objective"}, {"max_log_slope", -1e-6},
                         {"min_tail", 32}};
        const StepRuleSpec r = parseStepRuleSpec(in, "rule");
        QCOMPARE(r.kind, StepRule::Stable);
        QCOMPARE(r.preset, std::string("notebook"));
        QCOMPARE(r.stable.tailFraction, 0.01);
        QCOMPARE(r.stable.minTail, 32);
        QCOMPARE(r.stable.maxLogSlope, -1e-6);
        QCOMPARE(r.stable.maxRelativeStd, 0.15);  // from the preset
        QCOMPARE(r.curve, StepCurve::Slots);
        QCOMPARE(r.value, StepValue::Objective);
        const json out = stepRuleJson(r);
        QVERIFY(out.is_object());
        for (const char* key : {"kind", "preset", "tail_frac", "min_tail", "max_cv",
                                "max_rising_fraction", "max_rise", "max_tv_ratio", "max_log_slope",
                                "within_best", "apply_tests", "curve", "value"}) {
            QVERIFY2(out.contains(key), key);
        }
        QCOMPARE(out.at("max_tv_ratio").get<double>(), 5.0);
        QCOMPARE(parseStepRuleSpec(out, "rule"), r);
        QCOMPARE(stepRuleLabel(r), std::string("stable:notebook*"));
        // The notebook preset as it is: no mark.
        QCOMPARE(stepRuleLabel(
                     parseStepRuleSpec(json{{"kind", "stable"}, {"preset", "notebook"}}, "rule")),
                 std::string("stable:notebook"));
        // The object form always holds the thresholds, the plain rule's too.
        const json plain = stepRuleObject(ruleOf(StepRule::Stable));
        QCOMPARE(plain.at("max_cv").get<double>(), 0.25);
        QCOMPARE(plain.at("preset").get<std::string>(), std::string("lm_script"));
    }

    void specRefusals_data() {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const char* rule, const char* message) {
            QTest::newRow(name) << QString(rule) << QString(message);
        };
        row("unknown string", R"("best")",
            R"(r.rule = "best" is not allowed: one of best_final, stable, or an object)");
        row("number", "3", "r.rule = 3 is not allowed: one of best_final, stable");
        row("no kind", R"({"preset": "notebook"})",
            "r.rule.kind is missing: one of best_final, stable");
        row("bad kind", R"({"kind": "steady"})",
            R"(r.rule.kind = "steady" is not allowed: one of best_final, stable)");
        row("bad preset", R"({"kind": "stable", "preset": "paper"})",
            R"(r.rule.preset = "paper" is not allowed: one of lm_script, notebook, notebook_as_run)");
        row("apply_tests", R"({"kind": "stable", "apply_tests": "no"})",
            R"(r.rule.apply_tests = "no" is not allowed: true or false)");
        row("tail_frac 0", R"({"kind": "stable", "tail_frac": 0})",
            "r.rule.tail_frac = 0 is not allowed: a number in (0, 1]");
        row("tail_frac 1.5", R"({"kind": "stable", "tail_frac": 1.5})",
            "r.rule.tail_frac = 1.5 is not allowed: a number in (0, 1]");
        row("min_tail 0", R"({"kind": "stable", "min_tail": 0})",
            "r.rule.min_tail = 0 is not allowed: an integer in [1, 1000000000]");
        row("min_tail 2.5", R"({"kind": "stable", "min_tail": 2.5})",
            "r.rule.min_tail = 2.5 is not allowed: an integer in [1, 1000000000]");
        row("max_cv -1", R"({"kind": "stable", "max_cv": -1})",
            "r.rule.max_cv = -1 is not allowed: a finite number >= 0");
        row("max_rising_fraction", R"({"kind": "stable", "max_rising_fraction": 1.2})",
            "r.rule.max_rising_fraction = 1.2 is not allowed: a number in [0, 1]");
        row("max_rise", R"({"kind": "stable", "max_rise": "big"})",
            R"(r.rule.max_rise = "big" is not allowed: a finite number >= 0)");
        row("max_tv_ratio", R"({"kind": "stable", "max_tv_ratio": -0.5})",
            "r.rule.max_tv_ratio = -0.5 is not allowed: a finite number >= 0");
        row("max_log_slope", R"({"kind": "stable", "max_log_slope": null})",
            "r.rule.max_log_slope = null is not allowed: a finite number");
        row("within_best", R"({"kind": "stable", "within_best": -0.01})",
            "r.rule.within_best = -0.01 is not allowed: a finite number >= 0");
        row("curve", R"({"kind": "stable", "curve": "epochs"})",
            R"(r.rule.curve = "epochs" is not allowed: one of auto, slots, updates)");
        row("value", R"({"kind": "stable", "value": "loss"})",
            R"(r.rule.value = "loss" is not allowed: one of gap, objective)");
        row("unknown key", R"({"kind": "stable", "tail": 0.2})", "unknown key r.rule.tail");
        row("threshold with best_final", R"({"kind": "best_final", "tail_frac": 0.5})",
            "r.rule.tail_frac is not allowed with kind best_final");
    }
    void specRefusals() {
        QFETCH(QString, rule);
        QFETCH(QString, message);
        try {
            (void)parseStepRuleSpec(nlohmann::json::parse(rule.toStdString()), "r.rule");
            QFAIL("accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).startsWith(message), e.what());
        }
    }

    void validateNamesTheField() {
        StepRuleSpec r = ruleOf(StepRule::Stable);
        validateStepRule(r, "step_rule");
        r.stable.maxRisingFraction = 2.0;
        try {
            validateStepRule(r, "step_rule");
            QFAIL("accepted");
        } catch (const ConfigError& e) {
            QCOMPARE(std::string(e.what()), std::string("step_rule.max_rising_fraction = 2.0 is "
                                                        "not allowed: a number in [0, 1]"));
        }
    }

    void nonFiniteBeforeTheTailIsNotStable() {
        std::vector<double> c = flatTail(1.0);
        c[2] = std::numeric_limits<double>::infinity();
        QVERIFY(!checkTail(c).stable());
    }

    void stablePicksTheSmallestStepWithinFivePercent() {
        // Tail means: 2^-4 -> 1.06 (stable, outside 5 %), 2^-3 -> 1.04 (stable, inside),
        // 2^-2 -> 1.00 (stable, the best), 2^-1 -> 0.5 but zig-zags (unstable), 2^0 diverged.
        std::vector<GridCandidate> grid{
            candidate(0.0625, flatTail(1.06)), candidate(0.125, flatTail(1.04)),
            candidate(0.25, flatTail(1.00)),
            candidate(0.5, withTail({0.5, 0.52, 0.5, 0.52, 0.5, 0.52, 0.5, 0.52, 0.5, 0.5})),
            candidate(1.0, flatTail(std::numeric_limits<double>::infinity()), true)};
        QVERIFY(!grid[3].tail.stable());
        QCOMPARE(pickStable(grid), 1);
        QCOMPARE(pickStep(ruleOf(StepRule::Stable), grid), 1);
        // best_final ignores stability: the lowest final value that did not diverge.
        QCOMPARE(pickBestFinal(grid), 3);
        QCOMPARE(pickStep(ruleOf(StepRule::BestFinal), grid), 3);
        // Just inside the 5 % window, the smallest step wins.
        grid[0] = candidate(0.0625, flatTail(1.049));
        QCOMPARE(pickStable(grid), 0);
    }

    // apply_tests false (preset notebook_as_run, how the authors' selection ran): every finite
    // curve of at least three points is a candidate, whatever its tests say, so the pick is the
    // smallest step within 5 % of the lowest tail mean; the verdicts are still computed.
    void asRunTakesEveryFiniteCurve() {
        const StableThresholds asRun = stablePreset("notebook_as_run");
        const StableThresholds tested = stablePreset("notebook");
        std::vector<GridCandidate> grid{
            candidate(0.0625, flatTail(1.06)), candidate(0.125, flatTail(1.04)),
            candidate(0.25, flatTail(1.00)),
            candidate(0.5, withTail({0.5, 0.52, 0.5, 0.52, 0.5, 0.52, 0.5, 0.52, 0.5, 0.5})),
            candidate(1.0, flatTail(std::numeric_limits<double>::infinity()), true)};
        // (candidate() checks with the lm_script thresholds: the same 10-point tail as the
        // notebook's here, and none of these verdicts differs between the two.)
        QVERIFY(!grid[3].tail.stable());
        QVERIFY(grid[3].tail.candidate(asRun));
        QVERIFY(!grid[3].tail.candidate(tested));
        QVERIFY(!grid[4].tail.candidate(asRun));  // not finite
        QCOMPARE(pickStable(grid, tested), 1);
        QCOMPARE(pickStable(grid, asRun), 3);
        // A smaller step within 5 % of that tail mean (0.508) is taken instead.
        grid[1] =
            candidate(0.125, withTail({0.52, 0.5, 0.52, 0.5, 0.52, 0.5, 0.52, 0.5, 0.52, 0.51}));
        QCOMPARE(pickStable(grid, asRun), 1);
        // Fewer than three points: never a candidate (the authors' metrics call it unstable).
        const TailCheck two = checkTail(std::vector<double>{0.1, 0.1}, asRun);
        QVERIFY(two.finite && !two.candidate(asRun));
        QVERIFY(checkTail(std::vector<double>{0.1, 0.1, 0.1}, asRun).candidate(asRun));
    }

    void noneStablePicksTheLowestTailMean() {
        const std::vector<double> up{1.0, 0.99, 1.05, 1.04, 1.10, 1.09, 1.15, 1.14, 1.20, 1.19};
        std::vector<double> upHalf = up;
        for (double& v : upHalf) v *= 0.5;
        std::vector<GridCandidate> grid{candidate(0.1, withTail(up)),
                                        candidate(0.2, withTail(upHalf)),
                                        candidate(0.4, withTail(up))};
        for (const auto& g : grid) QVERIFY(!g.tail.stable());
        QCOMPARE(pickStable(grid), 1);
        // Every curve non-finite: nothing to pick.
        std::vector<GridCandidate> bad{
            candidate(0.1, flatTail(std::numeric_limits<double>::quiet_NaN()), true)};
        QCOMPARE(pickStable(bad), -1);
    }

    void bestFinalSkipsDivergedAndBreaksTiesBySmallerStep() {
        std::vector<GridCandidate> grid(3);
        grid[0].stepSize = 0.5;
        grid[0].finalValue = 0.1;
        grid[1].stepSize = 0.25;
        grid[1].finalValue = 0.1;
        grid[2].stepSize = 1.0;
        grid[2].finalValue = 0.01;
        grid[2].diverged = true;
        QCOMPARE(pickBestFinal(grid), 1);
        for (auto& g : grid) g.diverged = true;
        QCOMPARE(pickBestFinal(grid), -1);
    }

    void ruleNames() {
        QCOMPARE(parseStepRule("stable"), StepRule::Stable);
        QCOMPARE(parseStepRule("best_final"), StepRule::BestFinal);
        QCOMPARE(stepRuleName(StepRule::Stable), std::string("stable"));
        try {
            parseStepRule("best");
            QFAIL("accepted an unknown rule");
        } catch (const ConfigError& e) {
            QVERIFY(std::string(e.what()).find("\"best\"") != std::string::npos);
            QVERIFY(std::string(e.what()).find("best_final, stable") != std::string::npos);
        }
    }

    void seedMeanAndSd() {
        const std::vector<double> v{1.0, 2.0, 3.0, 6.0};
        const MeanSd m = meanAndSd(v);
        QCOMPARE(m.mean, 3.0);
        QCOMPARE(m.sd, std::sqrt(3.5));  // population form: sum of squares 14 over 4
        QCOMPARE(meanAndSd(std::vector<double>{5.0}).sd, 0.0);
        // A run that stopped early counts as +inf from its end on.
        const std::vector<std::vector<double>> curves{{1.0, 2.0, 3.0}, {3.0, 4.0}};
        const CurveStats s = curveMeanAndSd(curves, 3);
        QCOMPARE(s.mean[0], 2.0);
        QCOMPARE(s.sd[1], 1.0);
        QVERIFY(std::isinf(s.mean[2]));
    }
};

QTEST_APPLESS_MAIN(TestStepRules)
#include "tst_step_rules.moc"

// Step-size rules (SPEC section 6) on hand-made curves whose answer is known: each of the stable
// rule's five criteria failing on its own, the 5 % window and the smallest-step choice, the
// fallback when none is stable, and best_final. Plus the seed mean / sd helpers the rules use.
#include <QtTest>

#include <cmath>
#include <limits>
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
        QCOMPARE(pickStep(StepRule::Stable, grid), 1);
        // best_final ignores stability: the lowest final value that did not diverge.
        QCOMPARE(pickBestFinal(grid), 3);
        QCOMPARE(pickStep(StepRule::BestFinal, grid), 3);
        // Just inside the 5 % window, the smallest step wins.
        grid[0] = candidate(0.0625, flatTail(1.049));
        QCOMPARE(pickStable(grid), 0);
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

// DelayRanges, the range queries views make over PipeDream delays: range maxima per block (from
// the binned max tree and the partial bins at the ends), the update attaining them, sums and the
// second-half statistics, each against brute force over DelayTable::delay, with bins of one
// update and with many updates per bin; and the same in each delay unit (block updates,
// optimizer steps, slots) against DelayTable::delayIn.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "schedule/delay_ranges.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;

namespace {

std::shared_ptr<const DelayTable> pdDelays(int stages, int microbatches, int noam = 0) {
    ScheduleParams p;
    p.stages = stages;
    p.microbatches = microbatches;
    p.noam = noam;
    return std::make_shared<const DelayTable>(buildTimeline(p));
}

long long bruteMax(const DelayTable& t, long long lo, long long hi, int j) {
    long long best = DelayRanges::kNoValue;
    for (long long k = lo; k < hi; ++k) best = std::max(best, t.delay(k, j));
    return best;
}

long long bruteSum(const DelayTable& t, long long lo, long long hi) {
    long long sum = 0;
    for (long long k = lo; k < hi; ++k) {
        for (int j = 0; j < t.stages(); ++j) sum += t.delay(k, j);
    }
    return sum;
}

long long bruteMaxIn(const DelayTable& t, DelayUnit unit, long long lo, long long hi, int j) {
    long long best = DelayRanges::kNoValue;
    for (long long k = lo; k < hi; ++k) best = std::max(best, t.delayIn(unit, k, j));
    return best;
}

}  // namespace

class TestDelayRanges : public QObject {
    Q_OBJECT
  private slots:
    void rangeQueriesMatchBruteForce_data() {
        QTest::addColumn<int>("stages");
        QTest::addColumn<int>("microbatches");
        QTest::addColumn<int>("noam");
        QTest::addColumn<long long>("maxBinCells");
        QTest::newRow("S=4 N=24, one update per bin")
            << 4 << 24 << 0 << DelayRanges::kDefaultMaxBinCells;
        QTest::newRow("S=5 N=40, 8 updates per bin") << 5 << 40 << 0 << 5LL * 25;
        QTest::newRow("S=8 N=100 NOAM=5, 64 per bin") << 8 << 100 << 5 << 8LL * 13;
        QTest::newRow("S=7 N=33, a single bin") << 7 << 33 << 0 << 7LL;
    }
    void rangeQueriesMatchBruteForce() {
        QFETCH(int, stages);
        QFETCH(int, microbatches);
        QFETCH(int, noam);
        QFETCH(long long, maxBinCells);
        const auto table = pdDelays(stages, microbatches, noam);
        const DelayRanges ranges(table, maxBinCells);
        const long long K = table->updates();
        QCOMPARE(ranges.updates(), K);
        QCOMPARE(ranges.blocks(), stages);
        const long long bins = (K + (1LL << ranges.binShift()) - 1) >> ranges.binShift();
        QVERIFY(bins * stages <= std::max<long long>(maxBinCells, stages));
        if (maxBinCells < DelayRanges::kDefaultMaxBinCells) QVERIFY(ranges.binShift() > 0);
        QCOMPARE(static_cast<long long>(ranges.largest()), table->maxDelay());
        for (long long k = 0; k < K; ++k) {
            for (int j = 0; j < stages; ++j)
                QCOMPARE(static_cast<long long>(ranges.delay(k, j)), table->delay(k, j));
        }
        std::mt19937_64 random(11);
        std::uniform_int_distribution<long long> pick(0, K);
        for (int trial = 0; trial < 600; ++trial) {
            long long lo = pick(random);
            long long hi = pick(random);
            if (lo > hi) std::swap(lo, hi);
            if (trial % 5 == 0) hi = std::min(K, lo + trial % 3);  // short ranges, inside a bin
            std::vector<std::int32_t> acc(static_cast<size_t>(stages), DelayRanges::kNoValue);
            ranges.rangeMax(lo, hi, acc.data());
            for (int j = 0; j < stages; ++j) {
                const long long expected = bruteMax(*table, lo, hi, j);
                QCOMPARE(static_cast<long long>(acc[static_cast<size_t>(j)]), expected);
                if (hi > lo) {
                    const long long k = ranges.argMax(lo, hi, j);
                    QVERIFY(lo <= k && k < hi);
                    QCOMPARE(table->delay(k, j), expected);
                }
            }
            QCOMPARE(ranges.delaySum(lo, hi), bruteSum(*table, lo, hi));
        }
    }

    void unitsRangeQueriesMatchBruteForce_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("group");
        QTest::addColumn<int>("unit");
        for (const DelayUnit u :
             {DelayUnit::BlockUpdates, DelayUnit::OptimizerSteps, DelayUnit::Slots}) {
            const std::string name(enumName(kDelayUnits, u));
            QTest::newRow(("pd " + name).c_str())
                << static_cast<int>(ScheduleKind::PipeDream) << 0 << static_cast<int>(u);
            QTest::newRow(("2bw " + name).c_str())
                << static_cast<int>(ScheduleKind::TwoBw) << 5 << static_cast<int>(u);
            QTest::newRow(("1f1b " + name).c_str())
                << static_cast<int>(ScheduleKind::OneFOneB) << 6 << static_cast<int>(u);
        }
    }
    void unitsRangeQueriesMatchBruteForce() {
        // Ranges that start and end inside bins: PD's counted steps start their per-block
        // counters there.
        QFETCH(int, kind);
        QFETCH(int, group);
        QFETCH(int, unit);
        ScheduleParams p;
        p.kind = static_cast<ScheduleKind>(kind);
        p.stages = 5;
        p.microbatches = 37;
        p.flushGroup = group;
        const auto table = std::make_shared<const DelayTable>(buildTimeline(p));
        const auto u = static_cast<DelayUnit>(unit);
        const DelayRanges ranges(table, 5LL * 9, u);
        QCOMPARE(ranges.unit(), u);
        QVERIFY(ranges.binShift() > 0);
        const long long K = table->updates();
        long long largest = 0;
        for (long long k = 0; k < K; ++k) {
            for (int j = 0; j < 5; ++j) {
                QCOMPARE(static_cast<long long>(ranges.delay(k, j)), table->delayIn(u, k, j));
                largest = std::max(largest, table->delayIn(u, k, j));
            }
        }
        QCOMPARE(static_cast<long long>(ranges.largest()), largest);
        std::mt19937_64 random(5);
        std::uniform_int_distribution<long long> pick(0, K);
        for (int trial = 0; trial < 300; ++trial) {
            long long lo = pick(random);
            long long hi = pick(random);
            if (lo > hi) std::swap(lo, hi);
            std::vector<std::int32_t> acc(5, DelayRanges::kNoValue);
            ranges.rangeMax(lo, hi, acc.data());
            long long sum = 0;
            for (int j = 0; j < 5; ++j) {
                QCOMPARE(static_cast<long long>(acc[static_cast<size_t>(j)]),
                         bruteMaxIn(*table, u, lo, hi, j));
                for (long long k = lo; k < hi; ++k) sum += table->delayIn(u, k, j);
            }
            QCOMPARE(ranges.delaySum(lo, hi), sum);
        }
        const DelayRanges::Stats half = ranges.secondHalfStats(K);
        const long long first = (K + 1) / 2;
        long long sum = 0;
        long long best = 0;
        for (long long k = first; k < K; ++k) {
            for (int j = 0; j < 5; ++j) {
                sum += table->delayIn(u, k, j);
                best = std::max(best, table->delayIn(u, k, j));
            }
        }
        QCOMPARE(half.max, static_cast<double>(best));
        QCOMPARE(half.mean, static_cast<double>(sum) / (static_cast<double>(K - first) * 5));
    }

    void aRangeMaximumOnlyRaisesTheAccumulator() {
        const auto table = pdDelays(4, 30);
        const DelayRanges ranges(table, 4 * 8);
        std::vector<std::int32_t> acc(4, 1000);
        ranges.rangeMax(0, table->updates(), acc.data());
        QVERIFY(std::all_of(acc.begin(), acc.end(), [](std::int32_t v) { return v == 1000; }));
        std::vector<std::int32_t> none(4, DelayRanges::kNoValue);
        ranges.rangeMax(10, 10, none.data());
        ranges.rangeMax(-5, 0, none.data());
        QVERIFY(std::all_of(none.begin(), none.end(),
                            [](std::int32_t v) { return v == DelayRanges::kNoValue; }));
    }

    void secondHalfStatisticsMatchBruteForceAndTheEngine() {
        DelayRanges ranges;  // reset for each binning: reused memory, fresh answers
        for (long long maxBinCells : {DelayRanges::kDefaultMaxBinCells, 6LL * 9}) {
            const auto table = pdDelays(6, 60);
            ranges.reset(table, maxBinCells);
            for (long long shown : {0LL, 1LL, 2LL, 37LL, 181LL, table->updates()}) {
                const auto first = static_cast<long long>(std::ceil(shown / 2.0));
                const DelayRanges::Stats stats = ranges.secondHalfStats(shown);
                if (shown <= first) {
                    QCOMPARE(stats.max, 0.0);
                    QCOMPARE(stats.mean, 0.0);
                    continue;
                }
                long long max = 0;
                for (int j = 0; j < 6; ++j) max = std::max(max, bruteMax(*table, first, shown, j));
                QCOMPARE(stats.max, double(max));
                const double mean =
                    double(bruteSum(*table, first, shown)) / double((shown - first) * 6);
                QVERIFY(std::abs(stats.mean - mean) < 1e-9);
            }
            const DelayStats engine = delayStats(*table, 0.5);
            const DelayRanges::Stats all = ranges.secondHalfStats(table->updates());
            QCOMPARE(all.max, double(engine.max));
            QVERIFY(std::abs(all.mean - engine.mean) < 1e-9);
        }
    }

    void theSteadyStateFormulaHasOneImplementation() {
        // S^2 - S/2 (even S), S^2 - S/2 - 1/2 (odd S): the statistics report the same number.
        for (int S : {1, 2, 3, 4, 5, 8, 9}) {
            const double exact = S * S - S / 2.0 - (S % 2 == 1 ? 0.5 : 0.0);
            QCOMPARE(double(pipeDreamMaxDelayFormula(S)), exact);
            QCOMPARE(pipeDreamDelayStats(S).formulaMax, exact);
        }
    }

    void anEmptyTableAnswersNothing() {
        const DelayRanges ranges(nullptr);
        QVERIFY(ranges.empty());
        QCOMPARE(ranges.largest(), 0);
        QCOMPARE(ranges.secondHalfStats(10).max, 0.0);
        std::int32_t acc = DelayRanges::kNoValue;
        ranges.rangeMax(0, 10, &acc);
        QCOMPARE(acc, DelayRanges::kNoValue);
    }
};

QTEST_MAIN(TestDelayRanges)
#include "tst_delay_ranges.moc"

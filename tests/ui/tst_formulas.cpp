// Every number the figure strip shows equals the engine's, recomputed
// here independently from the run's schedule (and checked against the closed forms by hand).
#include <QTest>
#include <cmath>

#include "charts/figure_strip.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "schedule/delays.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

class TestFormulas : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void theFigureStripShowsTheEnginesNumbers_data() {
        QTest::addColumn<int>("stages");
        QTest::newRow("S=8") << 8;
        QTest::newRow("S=5 (odd)") << 5;
    }
    void theFigureStripShowsTheEnginesNumbers() {
        QFETCH(int, stages);
        ExperimentController c;
        QCOMPARE(c.tryModify([&](ExperimentConfig& x) { x.stages = stages; }), QString());
        c.runNow();
        QVERIFY(test::waitForCurrentResults(c));
        const SnapshotPtr s = c.latest();
        FigureStrip strip;
        strip.setSnapshot(s);
        const int S = stages;
        // Closed forms, by hand: S^2 - S/2 (even S), S^2 - S/2 - 1/2 (odd S); mean ~ S^2/2.
        const double handMax = S % 2 == 0 ? S * S - S / 2.0 : S * S - S / 2.0 - 0.5;
        for (size_t i = 0; i < s->runs().size(); ++i) {
            const RunResult& r = s->result(i);
            const QString label = s->label(i);
            if (!r.timeline) continue;
            const Timeline tl = buildTimeline(r.timeline->params);  // independent rebuild
            const Utilization u = utilization(tl);
            QCOMPARE(strip.value("utilization", label), 100.0 * u.overall);
            QCOMPARE(strip.value("bubble", label), 100.0 * u.bubbleFraction);
            QCOMPARE(strip.value("slots", label), static_cast<double>(tl.totalSlots));
            for (int st = 0; st < S; ++st) {
                QCOMPARE(strip.value(QStringLiteral("stash stage %1").arg(st + 1), label),
                         static_cast<double>(tl.peakStash[static_cast<size_t>(st)]));
            }
            if (s->runs()[i].spec.method == Method::PipeDream) {
                const DelayStats d = delayStats(DelayTable(tl), 0.5);
                QCOMPARE(strip.value("max delay", label), static_cast<double>(d.max));
                QCOMPARE(strip.value("mean delay", label), d.mean);
                QCOMPARE(strip.value("formula max delay", label), handMax);
                QCOMPARE(strip.value("formula mean delay", label), S * S / 2.0);
                QCOMPARE(strip.value("max delay", label), handMax);  // PD meets its formula
                const int N = static_cast<int>(r.microbatches);
                QCOMPARE(strip.value("pd slots formula", label), 2.0 * N + 2.0 * (S - 1));
                QCOMPARE(strip.value("pd slots formula", label),
                         static_cast<double>(tl.totalSlots));
            }
            if (s->runs()[i].spec.method == Method::LocalSgd) {
                const int H = tl.params.localSteps;
                QCOMPARE(strip.value("localsgd round slots formula", label),
                         2.0 * S * H + 2.0 * (S - 1));
            }
        }
        QCOMPARE(strip.value("pd max delay formula", QStringLiteral("S=%1").arg(S)),
                 std::floor(handMax));
    }

    void theMaxDelayAgainstStagesIsTheEngines() {
        ExperimentController c;
        c.runNow();
        QVERIFY(test::waitForCurrentResults(c));
        FigureStrip strip;
        strip.setSnapshot(c.latest());
        for (int S : {2, 3, 4, 8, 16, 17, 32}) {
            const QString key = QStringLiteral("S=%1").arg(S);
            QCOMPARE(strip.value("max delay vs S", key),
                     static_cast<double>(pipeDreamDelayStats(S).max));
            const int formulaMax = S * S - (S + 1) / 2;  // floor(S^2 - S/2)
            QCOMPARE(strip.value("formula max delay vs S", key), static_cast<double>(formulaMax));
        }
        QCOMPARE(strip.value("max delay vs S", "S=4"), 14.0);  // SPEC section 3
        QCOMPARE(strip.value("max delay vs S", "S=8"), 60.0);
        QCOMPARE(strip.value("max delay vs S", "S=16"), 248.0);
    }

    // The delays panel shows each method's own quantity: PipeDream beside S² − S/2 and S²/2,
    // fill-drain and sequential SGD measured only; a PD that diverged keeps its delays.
    void theDelaysPanelComparesEachMethodWithItsOwnFormula() {
        ExperimentConfig c =
            loadPreset("e3-quadratic").config;  // least squares: γ too big blows up
        MethodSpec pd;
        pd.method = Method::PipeDream;
        pd.step.value = 16.0;  // diverges
        MethodSpec sgd;
        sgd.method = Method::Sgd;
        sgd.step.value = 0.1;
        MethodSpec fd;
        fd.method = Method::FillDrain;
        fd.step.value = 0.1;
        c.methods = {pd, sgd, fd};
        ExperimentController controller;
        controller.setConfig(c);
        controller.runNow();
        QVERIFY(test::waitForCurrentResults(controller));
        const SnapshotPtr s = controller.latest();
        QVERIFY(s->result(0).divergence.diverged);
        FigureStrip strip;
        strip.setSnapshot(s);
        const long long formula = pipeDreamMaxDelayFormula(c.stages);
        QCOMPARE(strip.value("max delay", s->label(0)), static_cast<double>(formula));
        QCOMPARE(strip.value("formula max delay", s->label(0)), static_cast<double>(formula));
        for (size_t i : {size_t{1}, size_t{2}}) {
            QVERIFY(!std::isnan(strip.value("max delay", s->label(i))));
            QVERIFY(std::isnan(strip.value("formula max delay", s->label(i))));
            QVERIFY(std::isnan(strip.value("formula mean delay", s->label(i))));
        }
    }
};

QTEST_MAIN(TestFormulas)
#include "tst_formulas.moc"

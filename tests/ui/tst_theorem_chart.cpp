// The theorem's own chart: for the selected RPD run, the running mean of ‖∇f‖² against the bound
// and its three terms, each line the engine's theorem trace point for point, the five lines told
// apart by colour and dash, on one pair of axes; the loss chart no longer carries them (its
// legend names only the methods, however many RPD runs there are).
#include <QChart>
#include <QComboBox>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QSet>
#include <QTest>
#include <cmath>

#include "charts/line_legend.hpp"
#include "charts/loss_chart.hpp"
#include "charts/theorem_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "main_window.hpp"
#include "replay/theorem_trace.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// The default experiment with ‖∇f‖² sampled, and `rpdRuns` RPD methods of different δ.
ExperimentConfig sampled(int rpdRuns) {
    ExperimentConfig c = loadPreset("default").config;
    c.sampling.gradNormEvery = 40;
    std::vector<MethodSpec> methods;
    MethodSpec rpd;
    for (const MethodSpec& m : c.methods) {
        if (m.method == Method::RandomizedPipeDream)
            rpd = m;
        else
            methods.push_back(m);
    }
    for (int i = 0; i < rpdRuns; ++i) {
        MethodSpec m = rpd;
        m.method = Method::RandomizedPipeDream;
        m.delta = 4 + 8 * i;
        methods.push_back(m);
    }
    c.methods = methods;
    return c;
}

SnapshotPtr run(const ExperimentConfig& config) {
    ExperimentController c;
    c.setConfig(config);
    if (!test::waitForCurrentResults(c)) return nullptr;
    return c.latest();
}

double lineValue(const TheoremTracePoint& p, int line) {
    switch (line) {
        case TheoremChart::MeanGradNormSq:
            return p.meanGradNormSq;
        case TheoremChart::Bound:
            return p.bound.total;
        case TheoremChart::OptimisationTerm:
            return p.bound.optimisation;
        case TheoremChart::NoiseTerm:
            return p.bound.noise;
        default:
            return p.bound.staleness;
    }
}

// Empty when every line of `chart` is the engine's trace of run `method`, point for point.
QString compareWithTrace(const TheoremChart& chart, const RunSnapshot& s, size_t method) {
    const std::vector<TheoremTracePoint> trace = theoremTrace(s.result(method));
    if (trace.size() < 2)
        return QStringLiteral("the engine's trace has %1 points").arg(trace.size());
    if (chart.series().size() != TheoremChart::LineCount)
        return QStringLiteral("%1 lines").arg(chart.series().size());
    for (int line = 0; line < TheoremChart::LineCount; ++line) {
        const QLineSeries* series = chart.series()[line];
        if (series->count() != static_cast<qsizetype>(trace.size()))
            return QStringLiteral("%1: %2 points, the trace has %3")
                .arg(series->name())
                .arg(series->count())
                .arg(trace.size());
        for (size_t k = 0; k < trace.size(); ++k) {
            const QPointF p = series->at(static_cast<qsizetype>(k));
            if (p.x() != static_cast<double>(trace[k].updates) ||
                p.y() != lineValue(trace[k], line))
                return QStringLiteral("%1, point %2: (%3, %4), the trace has (%5, %6)")
                    .arg(series->name())
                    .arg(k)
                    .arg(p.x())
                    .arg(p.y())
                    .arg(trace[k].updates)
                    .arg(lineValue(trace[k], line));
        }
    }
    return {};
}

}  // namespace

class TestTheoremChart : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void itsLinesAreTheEnginesTheoremTrace() {
        const SnapshotPtr s = run(sampled(1));
        QVERIFY(s);
        TheoremChart chart;
        chart.setSnapshot(s);
        const int rpd = chart.selectedMethod();
        QVERIFY(rpd >= 0);
        QCOMPARE(s->runs()[static_cast<size_t>(rpd)].spec.method, Method::RandomizedPipeDream);
        const QString mismatch = compareWithTrace(chart, *s, static_cast<size_t>(rpd));
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // Playback: up to the updates done by the cursor's slot, the axes kept.
        const auto* xAxis = chart.chart()->axes(Qt::Horizontal)[0];
        const double xMax = xAxis->property("max").toDouble();
        const int slot = s->totalSlots / 3;
        const long long done = s->runs()[static_cast<size_t>(rpd)].updatesBefore(slot);
        chart.setCursorSlot(slot);
        const std::vector<TheoremTracePoint> trace =
            theoremTrace(s->result(static_cast<size_t>(rpd)));
        qsizetype expected = 0;
        for (const TheoremTracePoint& p : trace) expected += p.updates <= done ? 1 : 0;
        QVERIFY(expected > 1 && expected < static_cast<qsizetype>(trace.size()));
        for (QLineSeries* series : chart.series()) {
            QCOMPARE(series->count(), expected);
            QVERIFY(series->points().back().x() <= static_cast<double>(done));
        }
        QCOMPARE(chart.chart()->axes(Qt::Horizontal)[0]->property("max").toDouble(), xMax);
        chart.setCursorSlot(-1);
        QCOMPARE(chart.series()[0]->count(), static_cast<qsizetype>(trace.size()));
        // At K = all updates (G = the largest norm seen) the bound is the engine's result, and
        // SPEC section 4's formula by hand.
        const RunResult& r = s->result(static_cast<size_t>(rpd));
        QVERIFY(r.theorem.has_value());
        const QPointF last = chart.series()[TheoremChart::Bound]->points().back();
        QCOMPARE(static_cast<long long>(last.x()), r.updates);
        QCOMPARE(last.y(), r.theorem->total);
        QCOMPARE(chart.series()[TheoremChart::OptimisationTerm]->points().back().y(),
                 r.theorem->optimisation);
        QCOMPARE(chart.series()[TheoremChart::NoiseTerm]->points().back().y(), r.theorem->noise);
        QCOMPARE(chart.series()[TheoremChart::StalenessTerm]->points().back().y(),
                 r.theorem->staleness);
        QCOMPARE(chart.series()[TheoremChart::MeanGradNormSq]->points().back().y(),
                 r.gradNormRunningMean.back());
        const double D0 = r.initialObjective - r.optimum;
        const double G = r.gradientBound;
        const double g = r.stepSize;
        const double L = r.smoothness;
        const double K = static_cast<double>(r.updates);
        const double d = static_cast<double>(r.maxDelay);
        QVERIFY(std::abs(last.y() - (2 * r.stages * D0 / (g * K) + g * r.stages * L * G * G +
                                     g * g * L * L * d * d * G * G)) <= 1e-9 * last.y());
    }

    void itsLinesAreToldApartAndShareOneAxisPair() {
        const SnapshotPtr s = run(sampled(1));
        QVERIFY(s);
        TheoremChart chart;
        chart.setSnapshot(s);
        QCOMPARE(chart.series().size(), TheoremChart::LineCount);
        QSet<QString> names;
        QSet<QRgb> colours;
        QSet<int> dashes;
        for (QLineSeries* series : chart.series()) {
            names << series->name();
            colours << series->pen().color().rgb();
            dashes << static_cast<int>(series->pen().style());
        }
        QCOMPARE(names.size(), 5);
        QCOMPARE(colours.size(), 5);
        QCOMPARE(dashes.size(), 5);
        QVERIFY(names.contains("noise γSLG²"));
        QVERIFY(names.contains("stale reads γ²L²δ²G²"));
        QVERIFY(names.contains("optimisation 2SΔ₀/(γK)"));
        const auto xs = chart.chart()->axes(Qt::Horizontal);
        const auto ys = chart.chart()->axes(Qt::Vertical);
        QCOMPARE(xs.size(), 1);
        QCOMPARE(ys.size(), 1);
        QVERIFY(qobject_cast<QLogValueAxis*>(ys[0]));  // the terms span decades
        for (QLineSeries* series : chart.series()) {
            QCOMPARE(series->attachedAxes().size(), 2);
            for (const QPointF& p : series->points()) {
                QVERIFY(p.y() >= static_cast<QLogValueAxis*>(ys[0])->min());
                QVERIFY(p.y() <= static_cast<QLogValueAxis*>(ys[0])->max());
            }
        }
        // The legend names all five in full: nothing elided, every entry inside its width.
        chart.resize(300, 360);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QCOMPARE(chart.legend()->entries().size(), 5);
        for (int i = 0; i < 5; ++i)
            QCOMPARE(chart.legend()->entries()[i].name, chart.series()[i]->name());
        for (const QRect& r : chart.legend()->entryRects()) {
            QVERIFY2(r.right() < chart.legend()->width(), qPrintable(QString::number(r.right())));
            QVERIFY(r.bottom() < chart.legend()->height());
        }
    }

    // With five RPD runs the loss chart's legend names the six methods only (the overlay once
    // added five lines per RPD run there); the theorem chart shows the run chosen, five lines.
    void manyRpdRunsKeepTheLossLegendShortAndTheRunIsChosen() {
        const SnapshotPtr s = run(sampled(5));
        QVERIFY(s);
        const int methods = static_cast<int>(s->runs().size());
        LossChart loss;
        loss.setTheoremChartShown(true);
        loss.setSnapshot(s);
        QCOMPARE(loss.chart()->series().size(), methods);
        QCOMPARE(loss.chart()->legend()->markers().size(), methods);

        TheoremChart chart;
        chart.setSnapshot(s);
        QCOMPARE(chart.runField()->count(), 5);
        QCOMPARE(chart.legend()->entries().size(), 5);
        for (int i = 0; i < chart.runField()->count(); ++i) {
            const int method = chart.runField()->itemData(i).toInt();
            QVERIFY(chart.selectMethod(method));
            QCOMPARE(chart.selectedMethod(), method);
            QVERIFY(chart.chart()->title().contains(s->label(static_cast<size_t>(method))));
            const QString mismatch = compareWithTrace(chart, *s, static_cast<size_t>(method));
            QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        }
        // A new snapshot keeps the run chosen.
        const int chosen = chart.selectedMethod();
        chart.setSnapshot(s);
        QCOMPARE(chart.selectedMethod(), chosen);
    }

    void withoutSamplesOrRpdItSaysWhatIsMissing() {
        ExperimentConfig c = sampled(1);
        c.sampling.gradNormEvery = 0;
        const SnapshotPtr unsampled = run(c);
        QVERIFY(unsampled);
        TheoremChart chart;
        chart.setSnapshot(unsampled);
        QVERIFY(chart.needsGradNormSamples());
        QVERIFY(chart.series().isEmpty());
        QVERIFY(chart.note().contains("‖∇f‖²"));
        c.methods.pop_back();  // no RPD left
        const SnapshotPtr noRpd = run(c);
        QVERIFY(noRpd);
        chart.setSnapshot(noRpd);
        QCOMPARE(chart.selectedMethod(), -1);
        QVERIFY(chart.note().contains("RPD"));
        QVERIFY(chart.series().isEmpty());
    }

    // In the window: the loss chart's box shows the chart, makes the runs sample ‖∇f‖² and the
    // chart fills in when they end; unticking hides it.
    void theLossChartsBoxShowsItInTheWindow() {
        MainWindow w;
        w.resize(1500, 950);
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QVERIFY(!w.theoremChart()->isVisible());
        w.lossChart()->setTheoremChartShown(true);
        QVERIFY(w.theoremChart()->isVisible());
        QVERIFY(w.controller()->config().sampling.gradNormEvery > 0);
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QCOMPARE(w.theoremChart()->series().size(), TheoremChart::LineCount);
        QVERIFY(w.theoremChart()->series()[TheoremChart::Bound]->count() > 10);
        QVERIFY(w.theoremChart()->width() >= 240);
        QTest::qWait(200);                                         // let the charts lay out
        const QByteArray grab = qgetenv("PIPELENS_THEOREM_GRAB");  // a picture to look at
        if (!grab.isEmpty()) w.grab().save(QString::fromLocal8Bit(grab));
        w.lossChart()->setTheoremChartShown(false);
        QVERIFY(!w.theoremChart()->isVisible());
    }
};

QTEST_MAIN(TestTheoremChart)
#include "tst_theorem_chart.moc"

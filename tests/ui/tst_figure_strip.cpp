// The figure strip's axes as drawn: every tick label names the value its grid line is at (read
// back from the rendered chart: label text against the grid line beside it), whole-number
// quantities get whole-number ticks, and the max-delay-vs-S figure reaches the current S.
#include <QAbstractBarSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QGraphicsLineItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QLineSeries>
#include <QSignalSpy>
#include <QStackedBarSeries>
#include <QTest>
#include <QValueAxis>
#include <cmath>
#include <functional>

#include "charts/figure_strip.hpp"
#include "controllers/experiment_controller.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

QList<QGraphicsItem*> itemsUnder(QGraphicsItem* root) {
    QList<QGraphicsItem*> out;
    QList<QGraphicsItem*> stack{root};
    while (!stack.isEmpty()) {
        QGraphicsItem* it = stack.takeLast();
        out << it;
        stack << it->childItems();
    }
    return out;
}

// For one value axis of `chart` (Qt::Vertical: left; Qt::Horizontal: bottom), every tick label
// as drawn beside the value of the grid line it stands at. Problems (a label with no grid line
// beside it, a label that names another value than its line's, a fractional label) are appended
// to `problems`; returns how many labels were checked.
int checkTicks(QChart* chart, Qt::Orientation orientation, const QString& name,
               QStringList& problems) {
    const auto axes = chart->axes(orientation);
    if (axes.size() != 1) return 0;
    auto* axis = qobject_cast<QValueAxis*>(axes[0]);
    if (!axis) return 0;
    const QRectF plot = chart->plotArea();
    const bool vertical = orientation == Qt::Vertical;
    std::vector<double> lines;                       // positions in chart coordinates (y or x)
    std::vector<std::pair<double, QString>> labels;  // centre position, text
    for (QGraphicsItem* item : itemsUnder(chart)) {
        if (!item->isVisible()) continue;
        if (auto* line = dynamic_cast<QGraphicsLineItem*>(item)) {
            const QLineF l(line->mapToItem(chart, line->line().p1()),
                           line->mapToItem(chart, line->line().p2()));
            if (vertical && std::abs(l.dy()) < 0.5 && std::abs(l.dx()) > 0.9 * plot.width())
                lines.push_back(l.p1().y());
            if (!vertical && std::abs(l.dx()) < 0.5 && std::abs(l.dy()) > 0.9 * plot.height())
                lines.push_back(l.p1().x());
        } else if (auto* text = dynamic_cast<QGraphicsTextItem*>(item)) {
            if (text->toPlainText().isEmpty() || text->rotation() != 0.0) continue;
            const QRectF r = text->mapToItem(chart, text->boundingRect()).boundingRect();
            const bool beside =
                vertical
                    ? r.right() <= plot.left() + 1 && r.center().y() >= plot.top() - 6 &&
                          r.center().y() <= plot.bottom() + 6
                    : r.top() >= plot.bottom() - 1 && r.top() <= plot.bottom() + 12 &&
                          r.center().x() >= plot.left() - 6 && r.center().x() <= plot.right() + 6;
            if (beside)
                labels.emplace_back(vertical ? r.center().y() : r.center().x(),
                                    text->toPlainText());
        }
    }
    const double length = vertical ? plot.height() : plot.width();
    const double perPixel = (axis->max() - axis->min()) / length;
    int checked = 0;
    for (const auto& [at, text] : labels) {
        bool numeric = false;
        const double shown = text.toDouble(&numeric);
        if (!numeric) continue;  // the axis title
        ++checked;
        if (shown != std::round(shown))
            problems << QStringLiteral("%1: fractional label %2").arg(name, text);
        double nearest = -1e9;
        for (double l : lines) {
            if (std::abs(l - at) < std::abs(nearest - at)) nearest = l;
        }
        if (std::abs(nearest - at) > 3.0) {
            problems << QStringLiteral("%1: label %2 has no grid line beside it").arg(name, text);
            continue;
        }
        const double value = vertical ? axis->min() + (plot.bottom() - nearest) * perPixel
                                      : axis->min() + (nearest - plot.left()) * perPixel;
        // Within 1.5 pixels of the labelled value (a line at 34.5 labelled 35 is off by 0.5 of
        // a unit, several pixels at this size).
        if (std::abs(value - shown) > 1.5 * perPixel)
            problems << QStringLiteral("%1: label %2 at a grid line of value %3")
                            .arg(name, text)
                            .arg(value);
    }
    return checked;
}

// A run of `methods` with S = `stages` and `change` applied to the config.
SnapshotPtr runWith(int stages, const std::vector<MethodSpec>& methods,
                    const std::function<void(ExperimentConfig&)>& change = {}) {
    ExperimentController c;
    const QString error = c.tryModify([&](ExperimentConfig& x) {
        x.stages = stages;
        x.methods = methods;
        if (change) change(x);
    });
    if (!error.isEmpty()) {
        qWarning() << error;
        return nullptr;
    }
    c.runNow();
    if (!test::waitForCurrentResults(c)) return nullptr;
    return c.latest();
}

MethodSpec method(Method m, double step = 0.1) {
    MethodSpec spec;
    spec.method = m;
    spec.step.value = step;
    return spec;
}

// The series of `chart` with their axes, all attached to the chart's one horizontal and one
// vertical axis (empty when so), and ranges covering each series' points.
QString axesProblems(QChart* chart) {
    QStringList problems;
    const auto hs = chart->axes(Qt::Horizontal);
    const auto vs = chart->axes(Qt::Vertical);
    if (hs.size() != 1 || vs.size() != 1)
        return QStringLiteral("%1 axes").arg(chart->axes().size());
    auto* y = qobject_cast<QValueAxis*>(vs[0]);
    for (QAbstractSeries* series : chart->series()) {
        const auto attached = series->attachedAxes();
        if (attached.size() != 2 || !attached.contains(hs[0]) || !attached.contains(vs[0]))
            problems << series->name() + ": not on the chart's axes";
        if (auto* xy = qobject_cast<QXYSeries*>(series)) {
            auto* x = qobject_cast<QValueAxis*>(hs[0]);
            for (const QPointF& p : xy->points()) {
                if ((x && (p.x() < x->min() || p.x() > x->max())) ||
                    (y && (p.y() < y->min() || p.y() > y->max())))
                    problems << QStringLiteral("%1: point (%2, %3) outside the axes")
                                    .arg(series->name())
                                    .arg(p.x())
                                    .arg(p.y());
            }
        }
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(series)) {
            for (QBarSet* set : bars->barSets()) {
                for (int i = 0; i < set->count(); ++i) {
                    double value = set->at(i);
                    if (qobject_cast<QStackedBarSeries*>(series)) value = 100.0;  // stacked: 100 %
                    if (y && value > y->max())
                        problems << QStringLiteral("%1: bar %2 above the axis")
                                        .arg(set->label())
                                        .arg(value);
                }
            }
        }
    }
    return problems.join("; ");
}

SnapshotPtr runAt(int stages) {
    ExperimentController c;
    if (!c.tryModify([&](ExperimentConfig& x) { x.stages = stages; }).isEmpty()) return nullptr;
    c.runNow();
    if (!test::waitForCurrentResults(c)) return nullptr;
    return c.latest();
}

}  // namespace

class TestFigureStrip : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void tickLabelsNameTheirGridLines_data() {
        QTest::addColumn<int>("stages");
        QTest::newRow("S=2") << 2;
        QTest::newRow("S=3") << 3;
        QTest::newRow("S=5") << 5;
        QTest::newRow("S=8") << 8;
        QTest::newRow("S=16") << 16;
    }
    void tickLabelsNameTheirGridLines() {
        QFETCH(int, stages);
        const SnapshotPtr s = runAt(stages);
        QVERIFY(s);
        FigureStrip strip;
        strip.resize(1400, 420);  // tall: a pixel is a small share of a unit
        strip.setSnapshot(s);
        strip.show();
        QVERIFY(QTest::qWaitForWindowExposed(&strip));
        QTest::qWait(50);
        QStringList problems;
        int checked = 0;
        const QStringList names = {"utilization", "delays", "stash", "max delay vs S"};
        for (int i = 0; i < strip.charts().size(); ++i) {
            QChart* chart = strip.charts()[i]->chart();
            checked += checkTicks(chart, Qt::Vertical, names[i] + " y", problems);
            checked += checkTicks(chart, Qt::Horizontal, names[i] + " x", problems);
        }
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        QVERIFY2(checked >= 12, qPrintable(QString::number(checked)));  // the labels were found
    }

    // Up to S = 32 before; now the figure runs to the current S, with its measured point (and
    // the current S's dot) once the worker has computed it.
    // Several LocalSGD runs are named by what tells them apart (H), not "LSGD #1"; two RPD by
    // δ; the stage axis of the stash figure ends at S.
    void methodsOfOneKindAreNamedByTheirParameters() {
        ExperimentController c;
        QCOMPARE(c.tryModify([](ExperimentConfig& x) {
            x.stages = 16;
            x.data.rows = 320;
            x.budget.epochs = 1;
            MethodSpec lsgd;
            lsgd.method = Method::LocalSgd;
            lsgd.step.value = 0.1;
            x.methods.clear();
            for (int h : {2, 5}) {
                lsgd.localSteps = h;
                x.methods.push_back(lsgd);
            }
            MethodSpec rpd = lsgd;
            rpd.method = Method::RandomizedPipeDream;
            for (long long d : {8, 60}) {
                rpd.delta = d;
                x.methods.push_back(rpd);
            }
        }),
                 QString());
        c.runNow();
        QVERIFY(test::waitForCurrentResults(c));
        FigureStrip strip;
        strip.setSnapshot(c.latest());
        auto* bars =
            qobject_cast<QBarCategoryAxis*>(strip.charts()[0]->chart()->axes(Qt::Horizontal)[0]);
        QVERIFY(bars);
        QCOMPARE(bars->categories(), QStringList({"LSGD H=2", "LSGD H=5"}));
        const QString table = strip.numbersTable()->text();
        QVERIFY2(table.contains("LSGD H=2") && table.contains("RPD δ=60"), qPrintable(table));
        QVERIFY(!table.contains("#1"));
        auto* stage =
            qobject_cast<QValueAxis*>(strip.charts()[2]->chart()->axes(Qt::Horizontal)[0]);
        QVERIFY(stage);
        QCOMPARE(stage->min(), 1.0);
        QCOMPARE(stage->max(), 16.0);
    }

    void theMaxDelayAgainstStagesReachesTheCurrentS() {
        for (int S : {48, 100}) {
            ExperimentController c;
            QSignalSpy plan(&c, &ExperimentController::planReady);
            QCOMPARE(c.tryModify([&](ExperimentConfig& x) {
                x.data.dim = 128;  // S <= d
                x.stages = S;
            }),
                     QString());
            QVERIFY(plan.count() > 0 || plan.wait(test::timeout(30000)));
            FigureStrip strip;
            strip.setSnapshot(c.planned());
            const QString key = QStringLiteral("S=%1").arg(S);
            // Beyond S = 32 the measured points come from a worker thread; the formula at once.
            QCOMPARE(strip.value("formula max delay vs S", key),
                     static_cast<double>(pipeDreamMaxDelayFormula(S)));
            QTRY_COMPARE_WITH_TIMEOUT(strip.value("max delay vs S", key),
                                      static_cast<double>(pipeDreamDelayStats(S).max),
                                      test::timeout(20000));
            QCOMPARE(strip.value("formula max delay vs S", key),
                     static_cast<double>(pipeDreamMaxDelayFormula(S)));
            auto* x =
                qobject_cast<QValueAxis*>(strip.charts()[3]->chart()->axes(Qt::Horizontal)[0]);
            QVERIFY(x);
            QVERIFY2(x->max() >= S, qPrintable(QString::number(x->max())));
            auto* y = qobject_cast<QValueAxis*>(strip.charts()[3]->chart()->axes(Qt::Vertical)[0]);
            QVERIFY(y->max() >= static_cast<double>(pipeDreamMaxDelayFormula(S)));
            int dots = 0;
            for (QAbstractSeries* series : strip.charts()[3]->chart()->series())
                dots += series->type() == QAbstractSeries::SeriesTypeScatter ? 1 : 0;
            QCOMPARE(dots, 1);
            c.cancel();
        }
    }

    // Issue 29 §3: under the truncate budget the Run lengths table shows what ran: the
    // microbatches that finished (hand count: those whose first-stage backward, their last
    // operation, ended before the cut), the uncut timeline's N, the slots run, and the cut; the
    // closed form is named as the uncut run's.
    void runLengthsUnderTruncateShowWhatRan() {
        const auto truncate = [](ExperimentConfig& x) {
            x.budget.totalSlots = 18;
            x.budget.rule = BudgetRule::Truncate;
        };
        MethodSpec lsgd = method(Method::LocalSgd);
        lsgd.localSteps = 1;
        const std::vector<MethodSpec> methods = {method(Method::PipeDream), lsgd};
        const SnapshotPtr s = runWith(4, methods, truncate);
        QVERIFY(s);
        FigureStrip strip;
        strip.setSnapshot(s);
        const QString table = strip.numbersTable()->text();
        QVERIFY2(table.contains("cut at slot 18 (truncate)"), qPrintable(table));
        QVERIFY2(table.contains("finished"), qPrintable(table));
        QVERIFY2(table.contains("PD uncut run: 2N + 2(S−1)"), qPrintable(table));
        for (size_t i = 0; i < s->runs().size(); ++i) {
            const Timeline& tl = *s->result(i).timeline;
            int finished = 0;
            for (const TimelineCell& c : tl.cells)
                finished += c.stage == 0 && c.op == OpKind::Backward && c.endSlot < 18 ? 1 : 0;
            QCOMPARE(strip.value("microbatches finished", s->label(i)), double(finished));
            QCOMPARE(strip.value("microbatches planned", s->label(i)),
                     double(tl.params.microbatches));
            QCOMPARE(strip.value("slots", s->label(i)), 18.0);
            QVERIFY(finished < tl.params.microbatches);
        }
        // PD, S = 4, 18 slots: microbatches 0-5 finish (docs/config.md); LocalSGD H = 1: one
        // round of 14 slots, 4 microbatches.
        QCOMPARE(strip.value("microbatches finished", s->label(0)), 6.0);
        QCOMPARE(strip.value("microbatches finished", s->label(1)), 4.0);
        QCOMPARE(strip.value("cut at slot", QString()), 18.0);

        // The same under fit: no cut, no "finished" column, the closed form is the run's.
        const SnapshotPtr fit =
            runWith(4, methods, [](ExperimentConfig& x) { x.budget.totalSlots = 18; });
        QVERIFY(fit);
        strip.setSnapshot(fit);
        const QString fitTable = strip.numbersTable()->text();
        QVERIFY2(!fitTable.contains("cut at") && !fitTable.contains("uncut") &&
                     fitTable.contains("PD: 2N + 2(S−1) = <b>18</b>"),
                 qPrintable(fitTable));
        QVERIFY(std::isnan(strip.value("cut at slot", QString())));
    }

    // Under the reach budget each pipeline run is whole: no cut, no "finished" column; PD at
    // S = 4 runs the smallest N with 2N + 6 >= 19, N = 7, 20 slots; LocalSGD (H = 1) its own
    // smallest N reaching 19 (found here by building each N's timeline); the line says so.
    void runLengthsUnderReachAreWholeRuns() {
        MethodSpec lsgd = method(Method::LocalSgd);
        lsgd.localSteps = 1;
        const std::vector<MethodSpec> methods = {method(Method::PipeDream), lsgd};
        const SnapshotPtr s = runWith(4, methods, [](ExperimentConfig& x) {
            x.budget.totalSlots = 19;
            x.budget.rule = BudgetRule::Reach;
        });
        QVERIFY(s);
        FigureStrip strip;
        strip.setSnapshot(s);
        const QString table = strip.numbersTable()->text();
        QVERIFY2(table.contains("reach: each pipeline method runs, whole, the smallest N whose "
                                "run lasts at least 19 slots"),
                 qPrintable(table));
        QVERIFY2(!table.contains("cut at") && !table.contains("finished"), qPrintable(table));
        QVERIFY2(table.contains("PD: 2N + 2(S−1) = <b>20</b>"), qPrintable(table));
        QCOMPARE(strip.value("reach budget", QString()), 19.0);
        QCOMPARE(strip.value("slots", s->label(0)), 20.0);
        QCOMPARE(strip.value("microbatches planned", s->label(0)), 7.0);
        QCOMPARE(strip.value("microbatches finished", s->label(0)), 7.0);
        ScheduleParams local;
        local.kind = ScheduleKind::LocalSgd;
        local.stages = 4;
        local.localSteps = 1;
        local.microbatches = 1;
        while (buildTimeline(local).totalSlots < 19) ++local.microbatches;
        QCOMPARE(strip.value("microbatches planned", s->label(1)), double(local.microbatches));
        QCOMPARE(strip.value("slots", s->label(1)), double(buildTimeline(local).totalSlots));
        QVERIFY(strip.value("slots", s->label(1)) >= 19.0);
    }

    // While the playback cursor is before the run's end, the figures of the run say that they
    // describe the whole run; at the end (or with no cursor) they do not need to.
    void theStripSaysItDescribesTheWholeRun() {
        const SnapshotPtr s = runAt(4);
        QVERIFY(s);
        FigureStrip strip;
        strip.setSnapshot(s);
        const auto noted = [&](int i) {
            return strip.charts()[i]->chart()->title().contains("whole run");
        };
        for (int i = 0; i < 4; ++i) QVERIFY(!noted(i));
        strip.setCursorSlot(s->totalSlots / 2);
        QVERIFY(strip.describesWholeRunNote());
        for (int i = 0; i < 3; ++i)
            QVERIFY2(noted(i), qPrintable(strip.charts()[i]->chart()->title()));
        QVERIFY(!noted(3));    // PipeDream's delays against S are not this run's
        strip.setSnapshot(s);  // a new snapshot keeps the cursor's note
        QVERIFY(noted(0));
        strip.setCursorSlot(s->totalSlots);
        for (int i = 0; i < 4; ++i) QVERIFY(!noted(i));
        strip.setCursorSlot(-1);
        QVERIFY(!noted(0));
    }

    // Sequential SGD and fill-drain with G = 1 hold one copy per stage: their "Peak stashed
    // copies" lines coincide. Each stays visible (the first drawn wider under the second) and
    // the legend says which equals which.
    void coincidingStashLinesStayVisible() {
        MethodSpec fd = method(Method::FillDrain);
        fd.flushGroup = 1;
        const SnapshotPtr s = runWith(4, {method(Method::Sgd), fd, method(Method::PipeDream)});
        QVERIFY(s);
        QCOMPARE(s->result(0).timeline->peakStash, s->result(1).timeline->peakStash);
        FigureStrip strip;
        strip.setSnapshot(s);
        QList<QLineSeries*> lines;
        for (QAbstractSeries* series : strip.charts()[2]->chart()->series())
            lines << qobject_cast<QLineSeries*>(series);
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[1]->name().contains("(= SGD)"), qPrintable(lines[1]->name()));
        QVERIFY(!lines[0]->name().contains("(="));
        QVERIFY(!lines[2]->name().contains("(="));  // PD's differ
        QVERIFY(lines[0]->pen().widthF() > lines[1]->pen().widthF() + 1.0);
        QCOMPARE(lines[1]->pen().style(), Qt::DashLine);
        QCOMPARE(lines[0]->pen().style(), Qt::SolidLine);
        QCOMPARE(lines[2]->pen().widthF(), lines[1]->pen().widthF());
    }

    // A new snapshot with another S and other methods: before any event is processed (no
    // frame can be painted in between) every chart's series sit on its new axes, the bars'
    // categories are the new methods and the ranges cover the new values.
    void newSnapshotsComeWithTheirAxes() {
        const SnapshotPtr small = runAt(4);
        MethodSpec lsgd = method(Method::LocalSgd);
        lsgd.localSteps = 2;
        MethodSpec lsgd5 = lsgd;
        lsgd5.localSteps = 5;
        const SnapshotPtr other = runWith(12, {lsgd, lsgd5, method(Method::FillDrain)});
        QVERIFY(small && other);
        FigureStrip strip;
        strip.resize(1400, 300);
        strip.setSnapshot(small);
        strip.show();
        QVERIFY(QTest::qWaitForWindowExposed(&strip));
        strip.setSnapshot(other);
        for (QChartView* v : strip.charts()) {
            const QString problems = axesProblems(v->chart());
            QVERIFY2(problems.isEmpty(), qPrintable(v->chart()->title() + ": " + problems));
        }
        auto* bars =
            qobject_cast<QBarCategoryAxis*>(strip.charts()[0]->chart()->axes(Qt::Horizontal)[0]);
        QVERIFY(bars);
        QCOMPARE(bars->categories(), QStringList({"LSGD H=2", "LSGD H=5", "FD"}));
        auto* stage =
            qobject_cast<QValueAxis*>(strip.charts()[2]->chart()->axes(Qt::Horizontal)[0]);
        QCOMPARE(stage->max(), 12.0);
        auto* delays =
            qobject_cast<QBarCategoryAxis*>(strip.charts()[1]->chart()->axes(Qt::Horizontal)[0]);
        QVERIFY(delays);
        QCOMPARE(delays->categories(), QStringList({"max", "mean"}));  // fill-drain's only
        // The delay axes say their unit.
        QCOMPARE(strip.charts()[1]->chart()->axes(Qt::Vertical)[0]->titleText(),
                 QStringLiteral("block updates"));
        QCOMPARE(strip.charts()[3]->chart()->axes(Qt::Vertical)[0]->titleText(),
                 QStringLiteral("block updates"));
    }
};

QTEST_MAIN(TestFigureStrip)
#include "tst_figure_strip.moc"

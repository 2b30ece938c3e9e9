// The figure strip's axes as drawn: every tick label names the value its grid line is at (read
// back from the rendered chart: label text against the grid line beside it), whole-number
// quantities get whole-number ticks, and the max-delay-vs-S figure reaches the current S.
#include <QBarCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QGraphicsLineItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>
#include <QValueAxis>
#include <cmath>

#include "charts/figure_strip.hpp"
#include "controllers/experiment_controller.hpp"
#include "schedule/delays.hpp"
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
};

QTEST_MAIN(TestFigureStrip)
#include "tst_figure_strip.moc"

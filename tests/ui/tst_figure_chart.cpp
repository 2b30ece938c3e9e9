// The paper's figures as charts (ui/figures): the axes fit the data they show.
#include <QApplication>
#include <QChart>
#include <QLogValueAxis>
#include <QValueAxis>
#include <QtTest>
#include <cmath>
#include <memory>
#include <tuple>

#include "figure_chart.hpp"

using namespace pipelens;

class TestFigureChart : public QObject {
    Q_OBJECT

  private slots:
    // E4's S = 2 ... 128 on a log axis: the axis must end near 128, not at the next decade
    // (it used to run to 1000, leaving most of the plot empty).
    void logStageAxisHugsTheData() {
        FigurePanel panel{"figure", "E4", "stages S", "final f", true, true, {}};
        FigureSeries s{"PipeDream",
                       {2, 4, 8, 16, 32, 64, 128},
                       {1e-2, 1e-2, 1e-2, 1e-2, 1e-2, 1e-2, 1e-2},
                       false,
                       true,
                       {}};
        panel.series.push_back(s);
        std::unique_ptr<QChart> chart(ui::buildFigureChart(panel));
        const auto axes = chart->axes(Qt::Horizontal);
        QCOMPARE(axes.size(), qsizetype(1));
        auto* x = qobject_cast<QLogValueAxis*>(axes.first());
        QVERIFY(x);
        QVERIFY2(x->max() >= 128 && x->max() < 2 * 128, qPrintable(QString::number(x->max())));
        QVERIFY2(x->min() <= 2 && x->min() > 1, qPrintable(QString::number(x->min())));
        QCOMPARE(x->base(), 2.0);  // ticks at 2, 4, ..., 128: the values of S
    }

    // Linear axes round out to a step of 1, 2, 2.5 or 5 x 10^k in 4 to 10 intervals, the step
    // that leaves the least empty space, the finer one on a tie.
    void linearTicksHugTheData() {
        const auto check = [](double lo, double hi, double wantLo, double wantHi, int wantCount) {
            const ui::LinearTicks t = ui::linearTicks(lo, hi);
            QVERIFY2(std::abs(t.lo - wantLo) < 1e-9 && std::abs(t.hi - wantHi) < 1e-9 &&
                         t.count == wantCount,
                     qPrintable(QString("[%1, %2] -> [%3, %4] in %5 ticks")
                                    .arg(lo)
                                    .arg(hi)
                                    .arg(t.lo)
                                    .arg(t.hi)
                                    .arg(t.count)));
        };
        check(0, 2080, 0, 2250, 10);    // steps of 250 (200 would need 11 intervals)
        check(0, 1230, 0, 1250, 6);     // 250 leaves 20 empty, 200 would leave 170
        check(2.5, 4.2, 2.5, 4.25, 8);  // 0.25 leaves 0.05, 0.2 would leave 0.1
        check(0, 10, 0, 10, 11);        // 1, 2 and 2.5 fit exactly: the finest
        check(-3, 7.5, -4, 8, 7);       // steps of 2
        check(1e-3, 1.7e-3, 1e-3, 1.7e-3, 8);
    }

    // E5: 2,080 slots and losses from 4.2 to 2.5 on linear axes. The x axis used to run to 3,000
    // (QValueAxis::applyNiceNumbers), leaving almost a third of the plot empty.
    void linearAxesHugTheData() {
        FigurePanel panel{"figure", "E5", "simulated time (slots)", "training loss", false,
                          false,    {}};
        panel.series.push_back(FigureSeries{
            "PipeDream", {0, 520, 1040, 1560, 2080}, {4.2, 3.1, 2.8, 2.6, 2.5}, false, true, {}});
        std::unique_ptr<QChart> chart(ui::buildFigureChart(panel));
        for (const auto& [orientation, lo, hi] :
             {std::tuple{Qt::Horizontal, 0.0, 2080.0}, std::tuple{Qt::Vertical, 2.5, 4.2}}) {
            const auto axes = chart->axes(orientation);
            QCOMPARE(axes.size(), qsizetype(1));
            auto* a = qobject_cast<QValueAxis*>(axes.first());
            QVERIFY(a);
            const double step = (a->max() - a->min()) / (a->tickCount() - 1);
            const QString range =
                QString("[%1, %2], %3 ticks").arg(a->min()).arg(a->max()).arg(a->tickCount());
            QVERIFY2(a->min() <= lo && a->min() > lo - step, qPrintable(range));
            QVERIFY2(a->max() >= hi && a->max() < hi + step, qPrintable(range));
            // At most an eighth of the data's span left empty at either end, in 5 to 11 ticks
            // (applyNiceNumbers gave [0, 3000] in 4 ticks and [2.5, 4.5] in 5).
            QVERIFY2(lo - a->min() <= (hi - lo) / 8 && a->max() - hi <= (hi - lo) / 8,
                     qPrintable(range));
            QVERIFY2(a->tickCount() >= 5 && a->tickCount() <= 11, qPrintable(range));
        }
    }
};

QTEST_MAIN(TestFigureChart)
#include "tst_figure_chart.moc"

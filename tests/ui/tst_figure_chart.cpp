// The paper's figures as charts (ui/figures): the axes fit the data they show.
#include <QApplication>
#include <QChart>
#include <QLogValueAxis>
#include <QtTest>
#include <memory>

#include "figure_chart.hpp"

using namespace pipelens;

class TestFigureChart : public QObject {
    Q_OBJECT

private slots:
    // E4's S = 2 ... 128 on a log axis: the axis must end near 128, not at the next decade
    // (it used to run to 1000, leaving most of the plot empty).
    void logStageAxisHugsTheData() {
        FigurePanel panel{"figure", "E4", "stages S", "final f", true, true, {}};
        FigureSeries s{"PipeDream", {2, 4, 8, 16, 32, 64, 128}, {1e-2, 1e-2, 1e-2, 1e-2, 1e-2, 1e-2, 1e-2},
                       false, true, {}};
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
};

QTEST_MAIN(TestFigureChart)
#include "tst_figure_chart.moc"

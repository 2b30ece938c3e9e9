// MemoryChart: one stacked bar per stage (or device) of the chosen method, the memory budget's
// red bars and verdict, the methods over it named, the waiting state, and in the window: the
// view beside the Gantt chart follows its method and a change of S at once.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QImage>
#include <QtTest>
#include <memory>

#include "charts/gantt_chart.hpp"
#include "charts/memory_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controls/eliding_label.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/objective_cache.hpp"
#include "main_window.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

constexpr QRgb kOverWeights = 0xffb71c1c;  // the chart's red for weights over the budget

// PD, 1F1B (M = 8) and 2BW planned at S = 4 (and imports where asked): schedule views, no run.
SnapshotPtr planned(const std::vector<MethodSpec>& extra = {}, int stages = 4) {
    ExperimentConfig c = loadPreset("default").config;
    c.stages = stages;
    MethodSpec pd = c.methods.front();
    pd.label.clear();
    MethodSpec oneF = pd;
    oneF.method = Method::OneFOneB;
    oneF.flushGroup = 8;
    MethodSpec twoBw = pd;
    twoBw.method = Method::TwoBw;
    c.methods = {pd, oneF, twoBw};
    for (const MethodSpec& m : extra) c.methods.push_back(m);
    auto s = std::make_shared<RunSnapshot>();
    s->experiment = plannedViews(c, *prepareObjective(c));
    s->planOnly = true;
    deriveRunViews(*s);
    return s;
}

int redPixels(MemoryChart& chart) {
    const QImage image = chart.grab().toImage().convertToFormat(QImage::Format_RGB32);
    int red = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if ((image.pixel(x, y) | 0xff000000) == kOverWeights) ++red;
    return red;
}

}  // namespace

class TestMemoryChart : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { test::isolateSettings(); }

    void barsAreTheMethodsStages() {
        MemoryChart chart;
        chart.resize(360, 240);
        chart.setSnapshot(planned(), 1);  // 1F1B, M = 8
        QVERIFY(!chart.perDevice());
        QCOMPARE(static_cast<int>(chart.bars().size()), 4);
        for (int s = 0; s < 4; ++s) {
            const auto& b = chart.bars()[static_cast<std::size_t>(s)];
            QCOMPARE(b.label, QString::number(s + 1));  // as the Gantt chart's lanes
            QCOMPARE(b.weightVersions, 1);
            QCOMPARE(b.activationCount, 4 - s);  // min(S - s, M)
            QCOMPARE(b.total(), 1.0 + (4 - s));
        }
        chart.setSnapshot(planned(), 2);  // 2BW: two versions
        for (const auto& b : chart.bars()) QCOMPARE(b.weightVersions, 2);
        QVERIFY(chart.findChild<ElidingLabel*>("memoryTitle")->fullText().contains("2BW"));
    }

    void aBudgetMarksTheStagesAndMethodsOverIt() {
        MemoryChart chart;
        chart.resize(360, 240);
        chart.show();
        chart.setSnapshot(planned(), 1);
        QVERIFY(chart.overBudget().empty());
        QCOMPARE(chart.verdict(), QString());
        QCOMPARE(redPixels(chart), 0);
        // 1F1B holds 5 units on stage 1, 4 on stage 2 (from 1, as on screen); PD and 2BW more.
        chart.budgetField()->setValue(4.5);
        QCOMPARE(chart.overBudget(), std::vector<int>{0});
        QCOMPARE(chart.verdict(), QStringLiteral("exceeds the budget of 4.5 units on stage 1"));
        QVERIFY(redPixels(chart) > 100);
        const QStringList over = chart.methodsOverBudget();
        QCOMPARE(over.size(), 3);
        const QString summary = chart.summaryText();
        const QString named = summary.mid(summary.indexOf("Over the budget: "));
        QVERIFY2(named.size() < summary.size(), qPrintable(summary));
        for (const QString& label : over)
            QVERIFY2(named.contains(label.toHtmlEscaped()), qPrintable(summary));
        QVERIFY(chart.summaryText().contains("exceeds the budget of 4.5 units on stage 1"));
        chart.setBudget(3.5);
        QCOMPARE(chart.overBudget(), (std::vector<int>{0, 1}));
        QVERIFY(chart.verdict().endsWith("on stages 1, 2"));
        // PD peaks at 4 copies + 4 activations = 8: within 8, every method fits.
        chart.setBudget(8.0);
        QVERIFY(chart.overBudget().empty());
        QVERIFY2(chart.methodsOverBudget().isEmpty(), qPrintable(chart.summaryText()));
        QVERIFY(chart.summaryText().contains("All within the budget"));
        QCOMPARE(redPixels(chart), 0);
        chart.setBudget(7.9);
        QVERIFY(chart.methodsOverBudget().contains(planned()->label(0)));
        QVERIFY(!chart.methodsOverBudget().contains(planned()->label(1)));
        chart.setBudget(0);  // none
        QVERIFY(chart.methodsOverBudget().isEmpty());
        QCOMPARE(chart.budgetField()->text(), QStringLiteral("none"));
    }

    void aDeviceHoldingSeveralStagesIsOneBar() {
        MethodSpec imported;
        imported.method = Method::Imported;
        imported.scheduleFile = PIPELENS_SOURCE_DIR "/examples/schedules/interleaved_s4_m8_v2.csv";
        const SnapshotPtr s = planned({imported}, 8);
        MemoryChart chart;
        chart.resize(360, 240);
        chart.setSnapshot(s, 3);
        QVERIFY(chart.perDevice());
        QCOMPARE(static_cast<int>(chart.bars().size()), 4);
        // Rank r (device r + 1) holds stages r and r + 4 (r + 1 and r + 5 on screen): two weight
        // versions, 2 (3 - r) + 5 activations.
        for (int r = 0; r < 4; ++r) {
            QCOMPARE(chart.bars()[static_cast<std::size_t>(r)].weightVersions, 2);
            QCOMPARE(chart.bars()[static_cast<std::size_t>(r)].activationCount, 2 * (3 - r) + 5);
            QCOMPARE(chart.bars()[static_cast<std::size_t>(r)].stages,
                     QStringLiteral("%1, %2").arg(r + 1).arg(r + 5));
        }
        chart.setBudget(12);
        QCOMPARE(chart.verdict(), QStringLiteral("exceeds the budget of 12 units on device 1"));
        QVERIFY(chart.findChild<ElidingLabel*>("memoryTitle")->fullText().contains("per device"));
    }

    void waitingSaysSoAndShowsNoEarlierBars() {
        MemoryChart chart;
        chart.resize(360, 240);
        chart.setSnapshot(planned(), 0);
        QVERIFY(!chart.bars().empty());
        chart.showPending(QStringLiteral("Planning the language model's schedule…"));
        QVERIFY(chart.pending());
        QVERIFY(chart.bars().empty());
        QVERIFY(chart.findChild<ElidingLabel*>("memoryTitle")->fullText().contains("waiting"));
        QCOMPARE(chart.emptyText(), QStringLiteral("Planning the language model's schedule…"));
        chart.setSnapshot(planned(), 0);
        QVERIFY(!chart.pending());
        QCOMPARE(static_cast<int>(chart.bars().size()), 4);
    }

    void theWindowShowsTheGanttMethodsMemoryAndFollowsS() {
        MainWindow w;
        w.show();
        QVERIFY(w.waitForResults(test::timeout(60000)));
        MemoryChart* memory = w.memoryChart();
        QVERIFY(memory->isVisible());
        const int S = w.controller()->config().stages;
        QCOMPARE(static_cast<int>(memory->bars().size()), S);
        QVERIFY(memory->findChild<ElidingLabel*>("memoryTitle")
                    ->fullText()
                    .contains(w.ganttMethodField()->currentText()));
        // Beside the Gantt chart: level with it, to its right.
        const QPoint gantt = w.gantt()->mapTo(&w, QPoint(0, 0));
        const QPoint mem = memory->mapTo(&w, QPoint(0, 0));
        QVERIFY(mem.x() > gantt.x() + w.gantt()->width() / 2);
        QVERIFY(qAbs(mem.y() - gantt.y()) < w.gantt()->height());
        // Another S: the bars are the new pipeline's before the run ends.
        QVERIFY(w.controller()->tryModify([](ExperimentConfig& c) { c.stages = 6; }).isEmpty());
        QVERIFY(QTest::qWaitFor([&] { return memory->bars().size() == 6; }, 5000));
        QVERIFY(w.waitForResults(test::timeout(60000)));
        QCOMPARE(static_cast<int>(memory->bars().size()), 6);
    }
};

QTEST_MAIN(TestMemoryChart)
#include "tst_memory_chart.moc"

// One multiplier for every method's γ: a fixed γ times 2^k exactly, a step-size grid's exponents
// shifted by k, back to the start after the opposite shift.
#include <QtTest>

#include "experiment/config/config.hpp"
#include "experiment/step_size/step_scale.hpp"

using namespace pipelens;

class TestStepScale : public QObject {
    Q_OBJECT
  private slots:
    void everyMethodIsScaledByThePowerOfTwo() {
        ExperimentConfig c = defaultExperiment();
        MethodSpec grid;
        grid.method = Method::LocalSgd;
        grid.step.grid = true;
        grid.step.gridMin = -8;
        grid.step.gridMax = 0;
        c.methods.push_back(grid);
        const ExperimentConfig before = c;
        scaleStepSizes(c, 2);
        for (size_t i = 0; i + 1 < c.methods.size(); ++i) {
            QCOMPARE(c.methods[i].step.value, 4.0 * before.methods[i].step.value);
        }
        QCOMPARE(c.methods.back().step.gridMin, -6);
        QCOMPARE(c.methods.back().step.gridMax, 2);
        QCOMPARE(c.methods.back().step.value, before.methods.back().step.value);
        scaleStepSizes(c, -3);
        QCOMPARE(c.methods[0].step.value, before.methods[0].step.value / 2.0);
        scaleStepSizes(c, 1);
        for (size_t i = 0; i < c.methods.size(); ++i) {
            QCOMPARE(c.methods[i].step.value, before.methods[i].step.value);
            QCOMPARE(c.methods[i].step.gridMin, before.methods[i].step.gridMin);
            QCOMPARE(c.methods[i].step.gridMax, before.methods[i].step.gridMax);
        }
    }
};

QTEST_APPLESS_MAIN(TestStepScale)
#include "tst_step_scale.moc"

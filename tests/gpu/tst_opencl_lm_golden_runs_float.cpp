// Whole PD and LocalSGD runs in float on the OpenCL executor against the authors' own code
// (../shared/golden-lm), to the CPU engine's documented float tolerances
// (docs/language-model.md). Double: tst_opencl_lm_golden_runs_double.cpp.
#include <QtTest>

#include <memory>
#include <string>
#include <vector>

#include "core/lm_golden_case.hpp"
#include "core/lm_golden_run.hpp"
#include "lm_opencl_executor.hpp"
#include "opencl_test_support.hpp"

using namespace pipelens;

namespace {

std::unique_ptr<LmReplay> runOnOpenCl(const std::string& name, LmPrecision precision) {
    return golden_lm::runPipeline(name, precision, true,
                                  gpu::lmOpenClExecutorFactory(opencl_test::context()));
}

void addCases() {
    QTest::addColumn<QString>("name");
    for (const auto& n : golden_lm::cases()) QTest::newRow(n.c_str()) << QString::fromStdString(n);
}

}  // namespace

class TestOpenClLmGoldenRunsFloat : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    // float: tolerances of the CPU engine's float runs (docs/language-model.md).
    void wholeRunsMatchTheAuthorsInFloat_data() { addCases(); }
    void wholeRunsMatchTheAuthorsInFloat() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const auto run = runOnOpenCl(n, LmPrecision::Float);
        QVERIFY(run->result().finished);
        const golden_lm::PipelineErrors e = golden_lm::pipelineErrors(n, *run);
        const double perSlot = e.perSlot, fullSlot = e.fullSlot, wFinal = e.wFinal;
        qInfo("%s OpenCL float: objective_per_slot %.2g, full per slot %.2g, w_final %.2g",
              n.c_str(), perSlot, fullSlot, wFinal);
        QVERIFY(perSlot <= 1e-5);
        QVERIFY(fullSlot <= 1e-5);
        QVERIFY(wFinal <= 1e-5);
    }
};

QTEST_APPLESS_MAIN(TestOpenClLmGoldenRunsFloat)
#include "tst_opencl_lm_golden_runs_float.moc"

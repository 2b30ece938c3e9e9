// Whole PD and LocalSGD runs in double on the OpenCL executor against the authors' own code
// (../shared/golden-lm): every logged curve, the full objective, w_final to 1e-9, the stash
// peaks. Float: tst_opencl_lm_golden_runs_float.cpp; the stages one by one:
// tst_opencl_lm_golden_stages.cpp.
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

class TestOpenClLmGoldenRunsDouble : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void wholeRunsMatchTheAuthorsInDouble_data() { addCases(); }
    void wholeRunsMatchTheAuthorsInDouble() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const auto run = runOnOpenCl(n, LmPrecision::Double);
        const RunResult& r = run->result();
        const LmLog& log = run->log();
        QVERIFY(r.finished);
        QVERIFY(!r.divergence.diverged);
        QCOMPARE(r.updates, golden_lm::caseJson(n)["block_updates"].get<long long>());
        const golden_lm::PipelineErrors e = golden_lm::pipelineErrors(n, *run);
        QVERIFY2(e.rowMismatch.isEmpty(), qPrintable(e.rowMismatch));
        qInfo(
            "%s OpenCL double: objective_per_slot %.2g, per_block_update %.2g, forward losses "
            "%.2g, full per slot %.2g, full per update %.2g, w_final %.2g",
            n.c_str(), e.perSlot, e.perUpdate, e.forwardLosses, e.fullSlot, e.fullUpdate, e.wFinal);
        for (double err : e.all()) QVERIFY(err <= 1e-9);
        // The stash depth the timeline predicts (SPEC section 3), as on the CPU.
        QCOMPARE(log.peakStashedWeights.size(), static_cast<std::size_t>(r.stages));
        for (int s = 0; s < r.stages; ++s) {
            QCOMPARE(log.peakStashedWeights[static_cast<std::size_t>(s)],
                     r.timeline->peakStash[static_cast<std::size_t>(s)]);
        }
    }
};

QTEST_APPLESS_MAIN(TestOpenClLmGoldenRunsDouble)
#include "tst_opencl_lm_golden_runs_double.moc"

// Randomized PipeDream on the language model on the OpenCL executor
// (gpu/lm_opencl_rpd_executor.hpp): with PipeDream's delays and order it reproduces the
// authors' PD runs (../shared/golden-lm) to 1e-9 in double; with drawn delays it follows the
// CPU executor's trajectory draw for draw (every per-update loss, the full objective per update,
// the held-out losses, the final weights, the versions held), in double and float; a huge step
// size is reported as diverged at the same update as on the CPU.
#include <QtTest>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/golden_case.hpp"
#include "core/lm_builtin_problem.hpp"
#include "core/lm_golden_case.hpp"
#include "core/lm_golden_run.hpp"
#include "lm_opencl_rpd_executor.hpp"
#include "opencl_test_support.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;

namespace {

LmRpdExecutorFactory onDevice() {
    return gpu::lmOpenClRpdExecutorFactory(opencl_test::context());
}

double curveError(const std::vector<double>& got, const std::vector<double>& want) {
    if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
    return golden_lm::curveRelError(got, want);
}

// The built-in corpus's model (S = 4, C = 32) on 3,000 characters: the full objective after
// every update stays cheap on PoCL.
std::shared_ptr<const CharTransformerProblem> smallProblem(LmPrecision precision) {
    return builtInProblem(precision, 3'000, 0.2);
}

std::vector<double> heldOut(const LmReplay& r) {
    std::vector<double> v;
    for (const auto& [k, loss] : r.log().heldOutLoss) v.push_back(loss);
    return v;
}

}  // namespace

class TestOpenClLmRpd : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void pipeDreamDelaysAndOrderReproduceTheAuthorsPd_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("lm-pd-S4") << "lm-pd-S4";
        QTest::newRow("lm-pd-S5-C12-heads3") << "lm-pd-S5-C12-heads3";
    }
    void pipeDreamDelaysAndOrderReproduceTheAuthorsPd() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const golden_lm::RpdAsPdErrors e = golden_lm::rpdAsPipeDream(n, onDevice());
        QVERIFY(e.finished);
        QCOMPARE(e.updates, e.expectedUpdates);
        qInfo("%s RPD on OpenCL (pd delays, pd order): w_final %.2g, losses %.2g", n.c_str(),
              e.wFinal, e.perUpdate);
        QVERIFY(e.wFinal <= 1e-9);
        QVERIFY(e.perUpdate <= 1e-9);
    }

    void drawnDelaysFollowTheCpuExecutor_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("precision");
        QTest::addColumn<double>("tolerance");
        // Float: the CPU engine's float tolerances (docs/language-model.md).
        for (auto [mode, label] :
             {std::pair{DelayMode::Uniform, "uniform"}, std::pair{DelayMode::Max, "max"}}) {
            QTest::newRow((std::string(label) + " double").c_str())
                << int(mode) << int(LmPrecision::Double) << 1e-9;
            QTest::newRow((std::string(label) + " float").c_str())
                << int(mode) << int(LmPrecision::Float) << 1e-5;
        }
    }
    void drawnDelaysFollowTheCpuExecutor() {
        QFETCH(int, mode);
        QFETCH(int, precision);
        QFETCH(double, tolerance);
        const auto problem = smallProblem(static_cast<LmPrecision>(precision));
        LmRpdConfig cfg;
        cfg.updates = 60;
        cfg.stepSize = 0.5;
        cfg.maxDelay = 5;
        cfg.delayMode = static_cast<DelayMode>(mode);
        cfg.seed = 7;
        cfg.options.fullObjectivePerUpdate = true;
        cfg.options.heldOutEvery = 20;
        auto cpu = makeLmRpdReplay(problem, cfg);
        auto cl = makeLmRpdReplay(problem, cfg, onDevice());
        cpu->runToEnd(7);
        cl->runToEnd(7);
        QVERIFY(cpu->result().finished);
        QVERIFY(cl->result().finished);
        const double perUpdate =
            curveError(cl->result().objectivePerUpdate, cpu->result().objectivePerUpdate);
        const double full = curveError(cl->log().fullObjectivePerBlockUpdate,
                                       cpu->log().fullObjectivePerBlockUpdate);
        const double held = curveError(heldOut(*cl), heldOut(*cpu));
        const double w = golden_lm::maxRelError(cl->weights(), cpu->weights());
        qInfo(
            "RPD OpenCL vs CPU: per-update losses %.2g, full objective %.2g, held-out %.2g, "
            "weights %.2g",
            perUpdate, full, held, w);
        QCOMPARE(heldOut(*cl).size(), std::size_t(3));
        QVERIFY(perUpdate <= tolerance);
        QVERIFY(full <= tolerance);
        QVERIFY(held <= tolerance);
        QVERIFY(w <= tolerance);
        QCOMPARE(cl->log().peakStashedWeights, cpu->log().peakStashedWeights);
        for (int v : cl->log().peakStashedWeights) QVERIFY(v <= cfg.maxDelay + 1);
        QVERIFY(cl->result().objectivePerUpdate.back() < cl->result().objectivePerUpdate.front());
    }

    void hugeStepSizeDivergesWhereTheCpuDoes() {
        const auto problem = smallProblem(LmPrecision::Double);
        LmRpdConfig cfg;
        cfg.updates = 200;
        cfg.stepSize = 1e6;
        cfg.maxDelay = 4;
        auto cpu = makeLmRpdReplay(problem, cfg);
        auto cl = makeLmRpdReplay(problem, cfg, onDevice());
        cpu->runToEnd();
        cl->runToEnd();
        QVERIFY(cpu->result().divergence.diverged);
        QVERIFY(cl->result().divergence.diverged);
        QCOMPARE(cl->result().divergence.update, cpu->result().divergence.update);
        qInfo("diverged at update %lld: %s", cl->result().divergence.update,
              cl->result().divergence.reason.c_str());
    }
};

QTEST_APPLESS_MAIN(TestOpenClLmRpd)
#include "tst_opencl_lm_rpd.moc"

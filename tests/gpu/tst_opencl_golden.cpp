// Every golden case of ../shared/golden reproduced on OpenCL: in double precision to a relative
// 1e-10 like the CPU engine, and in float within the tolerance docs/opencl.md documents.
#include <QtTest>

#include "core/golden_case.hpp"
#include "opencl_backend.hpp"
#include "opencl_test_support.hpp"
#include "replay/pipeline_replay.hpp"
#include "replay/rpd_replay.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using pipelens::gpu::Precision;

namespace {

// Float: |got - want| <= 2e-5 |want| + 2e-6 f(w0) (docs/opencl.md, "Precision").
constexpr double kFloatRel = 2e-5;
constexpr double kFloatAbsOfInitial = 2e-6;

std::unique_ptr<ComputeBackend> backend(Precision p) {
    gpu::OpenClBackendOptions o;
    o.precision = p;
    return std::make_unique<gpu::OpenClBackend>(opencl_test::context(), o);
}

RunResult runPipeline(const std::string& name, Precision p) {
    auto c = golden::caseJson(name);
    PipelineReplayConfig cfg;
    cfg.method = parseMethod(c["method"].get<std::string>());
    cfg.timeline = buildTimeline(golden::scheduleParams(c));
    cfg.replicas = c.value("replicas", 1);
    cfg.stepSize = c["step_size"];
    PipelineReplay replay(golden::objective(name), backend(p), cfg);
    while (!replay.done() && replay.advance(5) > 0) {
    }
    return replay.result();
}

RunResult runRpd(const std::string& name, Precision p) {
    auto c = golden::caseJson(name);
    RpdReplayConfig cfg;
    cfg.stages = c["stages"];
    cfg.stepSize = c["step_size"];
    cfg.delayMode = DelayMode::PipeDream;
    cfg.order = StageOrder::PipeDream;
    cfg.pipeDream = std::make_shared<DelayTable>(buildTimeline(golden::scheduleParams(c)));
    cfg.updates = cfg.pipeDream->updates();
    RpdReplay rpd(golden::objective(name), backend(p), cfg);
    rpd.runToEnd(11);
    return rpd.result();
}

void compareSeries(const std::vector<double>& got, const std::vector<double>& want, Precision p,
                   const char* what) {
    QCOMPARE(got.size(), want.size());
    QVERIFY(!want.empty());
    const double initial = std::abs(want.front());
    double worst = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        const bool ok = p == Precision::Double ? golden::relClose(got[i], want[i], 1e-10)
                                               : opencl_test::close(got[i], want[i], kFloatRel,
                                                                    kFloatAbsOfInitial * initial);
        worst = std::max(worst, std::abs(got[i] - want[i]) / std::max(std::abs(want[i]), 1e-300));
        if (!ok) {
            QFAIL(qPrintable(QString("%1 (%2) row %3: got %4, want %5")
                                 .arg(what, QString::fromStdString(gpu::precisionName(p)))
                                 .arg(i)
                                 .arg(got[i], 0, 'g', 17)
                                 .arg(want[i], 0, 'g', 17)));
        }
    }
    qInfo("%s (%s): largest relative difference %.3g over %zu rows", what,
          gpu::precisionName(p).c_str(), worst, want.size());
}

void addPrecisions() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("precision");
}

}  // namespace

class TestOpenClGolden : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void pipeDream_data() {
        addPrecisions();
        for (const char* n : {"pd-quadratic-S4", "pd-logistic-S5"}) {
            QTest::newRow(qPrintable(QString(n) + "/double"))
                << QString(n) << static_cast<int>(Precision::Double);
            QTest::newRow(qPrintable(QString(n) + "/float"))
                << QString(n) << static_cast<int>(Precision::Float);
        }
    }
    void pipeDream() {
        QFETCH(QString, name);
        QFETCH(int, precision);
        const auto p = static_cast<Precision>(precision);
        const std::string d = golden::dir(name.toStdString());
        RunResult r = runPipeline(name.toStdString(), p);
        QVERIFY(r.finished);
        QVERIFY(!r.divergence.diverged);
        QCOMPARE(r.versionChecks, r.updates);
        compareSeries(r.objectivePerSlot, golden::csvColumn(d + "/objective_per_slot.csv", 1), p,
                      "objective_per_slot");
        compareSeries(r.objectivePerUpdate,
                      golden::csvColumn(d + "/objective_per_block_update.csv", 1), p,
                      "objective_per_block_update");
    }

    void localSgd_data() {
        addPrecisions();
        const char* n = "localsgd-quadratic-S4-R4-H2";
        QTest::newRow("double") << QString(n) << static_cast<int>(Precision::Double);
        QTest::newRow("float") << QString(n) << static_cast<int>(Precision::Float);
    }
    void localSgd() {
        QFETCH(QString, name);
        QFETCH(int, precision);
        const auto p = static_cast<Precision>(precision);
        RunResult r = runPipeline(name.toStdString(), p);
        QVERIFY(r.finished);
        compareSeries(
            r.objectivePerSlot,
            golden::csvColumn(golden::dir(name.toStdString()) + "/objective_per_slot.csv", 1), p,
            "objective_per_slot");
    }

    // RPD with PD's stage/batch order and exact delays is PD (SPEC section 4), on the device too.
    void rpdReplaysPipeDream_data() { pipeDream_data(); }
    void rpdReplaysPipeDream() {
        QFETCH(QString, name);
        QFETCH(int, precision);
        const auto p = static_cast<Precision>(precision);
        RunResult r = runRpd(name.toStdString(), p);
        QVERIFY(r.finished);
        compareSeries(r.objectivePerUpdate,
                      golden::csvColumn(
                          golden::dir(name.toStdString()) + "/rpd_replay_per_block_update.csv", 1),
                      p, "rpd_replay_per_block_update");
    }

    // The fill-drain case holds only a timeline: the replay on the device must walk it to the
    // end with every version check passing (the data of the other quadratic case stands in).
    void fillDrainTimeline() {
        auto c = golden::caseJson("filldrain-S4-N6");
        PipelineReplayConfig cfg;
        cfg.method = Method::FillDrain;
        cfg.timeline = buildTimeline(golden::scheduleParams(c));
        cfg.stepSize = 0.05;
        PipelineReplay replay(golden::objective("localsgd-quadratic-S4-R4-H2"),
                              backend(Precision::Double), cfg);
        replay.runToEnd();
        QVERIFY(replay.result().finished);
        QCOMPARE(replay.result().versionChecks, 24LL);
    }
};

QTEST_APPLESS_MAIN(TestOpenClGolden)
#include "tst_opencl_golden.moc"

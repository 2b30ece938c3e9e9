// Every reference case of ../shared/golden, made with the paper authors' simulator, reproduced by
// the CPU engine: timelines cell for cell, delays exactly, objectives to a relative 1e-10.
#include <QtTest>

#include "compute/cpu_backend.hpp"
#include "golden_case.hpp"
#include "replay/pipeline_replay.hpp"
#include "replay/rpd_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

RunResult runPipeline(const std::string& name) {
    auto c = golden::caseJson(name);
    auto obj = golden::objective(name);
    PipelineReplayConfig cfg;
    cfg.method = parseMethod(c["method"].get<std::string>());
    cfg.timeline = buildTimeline(golden::scheduleParams(c));
    cfg.replicas = c.value("replicas", 1);
    cfg.stepSize = c["step_size"];
    PipelineReplay replay(obj, std::make_unique<CpuBackend>(), cfg);
    // Advance in uneven chunks: the result must not depend on how a caller steps the run.
    while (!replay.done() && replay.advance(7) > 0) {
    }
    return replay.result();
}

void compareSeries(const std::vector<double>& got, const std::vector<double>& want,
                   const char* what) {
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        if (!golden::relClose(got[i], want[i], 1e-10)) {
            QFAIL(qPrintable(QString("%1 row %2: got %3, want %4")
                                 .arg(what)
                                 .arg(i)
                                 .arg(got[i], 0, 'g', 17)
                                 .arg(want[i], 0, 'g', 17)));
        }
    }
}

}  // namespace

class TestGolden : public QObject {
    Q_OBJECT
  private slots:
    void timelines_data() {
        QTest::addColumn<QString>("name");
        for (const char* n : {"pd-quadratic-S4", "pd-logistic-S5", "filldrain-S4-N6",
                              "localsgd-quadratic-S4-R4-H2"}) {
            QTest::newRow(n) << QString(n);
        }
    }
    void timelines() {
        QFETCH(QString, name);
        auto c = golden::caseJson(name.toStdString());
        Timeline tl = buildTimeline(golden::scheduleParams(c));
        QCOMPARE(
            QString::fromStdString(timelineCsv(tl)),
            QString::fromStdString(readFile(golden::dir(name.toStdString()) + "/timeline.csv")));
    }

    void pipeDreamDelays_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("quadratic") << "pd-quadratic-S4";
        QTest::newRow("logistic") << "pd-logistic-S5";
    }
    void pipeDreamDelays() {
        QFETCH(QString, name);
        auto c = golden::caseJson(name.toStdString());
        DelayTable table(buildTimeline(golden::scheduleParams(c)));
        auto rows = golden::csvRows(golden::dir(name.toStdString()) + "/delays.csv");
        QCOMPARE(table.updates(), static_cast<long long>(rows.size()));
        for (long long k = 0; k < table.updates(); ++k) {
            const auto& r = rows[static_cast<size_t>(k)];
            QCOMPARE(std::stoll(r[0]), k);
            QCOMPARE(table.update(k).stage, std::stoi(r[1]));
            QCOMPARE(table.update(k).microbatch, std::stoi(r[2]));
            for (int j = 0; j < table.stages(); ++j) {
                QCOMPARE(table.delay(k, j), std::stoll(r[3 + static_cast<size_t>(j)]));
            }
        }
    }

    void pipeDreamObjectives_data() { pipeDreamDelays_data(); }
    void pipeDreamObjectives() {
        QFETCH(QString, name);
        const std::string d = golden::dir(name.toStdString());
        RunResult r = runPipeline(name.toStdString());
        QVERIFY(r.finished);
        QVERIFY(!r.divergence.diverged);
        QCOMPARE(r.versionChecks, r.updates);
        compareSeries(r.objectivePerSlot, golden::csvColumn(d + "/objective_per_slot.csv", 1),
                      "objective_per_slot");
        compareSeries(r.objectivePerUpdate,
                      golden::csvColumn(d + "/objective_per_block_update.csv", 1),
                      "objective_per_block_update");
    }

    void localSgdObjective() {
        const std::string name = "localsgd-quadratic-S4-R4-H2";
        RunResult r = runPipeline(name);
        QVERIFY(r.finished);
        compareSeries(r.objectivePerSlot,
                      golden::csvColumn(golden::dir(name) + "/objective_per_slot.csv", 1),
                      "objective_per_slot");
    }

    // RPD driven by PD's stage/batch order and PD's exact delays is PD (SPEC section 4).
    void rpdReplaysPipeDream_data() { pipeDreamDelays_data(); }
    void rpdReplaysPipeDream() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        auto c = golden::caseJson(n);
        RpdReplayConfig cfg;
        cfg.stages = c["stages"];
        cfg.stepSize = c["step_size"];
        cfg.delayMode = DelayMode::PipeDream;
        cfg.order = StageOrder::PipeDream;
        cfg.pipeDream = std::make_shared<DelayTable>(buildTimeline(golden::scheduleParams(c)));
        cfg.updates = cfg.pipeDream->updates();
        RpdReplay rpd(golden::objective(n), std::make_unique<CpuBackend>(), cfg);
        rpd.runToEnd(13);
        QVERIFY(rpd.result().finished);
        compareSeries(rpd.result().objectivePerUpdate,
                      golden::csvColumn(golden::dir(n) + "/rpd_replay_per_block_update.csv", 1),
                      "rpd_replay_per_block_update");
    }
};

QTEST_APPLESS_MAIN(TestGolden)
#include "tst_golden.moc"

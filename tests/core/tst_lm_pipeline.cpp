// PD, LocalSGD and RPD on the language model: whole runs against the authors' runs
// (../shared/golden-lm), training on the built-in corpus, divergence and memory.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "errors.hpp"
#include "lm_builtin_problem.hpp"
#include "lm_golden_case.hpp"
#include "lm_golden_run.hpp"
#include "random/numpy_random.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;

namespace {

std::vector<double> column(const std::string& name, const std::string& file, std::size_t col) {
    return golden_lm::column(name, file, col);
}

// Bit for bit, NaNs included.
bool sameBits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) ==
               0;
}

double meanLoss(const CharTransformerProblem& p, const Eigen::VectorXd& w) {
    CharTransformer<double> model(p.layout);
    return model.meanLoss(w.data(), p.train);
}

}  // namespace

class TestLmPipeline : public QObject {
    Q_OBJECT
  private slots:
    void goldenTimelinesAreTheProjectsOwn_data() {
        QTest::addColumn<QString>("name");
        for (const auto& n : golden_lm::cases())
            QTest::newRow(n.c_str()) << QString::fromStdString(n);
    }
    void goldenTimelinesAreTheProjectsOwn() {
        QFETCH(QString, name);
        const auto c = golden_lm::caseJson(name.toStdString());
        const Timeline tl = buildTimeline(golden::scheduleParams(c));
        std::ifstream in(golden_lm::dir(name.toStdString()) + "/timeline.csv");
        const std::string expected((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
        QCOMPARE(timelineCsv(tl), expected);
        QCOMPARE(tl.totalSlots, c["slots"].get<int>());
    }

    void wholeRunsMatchTheAuthorsInDouble_data() { goldenTimelinesAreTheProjectsOwn_data(); }
    void wholeRunsMatchTheAuthorsInDouble() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const auto run = golden_lm::runPipeline(n, LmPrecision::Double, true);
        const RunResult& r = run->result();
        QVERIFY(r.finished);
        QVERIFY(!r.divergence.diverged);
        QCOMPARE(r.updates, golden_lm::caseJson(n)["block_updates"].get<long long>());
        const golden_lm::PipelineErrors e = golden_lm::pipelineErrors(n, *run);
        QVERIFY2(e.rowMismatch.isEmpty(), qPrintable(e.rowMismatch));
        qInfo(
            "%s double: objective_per_slot %.2g, per_block_update %.2g, forward losses %.2g, "
            "full per slot %.2g, full per update %.2g, w_final %.2g",
            n.c_str(), e.perSlot, e.perUpdate, e.forwardLosses, e.fullSlot, e.fullUpdate, e.wFinal);
        for (double err : e.all()) QVERIFY(err <= 1e-9);
        // Logging the full objective leaves the trajectory unchanged.
        const auto plain = golden_lm::runPipeline(n, LmPrecision::Double, false);
        QCOMPARE(plain->weights(), run->weights());
        QCOMPARE(plain->log().fullObjectivePerSlot.size(), std::size_t(0));
    }

    // float: weights and activations rounded to 24 bits; tolerances in docs/language-model.md.
    void wholeRunsMatchTheAuthorsInFloat_data() { goldenTimelinesAreTheProjectsOwn_data(); }
    void wholeRunsMatchTheAuthorsInFloat() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const auto run = golden_lm::runPipeline(n, LmPrecision::Float, true);
        const RunResult& r = run->result();
        const double perSlot =
            golden_lm::curveRelError(r.objectivePerSlot, column(n, "objective_per_slot.csv", 1));
        const double fullSlot = golden_lm::curveRelError(
            run->log().fullObjectivePerSlot, column(n, "full_objective_per_slot.csv", 1));
        const double wFinal =
            golden_lm::maxRelError(run->weights(), golden_lm::npy(n, "w_final.npy"));
        qInfo("%s float: objective_per_slot %.2g, full per slot %.2g, w_final %.2g", n.c_str(),
              perSlot, fullSlot, wFinal);
        QVERIFY(perSlot <= 1e-5);
        QVERIFY(fullSlot <= 1e-5);
        QVERIFY(wFinal <= 1e-5);
    }

    void rpdWithPipeDreamDelaysAndOrderReproducesPipeDream_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("lm-pd-S4") << "lm-pd-S4";
        QTest::newRow("lm-pd-S5-C12-heads3") << "lm-pd-S5-C12-heads3";
    }
    void rpdWithPipeDreamDelaysAndOrderReproducesPipeDream() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const golden_lm::RpdAsPdErrors e = golden_lm::rpdAsPipeDream(n);
        QVERIFY(e.finished);
        QCOMPARE(e.updates, e.expectedUpdates);
        qInfo("%s RPD(pd delays, pd order): w_final %.2g, losses %.2g", n.c_str(), e.wFinal,
              e.perUpdate);
        QVERIFY(e.wFinal <= 1e-9);
        QVERIFY(e.perUpdate <= 1e-9);
    }

    void everyMethodLowersTheLossOnTheBuiltInCorpus_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<int>("precision");
        for (const char* m : {"pd", "localsgd", "rpd"}) {
            QTest::newRow((std::string(m) + " double").c_str()) << m << int(LmPrecision::Double);
            QTest::newRow((std::string(m) + " float").c_str()) << m << int(LmPrecision::Float);
        }
    }
    void everyMethodLowersTheLossOnTheBuiltInCorpus() {
        QFETCH(QString, method);
        QFETCH(int, precision);
        const auto problem = builtInProblem(static_cast<LmPrecision>(precision));
        const double before = meanLoss(*problem, problem->w0);
        const double logV = std::log(problem->corpus.vocabSize());
        LmRunOptions options;
        options.heldOutEvery = 100;
        std::unique_ptr<LmReplay> run;
        if (method == "rpd") {
            LmRpdConfig cfg;
            cfg.updates = 800;
            cfg.stepSize = 0.5;
            cfg.maxDelay = 6;
            cfg.options = options;
            run = makeLmRpdReplay(problem, cfg);
        } else {
            ScheduleParams sp;
            sp.kind = method == "pd" ? ScheduleKind::PipeDream : ScheduleKind::LocalSgd;
            sp.stages = 4;
            sp.microbatches = 200;
            sp.localSteps = 2;
            LmPipelineConfig cfg;
            cfg.method = parseMethod(method.toStdString());
            cfg.timeline = buildTimeline(sp);
            cfg.replicas = method == "pd" ? 1 : cfg.timeline.params.replicas;
            cfg.stepSize = 0.5;
            cfg.options = options;
            run = makeLmPipelineReplay(problem, cfg);
        }
        run->runToEnd();
        QVERIFY2(run->result().finished, run->result().divergence.reason.c_str());
        const double after = meanLoss(*problem, run->weights());
        qInfo("%s: mean loss %.3f -> %.3f (log V = %.3f), held-out %.3f", qPrintable(method),
              before, after, logV, run->log().heldOutLoss.back().second);
        QVERIFY(after < 0.75 * before);
        QVERIFY(after < 0.75 * logV);
        QVERIFY(!run->log().heldOutLoss.empty());
        QVERIFY(run->log().heldOutLoss.back().second < before);
    }

    void hugeStepSizeIsReportedAsDiverged_data() {
        QTest::addColumn<QString>("method");
        QTest::newRow("pd") << "pd";
        QTest::newRow("rpd") << "rpd";
    }
    void hugeStepSizeIsReportedAsDiverged() {
        QFETCH(QString, method);
        const auto problem = builtInProblem(LmPrecision::Double);
        std::unique_ptr<LmReplay> run;
        if (method == "rpd") {
            LmRpdConfig cfg;
            cfg.updates = 400;
            cfg.stepSize = 1e6;
            cfg.maxDelay = 4;
            run = makeLmRpdReplay(problem, cfg);
        } else {
            LmPipelineConfig cfg;
            cfg.timeline = buildTimeline(
                ScheduleParams{ScheduleKind::PipeDream, 4, 100, 0, 0, 1, 0, {}, nullptr, false});
            cfg.stepSize = 1e6;
            run = makeLmPipelineReplay(problem, cfg);
        }
        run->runToEnd();
        const Divergence& d = run->result().divergence;
        QVERIFY(d.diverged);
        QVERIFY(!run->result().finished);
        QVERIFY(d.update > 0);
        QVERIFY2(d.reason.find("diverged after block update " + std::to_string(d.update)) !=
                     std::string::npos,
                 d.reason.c_str());
        qInfo("%s", d.reason.c_str());
    }

    // The stages of a slot run side by side on several threads: the same numbers bit for bit,
    // the same logs in the same order and the same pool peaks as one thread, for PD and LocalSGD
    // (golden cases and a longer run on the built-in corpus, both precisions).
    void parallelSlotsAreBitIdenticalToOneThread_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("precision");
        QTest::addColumn<int>("threads");
        for (const auto& n : golden_lm::cases()) {
            for (int prec : {int(LmPrecision::Double), int(LmPrecision::Float)}) {
                const std::string row =
                    n + (prec == int(LmPrecision::Double) ? " double" : " float");
                QTest::newRow(row.c_str()) << QString::fromStdString(n) << prec << 2;
            }
        }
        QTest::newRow("built-in pd float, 3 threads") << "pd" << int(LmPrecision::Float) << 3;
        QTest::newRow("built-in localsgd double") << "localsgd" << int(LmPrecision::Double) << 2;
    }
    void parallelSlotsAreBitIdenticalToOneThread() {
        QFETCH(QString, name);
        QFETCH(int, precision);
        QFETCH(int, threads);
        const std::string n = name.toStdString();
        const auto prec = static_cast<LmPrecision>(precision);
        std::shared_ptr<const CharTransformerProblem> problem;
        LmPipelineConfig cfg;
        if (n == "pd" || n == "localsgd") {
            problem = builtInProblem(prec);
            ScheduleParams sp;
            sp.kind = n == "pd" ? ScheduleKind::PipeDream : ScheduleKind::LocalSgd;
            sp.stages = 4;
            sp.microbatches = 60;
            sp.localSteps = 2;
            cfg.timeline = buildTimeline(sp);
            cfg.replicas = n == "pd" ? 1 : cfg.timeline.params.replicas;
            cfg.stepSize = 0.5;
        } else {
            const auto c = golden_lm::caseJson(n);
            problem = golden_lm::problem(n, prec);
            cfg.method = parseMethod(c["method"].get<std::string>());
            cfg.timeline = buildTimeline(golden::scheduleParams(c));
            cfg.replicas = c.value("replicas", 1);
            cfg.stepSize = c["step_size"];
        }
        // Per slot (between slots, still threaded) on the golden cases' small corpora; on the
        // built-in corpus (187 batches a pass) it cost a minute, too much for the sanitizer job.
        cfg.options.fullObjectivePerSlot = n != "pd" && n != "localsgd";
        auto one = makeLmPipelineReplay(problem, cfg);
        cfg.slotThreads = threads;
        auto many = makeLmPipelineReplay(problem, cfg);
        one->runToEnd();
        for (long long chunk = 1; !many->done(); chunk = chunk % 5 + 1) {
            if (many->advance(chunk) == 0) break;
        }
        QVERIFY(one->result().finished);
        QVERIFY(many->result().finished);
        QVERIFY(sameBits(many->weights(), one->weights()));
        QCOMPARE(many->result().objectivePerSlot.size(), one->result().objectivePerSlot.size());
        for (std::size_t i = 0; i < one->result().objectivePerSlot.size(); ++i) {
            const double a = one->result().objectivePerSlot[i];
            const double b = many->result().objectivePerSlot[i];
            QVERIFY((std::isnan(a) && std::isnan(b)) || a == b);
        }
        const auto& ua = one->result().objectivePerUpdate;
        const auto& ub = many->result().objectivePerUpdate;
        QCOMPARE(ub.size(), ua.size());
        for (std::size_t i = 0; i < ua.size(); ++i) {
            QVERIFY((std::isnan(ua[i]) && std::isnan(ub[i])) || ua[i] == ub[i]);
        }
        QCOMPARE(many->log().fullObjectivePerSlot, one->log().fullObjectivePerSlot);
        QCOMPARE(many->log().forwardLosses.size(), one->log().forwardLosses.size());
        for (std::size_t i = 0; i < one->log().forwardLosses.size(); ++i) {
            QCOMPARE(many->log().forwardLosses[i].microbatch,
                     one->log().forwardLosses[i].microbatch);
            QCOMPARE(many->log().forwardLosses[i].slot, one->log().forwardLosses[i].slot);
            QCOMPARE(many->log().forwardLosses[i].loss, one->log().forwardLosses[i].loss);
        }
        QCOMPARE(many->log().peakStashedWeights, one->log().peakStashedWeights);
        QCOMPARE(many->log().peakKeptInputs, one->log().peakKeptInputs);
        QCOMPARE(many->result().updates, one->result().updates);
        QCOMPARE(many->result().versionChecks, one->result().versionChecks);
        if (n != "pd" && n != "localsgd") {  // and the threaded run is the authors' run
            const double wFinal =
                golden_lm::maxRelError(many->weights(), golden_lm::npy(n, "w_final.npy"));
            QVERIFY(wFinal <= (prec == LmPrecision::Double ? 1e-9 : 1e-5));
        }
    }

    // A rejected forward loss stops the threaded run where the one-thread run stops: same
    // update, slot, reason and weights (the slot's later ops never update anything).
    void parallelSlotsStopWhereOneThreadStops() {
        const auto problem = builtInProblem(LmPrecision::Double);
        LmPipelineConfig cfg;
        cfg.timeline = buildTimeline(
            ScheduleParams{ScheduleKind::PipeDream, 4, 100, 0, 0, 1, 0, {}, nullptr, false});
        cfg.stepSize = 1e6;
        auto one = makeLmPipelineReplay(problem, cfg);
        cfg.slotThreads = 2;
        auto many = makeLmPipelineReplay(problem, cfg);
        one->runToEnd();
        many->runToEnd();
        const Divergence& a = one->result().divergence;
        const Divergence& b = many->result().divergence;
        QVERIFY(a.diverged);
        QVERIFY(b.diverged);
        QCOMPARE(b.update, a.update);
        QCOMPARE(b.slot, a.slot);
        QCOMPARE(b.reason, a.reason);
        QCOMPARE(many->result().updates, one->result().updates);
        QCOMPARE(many->result().totalSlots, one->result().totalSlots);
        QVERIFY(sameBits(many->weights(), one->weights()));
    }

    void pipeDreamStashesAsSpecPredicts() {
        // Weight copies per stage: exactly the timeline's stash depth.
        const auto problem = builtInProblem(LmPrecision::Float);
        LmPipelineConfig cfg;
        cfg.timeline = buildTimeline(
            ScheduleParams{ScheduleKind::PipeDream, 4, 40, 0, 0, 1, 0, {}, nullptr, false});
        cfg.stepSize = 0.1;
        auto run = makeLmPipelineReplay(problem, cfg);
        run->runToEnd();
        QCOMPARE(run->log().peakStashedWeights, cfg.timeline.peakStash);
        QCOMPARE(cfg.timeline.peakStash, std::vector<int>({4, 4, 3, 1}));
        // Inputs are held from the forward that produced them, so activations waiting for a busy
        // stage count too.
        QCOMPARE(run->log().peakKeptInputs, std::vector<int>({4, 4, 4, 3}));
        QCOMPARE(run->result().versionChecks, run->result().updates);
    }

    // Both RPDs draw from NumPy's stream in the same order (stage, index into PD's microbatches,
    // delays): the batches the LM's RPD used are the ones default_rng(seed) gives.
    void rpdDrawsFromNumpysStreamAsTheLinearRpd() {
        const auto problem = builtInProblem(LmPrecision::Float);
        LmRpdConfig cfg;
        cfg.updates = 60;
        cfg.stepSize = 0.05;
        cfg.maxDelay = 7;
        cfg.seed = 11;
        LmRpdReplay<float> rpd(problem, cfg);
        rpd.runToEnd();
        QVERIFY(rpd.result().finished);
        const int S = 4;
        const long long pdMicrobatches = (cfg.updates + S - 1) / S;
        const std::vector<int> batchOf =
            batchSequence(pdMicrobatches, problem->train.batches(), false, 0);
        NumpyRandom rng(11);
        const auto& logged = rpd.log().forwardLosses;
        QCOMPARE(static_cast<long long>(logged.size()), cfg.updates);
        for (long long k = 0; k < cfg.updates; ++k) {
            rng.integers(S);
            const int batch = batchOf[static_cast<std::size_t>(rng.integers(pdMicrobatches))];
            for (int j = 0; j < S; ++j) rng.integers(std::min<long long>(cfg.maxDelay, k) + 1);
            QCOMPARE(logged[static_cast<std::size_t>(k)].batch, batch);
        }
    }

    void rpdKeepsOnlyTheWindowOfVersions() {
        const auto problem = builtInProblem(LmPrecision::Float);
        LmRpdConfig cfg;
        cfg.updates = 300;
        cfg.stepSize = 0.1;
        cfg.delayMode = DelayMode::Max;
        cfg.maxDelay = 5;
        LmRpdReplay<float> rpd(problem, cfg);
        rpd.runToEnd();
        QVERIFY(rpd.result().finished);
        for (int s = 0; s < 4; ++s) QVERIFY(rpd.versionsHeld(s) <= 6);
        // The peak per block, as reported: never above delta + 1, reached by some block (a block
        // gains a version each time the draws pick it inside the window).
        const std::vector<int>& peak = rpd.log().peakStashedWeights;
        QCOMPARE(peak.size(), std::size_t(4));
        for (int p : peak) QVERIFY(p >= 1 && p <= 6);
        QCOMPARE(*std::max_element(peak.begin(), peak.end()), 6);
    }

    void mismatchedStagesAreAClearError() {
        const auto problem = builtInProblem(LmPrecision::Float);
        LmPipelineConfig cfg;
        cfg.timeline = buildTimeline(
            ScheduleParams{ScheduleKind::PipeDream, 5, 10, 0, 0, 1, 0, {}, nullptr, false});
        try {
            makeLmPipelineReplay(problem, cfg);
            QFAIL("a 5-stage timeline cannot drive a 4-stage model");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("stages = 5") != std::string::npos, e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestLmPipeline)
#include "tst_lm_pipeline.moc"

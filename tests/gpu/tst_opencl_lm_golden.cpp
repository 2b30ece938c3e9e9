// The language model on OpenCL against the authors' own code (../shared/golden-lm): every
// stage's forward output, internals and gradients at w0 (stage_check/), and whole PD and
// LocalSGD runs (every logged curve, the full objective, w_final), in double to 1e-10 and 1e-9,
// in float to the CPU engine's documented tolerances (docs/language-model.md).
#include <QtTest>

#include <string>
#include <vector>

#include "core/lm_golden_case.hpp"
#include "lm_opencl_executor.hpp"
#include "lm_opencl_stages.hpp"
#include "opencl_test_support.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using gpu::DeviceRef;

namespace {

// Every stage forward and backward at w0 on dataset batch 0, chained as the pipeline chains
// them, on the device; returns the largest relative error and fills `report`.
template <typename Real>
double stageCheck(const std::string& name, QString& report) {
    const auto problem = golden_lm::problem(name);
    const LmLayout& layout = problem->layout;
    const LmDims& d = layout.dims();
    const int S = layout.stages();
    gpu::LmOpenClOps<Real> ops(opencl_test::context());
    std::vector<Real> w(static_cast<std::size_t>(layout.size()));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<Real>(problem->w0[static_cast<Eigen::Index>(i)]);
    const cl::Buffer wDev = ops.reals(w.size(), "w0");
    ops.write(wDev, 0, w.data(), w.size());
    const auto rows = static_cast<std::size_t>(d.tokens());
    const cl::Buffer tokens = ops.ints(rows, "tokens"), targets = ops.ints(rows, "targets");
    ops.writeInts(tokens, problem->train.tokens(0), rows);
    ops.writeInts(targets, problem->train.targets(0), rows);

    double worst = 0.0;
    auto check = [&](const std::string& what, const std::vector<Real>& mine,
                     const std::string& file) {
        const double e = golden_lm::maxRelError(mine, golden_lm::npy(name, "stage_check/" + file));
        report += QString("%1 %2\n").arg(QString::fromStdString(what)).arg(e, 0, 'g', 3);
        worst = std::max(worst, e);
    };
    auto download = [&](const cl::Buffer& b, std::size_t n) {
        std::vector<Real> v(n);
        ops.read({&b, 0}, v.data(), n);
        return v;
    };
    std::vector<std::unique_ptr<gpu::LmOpenClStage<Real>>> stages;
    std::vector<cl::Buffer> out;
    for (int s = 0; s < S; ++s) {
        stages.push_back(std::make_unique<gpu::LmOpenClStage<Real>>(ops, layout, s));
        out.push_back(ops.reals(static_cast<std::size_t>(stages.back()->outputSize()), "out"));
        const DeviceRef in =
            s == 0 ? DeviceRef{} : DeviceRef{&out[static_cast<std::size_t>(s - 1)], 0};
        stages.back()->forward({&wDev, layout.stage(s).offset}, {&tokens, 0}, in, {&out.back(), 0});
        const std::string st = "stage" + std::to_string(s);
        check(st + "_output",
              download(out.back(), static_cast<std::size_t>(stages.back()->outputSize())),
              st + "_output.npy");
    }
    for (const char* internal : {"ln1_out", "qkv", "attn_heads_merged", "attn_out", "ln2_in",
                                 "ln2_out", "mlp_pre_gelu", "mlp_gelu_out", "mlp_out"}) {
        check(std::string("stage1_") + internal, stages[1]->internal(internal),
              std::string("stage1_") + internal + ".npy");
    }
    const auto nv = rows * static_cast<std::size_t>(d.vocab);
    const auto nc = rows * static_cast<std::size_t>(d.width);
    cl::Buffer grad = ops.reals(nv, "grad logits");
    const DeviceRef gl{&grad, 0};
    const double loss = ops.crossEntropy({&out.back(), 0}, {&targets, 0}, d.tokens(), d.vocab, &gl);
    const double goldenLoss = golden_lm::caseJson(name)["stage_check"]["loss"];
    const double lossErr = std::abs(loss - goldenLoss) / goldenLoss;
    report += QString("loss %1\n").arg(lossErr, 0, 'g', 3);
    worst = std::max(worst, lossErr);
    std::size_t gradCount = nv;
    for (int s = S - 1; s >= 0; --s) {
        const std::string st = "stage" + std::to_string(s);
        check(st + "_grad_output", download(grad, gradCount), st + "_grad_output.npy");
        const auto size = static_cast<std::size_t>(layout.stage(s).size);
        const cl::Buffer gw = ops.reals(size, "gw"), gin = ops.reals(nc, "gin");
        stages[static_cast<std::size_t>(s)]->backward({&wDev, layout.stage(s).offset}, {&grad, 0},
                                                      {&gw, 0},
                                                      s > 0 ? DeviceRef{&gin, 0} : DeviceRef{});
        check(st + "_grad_params", download(gw, size), st + "_grad_params.npy");
        if (s > 0) check(st + "_grad_input", download(gin, nc), st + "_grad_input.npy");
        grad = gin;
        gradCount = nc;
    }
    return worst;
}

struct GoldenRun {
    std::unique_ptr<LmReplay> replay;
};

GoldenRun runGolden(const std::string& name, LmPrecision precision, bool logFull) {
    const auto c = golden_lm::caseJson(name);
    LmPipelineConfig cfg;
    cfg.method = parseMethod(c["method"].get<std::string>());
    cfg.timeline = buildTimeline(golden::scheduleParams(c));
    cfg.replicas = c.value("replicas", 1);
    cfg.stepSize = c["step_size"];
    cfg.options.fullObjectivePerSlot = logFull;
    cfg.options.fullObjectivePerUpdate = logFull;
    GoldenRun run{makeLmPipelineReplay(golden_lm::problem(name, precision), cfg,
                                       gpu::lmOpenClExecutorFactory(opencl_test::context()))};
    for (long long chunk = 1; !run.replay->done(); chunk = chunk % 7 + 2) {
        if (run.replay->advance(chunk) == 0) break;
    }
    return run;
}

std::vector<double> column(const std::string& name, const std::string& file, std::size_t col) {
    return golden::csvColumn(golden_lm::dir(name) + "/" + file, col);
}

void addCases() {
    QTest::addColumn<QString>("name");
    for (const auto& n : golden_lm::cases()) QTest::newRow(n.c_str()) << QString::fromStdString(n);
}

}  // namespace

class TestOpenClLmGolden : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void stagesMatchTheAuthorsModelInDouble_data() { addCases(); }
    void stagesMatchTheAuthorsModelInDouble() {
        QFETCH(QString, name);
        QString report;
        const double worst = stageCheck<double>(name.toStdString(), report);
        qInfo("%s: largest relative error %.3g (OpenCL, double)", qPrintable(name), worst);
        QVERIFY2(worst <= 1e-10, qPrintable(report));
    }

    void stagesMatchTheAuthorsModelInFloat_data() { addCases(); }
    void stagesMatchTheAuthorsModelInFloat() {
        QFETCH(QString, name);
        QString report;
        const double worst = stageCheck<float>(name.toStdString(), report);
        qInfo("%s: largest relative error %.3g (OpenCL, float)", qPrintable(name), worst);
        QVERIFY2(worst <= 2e-6, qPrintable(report));
    }

    void wholeRunsMatchTheAuthorsInDouble_data() { addCases(); }
    void wholeRunsMatchTheAuthorsInDouble() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const GoldenRun run = runGolden(n, LmPrecision::Double, true);
        const RunResult& r = run.replay->result();
        const LmLog& log = run.replay->log();
        QVERIFY(r.finished);
        QVERIFY(!r.divergence.diverged);
        QCOMPARE(r.updates, golden_lm::caseJson(n)["block_updates"].get<long long>());
        const double perSlot =
            golden_lm::curveRelError(r.objectivePerSlot, column(n, "objective_per_slot.csv", 1));
        const double perUpdate = golden_lm::curveRelError(
            r.objectivePerUpdate, column(n, "objective_per_block_update.csv", 1));
        const double fullSlot = golden_lm::curveRelError(
            log.fullObjectivePerSlot, column(n, "full_objective_per_slot.csv", 1));
        const double fullUpdate = golden_lm::curveRelError(
            log.fullObjectivePerBlockUpdate, column(n, "full_objective_per_block_update.csv", 1));
        const auto rows = golden::csvRows(golden_lm::dir(n) + "/forward_loss_per_microbatch.csv");
        QCOMPARE(log.forwardLosses.size(), rows.size());
        std::vector<double> losses;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(log.forwardLosses[i].microbatch, std::stoi(rows[i][0]));
            QCOMPARE(log.forwardLosses[i].slot, std::stoi(rows[i][1]));
            QCOMPARE(log.forwardLosses[i].batch, std::stoi(rows[i][2]));
            losses.push_back(log.forwardLosses[i].loss);
        }
        const double perMicrobatch =
            golden_lm::curveRelError(losses, column(n, "forward_loss_per_microbatch.csv", 3));
        const double wFinal =
            golden_lm::maxRelError(run.replay->weights(), golden_lm::npy(n, "w_final.npy"));
        qInfo(
            "%s OpenCL double: objective_per_slot %.2g, per_block_update %.2g, forward losses "
            "%.2g, full per slot %.2g, full per update %.2g, w_final %.2g",
            n.c_str(), perSlot, perUpdate, perMicrobatch, fullSlot, fullUpdate, wFinal);
        for (double e : {perSlot, perUpdate, perMicrobatch, fullSlot, fullUpdate, wFinal}) {
            QVERIFY(e <= 1e-9);
        }
        // The stash depth the timeline predicts (SPEC section 3), as on the CPU.
        QCOMPARE(log.peakStashedWeights.size(), static_cast<std::size_t>(r.stages));
        for (int s = 0; s < r.stages; ++s) {
            QCOMPARE(log.peakStashedWeights[static_cast<std::size_t>(s)],
                     r.timeline->peakStash[static_cast<std::size_t>(s)]);
        }
    }

    // float: tolerances of the CPU engine's float runs (docs/language-model.md).
    void wholeRunsMatchTheAuthorsInFloat_data() { addCases(); }
    void wholeRunsMatchTheAuthorsInFloat() {
        QFETCH(QString, name);
        const std::string n = name.toStdString();
        const GoldenRun run = runGolden(n, LmPrecision::Float, true);
        const RunResult& r = run.replay->result();
        QVERIFY(r.finished);
        const double perSlot =
            golden_lm::curveRelError(r.objectivePerSlot, column(n, "objective_per_slot.csv", 1));
        const double fullSlot = golden_lm::curveRelError(
            run.replay->log().fullObjectivePerSlot, column(n, "full_objective_per_slot.csv", 1));
        const double wFinal =
            golden_lm::maxRelError(run.replay->weights(), golden_lm::npy(n, "w_final.npy"));
        qInfo("%s OpenCL float: objective_per_slot %.2g, full per slot %.2g, w_final %.2g",
              n.c_str(), perSlot, fullSlot, wFinal);
        QVERIFY(perSlot <= 1e-5);
        QVERIFY(fullSlot <= 1e-5);
        QVERIFY(wFinal <= 1e-5);
    }
};

QTEST_APPLESS_MAIN(TestOpenClLmGolden)
#include "tst_opencl_lm_golden.moc"

// Gradient noise (SPEC section 6): sigma = 0 changes nothing, bit for bit, for every method; the
// noise is NumPy's normal(scale = sigma) from default_rng(seed), drawn per backward in
// processing order, and for an RPD step for blocks S-1 ... s keeping only block s's; runs are
// reproducible and the seed defaults to the data seed.
#include <QtTest>

#include <memory>
#include <vector>

#include "compute/cpu_backend.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "random/numpy_random.hpp"

using namespace pipelens;
using Eigen::VectorXd;
using nlohmann::json;

namespace {

json baseConfig(const std::string& method) {
    json m = {{"method", method}, {"step_size", 0.05}};
    if (method == "rpd") m["delta"] = 3;
    return {
        {"name", "noise"},
        {"seed", 2},
        {"objective", {{"kind", "logistic"}, {"l2", 0.01}}},
        {"data",
         {{"source", "synthetic"}, {"kind", "logistic"}, {"rows", 40}, {"dim", 10}, {"seed", 4}}},
        {"stages", 3},
        {"batch_size", 4},
        {"shuffle", true},
        {"budget", {{"epochs", 2}}},
        {"backend", "cpu"},
        {"methods", json::array({m})}};
}

RunResult runConfig(const json& j) {
    ExperimentResult r = runExperiment(ExperimentConfig::fromJson(j));
    return r.methods.at(0).result;
}

std::shared_ptr<LinearObjective> smallObjective() {
    SyntheticSpec spec;
    spec.kind = "random";
    spec.rows = 12;
    spec.dim = 7;
    spec.seed = 9;
    return std::make_shared<LinearObjective>(makeSynthetic(spec), LossKind::Quadratic, 0.0, 4);
}

// NumPy: default_rng(seed).normal(scale=sigma, size=n) for each n in turn.
std::vector<VectorXd> numpyNormals(std::uint64_t seed, double sigma,
                                   const std::vector<int>& sizes) {
    NumpyRandom rng(seed);
    std::vector<VectorXd> out;
    out.reserve(sizes.size());
    for (int n : sizes) out.push_back(rng.normalVector(n, sigma));
    return out;
}

}  // namespace

class TestNoise : public QObject {
    Q_OBJECT
  private slots:
    void zeroSigmaChangesNothing_data() {
        QTest::addColumn<QString>("method");
        for (const char* m : {"pd", "rpd", "localsgd", "sgd", "fill-drain"})
            QTest::newRow(m) << QString(m);
    }
    void zeroSigmaChangesNothing() {
        QFETCH(QString, method);
        json plain = baseConfig(method.toStdString());
        json zero = plain;
        zero["objective"]["gradient_noise"] = 0.0;
        zero["objective"]["noise_seed"] = 77;
        const RunResult a = runConfig(plain);
        const RunResult b = runConfig(zero);
        QVERIFY(a.finished && b.finished);
        QVERIFY(a.objectivePerSlot == b.objectivePerSlot);
        QVERIFY(a.objectivePerUpdate == b.objectivePerUpdate);
        QVERIFY(a.blockGradNormSq == b.blockGradNormSq);
        QVERIFY(!a.objectivePerUpdate.empty());
        // ... and noise does change the run, the same way every time.
        json noisy = plain;
        noisy["objective"]["gradient_noise"] = 0.3;
        const RunResult c = runConfig(noisy);
        const RunResult d = runConfig(noisy);
        QVERIFY(c.objectivePerUpdate != a.objectivePerUpdate);
        QVERIFY(c.objectivePerUpdate == d.objectivePerUpdate);
    }

    void noiseSeedDefaultsToTheDataSeed() {
        json dflt = baseConfig("pd");
        dflt["objective"]["gradient_noise"] = 0.3;
        json same = dflt;
        same["objective"]["noise_seed"] = 4;  // the data seed
        json other = dflt;
        other["objective"]["noise_seed"] = 5;
        const RunResult a = runConfig(dflt);
        QVERIFY(runConfig(same).objectivePerUpdate == a.objectivePerUpdate);
        QVERIFY(runConfig(other).objectivePerUpdate != a.objectivePerUpdate);
    }

    void pipelineBackwardsDrawInProcessingOrder() {
        // Two stages; F(0, 0), F(0, 1), then in one slot-batch B(0, 1) and B(0, 0): the first
        // draw goes to block 1, the second to block 0.
        auto obj = smallObjective();
        PipelineLayout layout;
        layout.blocks = splitBlocks(obj->dim(), 2);  // sizes 4 and 3
        layout.stashSlots = {1, 1};
        const VectorXd w0 = VectorXd::Zero(obj->dim());
        const double gamma = 0.1;
        const double sigma = 0.7;
        auto run = [&](bool noise) {
            CpuBackend b;
            b.preparePipeline(*obj, layout, w0);
            if (noise) b.setGradientNoise(sigma, 11);
            std::vector<UpdateSample> samples;
            const std::vector<PipelineOp> forwards{{OpKind::Forward, 0, 1, 0, 0, 0},
                                                   {OpKind::Forward, 1, 1, 0, 0, 0}};
            const std::vector<PipelineOp> backwards{{OpKind::Backward, 1, 1, 0, 0, 0},
                                                    {OpKind::Backward, 0, 1, 0, 0, 0}};
            b.runOps(forwards, gamma, false, samples);
            b.runOps(backwards, gamma, false, samples);
            return b.weights();
        };
        const VectorXd diff = run(true) - run(false);
        const auto z = numpyNormals(11, sigma, {3, 4});  // block 1 first, then block 0
        QVERIFY((diff.segment(4, 3) + gamma * z[0]).norm() < 1e-13);
        QVERIFY((diff.segment(0, 4) + gamma * z[1]).norm() < 1e-13);
    }

    void rpdStepDrawsFromTheLastBlockDown() {
        auto obj = smallObjective();
        const auto blocks = splitBlocks(obj->dim(), 3);  // sizes 3, 2, 2
        const VectorXd w0 = VectorXd::Zero(obj->dim());
        const double gamma = 0.2;
        const double sigma = 0.5;
        const std::vector<int> delays{0, 0, 0};
        for (int stage = 0; stage < 3; ++stage) {
            auto step = [&](bool noise) {
                CpuBackend b;
                b.prepareRpd(*obj, blocks, 1, w0);
                if (noise) b.setGradientNoise(sigma, 21);
                b.rpdStep(delays, stage, 2, gamma, false);
                return b.weights();
            };
            const VectorXd diff = step(true) - step(false);
            // Draws for blocks 2, 1, ... down to `stage`; only the last one is applied.
            std::vector<int> sizes;
            for (int j = 2; j >= stage; --j) sizes.push_back(blocks[static_cast<size_t>(j)].size);
            const VectorXd used = numpyNormals(21, sigma, sizes).back();
            const BlockRange& blk = blocks[static_cast<size_t>(stage)];
            QVERIFY((diff.segment(blk.offset, blk.size) + gamma * used).norm() < 1e-13);
            QCOMPARE((diff.norm() - diff.segment(blk.offset, blk.size).norm()), 0.0);
        }
    }

    void negativeSigmaIsRefused() {
        json bad = baseConfig("pd");
        bad["objective"]["gradient_noise"] = -0.1;
        try {
            ExperimentConfig::fromJson(bad);
            QFAIL("accepted a negative sigma");
        } catch (const ConfigError& e) {
            QVERIFY(std::string(e.what()).find("objective.gradient_noise = -0.1") !=
                    std::string::npos);
        }
    }
};

QTEST_APPLESS_MAIN(TestNoise)
#include "tst_noise.moc"

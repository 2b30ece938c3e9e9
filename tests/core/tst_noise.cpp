// Gradient noise (SPEC section 6): sigma = 0 changes nothing, bit for bit, for every method; the
// noise is NumPy's normal(scale = sigma) from default_rng(seed), drawn per backward in
// processing order, and for an RPD step for blocks S-1 ... s keeping only block s's; runs are
// reproducible and the seed defaults to the data seed. objective.noise_stream = shared: run j
// starts where runs 0 ... j-1 left one default_rng(seed), counted by hand here.
#include <QtTest>

#include <memory>
#include <vector>

#include "compute/cpu_backend.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/shared_noise.hpp"
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

// Four runs on one shared stream: PD with a step that diverges at once (its whole count must
// still be skipped), RPD, LocalSGD, PD.
json sharedConfig() {
    json j = baseConfig("pd");
    j["objective"]["gradient_noise"] = 0.3;
    j["objective"]["noise_stream"] = "shared";
    j["methods"] = json::array({{{"method", "pd"}, {"step_size", 1e9}},
                                {{"method", "rpd"}, {"step_size", 0.05}, {"delta", 3}},
                                {{"method", "localsgd"}, {"step_size", 0.05}},
                                {{"method", "pd"}, {"step_size", 0.05}}});
    return j;
}

// What an RPD run with uniform stages and delays draws, from its own seed, written out from
// SPEC section 6 (not from the replay): per update stage = integers(S), the index into PD's N =
// ceil(K / S) microbatches = integers(N), then S delays integers(min(delta, k) + 1); the noise
// of blocks stage ... S-1.
std::int64_t rpdNormalsByHand(std::uint64_t seed, long long updates, long long delta,
                              const std::vector<BlockRange>& blocks) {
    const auto S = static_cast<std::int64_t>(blocks.size());
    NumpyRandom rng(seed);
    std::int64_t total = 0;
    for (long long k = 0; k < updates; ++k) {
        const std::int64_t stage = rng.integers(S);
        rng.integers((updates + S - 1) / S);
        for (std::int64_t j = 0; j < S; ++j) rng.integers(std::min(delta, k) + 1);
        for (std::int64_t j = stage; j < S; ++j) total += blocks[static_cast<size_t>(j)].size;
    }
    return total;
}

std::shared_ptr<const NumpyRandom> advancedStream(std::uint64_t seed, std::int64_t normals) {
    NumpyRandom rng(seed);
    for (std::int64_t i = 0; i < normals; ++i) rng.standardNormal();
    return std::make_shared<const NumpyRandom>(rng);
}

bool sameRun(const RunResult& a, const RunResult& b) {
    return a.objectivePerSlot == b.objectivePerSlot &&
           a.objectivePerUpdate == b.objectivePerUpdate && a.blockGradNormSq == b.blockGradNormSq;
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
            if (noise) b.setGradientNoise(sigma, NumpyRandom(11));
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
                if (noise) b.setGradientNoise(sigma, NumpyRandom(21));
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

    // A shared run j equals the same run started by hand from default_rng(noise seed) after
    // the normals runs 0 ... j-1 draw: PD and LocalSGD N x d, RPD its stages' blocks (counted
    // above from its seed); the diverged first run counts whole.
    void sharedStreamRunStartsWhereTheEarlierRunsLeftIt() {
        const ExperimentConfig c = ExperimentConfig::fromJson(sharedConfig());
        QCOMPARE(c.objective.noiseStream, NoiseStream::Shared);
        RunOptions o;
        o.threads = 2;
        const ExperimentResult shared = runExperiment(c, o);
        QVERIFY(shared.methods.at(0).result.divergence.diverged);
        auto objective = buildObjective(c);
        const ExperimentPlan plan = planExperiment(c, *objective);
        const int d = objective->dim();
        const auto blocks = splitBlocks(d, c.stages);
        const std::uint64_t seed = 4;  // the data seed
        std::int64_t before = 0;
        for (size_t i = 0; i < plan.runs.size(); ++i) {
            MethodRun run = plan.runs[i];
            run.noiseStart = advancedStream(seed, before);
            const RunResult byHand =
                runOne(c, run, c.methods[i].step.value, objective, cpuBackendProvider());
            QVERIFY2(sameRun(shared.methods.at(i).result, byHand), qPrintable(QString::number(i)));
            if (i > 0) {
                // ... and not the run a fresh stream gives.
                run.noiseStart.reset();
                const RunResult fresh =
                    runOne(c, run, c.methods[i].step.value, objective, cpuBackendProvider());
                QVERIFY(!sameRun(shared.methods.at(i).result, fresh));
            }
            if (run.pipeline()) {
                before += static_cast<std::int64_t>(run.schedule.microbatches) * d;
            } else {
                before += rpdNormalsByHand(c.seed, run.updates, run.delta, blocks);
            }
        }
        // The counts the code uses are the same.
        std::int64_t counted = 0;
        for (const MethodRun& r : plan.runs) counted += noiseNormalsOf(c, r, *objective);
        QCOMPARE(counted, before);
    }

    // Within a method the grid's runs follow one another, smallest step first; seed s has its
    // own stream default_rng(noise seed + s), its first run starting at that stream's start.
    void sharedStreamOrdersGridsAndSeeds() {
        json j = sharedConfig();
        j["seeds"] = 2;
        j["methods"] = json::array({{{"method", "pd"}, {"step_size", {{"grid", {-3, -1}}}}},
                                    {{"method", "localsgd"}, {"step_size", 0.05}}});
        const ExperimentConfig c = ExperimentConfig::fromJson(j);
        auto objective = buildObjective(c);
        ExperimentPlan plan = planExperiment(c, *objective);
        placeSharedNoise(c, plan.runs, *objective);
        const std::int64_t pd = static_cast<std::int64_t>(plan.runs[0].schedule.microbatches) * 10;
        const std::int64_t local =
            static_cast<std::int64_t>(plan.runs[1].schedule.microbatches) * 10;
        QCOMPARE(noiseNormalsOf(c, plan.runs[0], *objective), pd);
        QCOMPARE(noiseNormalsOf(c, plan.runs[1], *objective), local);
        QCOMPARE(plan.runs[0].noiseStarts.size(), std::size_t(6));  // 2 seeds x 3 steps
        QCOMPARE(plan.runs[1].noiseStarts.size(), std::size_t(2));
        const auto sameStart = [](const NumpyRandom& a, const NumpyRandom& b) {
            NumpyRandom x = a;
            NumpyRandom y = b;
            for (int i = 0; i < 8; ++i) {
                if (x.nextU64() != y.nextU64()) return false;
            }
            return true;
        };
        for (std::uint64_t s = 0; s < 2; ++s) {
            for (int t = 0; t < 3; ++t) {
                QVERIFY(sameStart(*plan.runs[0].noiseStarts[s * 3 + static_cast<size_t>(t)],
                                  *advancedStream(4 + s, t * pd)));
            }
            QVERIFY(sameStart(*plan.runs[1].noiseStarts[s], *advancedStream(4 + s, 3 * pd)));
        }
        // The grid's chosen run, seed 0, is that step's run from its start.
        RunOptions o;
        o.threads = 1;
        const ExperimentResult r = runExperiment(c, o);
        const MethodRun& m = r.methods.at(0);
        MethodRun run = plan.runs[0];
        run.noiseStart = advancedStream(4, m.chosen * pd);
        const RunResult byHand = runOne(c, run, m.grid.at(static_cast<size_t>(m.chosen)).stepSize,
                                        objective, cpuBackendProvider());
        QVERIFY(sameRun(m.result, byHand));
    }

    // per_run (the default) is today's rule, bit for bit: each run its own default_rng(seed).
    void perRunIsTheDefault() {
        json j = sharedConfig();
        j["objective"].erase("noise_stream");
        json perRun = j;
        perRun["objective"]["noise_stream"] = "per_run";
        const ExperimentConfig c = ExperimentConfig::fromJson(perRun);
        QCOMPARE(c.objective.noiseStream, NoiseStream::PerRun);
        QVERIFY(c == ExperimentConfig::fromJson(j));
        QVERIFY(!c.toJson().at("objective").contains("noise_stream"));
        const ExperimentResult a = runExperiment(c);
        auto objective = buildObjective(c);
        const ExperimentPlan plan = planExperiment(c, *objective);
        for (size_t i = 0; i < plan.runs.size(); ++i) {
            QVERIFY(plan.runs[i].noiseStarts.empty());
            const RunResult fresh =
                runOne(c, plan.runs[i], c.methods[i].step.value, objective, cpuBackendProvider());
            QVERIFY(sameRun(a.methods.at(i).result, fresh));
        }
        // Written back only when shared, and read back the same.
        const ExperimentConfig s = ExperimentConfig::fromJson(sharedConfig());
        QCOMPARE(s.toJson().at("objective").at("noise_stream").get<std::string>(),
                 std::string("shared"));
        QVERIFY(ExperimentConfig::fromJson(s.toJson()) == s);
    }

    void noiseStreamValuesAreChecked() {
        const auto refused = [](const json& j, const std::vector<std::string>& parts) {
            try {
                ExperimentConfig::fromJson(j);
            } catch (const ConfigError& e) {
                const std::string what = e.what();
                for (const std::string& p : parts) {
                    if (what.find(p) == std::string::npos) return "\"" + p + "\" not in: " + what;
                }
                return std::string();
            }
            return std::string("accepted");
        };
        json unknown = sharedConfig();
        unknown["objective"]["noise_stream"] = "global";
        std::string why =
            refused(unknown, {"objective.noise_stream", "\"global\"", "per_run", "shared"});
        QVERIFY2(why.empty(), why.c_str());
        // No noise to share: refused, naming both keys.
        json quiet = sharedConfig();
        quiet["objective"].erase("gradient_noise");
        why =
            refused(quiet, {"objective.noise_stream = \"shared\"", "objective.gradient_noise = 0"});
        QVERIFY2(why.empty(), why.c_str());
        // The language model has no gradient noise: the key is refused there.
        const json lm = {{"name", "lm"},
                         {"objective", {{"kind", "char_transformer"}, {"noise_stream", "shared"}}},
                         {"budget", {{"microbatches", 4}}},
                         {"methods", json::array({{{"method", "pd"}, {"step_size", 0.01}}})}};
        why = refused(lm, {"objective.noise_stream", "char_transformer", "no gradient noise"});
        QVERIFY2(why.empty(), why.c_str());
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

// The character transformer's stages against the authors' model (../shared/golden-lm stage_check)
// and against finite differences.
#include <QtTest>

#include <cmath>
#include <functional>
#include <vector>

#include "errors.hpp"
#include "lm_golden_case.hpp"
#include "objective/lm/lm_kernels.hpp"
#include "objective/lm/lm_model.hpp"
#include "objective/lm/lm_random.hpp"

using namespace pipelens;

namespace {

// Every stage's forward and backward at w0 on dataset batch 0, chained as the pipeline chains
// them; returns the largest relative error seen and fills `report`.
template <typename Real>
double stageCheck(const std::string& name, QString& report) {
    const auto problem = golden_lm::problem(name);
    CharTransformer<Real> model(problem->layout);
    const LmLayout& layout = problem->layout;
    const int S = layout.stages();
    std::vector<Real> w(static_cast<std::size_t>(layout.size()));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<Real>(problem->w0[static_cast<Eigen::Index>(i)]);
    const int* tokens = problem->train.tokens(0);
    const int* targets = problem->train.targets(0);
    const std::string sc = "stage_check/";
    double worst = 0.0;
    auto check = [&](const std::string& what, const std::vector<Real>& mine,
                     const std::string& file) {
        const double e = golden_lm::maxRelError(mine, golden_lm::npy(name, sc + file));
        report += QString("%1 %2\n").arg(QString::fromStdString(what)).arg(e, 0, 'g', 3);
        worst = std::max(worst, e);
    };
    std::vector<std::vector<Real>> out(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
        out[static_cast<std::size_t>(s)].resize(
            static_cast<std::size_t>(model.stage(s).outputSize()));
        const Real* in = s == 0 ? nullptr : out[static_cast<std::size_t>(s - 1)].data();
        model.stage(s).forward(w.data() + layout.stage(s).offset, tokens, in,
                               out[static_cast<std::size_t>(s)].data());
        check("stage" + std::to_string(s) + "_output", out[static_cast<std::size_t>(s)],
              "stage" + std::to_string(s) + "_output.npy");
    }
    const BlockStage<Real>& b1 = *model.stage(1).block();
    check("stage1_ln1_out", b1.ln1Out(), "stage1_ln1_out.npy");
    check("stage1_qkv", b1.qkv(), "stage1_qkv.npy");
    check("stage1_attn_heads_merged", b1.headsMerged(), "stage1_attn_heads_merged.npy");
    check("stage1_attn_out", b1.attnOut(), "stage1_attn_out.npy");
    check("stage1_ln2_in", b1.ln2In(), "stage1_ln2_in.npy");
    check("stage1_ln2_out", b1.ln2Out(), "stage1_ln2_out.npy");
    check("stage1_mlp_pre_gelu", b1.mlpPreGelu(), "stage1_mlp_pre_gelu.npy");
    check("stage1_mlp_gelu_out", b1.mlpGeluOut(), "stage1_mlp_gelu_out.npy");
    check("stage1_mlp_out", b1.mlpOut(), "stage1_mlp_out.npy");

    const LmDims& d = layout.dims();
    std::vector<Real> grad(out.back().size());
    const double loss = crossEntropy(out.back().data(), targets, d.tokens(), d.vocab, grad.data());
    const double goldenLoss = golden_lm::caseJson(name)["stage_check"]["loss"];
    const double lossErr = std::abs(loss - goldenLoss) / goldenLoss;
    report += QString("loss %1\n").arg(lossErr, 0, 'g', 3);
    worst = std::max(worst, lossErr);
    for (int s = S - 1; s >= 0; --s) {
        const std::string st = "stage" + std::to_string(s);
        check(st + "_grad_output", grad, st + "_grad_output.npy");
        std::vector<Real> gw(static_cast<std::size_t>(layout.stage(s).size));
        std::vector<Real> gin(static_cast<std::size_t>(d.tokens()) *
                              static_cast<std::size_t>(d.width));
        model.stage(s).backward(w.data() + layout.stage(s).offset, grad.data(), gw.data(),
                                gin.data());
        check(st + "_grad_params", gw, st + "_grad_params.npy");
        if (s > 0) check(st + "_grad_input", gin, st + "_grad_input.npy");
        grad = gin;
    }
    return worst;
}

// 4-point central difference of f at x along coordinate i (restored afterwards).
double fd4(const std::function<double()>& f, double& x, double h) {
    const double x0 = x;
    x = x0 + h;
    const double p1 = f();
    x = x0 - h;
    const double m1 = f();
    x = x0 + 2 * h;
    const double p2 = f();
    x = x0 - 2 * h;
    const double m2 = f();
    x = x0;
    return (8 * (p1 - m1) - (p2 - m2)) / (12 * h);
}

// Checks the gradient `analytic` of f w.r.t. `vars` on its largest entry per segment and a few
// seeded ones; returns the largest relative error over entries that are not tiny.
double fdError(const std::function<double()>& f, std::vector<double>& vars,
               const std::vector<double>& analytic,
               const std::vector<std::pair<long long, long long>>& segments) {
    LmRandom rng(11);
    const double h = 1e-3;
    double worst = 0.0;
    double scale = 0.0;
    for (double g : analytic) scale = std::max(scale, std::abs(g));
    for (const auto& [off, n] : segments) {
        std::vector<long long> picks;
        long long best = off;
        for (long long i = off; i < off + n; ++i) {
            if (std::abs(analytic[static_cast<std::size_t>(i)]) >
                std::abs(analytic[static_cast<std::size_t>(best)]))
                best = i;
        }
        picks.push_back(best);
        for (int k = 0; k < 3; ++k)
            picks.push_back(off + static_cast<long long>(rng.below(static_cast<std::uint64_t>(n))));
        for (long long i : picks) {
            const double g = analytic[static_cast<std::size_t>(i)];
            if (std::abs(g) < 1e-4 * scale) continue;  // too small to compare relatively
            const double num = fd4(f, vars[static_cast<std::size_t>(i)], h);
            worst = std::max(worst, std::abs(num - g) / std::abs(g));
        }
    }
    return worst;
}

LmDims smallDims() {
    return LmDims{4, 12, 3, 5, 2, 7};
}

std::vector<int> seededTokens(int n, int vocab, std::uint64_t seed) {
    LmRandom rng(seed);
    std::vector<int> t(static_cast<std::size_t>(n));
    for (int& v : t) v = static_cast<int>(rng.below(static_cast<std::uint64_t>(vocab)));
    return t;
}

std::vector<double> seededVector(std::size_t n, std::uint64_t seed, double scale = 1.0) {
    LmRandom rng(seed);
    std::vector<double> v(n);
    for (double& x : v) x = scale * rng.normal();
    return v;
}

// Selects a kernel path for one test and restores the previous one after it.
struct KernelsSetting {
    explicit KernelsSetting(bool fast) : previous(lmk::setFastKernels(fast)) {}
    ~KernelsSetting() { lmk::setFastKernels(previous); }
    bool previous;
};

}  // namespace

class TestLmModel : public QObject {
    Q_OBJECT
  private slots:
    void layoutMatchesTheGoldenCases_data() {
        QTest::addColumn<QString>("name");
        for (const auto& n : golden_lm::cases())
            QTest::newRow(n.c_str()) << QString::fromStdString(n);
    }
    void layoutMatchesTheGoldenCases() {
        QFETCH(QString, name);
        const auto c = golden_lm::caseJson(name.toStdString());
        const auto problem = golden_lm::problem(name.toStdString());
        QCOMPARE(problem->corpus.vocabUtf8(), c["vocab"].get<std::string>());
        QCOMPARE(problem->train.batches(), c["dataset_batches"].get<int>());
        QCOMPARE(problem->layout.size(), c["num_parameters"].get<long long>());
        const auto& stages = c["parameter_layout"];
        QCOMPARE(problem->layout.stages(), static_cast<int>(stages.size()));
        for (int s = 0; s < problem->layout.stages(); ++s) {
            const LmStageLayout& mine = problem->layout.stage(s);
            QCOMPARE(mine.offset, stages[s]["offset"].get<long long>());
            QCOMPARE(mine.size, stages[s]["size"].get<long long>());
            const auto& tensors = stages[s]["tensors"];
            QCOMPARE(mine.tensors.size(), tensors.size());
            for (std::size_t i = 0; i < tensors.size(); ++i) {
                QCOMPARE(mine.tensors[i].name, tensors[i]["name"].get<std::string>());
                QCOMPARE(mine.tensors[i].shape, tensors[i]["shape"].get<std::vector<int>>());
                QCOMPARE(mine.tensors[i].offset, tensors[i]["offset"].get<long long>());
            }
        }
    }

    // Both kernel paths: the AVX2 + FMA one (when this CPU has it) and the portable Eigen one.
    void stagesMatchTheAuthorsModelInDouble_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("fast");
        for (const auto& n : golden_lm::cases()) {
            QTest::newRow((n + " avx2").c_str()) << QString::fromStdString(n) << true;
            QTest::newRow((n + " portable").c_str()) << QString::fromStdString(n) << false;
        }
    }
    void stagesMatchTheAuthorsModelInDouble() {
        QFETCH(QString, name);
        QFETCH(bool, fast);
        if (fast && !lmk::cpuHasAvx2Fma()) QSKIP("no AVX2 + FMA on this CPU");
        const KernelsSetting kernels(fast);
        QString report;
        const double worst = stageCheck<double>(name.toStdString(), report);
        qInfo("%s: largest relative error %.3g (double)", qPrintable(name), worst);
        QVERIFY2(worst <= 1e-10, qPrintable(report));
    }

    // float: rounding of 24-bit numbers through a few stages (documented in
    // docs/language-model.md).
    void stagesMatchTheAuthorsModelInFloat_data() { stagesMatchTheAuthorsModelInDouble_data(); }
    void stagesMatchTheAuthorsModelInFloat() {
        QFETCH(QString, name);
        QFETCH(bool, fast);
        if (fast && !lmk::cpuHasAvx2Fma()) QSKIP("no AVX2 + FMA on this CPU");
        const KernelsSetting kernels(fast);
        QString report;
        const double worst = stageCheck<float>(name.toStdString(), report);
        qInfo("%s: largest relative error %.3g (float)", qPrintable(name), worst);
        QVERIFY2(worst <= 2e-6, qPrintable(report));
    }

    // The packed product against a plain triple loop: sizes that are not multiples of the
    // micro-tile, K over one block, every stride pattern the stages use, written and added.
    void fastProductMatchesAPlainLoop_data() {
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<bool>("transA");
        QTest::addColumn<bool>("transB");
        QTest::addColumn<bool>("accumulate");
        QTest::newRow("13x37x300") << 13 << 37 << 300 << false << true << false;
        QTest::newRow("6x16x1 added") << 6 << 16 << 1 << false << false << true;
        QTest::newRow("97x1030x40 A^T") << 97 << 1030 << 40 << true << false << false;
        QTest::newRow("32x32x16 both^T added") << 32 << 32 << 16 << true << true << true;
        QTest::newRow("5x3x513") << 5 << 3 << 513 << false << false << false;
    }
    void fastProductMatchesAPlainLoop() {
        if (!lmk::cpuHasAvx2Fma()) QSKIP("no AVX2 + FMA on this CPU");
        QFETCH(int, M);
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(bool, transA);
        QFETCH(bool, transB);
        QFETCH(bool, accumulate);
        auto run = [&](auto zero) {
            using Real = decltype(zero);
            std::vector<Real> a(static_cast<std::size_t>(M) * K),
                b(static_cast<std::size_t>(K) * N);
            std::vector<Real> c(static_cast<std::size_t>(M) * (N + 3)), expected;
            for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<Real>(std::sin(0.37 * i));
            for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<Real>(std::cos(0.11 * i));
            for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<Real>(0.5 - 0.01 * i);
            expected = c;
            const std::ptrdiff_t ldc = N + 3;  // a wider C: the extra columns stay untouched
            const std::ptrdiff_t rsA = transA ? 1 : K, csA = transA ? M : 1;
            const std::ptrdiff_t rsB = transB ? 1 : N, csB = transB ? K : 1;
            for (int i = 0; i < M; ++i) {
                for (int j = 0; j < N; ++j) {
                    double sum = 0.0;
                    for (int k = 0; k < K; ++k) {
                        sum += static_cast<double>(a[static_cast<std::size_t>(i * rsA + k * csA)]) *
                               static_cast<double>(b[static_cast<std::size_t>(k * rsB + j * csB)]);
                    }
                    Real& e = expected[static_cast<std::size_t>(i * ldc + j)];
                    e = static_cast<Real>(accumulate ? e + sum : sum);
                }
            }
            lmk::gemm<Real>(M, N, K, a.data(), rsA, csA, b.data(), rsB, csB, c.data(), ldc,
                            accumulate);
            double worst = 0.0;
            for (std::size_t i = 0; i < c.size(); ++i) {
                worst = std::max(worst, std::abs(static_cast<double>(c[i] - expected[i])));
            }
            return worst / std::sqrt(static_cast<double>(K));
        };
        const double errDouble = run(0.0);
        const double errFloat = run(0.0f);
        QVERIFY2(errDouble < 1e-14, qPrintable(QString::number(errDouble)));
        QVERIFY2(errFloat < 1e-6, qPrintable(QString::number(errFloat)));
    }

    void embeddingGradientMatchesFiniteDifferences() {
        const LmDims d = smallDims();
        const LmLayout layout(d);
        EmbeddingStage<double> stage(d);
        const auto tokens = seededTokens(d.tokens(), d.vocab, 1);
        auto w = seededVector(static_cast<std::size_t>(LmLayout::embeddingSize(d)), 2);
        const auto r = seededVector(static_cast<std::size_t>(d.tokens() * d.width), 3);
        std::vector<double> out(r.size());
        auto f = [&] {
            stage.forward(w.data(), tokens.data(), out.data());
            double s = 0;
            for (std::size_t i = 0; i < out.size(); ++i) s += r[i] * out[i];
            return s;
        };
        f();
        std::vector<double> gw(w.size());
        stage.backward(r.data(), gw.data());
        const double e =
            fdError(f, w, gw, {{0, d.vocab * d.width}, {d.vocab * d.width, d.context * d.width}});
        QVERIFY2(e < 1e-9, qPrintable(QString::number(e)));
    }

    void blockGradientsMatchFiniteDifferences() {
        const LmDims d = smallDims();
        BlockStage<double> stage(d);
        const LmBlockOffsets at(d.width);
        auto w = seededVector(static_cast<std::size_t>(at.size), 4, 0.4);
        for (long long i = 0; i < d.width; ++i) {  // LayerNorm gains near 1
            w[static_cast<std::size_t>(at.ln1Weight + i)] += 1.0;
            w[static_cast<std::size_t>(at.ln2Weight + i)] += 1.0;
        }
        auto x = seededVector(static_cast<std::size_t>(d.tokens() * d.width), 5);
        const auto r = seededVector(x.size(), 6);
        std::vector<double> out(x.size());
        auto f = [&] {
            stage.forward(w.data(), x.data(), out.data());
            double s = 0;
            for (std::size_t i = 0; i < out.size(); ++i) s += r[i] * out[i];
            return s;
        };
        f();
        std::vector<double> gw(w.size());
        std::vector<double> gx(x.size());
        stage.backward(w.data(), r.data(), gw.data(), gx.data());
        std::vector<std::pair<long long, long long>> tensors;
        const LmLayout layout(d);  // named: a range-for over a temporary's member would dangle
        for (const LmTensor& t : layout.stage(1).tensors) {
            tensors.emplace_back(t.offset - layout.stage(1).offset, t.numel);
        }
        const double ew = fdError(f, w, gw, tensors);
        const double ex = fdError(f, x, gx, {{0, static_cast<long long>(x.size())}});
        QVERIFY2(ew < 1e-8, qPrintable(QString::number(ew)));
        QVERIFY2(ex < 1e-8, qPrintable(QString::number(ex)));
    }

    void headGradientsMatchFiniteDifferences() {
        const LmDims d = smallDims();
        HeadStage<double> stage(d);
        auto w = seededVector(static_cast<std::size_t>(LmLayout::headSize(d)), 7, 0.5);
        for (int i = 0; i < d.width; ++i) w[static_cast<std::size_t>(i)] += 1.0;
        auto x = seededVector(static_cast<std::size_t>(d.tokens() * d.width), 8);
        const auto targets = seededTokens(d.tokens(), d.vocab, 9);
        std::vector<double> logits(static_cast<std::size_t>(d.tokens() * d.vocab));
        std::vector<double> gl(logits.size());
        auto f = [&] {
            stage.forward(w.data(), x.data(), logits.data());
            return crossEntropy(logits.data(), targets.data(), d.tokens(), d.vocab, gl.data());
        };
        f();
        std::vector<double> gw(w.size());
        std::vector<double> gx(x.size());
        stage.backward(w.data(), gl.data(), gw.data(), gx.data());
        const double ew =
            fdError(f, w, gw, {{0, d.width}, {d.width, d.width}, {2 * d.width, d.vocab * d.width}});
        const double ex = fdError(f, x, gx, {{0, static_cast<long long>(x.size())}});
        QVERIFY2(ew < 1e-8, qPrintable(QString::number(ew)));
        QVERIFY2(ex < 1e-8, qPrintable(QString::number(ex)));
    }

    void wholeModelGradientMatchesFiniteDifferences() {
        const LmDims d = smallDims();
        const LmLayout layout(d);
        CharTransformer<double> model(layout);
        const Eigen::VectorXd init = seededLmInit(layout, 3);
        std::vector<double> w(init.data(), init.data() + init.size());
        const auto tokens = seededTokens(d.tokens() + 1, d.vocab, 10);
        auto f = [&] { return model.loss(w.data(), tokens.data(), tokens.data() + 1); };
        std::vector<double> g(w.size());
        model.lossAndGradient(w.data(), tokens.data(), tokens.data() + 1, g.data());
        std::vector<std::pair<long long, long long>> tensors;
        for (int s = 0; s < layout.stages(); ++s) {
            for (const LmTensor& t : layout.stage(s).tensors)
                tensors.emplace_back(t.offset, t.numel);
        }
        const double e = fdError(f, w, g, tensors);
        qInfo("whole model: largest finite-difference relative error %.3g", e);
        QVERIFY2(e < 1e-8, qPrintable(QString::number(e)));
    }

    void stageGradientEqualsTheWholeModelsBlock() {
        // RPD's partial backward (down to stage s only) gives exactly the full gradient's block.
        const LmDims d = smallDims();
        const LmLayout layout(d);
        CharTransformer<double> model(layout);
        const Eigen::VectorXd w = seededLmInit(layout, 4);
        const auto tokens = seededTokens(d.tokens() + 1, d.vocab, 12);
        std::vector<double> full(static_cast<std::size_t>(layout.size()));
        model.lossAndGradient(w.data(), tokens.data(), tokens.data() + 1, full.data());
        std::vector<const double*> blocks;
        blocks.reserve(static_cast<std::size_t>(layout.stages()));
        for (int s = 0; s < layout.stages(); ++s)
            blocks.push_back(w.data() + layout.stage(s).offset);
        for (int s = 0; s < layout.stages(); ++s) {
            std::vector<double> g(static_cast<std::size_t>(layout.stage(s).size));
            model.lossAndStageGradient(blocks, tokens.data(), tokens.data() + 1, s, g.data());
            for (std::size_t i = 0; i < g.size(); ++i) {
                QCOMPARE(g[i], full[static_cast<std::size_t>(layout.stage(s).offset) + i]);
            }
        }
    }

    void seededInitFollowsPyTorchsDistributions() {
        const LmLayout layout(LmDims{4, 16, 2, 8, 4, 40});
        const Eigen::VectorXd a = seededLmInit(layout, 5);
        QCOMPARE(a, seededLmInit(layout, 5));
        QVERIFY(a != seededLmInit(layout, 6));
        for (const LmTensor& t : layout.stage(1).tensors) {
            const auto v = a.segment(t.offset, t.numel);
            if (t.name == "ln_1.weight") QCOMPARE(v.minCoeff(), 1.0);
            if (t.name == "ln_1.bias") QCOMPARE(v.maxCoeff(), 0.0);
            if (t.name == "mlp.2.weight") QVERIFY(v.cwiseAbs().maxCoeff() <= 1.0 / std::sqrt(64.0));
            if (t.name == "attn.c_attn.weight") QVERIFY(v.cwiseAbs().maxCoeff() <= 0.25);
        }
        const auto tok = a.segment(0, 40 * 16);
        const double mean = tok.mean();
        const double sd = std::sqrt((tok.array() - mean).square().mean());
        QVERIFY2(std::abs(mean) < 0.1 && std::abs(sd - 1.0) < 0.1, qPrintable(QString::number(sd)));
    }

    void badSizesAreClearErrors() {
        QVERIFY_THROWS_EXCEPTION(ConfigError, LmLayout(LmDims{2, 16, 2, 8, 4, 10}));
        try {
            LmLayout(LmDims{4, 16, 3, 8, 4, 10});  // NOLINT(bugprone-unused-raii): built to throw
            QFAIL("heads must divide width");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("heads = 3") != std::string::npos, e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestLmModel)
#include "tst_lm_model.moc"

// Text sampled from the character model: seeded and deterministic, only vocabulary characters,
// padding after a short window never read, and a trained model's samples look more like the
// corpus (by the corpus's own character bigrams) than an untrained one's.
#include <QtTest>

#include <cmath>
#include <map>
#include <memory>

#include "errors.hpp"
#include "lm_builtin_problem.hpp"
#include "objective/lm/lm_model.hpp"
#include "objective/lm/lm_sampling.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;

namespace {

Eigen::VectorXd trained(const std::shared_ptr<const CharTransformerProblem>& p) {
    LmPipelineConfig cfg;
    cfg.timeline = buildTimeline(
        ScheduleParams{ScheduleKind::PipeDream, 4, 200, 0, 0, 1, 0, {}, nullptr, false});
    cfg.stepSize = 0.5;
    auto run = makeLmPipelineReplay(p, cfg);
    run->runToEnd();
    return run->weights();
}

// Mean log-probability per character under the corpus's bigram model (add-one smoothing): a
// judge that knows nothing of the transformer.
double bigramLogLikelihood(const TextCorpus& corpus, const std::vector<int>& text) {
    const int V = corpus.vocabSize();
    std::vector<double> pair(static_cast<std::size_t>(V) * V, 1.0);
    std::vector<double> from(static_cast<std::size_t>(V), V);
    for (std::size_t i = 1; i < corpus.ids.size(); ++i) {
        pair[static_cast<std::size_t>(corpus.ids[i - 1]) * V + corpus.ids[i]] += 1.0;
        from[static_cast<std::size_t>(corpus.ids[i - 1])] += 1.0;
    }
    double sum = 0.0;
    for (std::size_t i = 1; i < text.size(); ++i) {
        sum += std::log(pair[static_cast<std::size_t>(text[i - 1]) * V + text[i]] /
                        from[static_cast<std::size_t>(text[i - 1])]);
    }
    return sum / static_cast<double>(text.size() - 1);
}

}  // namespace

class TestLmSampling : public QObject {
    Q_OBJECT
  private slots:
    void deterministicForASeedAndOnlyVocabulary() {
        const auto p = builtInProblem(LmPrecision::Double);
        const Eigen::VectorXd w = trained(p);
        const int V = p->corpus.vocabSize();
        const auto a = sampleTokens(*p, w, 7, 100);  // longer than T = 16: the window slides
        QCOMPARE(a.size(), std::size_t(101));        // the prompt, then 100
        QCOMPARE(a.front(), p->corpus.ids.front());
        QCOMPARE(sampleTokens(*p, w, 7, 100), a);
        QVERIFY(sampleTokens(*p, w, 8, 100) != a);
        for (int id : a) QVERIFY(id >= 0 && id < V);
        const std::string text = sampleText(*p, w, 7, 100);
        const TextCorpus decoded = corpusFromUtf8(text, "sample");
        for (char32_t c : decoded.vocab) QVERIFY(p->corpus.vocab.find(c) != std::u32string::npos);
        QCOMPARE(decoded.length(), 101LL);
        // A temperature near 0 is greedy: the seed no longer matters.
        QCOMPARE(sampleTokens(*p, w, 1, 60, 1e-4), sampleTokens(*p, w, 2, 60, 1e-4));
        try {
            sampleTokens(*p, w, 1, 10, 0.0);
            QFAIL("temperature 0 must be refused");
        } catch (const ConfigError& e) {
            QVERIFY(std::string(e.what()).find("temperature") != std::string::npos);
        }
    }

    // A window shorter than T is padded after its end; causal attention never reads the padding.
    void paddingAfterTheWindowIsNeverRead() {
        const auto p = builtInProblem(LmPrecision::Double);
        LmDims one = p->layout.dims();
        one.batch = 1;
        CharTransformer<double> model{LmLayout(one)};
        const int T = one.context;
        const int V = one.vocab;
        std::vector<int> a(static_cast<std::size_t>(T), 0);
        std::vector<int> b(static_cast<std::size_t>(T), V - 1);
        for (int i = 0; i < 5; ++i)
            a[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>(i)] =
                p->corpus.ids[static_cast<std::size_t>(i)];
        const std::vector<double> la(model.logits(p->w0.data(), a.data()),
                                     model.logits(p->w0.data(), a.data()) + T * V);
        const double* lb = model.logits(p->w0.data(), b.data());
        for (int i = 0; i < 5 * V; ++i) QCOMPARE(la[static_cast<std::size_t>(i)], lb[i]);
        double differs = 0.0;  // and the padding does change later rows (the test can fail)
        for (int i = 5 * V; i < T * V; ++i)
            differs = std::max(differs, std::abs(la[static_cast<std::size_t>(i)] - lb[i]));
        QVERIFY(differs > 1e-6);
    }

    void trainedSamplesAreMoreLikeTheCorpus() {
        const auto p = builtInProblem(LmPrecision::Double);
        const Eigen::VectorXd w = trained(p);
        double untrained = 0.0;
        double learned = 0.0;
        for (std::uint64_t seed = 0; seed < 3; ++seed) {
            untrained += bigramLogLikelihood(p->corpus, sampleTokens(*p, p->w0, seed, 300)) / 3;
            learned += bigramLogLikelihood(p->corpus, sampleTokens(*p, w, seed, 300)) / 3;
        }
        qInfo("bigram log-likelihood per character: untrained %.3f, trained %.3f", untrained,
              learned);
        QVERIFY(learned > untrained + 0.5);
    }
};

QTEST_APPLESS_MAIN(TestLmSampling)
#include "tst_lm_sampling.moc"

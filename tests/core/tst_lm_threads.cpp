// Threads inside a stage (core/objective/lm/lm_threads.hpp): how parallelRange splits, that a
// split inside a split and a thread without a team run alone, how a run's share of the threads
// is worked out, and that every split computation is bit-identical to one thread: the packed
// product on odd sizes and strides, every stage's forward and backward through the whole model
// (float and double, the AVX2 and the portable path), and a whole language-model experiment.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "experiment/run/lm_experiment.hpp"
#include "lm_builtin_problem.hpp"
#include "objective/lm/lm_kernels.hpp"
#include "objective/lm/lm_model.hpp"
#include "objective/lm/lm_threads.hpp"

using namespace pipelens;

namespace {

struct Piece {
    std::size_t begin, end;
    std::thread::id thread;
};

std::vector<Piece> piecesOf(std::size_t count, std::size_t grain) {
    std::mutex m;
    std::vector<Piece> pieces;
    lmk::parallelRange(count, grain, [&](std::size_t b, std::size_t e) {
        std::lock_guard<std::mutex> lock(m);
        pieces.push_back({b, e, std::this_thread::get_id()});
    });
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
    return pieces;
}

// Loss and gradient of the whole model (every stage forward, then backward) at w.
template <typename Real>
std::pair<double, std::vector<Real>> lossAndGradient(const CharTransformerProblem& p, int threads,
                                                     int batch) {
    lmk::ScopedThreads team(threads);
    CharTransformer<Real> model(p.layout);
    std::vector<Real> w(static_cast<std::size_t>(p.w0.size()));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<Real>(p.w0[static_cast<Eigen::Index>(i)]);
    std::vector<Real> g(w.size());
    double loss = 0.0;
    // Two SGD steps, so the second gradient is taken at weights the first one moved.
    for (int k = 0; k < 2; ++k) {
        loss = model.lossAndGradient(w.data(), p.train.tokens(batch + k),
                                     p.train.targets(batch + k), g.data());
        for (std::size_t i = 0; i < w.size(); ++i) w[i] -= Real(0.25) * g[i];
    }
    g.insert(g.end(), w.begin(), w.end());
    return {loss, g};
}

// The model the identity checks train: widths that are not multiples of a vector (C = 40,
// 5 heads of 8), 12 x 10 = 120 rows, and products large enough to split both ways.
std::shared_ptr<const CharTransformerProblem> oddProblem(LmPrecision precision) {
    CharTransformerParams p;
    p.stages = 4;
    p.width = 40;
    p.heads = 5;
    p.context = 10;
    p.batch = 12;
    p.builtInCharacters = 6000;
    p.heldOutFraction = 0.0;
    p.initSeed = 3;
    p.precision = precision;
    return std::make_shared<const CharTransformerProblem>(makeCharTransformerProblem(p));
}

template <typename Real>
void checkModelIdentity(LmPrecision precision) {
    const auto p = oddProblem(precision);
    const auto one = lossAndGradient<Real>(*p, 1, 0);
    QVERIFY(std::isfinite(one.first));
    for (int threads : {2, 3, 4}) {
        const auto many = lossAndGradient<Real>(*p, threads, 0);
        QVERIFY(many.first == one.first);  // exact (QCOMPARE on doubles is fuzzy)
        QVERIFY2(many.second == one.second,
                 qPrintable(QString("%1 threads: gradient or weights differ").arg(threads)));
    }
}

}  // namespace

class TestLmThreads : public QObject {
    Q_OBJECT
  private slots:
    void withoutATeamEverythingRunsOnTheCaller() {
        QCOMPARE(lmk::currentThreads(), 1);
        const auto pieces = piecesOf(1000, 16);
        QCOMPARE(pieces.size(), std::size_t(1));
        QCOMPARE(pieces[0].begin, std::size_t(0));
        QCOMPARE(pieces[0].end, std::size_t(1000));
        QCOMPARE(pieces[0].thread, std::this_thread::get_id());
        QVERIFY(piecesOf(0, 16).empty());  // nothing to do: fn is not called
    }

    void piecesCoverTheRangeOnePerThread_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("grain");
        QTest::addColumn<int>("expectedPieces");
        QTest::newRow("3 threads, 100 by 16") << 3 << 100 << 16 << 3;
        QTest::newRow("2 threads, 7 by 1") << 2 << 7 << 1 << 2;
        QTest::newRow("4 threads, 3 units") << 4 << 40 << 16 << 3;
        QTest::newRow("3 threads, one unit") << 3 << 10 << 16 << 1;
        QTest::newRow("2 threads, exact") << 2 << 64 << 32 << 2;
    }
    void piecesCoverTheRangeOnePerThread() {
        QFETCH(int, threads);
        QFETCH(int, count);
        QFETCH(int, grain);
        QFETCH(int, expectedPieces);
        lmk::ScopedThreads team(threads);
        QCOMPARE(lmk::currentThreads(), threads);
        const auto pieces =
            piecesOf(static_cast<std::size_t>(count), static_cast<std::size_t>(grain));
        QCOMPARE(static_cast<int>(pieces.size()), expectedPieces);
        std::size_t at = 0;
        std::set<std::thread::id> ids;
        for (const Piece& piece : pieces) {
            QCOMPARE(piece.begin, at);  // contiguous and disjoint
            QVERIFY(piece.end > piece.begin);
            if (piece.end != static_cast<std::size_t>(count))
                QCOMPARE(piece.end % grain, std::size_t(0));
            at = piece.end;
            ids.insert(piece.thread);
        }
        QCOMPARE(at, static_cast<std::size_t>(count));
        QCOMPARE(static_cast<int>(ids.size()), expectedPieces);  // each piece on its own thread
        QCOMPARE(pieces[0].thread, std::this_thread::get_id());  // the first on the caller
    }

    void aSplitInsideASplitRunsAlone() {
        lmk::ScopedThreads team(3);
        std::mutex m;
        std::vector<int> innerThreads;
        std::vector<std::size_t> innerPieces;
        lmk::parallelRange(3, 1, [&](std::size_t, std::size_t) {
            std::size_t n = 0;
            lmk::parallelRange(100, 1, [&](std::size_t, std::size_t) { ++n; });
            std::lock_guard<std::mutex> lock(m);
            innerThreads.push_back(lmk::currentThreads());
            innerPieces.push_back(n);
        });
        QCOMPARE(innerThreads, std::vector<int>({1, 1, 1}));
        QCOMPARE(innerPieces, std::vector<std::size_t>({1, 1, 1}));
        QCOMPARE(lmk::currentThreads(), 3);  // back outside the split
    }

    void scopesNestAndRestore() {
        QCOMPARE(lmk::currentThreads(), 1);
        {
            lmk::ScopedThreads outer(3);
            QCOMPARE(lmk::currentThreads(), 3);
            {
                lmk::ScopedThreads off(1);
                QCOMPARE(lmk::currentThreads(), 1);
                QCOMPARE(piecesOf(100, 1).size(), std::size_t(1));
            }
            QCOMPARE(lmk::currentThreads(), 3);
            // Another thread does not see this thread's team.
            int seen = 0;
            std::thread([&] { seen = lmk::currentThreads(); }).join();
            QCOMPARE(seen, 1);
        }
        QCOMPARE(lmk::currentThreads(), 1);
    }

    void manySplitsInARow() {
        // Thousands of short splits: every element written exactly once each time, no split lost.
        lmk::ScopedThreads team(2);
        std::vector<int> hits(513, 0);
        for (int round = 0; round < 5000; ++round) {
            lmk::parallelRange(hits.size(), 8, [&](std::size_t b, std::size_t e) {
                for (std::size_t i = b; i < e; ++i) ++hits[i];
            });
        }
        QVERIFY(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 5000; }));
    }

    void threadsPerRunSharesWhatIsLeft() {
        QCOMPARE(lmk::threadsPerRun(2, 1), 2);
        QCOMPARE(lmk::threadsPerRun(2, 3), 1);
        QCOMPARE(lmk::threadsPerRun(2, 2), 1);
        QCOMPARE(lmk::threadsPerRun(16, 4), 4);
        QCOMPARE(lmk::threadsPerRun(16, 5), 3);
        QCOMPARE(lmk::threadsPerRun(1, 0), 1);
        const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        QCOMPARE(lmk::threadsPerRun(0, 1), hw);
    }

    void splitProductsAreBitIdentical() {
        if (!lmk::cpuHasAvx2Fma())
            QSKIP("this CPU has no AVX2 + FMA: the packed product does not run");
        const bool was = lmk::setFastKernels(true);
        std::mt19937 gen(7);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        struct Shape {
            int M, N, K;
            bool transA, transB, accumulate;
        };
        // Row splits (many rows) and column splits (few rows, many columns), tails everywhere.
        const Shape shapes[] = {{517, 83, 61, false, true, false},
                                {37, 301, 257, true, false, true},
                                {13, 400, 100, false, false, false},
                                {200, 19, 300, true, true, true}};
        for (const Shape& s : shapes) {
            std::vector<float> A(static_cast<std::size_t>(s.M) * s.K),
                B(static_cast<std::size_t>(s.K) * s.N);
            for (float& x : A) x = u(gen);
            for (float& x : B) x = u(gen);
            std::vector<float> C0(static_cast<std::size_t>(s.M) * s.N);
            for (float& x : C0) x = u(gen);
            const std::ptrdiff_t rsA = s.transA ? 1 : s.K, csA = s.transA ? s.M : 1;
            const std::ptrdiff_t rsB = s.transB ? 1 : s.N, csB = s.transB ? s.K : 1;
            auto product = [&](int threads) {
                lmk::ScopedThreads team(threads);
                std::vector<float> C = C0;
                lmk::gemm<float>(s.M, s.N, s.K, A.data(), rsA, csA, B.data(), rsB, csB, C.data(),
                                 s.N, s.accumulate);
                return C;
            };
            const auto one = product(1);
            // Against a plain triple loop in double, to float rounding.
            double worst = 0.0;
            for (int i = 0; i < s.M; ++i) {
                for (int j = 0; j < s.N; ++j) {
                    double sum = s.accumulate ? C0[static_cast<std::size_t>(i) * s.N + j] : 0.0;
                    for (int k = 0; k < s.K; ++k) {
                        sum += static_cast<double>(A[static_cast<std::size_t>(i * rsA + k * csA)]) *
                               B[static_cast<std::size_t>(k * rsB + j * csB)];
                    }
                    worst =
                        std::max(worst, std::abs(sum - one[static_cast<std::size_t>(i) * s.N + j]));
                }
            }
            QVERIFY2(worst < 1e-4,
                     qPrintable(QString("%1x%2x%3: %4").arg(s.M).arg(s.N).arg(s.K).arg(worst)));
            for (int threads : {2, 3}) QVERIFY(product(threads) == one);
        }
        lmk::setFastKernels(was);
    }

    void wholeModelIsBitIdenticalAcrossThreads_data() {
        QTest::addColumn<bool>("fast");
        QTest::newRow("avx2") << true;
        QTest::newRow("portable") << false;
    }
    void wholeModelIsBitIdenticalAcrossThreads() {
        QFETCH(bool, fast);
        if (fast && !lmk::cpuHasAvx2Fma()) QSKIP("this CPU has no AVX2 + FMA");
        const bool was = lmk::setFastKernels(fast);
        checkModelIdentity<float>(LmPrecision::Float);
        checkModelIdentity<double>(LmPrecision::Double);
        lmk::setFastKernels(was);
    }

    void anExperimentGivesOneMethodEveryThreadAndTheSameResult() {
        const auto config = ExperimentConfig::fromJson(nlohmann::json::parse(R"({
            "name": "threads", "stages": 4, "batch_size": 8, "backend": "cpu",
            "objective": {"kind": "char_transformer", "width": 32, "heads": 4, "context": 16,
                          "corpus_characters": 8000, "held_out_fraction": 0.1, "held_out_every": 40,
                          "sample_lines": 0},
            "budget": {"slots": 80},
            "methods": [{"method": "pd", "step_size": 0.5}]
        })"));
        RunOptions one;
        one.threads = 1;
        RunOptions three;
        three.threads = 3;  // one method: its stages get all three
        QCOMPARE(lmk::threadsPerRun(three.threads, 1), 3);
        const ExperimentResult a = runExperiment(config, one);
        const ExperimentResult b = runExperiment(config, three);
        QVERIFY(a.methods[0].result.finished && b.methods[0].result.finished);
        QVERIFY(lmOf(a.methods[0]).weights == lmOf(b.methods[0]).weights);
        QCOMPARE(lmOf(a.methods[0]).log.forwardLosses.size(),
                 lmOf(b.methods[0]).log.forwardLosses.size());
        for (std::size_t i = 0; i < lmOf(a.methods[0]).log.forwardLosses.size(); ++i) {
            QVERIFY(lmOf(a.methods[0]).log.forwardLosses[i].loss ==
                    lmOf(b.methods[0]).log.forwardLosses[i].loss);
        }
        QCOMPARE(lmOf(a.methods[0]).log.heldOutLoss, lmOf(b.methods[0]).log.heldOutLoss);
    }
};

QTEST_APPLESS_MAIN(TestLmThreads)
#include "tst_lm_threads.moc"

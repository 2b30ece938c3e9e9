// Replays (SPEC sections 3-5) against independent, deliberately naive re-implementations written
// here: full-history RPD, sequential SGD, hand-simulated LocalSGD rounds, minibatch gradient
// descent for fill-drain, and a slot-by-slot pipeline replay that stashes every (m, s) copy.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <vector>

#include "compute/cpu_backend.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "replay/pipeline_replay.hpp"
#include "replay/rpd_replay.hpp"
#include "replay/theorem.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using Eigen::VectorXd;

namespace {

// The objective alone: f* and L not computed yet.
std::shared_ptr<LinearObjective> makeBareObjective(LossKind loss, int rows = 40, int dim = 9,
                                                   int batch = 5, std::uint64_t seed = 3) {
    SyntheticSpec spec;
    spec.kind = loss == LossKind::Logistic ? "logistic" : "random";
    spec.rows = rows;
    spec.dim = dim;
    spec.seed = seed;
    spec.labelNoise = loss == LossKind::Logistic ? 0.0 : 0.1;
    const double l2 = loss == LossKind::Logistic ? 0.01 : 0.0;
    return std::make_shared<LinearObjective>(makeSynthetic(spec), loss, l2, batch);
}

std::shared_ptr<LinearObjective> makeObjective(LossKind loss, int rows = 40, int dim = 9,
                                               int batch = 5, std::uint64_t seed = 3) {
    auto obj = makeBareObjective(loss, rows, dim, batch, seed);
    // As the experiment layer does: replays take f* and L from the objective only when known.
    obj->optimum();
    obj->smoothness();
    return obj;
}

// Records what a replay asks of its backend and forwards everything to the CPU engine.
class SpyBackend final : public ComputeBackend {
  public:
    struct RpdCall {
        std::vector<int> delays;
        int stage = 0;
        int batch = 0;
    };
    std::string name() const override { return "spy"; }
    void preparePipeline(const LinearObjective& o, const PipelineLayout& layout,
                         const VectorXd& w0) override {
        inner_.preparePipeline(o, layout, w0);
    }
    void runOps(std::span<const PipelineOp> ops, double stepSize, bool sample,
                std::vector<UpdateSample>& samples) override {
        inner_.runOps(ops, stepSize, sample, samples);
    }
    void averageReplicas() override {
        ++averagings;
        inner_.averageReplicas();
    }
    void prepareRpd(const LinearObjective& o, const std::vector<BlockRange>& blocks, int depth,
                    const VectorXd& w0) override {
        ringDepth = depth;
        inner_.prepareRpd(o, blocks, depth, w0);
    }
    UpdateSample rpdStep(std::span<const int> delays, int stage, int batch, double stepSize,
                         bool sample) override {
        calls.push_back({std::vector<int>(delays.begin(), delays.end()), stage, batch});
        return inner_.rpdStep(delays, stage, batch, stepSize, sample);
    }
    double objective() override { return inner_.objective(); }
    double gradientNormSquared() override { return inner_.gradientNormSquared(); }
    VectorXd weights() override { return inner_.weights(); }

    int ringDepth = -1;
    int averagings = 0;
    std::vector<RpdCall> calls;

  private:
    CpuBackend inner_;
};

VectorXd blockGradient(const LinearObjective& obj, int batch, const VectorXd& z,
                       const BlockRange& blk) {
    return obj.batchGradient(batch, z).segment(blk.offset, blk.size);
}

bool close(double a, double b, double rel = 1e-9) {
    return std::abs(a - b) <= rel * std::max({std::abs(a), std::abs(b), 1e-12});
}

void compareSeries(const std::vector<double>& got, const std::vector<double>& want,
                   const char* what, double rel = 1e-9) {
    QVERIFY2(
        got.size() == want.size(),
        qPrintable(QString("%1: %2 values, want %3").arg(what).arg(got.size()).arg(want.size())));
    for (size_t i = 0; i < want.size(); ++i) {
        QVERIFY2(close(got[i], want[i], rel), qPrintable(QString("%1 [%2]: got %3 want %4")
                                                             .arg(what)
                                                             .arg(i)
                                                             .arg(got[i], 0, 'g', 17)
                                                             .arg(want[i], 0, 'g', 17)));
    }
}

// Runs a replay to the end in chunks of `chunk`.
void runInChunks(Replay& r, long long chunk) {
    while (!r.done() && r.advance(chunk) > 0) {
    }
}

struct NaiveRun {
    std::vector<double> perSlot;    // f of the replica average after each slot, [0] = start
    std::vector<double> perUpdate;  // after each block update
    VectorXd average;
};

// The slot model replayed the simplest way: every F(m, s) copies replica r's block s into its
// own stash; B(m, s) takes the gradient at the point assembled from all of m's stashed blocks and
// updates replica r's block s. Replicas are averaged at the end of the slot in which a complete
// round's last backward on stage 1 ends (found here from the cells, not from the timeline's list).
NaiveRun naiveReplay(const LinearObjective& obj, const Timeline& tl, int replicas, double step,
                     int roundSize) {
    const int S = tl.params.stages;
    const int N = tl.params.microbatches;
    const auto blocks = splitBlocks(obj.dim(), S);
    std::vector<VectorXd> w(replicas, VectorXd::Zero(obj.dim()));
    std::vector<VectorXd> stash(static_cast<size_t>(N), VectorXd::Zero(obj.dim()));
    std::vector<int> averageAt;
    if (roundSize > 0) {
        for (int q = 0; (q + 1) * roundSize <= N; ++q) {
            int end = -1;
            for (const auto& c : tl.cells) {
                if (c.op == OpKind::Backward && c.stage == 0 && c.microbatch / roundSize == q) {
                    end = std::max(end, c.endSlot);
                }
            }
            averageAt.push_back(end);
        }
    }
    auto mean = [&] {
        VectorXd a = VectorXd::Zero(obj.dim());
        for (const auto& v : w) a += v;
        return VectorXd(a / replicas);
    };
    NaiveRun out;
    out.perSlot.push_back(obj.value(mean()));
    for (int t = 0; t < tl.totalSlots; ++t) {
        for (int s = 0; s < S; ++s) {
            for (const auto& c : tl.cells) {
                if (c.stage != s) continue;
                const int m = c.microbatch;
                const int r = m % replicas;
                const BlockRange& blk = blocks[s];
                const int batch = m % obj.batches();
                if (c.op == OpKind::Forward && c.startSlot == t) {
                    stash[m].segment(blk.offset, blk.size) = w[r].segment(blk.offset, blk.size);
                } else if (c.op == OpKind::Backward && c.endSlot == t) {
                    w[r].segment(blk.offset, blk.size) -=
                        step * blockGradient(obj, batch, stash[m], blk);
                    out.perUpdate.push_back(obj.value(mean()));
                }
            }
        }
        if (std::find(averageAt.begin(), averageAt.end(), t) != averageAt.end()) {
            const VectorXd a = mean();
            for (auto& v : w) v = a;
        }
        out.perSlot.push_back(obj.value(mean()));
    }
    out.average = mean();
    return out;
}

// RPD with every iterate kept: w_{k+1} = w_k - gamma e_s grad_s f_batch(z_k), with z_k's block j
// taken from iterate k - d_j.
std::vector<double> fullHistoryRpd(const LinearObjective& obj, int S, double step,
                                   const std::vector<SpyBackend::RpdCall>& calls, VectorXd& last) {
    const auto blocks = splitBlocks(obj.dim(), S);
    std::vector<VectorXd> hist{VectorXd::Zero(obj.dim())};
    std::vector<double> f;
    for (size_t k = 0; k < calls.size(); ++k) {
        VectorXd z(obj.dim());
        for (int j = 0; j < S; ++j) {
            const BlockRange& b = blocks[j];
            z.segment(b.offset, b.size) = hist[k - calls[k].delays[j]].segment(b.offset, b.size);
        }
        VectorXd next = hist[k];
        const BlockRange& b = blocks[calls[k].stage];
        next.segment(b.offset, b.size) -= step * blockGradient(obj, calls[k].batch, z, b);
        hist.push_back(next);
        f.push_back(obj.value(next));
    }
    last = hist.back();
    return f;
}

ScheduleParams scheduleOf(ScheduleKind kind, int S, int N) {
    ScheduleParams p;
    p.kind = kind;
    p.stages = S;
    p.microbatches = N;
    return p;
}

std::unique_ptr<PipelineReplay> pipelineReplay(std::shared_ptr<LinearObjective> obj,
                                               const Timeline& tl, int replicas, double step,
                                               SpyBackend** spy = nullptr,
                                               Method method = Method::PipeDream,
                                               double stepScale = 1.0) {
    PipelineReplayConfig cfg;
    cfg.method = method;
    cfg.timeline = tl;
    cfg.replicas = replicas;
    cfg.stepSize = step;
    cfg.stepScale = stepScale;
    auto backend = std::make_unique<SpyBackend>();
    if (spy) *spy = backend.get();
    return std::make_unique<PipelineReplay>(std::move(obj), std::move(backend), cfg);
}

std::unique_ptr<RpdReplay> rpdReplay(std::shared_ptr<LinearObjective> obj, RpdReplayConfig cfg,
                                     SpyBackend** spy) {
    auto backend = std::make_unique<SpyBackend>();
    *spy = backend.get();
    return std::make_unique<RpdReplay>(std::move(obj), std::move(backend), std::move(cfg));
}

}  // namespace

class TestReplay : public QObject {
    Q_OBJECT
  private slots:
    void rpdModesMatchFullHistory_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("order");
        QTest::addColumn<int>("loss");
        for (int mode = 0; mode < 4; ++mode) {
            for (int order = 0; order < 2; ++order) {
                for (int loss = 0; loss < 2; ++loss) {
                    const QString name = QString("%1 delays, %2 order, %3")
                                             .arg(QString::fromStdString(
                                                 delayModeName(static_cast<DelayMode>(mode))))
                                             .arg(QString::fromStdString(
                                                 stageOrderName(static_cast<StageOrder>(order))))
                                             .arg(loss ? "logistic" : "quadratic");
                    QTest::newRow(qPrintable(name)) << mode << order << loss;
                }
            }
        }
    }
    void rpdModesMatchFullHistory() {
        QFETCH(int, mode);
        QFETCH(int, order);
        QFETCH(int, loss);
        const int S = 4;
        auto obj = makeObjective(loss ? LossKind::Logistic : LossKind::Quadratic);
        auto table =
            std::make_shared<DelayTable>(buildTimeline(scheduleOf(ScheduleKind::PipeDream, S, 60)));
        RpdReplayConfig cfg;
        cfg.stages = S;
        cfg.updates = 200;
        cfg.stepSize = 0.05;
        cfg.delayMode = static_cast<DelayMode>(mode);
        cfg.order = static_cast<StageOrder>(order);
        cfg.maxDelay = 9;
        cfg.seed = 11;
        cfg.pipeDream = table;
        SpyBackend* spy = nullptr;
        auto r = rpdReplay(obj, cfg, &spy);
        runInChunks(*r, 1000);
        QVERIFY(r->result().finished);
        QCOMPARE(r->result().updates, 200LL);
        QCOMPARE(spy->calls.size(), size_t(200));
        const long long delta = cfg.delayMode == DelayMode::PipeDream ? table->maxDelay()
                                : cfg.delayMode == DelayMode::Zero    ? 0
                                                                      : 9;
        QCOMPARE(r->result().maxDelay, delta);
        // The ring holds delta + 1 iterates.
        QCOMPARE(spy->ringDepth, static_cast<int>(delta + 1));
        bool sawZero = false;
        bool sawCap = false;
        for (size_t k = 0; k < spy->calls.size(); ++k) {
            const auto& c = spy->calls[k];
            const long long cap = std::min<long long>(delta, static_cast<long long>(k));
            for (int j = 0; j < S; ++j) {
                const int d = c.delays[j];
                QVERIFY(d >= 0 && d <= cap);
                sawZero = sawZero || d == 0;
                sawCap = sawCap || (cap > 0 && d == cap);
                switch (cfg.delayMode) {
                    case DelayMode::Max:
                        QCOMPARE(static_cast<long long>(d), cap);
                        break;
                    case DelayMode::Zero:
                        QCOMPARE(d, 0);
                        break;
                    case DelayMode::PipeDream:
                        QCOMPARE(static_cast<long long>(d),
                                 table->delay(static_cast<long long>(k), j));
                        break;
                    case DelayMode::Uniform:
                        break;
                }
            }
            QVERIFY(c.stage >= 0 && c.stage < S);
            QVERIFY(c.batch >= 0 && c.batch < obj->batches());
            if (cfg.order == StageOrder::PipeDream) {
                const BlockUpdateInfo& u = table->update(static_cast<long long>(k));
                QCOMPARE(c.stage, u.stage);
                QCOMPARE(c.batch, u.microbatch % obj->batches());
            }
        }
        if (cfg.delayMode == DelayMode::Uniform) QVERIFY(sawZero && sawCap);
        VectorXd last;
        const std::vector<double> want = fullHistoryRpd(*obj, S, cfg.stepSize, spy->calls, last);
        compareSeries(r->result().objectivePerUpdate, want, "f per update");
        QVERIFY((spy->weights() - last).norm() <= 1e-10 * std::max(1.0, last.norm()));
    }

    void zeroDelayRpdIsBlockCoordinateSgd() {
        // With zero delays RPD is randomized block-coordinate SGD: each step takes block s's
        // gradient at the current iterate.
        auto obj = makeObjective(LossKind::Quadratic);
        RpdReplayConfig cfg;
        cfg.stages = 3;
        cfg.updates = 300;
        cfg.stepSize = 0.1;
        cfg.delayMode = DelayMode::Zero;
        cfg.seed = 5;
        SpyBackend* spy = nullptr;
        auto r = rpdReplay(obj, cfg, &spy);
        runInChunks(*r, 1 << 20);
        const auto blocks = splitBlocks(obj->dim(), 3);
        VectorXd w = VectorXd::Zero(obj->dim());
        std::vector<double> f;
        for (const auto& c : spy->calls) {
            const BlockRange& b = blocks[c.stage];
            w.segment(b.offset, b.size) -=
                0.1 * obj->batchGradient(c.batch, w).segment(b.offset, b.size);
            f.push_back(obj->value(w));
        }
        compareSeries(r->result().objectivePerUpdate, f, "block-coordinate SGD");
        QVERIFY((spy->weights() - w).norm() <= 1e-10 * std::max(1.0, w.norm()));
        QCOMPARE(spy->ringDepth, 1);
    }

    void uniformDrawsCoverStagesAndBatches() {
        auto obj = makeObjective(LossKind::Quadratic);
        RpdReplayConfig cfg;
        cfg.stages = 4;
        cfg.updates = 8000;
        cfg.stepSize = 0.01;
        cfg.delayMode = DelayMode::Uniform;
        cfg.maxDelay = 6;
        cfg.seed = 99;
        cfg.sampling.objectivePerUpdate = false;
        // PD's schedule the batch index is drawn into, kept fixed when K changes below.
        cfg.batchOf = batchSequence(2000, obj->batches(), false, 0);
        SpyBackend* spy = nullptr;
        auto r = rpdReplay(obj, cfg, &spy);
        runInChunks(*r, 1 << 20);
        std::vector<int> stages(4, 0), batches(obj->batches(), 0), delays(7, 0);
        for (size_t k = 10; k < spy->calls.size(); ++k) {
            ++stages[spy->calls[k].stage];
            ++batches[spy->calls[k].batch];
            for (int d : spy->calls[k].delays) ++delays[d];
        }
        const double n = static_cast<double>(spy->calls.size() - 10);
        // Expected counts n/4, n/8 and 4n/7; five standard deviations is well under 10% here.
        for (int c : stages) QVERIFY(std::abs(c - n / 4) < 0.1 * n / 4);
        for (int c : batches) QVERIFY(std::abs(c - n / obj->batches()) < 0.15 * n / obj->batches());
        for (int c : delays) QVERIFY(std::abs(c - 4 * n / 7) < 0.1 * 4 * n / 7);
        // Different seeds draw differently; the same seed draws the same.
        for (std::uint64_t seed : {99ULL, 100ULL}) {
            SpyBackend* other = nullptr;
            RpdReplayConfig c2 = cfg;
            c2.seed = seed;
            c2.updates = 50;
            auto r2 = rpdReplay(obj, c2, &other);
            runInChunks(*r2, 1 << 20);
            bool same = true;
            for (size_t k = 0; k < 50; ++k) {
                same = same && other->calls[k].stage == spy->calls[k].stage &&
                       other->calls[k].batch == spy->calls[k].batch &&
                       other->calls[k].delays == spy->calls[k].delays;
            }
            QCOMPARE(same, seed == 99ULL);
        }
    }

    void uniformDrawsAreNumpysStream() {
        // np.random.default_rng(3): per update k the stage integers(0, S), the index
        // integers(0, N) into PD's batch schedule, then integers(0, min(delta, k) + 1, size=S)
        // (SPEC section 6); the expected values were printed by NumPy 1.24 (python3-numpy).
        auto obj = makeObjective(LossKind::Quadratic);  // M = 8 batches
        RpdReplayConfig cfg;
        cfg.stages = 3;
        cfg.updates = 4;
        cfg.stepSize = 0.01;
        cfg.delayMode = DelayMode::Uniform;
        cfg.maxDelay = 4;
        cfg.seed = 3;
        cfg.batchOf = {4, 3, 2, 1, 0};  // N = 5: the drawn index goes through the schedule
        SpyBackend* spy = nullptr;
        auto r = rpdReplay(obj, cfg, &spy);
        runInChunks(*r, 1 << 20);
        QCOMPARE(spy->calls.size(), size_t(4));
        const int stage[] = {2, 0, 1, 1};
        const int index[] = {0, 1, 0, 2};
        const std::vector<int> delays[] = {{0, 0, 0}, {0, 1, 1}, {0, 0, 1}, {1, 0, 2}};
        for (size_t k = 0; k < 4; ++k) {
            QCOMPARE(spy->calls[k].stage, stage[k]);
            QCOMPARE(spy->calls[k].batch, cfg.batchOf[static_cast<size_t>(index[k])]);
            QCOMPARE(spy->calls[k].delays, delays[k]);
        }
    }

    void ringDoesNotGrowWithK() {
        // The backend is asked for delta + 1 iterates whatever K is, and never for an older one.
        auto obj = makeObjective(LossKind::Quadratic);
        for (long long K : {10LL, 200LL, 5000LL}) {
            RpdReplayConfig cfg;
            cfg.stages = 3;
            cfg.updates = K;
            cfg.stepSize = 0.01;
            cfg.delayMode = DelayMode::Max;
            cfg.maxDelay = 17;
            cfg.sampling.objectivePerUpdate = false;
            SpyBackend* spy = nullptr;
            auto r = rpdReplay(obj, cfg, &spy);
            runInChunks(*r, 1 << 20);
            QCOMPARE(spy->ringDepth, 18);
            for (const auto& c : spy->calls) {
                for (int d : c.delays) QVERIFY(d < spy->ringDepth);
            }
        }
    }

    void localSgdWithOneReplicaIsSequentialSgd() {
        auto obj = makeObjective(LossKind::Logistic);
        const int S = 3;
        const int N = 21;
        for (int H : {1, 4, 50}) {
            ScheduleParams p = scheduleOf(ScheduleKind::LocalSgd, S, N);
            p.replicas = 1;
            p.localSteps = H;
            Timeline tl = buildTimeline(p);
            SpyBackend* spy = nullptr;
            auto r = pipelineReplay(obj, tl, 1, 0.3, &spy, Method::LocalSgd);
            runInChunks(*r, 5);
            QVERIFY(r->result().finished);
            // Each microbatch takes a full gradient step at the weights the previous one left.
            VectorXd w = VectorXd::Zero(obj->dim());
            for (int j = 0; j < N; ++j) {
                w -= 0.3 * obj->batchGradient(j % obj->batches(), w);
                const double f =
                    r->result().objectivePerUpdate.at(static_cast<size_t>((j + 1) * S - 1));
                QVERIFY2(close(f, obj->value(w)),
                         qPrintable(QString("H=%1 microbatch %2").arg(H).arg(j)));
            }
            QVERIFY((spy->weights() - w).norm() <= 1e-10 * std::max(1.0, w.norm()));
            // The only delays are the backward pass's own: update k of microbatch m reads the
            // point left by update m S, so k - m S < S.
            QCOMPARE(r->result().maxDelay, static_cast<long long>(S - 1));
        }
    }

    void localSgdAveragesAtRoundEnds() {
        // Hand simulation: inside a round every replica does H sequential SGD steps on its own
        // microbatches (m = r, r + R, ...); at the round's end all replicas become their average.
        auto obj = makeObjective(LossKind::Quadratic, 60, 8, 5);
        const int S = 4;
        const int R = 3;
        const int H = 2;
        const int rounds = 3;
        const int N = rounds * R * H + 4;  // and a partial round that is never averaged
        ScheduleParams p = scheduleOf(ScheduleKind::LocalSgd, S, N);
        p.replicas = R;
        p.localSteps = H;
        Timeline tl = buildTimeline(p);
        SpyBackend* spy = nullptr;
        auto r = pipelineReplay(obj, tl, R, 0.2, &spy, Method::LocalSgd);
        runInChunks(*r, 3);
        QVERIFY(r->result().finished);
        QCOMPARE(spy->averagings, rounds);

        std::vector<VectorXd> w(R, VectorXd::Zero(obj->dim()));
        auto mean = [&] {
            VectorXd a = VectorXd::Zero(obj->dim());
            for (const auto& v : w) a += v;
            return VectorXd(a / R);
        };
        const int round = R * H;
        for (int q = 0; q * round < N; ++q) {
            for (int m = q * round; m < std::min(N, (q + 1) * round); ++m) {
                VectorXd& wr = w[m % R];
                wr -= 0.2 * obj->batchGradient(m % obj->batches(), wr);
            }
            if ((q + 1) * round > N) break;
            const VectorXd avg = mean();
            for (auto& v : w) v = avg;
            // f right after the averaging slot is f of the common weights.
            const int slot = tl.averagingSlots.at(static_cast<size_t>(q));
            QVERIFY2(close(r->result().objectivePerSlot.at(static_cast<size_t>(slot) + 1),
                           obj->value(avg)),
                     qPrintable(QString("round %1").arg(q)));
        }
        QVERIFY((spy->weights() - mean()).norm() <= 1e-10 * std::max(1.0, mean().norm()));
        QVERIFY(close(r->result().finalObjective(), obj->value(mean())));
    }

    void pipelinesMatchNaiveReplay_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("S");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("replicas");
        QTest::addColumn<int>("H");
        QTest::addColumn<int>("backwardSlots");
        QTest::addColumn<int>("latency");
        QTest::addColumn<int>("loss");
        QTest::newRow("pd quadratic") << 0 << 4 << 30 << 1 << 1 << 1 << 0 << 0;
        QTest::newRow("pd logistic S=5") << 0 << 5 << 23 << 1 << 1 << 1 << 0 << 1;
        QTest::newRow("pd B=2 latency 1") << 0 << 4 << 25 << 1 << 1 << 2 << 1 << 0;
        QTest::newRow("localsgd R=S H=2") << 2 << 4 << 35 << 4 << 2 << 1 << 0 << 0;
        QTest::newRow("localsgd R=2 H=3 B=2 latency 1") << 2 << 3 << 20 << 2 << 3 << 2 << 1 << 1;
        QTest::newRow("fill-drain") << 1 << 3 << 12 << 1 << 1 << 1 << 0 << 0;
    }
    void pipelinesMatchNaiveReplay() {
        QFETCH(int, kind);
        QFETCH(int, S);
        QFETCH(int, N);
        QFETCH(int, replicas);
        QFETCH(int, H);
        QFETCH(int, backwardSlots);
        QFETCH(int, latency);
        QFETCH(int, loss);
        auto obj = makeObjective(loss ? LossKind::Logistic : LossKind::Quadratic);
        ScheduleParams p = scheduleOf(static_cast<ScheduleKind>(kind), S, N);
        p.replicas = replicas;
        p.localSteps = H;
        p.costs = {1, backwardSlots, latency};
        Timeline tl = buildTimeline(p);
        const double step = loss ? 0.5 : 0.05;
        auto r = pipelineReplay(obj, tl, replicas, step);
        runInChunks(*r, 1 << 20);
        QVERIFY(r->result().finished);
        QCOMPARE(r->result().updates, static_cast<long long>(S) * N);
        QCOMPARE(r->result().versionChecks, static_cast<long long>(S) * N);
        const int roundSize = p.kind == ScheduleKind::LocalSgd ? replicas * H : 0;
        NaiveRun want = naiveReplay(*obj, tl, replicas, step, roundSize);
        compareSeries(r->result().objectivePerSlot, want.perSlot, "f per slot");
        compareSeries(r->result().objectivePerUpdate, want.perUpdate, "f per update");
    }

    void fillDrainIsMinibatchGradientDescent() {
        // A flush of G microbatches with step gamma/G applies gamma times the mean gradient, all
        // taken at the weights the group started from.
        auto obj = makeObjective(LossKind::Logistic, 60, 8, 5);
        const int S = 4;
        for (int G : {1, 3, 4}) {
            const int groups = 5;
            ScheduleParams p = scheduleOf(ScheduleKind::FillDrain, S, G * groups);
            p.flushGroup = G;
            Timeline tl = buildTimeline(p);
            SpyBackend* spy = nullptr;
            auto r = pipelineReplay(obj, tl, 1, 0.8, &spy, Method::FillDrain, 1.0 / G);
            runInChunks(*r, 7);
            QVERIFY(r->result().finished);
            QCOMPARE(r->result().stepSize, 0.8 / G);
            VectorXd w = VectorXd::Zero(obj->dim());
            for (int g = 0; g < groups; ++g) {
                VectorXd sum = VectorXd::Zero(obj->dim());
                for (int m = g * G; m < (g + 1) * G; ++m)
                    sum += obj->batchGradient(m % obj->batches(), w);
                w -= 0.8 * sum / G;
                const double f =
                    r->result().objectivePerUpdate.at(static_cast<size_t>((g + 1) * G * S - 1));
                QVERIFY2(close(f, obj->value(w)),
                         qPrintable(QString("G=%1 group %2").arg(G).arg(g)));
            }
            QVERIFY((spy->weights() - w).norm() <= 1e-10 * std::max(1.0, w.norm()));
        }
    }

    void chunkSizeDoesNotMatter() {
        auto obj = makeObjective(LossKind::Logistic);
        ScheduleParams lp = scheduleOf(ScheduleKind::LocalSgd, 3, 26);
        lp.localSteps = 2;
        struct Case {
            Timeline tl;
            int replicas;
        };
        std::vector<Case> cases{{buildTimeline(scheduleOf(ScheduleKind::PipeDream, 4, 30)), 1},
                                {buildTimeline(lp), 3}};
        for (const Case& c : cases) {
            std::vector<RunResult> results;
            std::vector<VectorXd> weights;
            for (long long chunk : {1LL, 7LL, 1LL << 40}) {
                SpyBackend* spy = nullptr;
                auto r = pipelineReplay(obj, c.tl, c.replicas, 0.4, &spy, Method::LocalSgd);
                runInChunks(*r, chunk);
                results.push_back(r->result());
                weights.push_back(spy->weights());
            }
            for (size_t i = 1; i < results.size(); ++i) {
                QVERIFY(results[i].objectivePerSlot == results[0].objectivePerSlot);
                QVERIFY(results[i].objectivePerUpdate == results[0].objectivePerUpdate);
                QVERIFY(results[i].blockGradNormSq == results[0].blockGradNormSq);
                QVERIFY(weights[i] == weights[0]);
            }
        }
        std::vector<RunResult> rpd;
        for (long long chunk : {1LL, 7LL, 1LL << 40}) {
            RpdReplayConfig cfg;
            cfg.stages = 3;
            cfg.updates = 150;
            cfg.stepSize = 0.3;
            cfg.maxDelay = 5;
            cfg.seed = 4;
            cfg.sampling.gradNormEvery = 10;
            SpyBackend* spy = nullptr;
            auto r = rpdReplay(obj, cfg, &spy);
            runInChunks(*r, chunk);
            QCOMPARE(r->stepsDone(), 150LL);
            rpd.push_back(r->result());
        }
        for (size_t i = 1; i < rpd.size(); ++i) {
            QVERIFY(rpd[i].objectivePerUpdate == rpd[0].objectivePerUpdate);
            QVERIFY(rpd[i].gradNormSq == rpd[0].gradNormSq);
            QVERIFY(rpd[i].gradNormUpdates == rpd[0].gradNormUpdates);
        }
    }

    void cancelStopsARun() {
        auto obj = makeObjective(LossKind::Quadratic);
        Timeline tl = buildTimeline(scheduleOf(ScheduleKind::PipeDream, 4, 40));
        auto r = pipelineReplay(obj, tl, 1, 0.05);
        QCOMPARE(r->advance(5), 5LL);
        r->cancel();
        QCOMPARE(r->advance(1000), 0LL);
        QVERIFY(r->result().cancelled);
        QVERIFY(!r->result().finished);
        QVERIFY(r->done());
        QCOMPARE(r->stepsDone(), 5LL);
        QCOMPARE(r->advance(1000), 0LL);

        RpdReplayConfig cfg;
        cfg.stages = 4;
        cfg.updates = 1000;
        cfg.stepSize = 0.05;
        cfg.maxDelay = 3;
        SpyBackend* spy = nullptr;
        auto rr = rpdReplay(obj, cfg, &spy);
        rr->cancel();
        rr->runToEnd();
        QVERIFY(rr->result().cancelled);
        QCOMPARE(rr->stepsDone(), 0LL);
        QVERIFY(spy->calls.empty());
    }

    void divergenceReportsFirstBadUpdate_data() {
        QTest::addColumn<bool>("rpd");
        QTest::newRow("pd") << false;
        QTest::newRow("rpd") << true;
    }
    void divergenceReportsFirstBadUpdate() {
        QFETCH(bool, rpd);
        auto obj = makeObjective(LossKind::Quadratic);
        const int S = 4;
        Timeline tl = buildTimeline(scheduleOf(ScheduleKind::PipeDream, S, 150));
        auto run = [&](double blowUp) {
            SamplingOptions s;
            s.blowUpFactor = blowUp;
            std::unique_ptr<Replay> r;
            if (rpd) {
                RpdReplayConfig cfg;
                cfg.stages = S;
                cfg.updates = 600;
                cfg.stepSize = 40.0;
                cfg.maxDelay = 5;
                cfg.seed = 2;
                cfg.sampling = s;
                SpyBackend* spy = nullptr;
                r = rpdReplay(obj, cfg, &spy);
            } else {
                PipelineReplayConfig cfg;
                cfg.timeline = tl;
                cfg.stepSize = 40.0;
                cfg.sampling = s;
                r = std::make_unique<PipelineReplay>(obj, std::make_unique<CpuBackend>(), cfg);
            }
            runInChunks(*r, 1 << 20);
            return r->result();
        };
        const double f0 = obj->value(VectorXd::Zero(obj->dim()));
        const double gap0 = f0 - obj->optimum();
        // A run that only stops on a non-finite value gives the whole trajectory to scan.
        RunResult all = run(std::numeric_limits<double>::infinity());
        RunResult stopped = run(1e6);
        QVERIFY(stopped.divergence.diverged);
        QVERIFY(!stopped.finished);
        long long firstBad = -1;
        for (size_t i = 0; i < all.objectivePerUpdate.size(); ++i) {
            const double f = all.objectivePerUpdate[i];
            if (!std::isfinite(f) || f - obj->optimum() > 1e6 * gap0) {
                firstBad = static_cast<long long>(i) + 1;
                break;
            }
        }
        QVERIFY(firstBad > 1);
        QCOMPARE(stopped.divergence.update, firstBad);
        // RPD stops at that update; a pipeline finishes the slot it is in.
        if (rpd) QCOMPARE(stopped.updates, firstBad);
        QVERIFY(stopped.updates >= firstBad);
        QCOMPARE(static_cast<long long>(stopped.objectivePerUpdate.size()), firstBad);
        const QString msg = QString::fromStdString(stopped.divergence.reason);
        QVERIFY2(msg.contains(QString("block update %1").arg(firstBad)), qPrintable(msg));
        if (!rpd) {
            // The slot in which update `firstBad` happened: the (firstBad)-th backward in
            // (end slot, stage) order.
            std::vector<std::pair<int, int>> bs;
            for (const auto& c : tl.cells) {
                if (c.op == OpKind::Backward) bs.push_back({c.endSlot, c.stage});
            }
            std::sort(bs.begin(), bs.end());
            const int slot = bs.at(static_cast<size_t>(firstBad - 1)).first;
            QCOMPARE(stopped.divergence.slot, slot);
            QVERIFY2(msg.contains(QString("slot %1").arg(slot)), qPrintable(msg));
            // The run stops in that slot.
            QCOMPARE(static_cast<int>(stopped.objectivePerSlot.size()), slot + 2);
        }
        // The trajectory-only run eventually stops on a non-finite objective.
        QVERIFY(all.divergence.diverged);
        QVERIFY(!std::isfinite(all.divergence.value));
        QVERIFY2(QString::fromStdString(all.divergence.reason).contains("NaN") ||
                     QString::fromStdString(all.divergence.reason).contains("infinite"),
                 all.divergence.reason.c_str());
        QCOMPARE(all.divergence.update, static_cast<long long>(all.objectivePerUpdate.size()));
        for (size_t i = 0; i + 1 < all.objectivePerUpdate.size(); ++i) {
            QVERIFY(std::isfinite(all.objectivePerUpdate[i]));
        }
    }

    // f* and L computed on a thread of their own (the CLI's runs start before them): held back
    // here until the runs end, so every divergence decision made before then came from bounds
    // on f* or from f* computed on demand, and the results must equal those of known constants.
    void constantsComingAsideGiveTheSameRuns_data() {
        QTest::addColumn<bool>("rpd");
        QTest::addColumn<double>("stepSize");
        QTest::newRow("pd-stable") << false << 0.05;
        QTest::newRow("pd-diverging") << false << 40.0;
        QTest::newRow("rpd-stable") << true << 0.05;
        QTest::newRow("rpd-diverging") << true << 40.0;
    }
    void constantsComingAsideGiveTheSameRuns() {
        QFETCH(bool, rpd);
        QFETCH(double, stepSize);
        const int S = 4;
        auto run = [&](const std::shared_ptr<const LinearObjective>& obj) {
            std::unique_ptr<Replay> r;
            if (rpd) {
                RpdReplayConfig cfg;
                cfg.stages = S;
                cfg.updates = 600;
                cfg.stepSize = stepSize;
                cfg.maxDelay = 5;
                cfg.seed = 2;
                r = std::make_unique<RpdReplay>(obj, std::make_unique<CpuBackend>(), cfg);
            } else {
                PipelineReplayConfig cfg;
                cfg.timeline = buildTimeline(scheduleOf(ScheduleKind::PipeDream, S, 150));
                cfg.stepSize = stepSize;
                r = std::make_unique<PipelineReplay>(obj, std::make_unique<CpuBackend>(), cfg);
            }
            runInChunks(*r, 64);
            return r->takeResult();
        };
        const RunResult known = run(makeObjective(LossKind::Quadratic));

        auto coming = makeBareObjective(LossKind::Quadratic);  // the same data as makeObjective's
        std::promise<void> gate;
        std::future<void> aside = coming->computeConstantsAside(gate.get_future().share());
        QVERIFY(coming->optimumComing());
        QVERIFY(!coming->hasOptimum());
        const RunResult got = run(coming);
        gate.set_value();
        aside.get();

        QCOMPARE(got.divergence.diverged, known.divergence.diverged);
        QCOMPARE(got.divergence.update, known.divergence.update);
        QCOMPARE(got.divergence.reason, known.divergence.reason);
        QCOMPARE(got.finished, known.finished);
        QCOMPARE(got.updates, known.updates);
        QCOMPARE(got.objectivePerUpdate, known.objectivePerUpdate);
        QCOMPARE(got.optimum, known.optimum);
        QCOMPARE(got.smoothness, known.smoothness);
        QVERIFY(known.optimum > 0.0);
        QCOMPARE(got.theorem.has_value(), known.theorem.has_value());
        if (known.theorem) QCOMPARE(got.theorem->total, known.theorem->total);
        if (stepSize < 1.0) {
            // A stable run never came near the threshold: f* was not needed before the end.
            QVERIFY(!got.divergence.diverged);
            QVERIFY(got.finished);
        } else {
            QVERIFY(got.divergence.diverged);
        }
    }

    // The bounds alone decide a stable run: f* is not computed by the replay while it runs.
    void stableRunDoesNotWaitForFStar() {
        auto coming = makeBareObjective(LossKind::Quadratic);  // the same data as makeObjective's
        std::promise<void> gate;
        std::future<void> aside = coming->computeConstantsAside(gate.get_future().share());
        PipelineReplayConfig cfg;
        cfg.timeline = buildTimeline(scheduleOf(ScheduleKind::PipeDream, 4, 150));
        cfg.stepSize = 0.05;
        PipelineReplay r(coming, std::make_unique<CpuBackend>(), cfg);
        while (r.stepsDone() < r.totalSteps() - 1 && r.advance(1) > 0) {
        }
        QVERIFY(!r.done());
        QVERIFY2(!coming->hasOptimum(), "the replay computed f* although no check needed it");
        gate.set_value();
        r.runToEnd();
        QVERIFY(r.result().finished);
        QCOMPARE(r.result().optimum, coming->optimum());
        aside.get();
    }

    void theoremTermsByHand() {
        auto obj = makeObjective(LossKind::Quadratic);
        RpdReplayConfig cfg;
        cfg.stages = 3;
        cfg.updates = 400;
        cfg.stepSize = 0.02;
        cfg.maxDelay = 7;
        cfg.seed = 8;
        cfg.sampling.gradNormEvery = 1;
        SpyBackend* spy = nullptr;
        auto r = rpdReplay(obj, cfg, &spy);
        runInChunks(*r, 1 << 20);
        const RunResult& res = r->result();
        QVERIFY(res.theorem.has_value());
        double G = 0.0;
        for (double g2 : res.blockGradNormSq) G = std::max(G, std::sqrt(g2));
        QCOMPARE(res.gradientBound, G);
        const double L = obj->smoothness();
        const double D0 = obj->value(VectorXd::Zero(obj->dim())) - obj->optimum();
        const double S = 3, g = 0.02, K = 400, d = 7;
        const TheoremBound& t = *res.theorem;
        QVERIFY(close(t.optimisation, 2 * S * D0 / (g * K), 1e-12));
        QVERIFY(close(t.noise, g * S * L * G * G, 1e-12));
        QVERIFY(close(t.staleness, g * g * L * L * d * d * G * G, 1e-12));
        QVERIFY(close(t.total, t.optimisation + t.noise + t.staleness, 1e-12));
        QCOMPARE(t.stepSizeAllowed, g <= 1.0 / L);
        // The running mean of ||grad f(w_k)||^2 over k = 0..K, as the theorem's left side.
        QCOMPARE(res.gradNormSq.size(), size_t(401));
        double sum = 0.0;
        for (double v : res.gradNormSq) sum += v;
        QVERIFY(close(res.gradNormRunningMean.back(), sum / 401, 1e-12));
        // A step size allowed by the theorem keeps this run under its bound (the bound is about
        // the expectation, but it is loose by orders of magnitude here).
        QVERIFY(t.stepSizeAllowed);
        QVERIFY(res.gradNormRunningMean.back() <= t.total);

        TheoremInputs in;
        in.stages = 2;
        in.stepSize = 0.0;
        in.smoothness = 1.0;
        in.updates = 10;
        QVERIFY(std::isinf(theoremBound(in).optimisation));
        QVERIFY(!theoremBound(in).stepSizeAllowed);
    }

    void tunedStepSizeByHand() {
        // min{1/L, sqrt(2 D0 / (L G^2 K))}
        QVERIFY(close(tunedStepSize(2.0, 3.0, 100, 0.5), std::sqrt(1.0 / 1800.0), 1e-15));
        QCOMPARE(tunedStepSize(2.0, 0.01, 10, 100.0), 0.5);
        QCOMPARE(tunedStepSize(4.0, 0.0, 10, 1.0), 0.25);
        // It shrinks like 1/sqrt(K).
        QVERIFY(close(tunedStepSize(1.0, 1.0, 400, 1.0) / tunedStepSize(1.0, 1.0, 100, 1.0), 0.5,
                      1e-12));
    }

    void badReplayConfigsThrow() {
        auto obj = makeObjective(LossKind::Quadratic);
        Timeline tl = buildTimeline(scheduleOf(ScheduleKind::PipeDream, 3, 4));
        for (double bad : {-0.1, std::nan(""), std::numeric_limits<double>::infinity()}) {
            PipelineReplayConfig cfg;
            cfg.timeline = tl;
            cfg.stepSize = bad;
            QVERIFY_THROWS_EXCEPTION(ConfigError,
                                     PipelineReplay(obj, std::make_unique<CpuBackend>(), cfg));
            RpdReplayConfig rc;
            rc.stages = 3;
            rc.stepSize = bad;
            QVERIFY_THROWS_EXCEPTION(ConfigError,
                                     RpdReplay(obj, std::make_unique<CpuBackend>(), rc));
        }
        RpdReplayConfig rc;
        rc.stages = 3;
        rc.delayMode = DelayMode::PipeDream;  // without a timeline
        QVERIFY_THROWS_EXCEPTION(ConfigError, RpdReplay(obj, std::make_unique<CpuBackend>(), rc));
        rc.delayMode = DelayMode::Uniform;
        rc.maxDelay = -1;
        QVERIFY_THROWS_EXCEPTION(ConfigError, RpdReplay(obj, std::make_unique<CpuBackend>(), rc));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseDelayMode("sometimes"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parseStageOrder("random"));
        for (const char* m : {"uniform", "max", "zero", "pd"}) {
            QCOMPARE(QString::fromStdString(delayModeName(parseDelayMode(m))), QString(m));
        }
    }

    void batchSequenceCyclesOrShufflesEpochs() {
        std::vector<int> plain = batchSequence(25, 6, false, 1);
        for (int j = 0; j < 25; ++j) QCOMPARE(plain[j], j % 6);
        std::vector<int> shuffled = batchSequence(24, 6, true, 1);
        for (int e = 0; e < 4; ++e) {
            std::vector<int> epoch(shuffled.begin() + 6 * e, shuffled.begin() + 6 * e + 6);
            std::sort(epoch.begin(), epoch.end());
            for (int i = 0; i < 6; ++i) QCOMPARE(epoch[i], i);
        }
        QVERIFY(shuffled != batchSequence(24, 6, false, 1));
        QVERIFY(shuffled == batchSequence(24, 6, true, 1));
        QVERIFY(shuffled != batchSequence(24, 6, true, 2));
        // NumPy: rng = default_rng(5); per epoch e = arange(7); rng.shuffle(e); append; cut at 17.
        const std::vector<int> numpy{1, 4, 2, 3, 6, 5, 0, 0, 1, 3, 6, 4, 2, 5, 6, 2, 3};
        QCOMPARE(batchSequence(17, 7, true, 5), numpy);
    }
};

QTEST_APPLESS_MAIN(TestReplay)
#include "tst_replay.moc"

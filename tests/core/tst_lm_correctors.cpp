// Staleness correctors (docs/correctors.md, "Correctors") on the language model's CPU executors,
// against a reference walk written here from the formulas: it counts prediction's s, tau_k, the
// steady delays and the accumulate groups itself over the schedule's events (never the engine's
// corrector plan), takes each block's gradient from the model's own gradient function at the
// weights the schedule says were read, and applies the corrections coordinate by coordinate.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compute/lm_cpu_pipeline_executor.hpp"
#include "compute/lm_rpd_executor.hpp"
#include "errors.hpp"
#include "expect_error.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/budget.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "lm_tiny_problem.hpp"
#include "ref_optimizer.hpp"
#include "replay/lm_pipeline_replay.hpp"
#include "replay/lm_rpd_replay.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

using namespace pipelens;
using Eigen::VectorXd;
using nlohmann::json;

namespace {

using Problem = std::shared_ptr<const CharTransformerProblem>;
using test::RefOptimizer;

using test::lmBatchesOf;
using test::lmStageGradient;
using test::relError;
using test::sameBits;
using test::tinyLmProblem;

ScheduleParams schedule(ScheduleKind kind, int stages, int microbatches) {
    ScheduleParams s;
    s.kind = kind;
    s.stages = stages;
    s.microbatches = microbatches;
    return s;
}

Timeline localSgd(int stages, int microbatches) {
    ScheduleParams p = schedule(ScheduleKind::LocalSgd, stages, microbatches);
    p.replicas = 2;
    p.localSteps = 2;
    return buildTimeline(p);
}

struct RefRun {
    VectorXd weights;
    // Accumulate: per update k and block j, the delay counted in the updates that take effect.
    std::vector<std::vector<long long>> effective;
};

// The reference: docs/correctors.md's semantics, event by event.
RefRun refCorrected(const CharTransformerProblem& p, const Timeline& tl, int R, double gamma,
                    const OptimizerSpec& opt, const CorrectorSpec& c) {
    const int S = tl.params.stages;
    const int N = tl.params.microbatches;
    const std::vector<ReplayEvent> ev = replayOrder(tl);
    const size_t E = ev.size();
    const auto batchOf = lmBatchesOf(p, N);
    const int kA = std::max(1, c.accumulate);
    const auto cellOf = [&](const ReplayEvent& e) {
        return static_cast<size_t>((e.microbatch % R) * S + e.stage);
    };
    const auto mj = [&](int m, int j) { return static_cast<size_t>(m * S + j); };

    // Pass 1, counting. Which backwards take effect: every kA-th of its replica and block.
    std::vector<char> applies(E, 0);
    std::vector<int> inGroup(static_cast<size_t>(R * S), 0);
    std::vector<size_t> forwardEvent(static_cast<size_t>(N * S));
    std::vector<size_t> backwardEvent(static_cast<size_t>(N * S), E);  // E: none (a cut run)
    std::vector<size_t> updateEvent;                                   // update k's event
    std::vector<long long> before(E + 1, 0);                           // backwards before event e
    std::vector<long long> effBefore(E + 1, 0);  // backwards that take effect before event e
    for (size_t e = 0; e < E; ++e) {
        before[e + 1] = before[e];
        effBefore[e + 1] = effBefore[e];
        if (ev[e].op == OpKind::Forward) {
            forwardEvent[mj(ev[e].microbatch, ev[e].stage)] = e;
            continue;
        }
        backwardEvent[mj(ev[e].microbatch, ev[e].stage)] = e;
        updateEvent.push_back(e);
        applies[e] = ++inGroup[cellOf(ev[e])] % kA == 0 ? 1 : 0;
        ++before[e + 1];
        effBefore[e + 1] += applies[e];
    }
    // Where each backward's gradient is applied: its cell's next backward that takes effect
    // (E: never, an unfinished group at the end).
    std::vector<size_t> closing(E, E);
    std::vector<size_t> next(static_cast<size_t>(R * S), E);
    for (size_t e = E; e-- > 0;) {
        if (ev[e].op == OpKind::Forward) continue;
        if (applies[e] != 0) next[cellOf(ev[e])] = e;
        closing[e] = next[cellOf(ev[e])];
    }
    const auto K = static_cast<long long>(updateEvent.size());
    // tau_k in block updates: the largest k - h(m, j') over the blocks; per block, the most
    // frequent tau_k of the block's updates, ties to the larger.
    std::vector<long long> tau(static_cast<size_t>(K), 0);
    std::vector<std::map<long long, int>> seen(static_cast<size_t>(S));
    for (long long k = 0; k < K; ++k) {
        const ReplayEvent& b = ev[updateEvent[static_cast<size_t>(k)]];
        for (int j = 0; j < S; ++j) {
            tau[static_cast<size_t>(k)] = std::max(tau[static_cast<size_t>(k)],
                                                   k - before[forwardEvent[mj(b.microbatch, j)]]);
        }
        ++seen[static_cast<size_t>(b.stage)][tau[static_cast<size_t>(k)]];
    }
    std::vector<long long> steady(static_cast<size_t>(S), 0);
    for (int j = 0; j < S; ++j) {
        int most = 0;
        for (const auto& [t, n] : seen[static_cast<size_t>(j)]) {
            if (n >= most) most = n, steady[static_cast<size_t>(j)] = t;
        }
    }
    RefRun out;
    out.effective.assign(static_cast<size_t>(K), std::vector<long long>(static_cast<size_t>(S)));
    for (long long k = 0; k < K; ++k) {
        const size_t e = updateEvent[static_cast<size_t>(k)];
        for (int j = 0; j < S; ++j) {
            out.effective[static_cast<size_t>(k)][static_cast<size_t>(j)] =
                effBefore[closing[e]] - effBefore[forwardEvent[mj(ev[e].microbatch, j)]];
        }
    }
    // prediction's exact s of F(m, j): the updates of its replica's block that take effect
    // after the read and before the one that applies m's gradient (to the end if none does, or
    // if the run's end cut off the backward).
    const auto exactS = [&](size_t f) {
        const size_t b = backwardEvent[mj(ev[f].microbatch, ev[f].stage)];
        const size_t close = b == E ? E : closing[b];
        long long s = 0;
        for (size_t e = f + 1; e < close; ++e) {
            s += ev[e].op == OpKind::Backward && applies[e] != 0 && cellOf(ev[e]) == cellOf(ev[f]);
        }
        return static_cast<double>(s);
    };
    const double tauRef = c.tauRef > 0 ? c.tauRef : S;

    // Pass 2, the walk.
    std::vector<VectorXd> w(static_cast<size_t>(R), p.w0);
    std::vector<VectorXd> d(static_cast<size_t>(R), VectorXd::Zero(p.w0.size()));
    std::vector<VectorXd> sum(static_cast<size_t>(R), VectorXd::Zero(p.w0.size()));
    std::vector<VectorXd> stash(static_cast<size_t>(N), p.w0);
    std::vector<std::vector<RefOptimizer>> optimizer(
        static_cast<size_t>(R),
        std::vector<RefOptimizer>(static_cast<size_t>(S), RefOptimizer(opt)));
    size_t nextAverage = 0;
    const auto average = [&] {  // weights and optimizer state; d and the sums stay per replica
        VectorXd mean = VectorXd::Zero(p.w0.size());
        for (const auto& x : w) mean += x;
        for (auto& x : w) x = mean / R;
        test::averageStates(optimizer);
    };
    long long k = 0;
    for (size_t e = 0; e < E; ++e) {
        const ReplayEvent& x = ev[e];
        while (nextAverage < tl.averagingSlots.size() && tl.averagingSlots[nextAverage] < x.slot) {
            average();
            ++nextAverage;
        }
        const auto r = static_cast<size_t>(x.microbatch % R);
        const auto& blk = p.layout.stage(x.stage);
        auto wj = w[r].segment(blk.offset, blk.size);
        auto dj = d[r].segment(blk.offset, blk.size);
        auto stashed = stash[static_cast<size_t>(x.microbatch)].segment(blk.offset, blk.size);
        if (x.op == OpKind::Forward) {
            double shift = 0.0;
            if (c.prediction) {
                shift = c.steps == PredictionSteps::Exact ? exactS(e) : S - 1 - x.stage;
            } else if (c.lookahead) {
                shift = c.beta;
            }
            stashed = wj + shift * dj;
            continue;
        }
        VectorXd g = lmStageGradient(p, stash[static_cast<size_t>(x.microbatch)], x.stage,
                                     batchOf[static_cast<size_t>(x.microbatch)]);
        const double t =
            c.perBlock ? steady[static_cast<size_t>(x.stage)] : tau[static_cast<size_t>(k)];
        ++k;
        if (c.dc) {
            for (Eigen::Index i = 0; i < g.size(); ++i)
                g[i] += c.lambda * g[i] * g[i] * (wj[i] - stashed[i]);
        }
        if (kA > 1) {
            auto total = sum[r].segment(blk.offset, blk.size);
            total += g;
            if (applies[e] == 0) continue;
            g = total / kA;
            total.setZero();
        }
        const double gammaK = c.delayAdaptive ? gamma * tauRef / std::max(tauRef, t) : gamma;
        const VectorXd old = wj;
        if (c.lookahead) {
            const VectorXd delta = c.beta * dj - gammaK * (g + opt.weightDecay * old);
            wj += delta;
        } else {
            optimizer[r][static_cast<size_t>(x.stage)].apply(wj, g, gammaK);
        }
        dj = wj - old;
    }
    while (nextAverage++ < tl.averagingSlots.size()) average();
    out.weights = VectorXd::Zero(p.w0.size());
    for (const auto& x : w) out.weights += x / R;
    return out;
}

std::unique_ptr<LmReplay> engine(const Problem& p, const Timeline& tl, int replicas, double gamma,
                                 const OptimizerSpec& opt, const CorrectorSpec& c,
                                 int slotThreads = 1) {
    LmPipelineConfig cfg;
    cfg.method = replicas > 1 ? Method::LocalSgd : Method::PipeDream;
    cfg.timeline = tl;
    cfg.replicas = replicas;
    cfg.stepSize = gamma;
    cfg.optimizer = opt;
    cfg.correctors = c;
    cfg.slotThreads = slotThreads;
    return test::runTinyLmPipeline(p, cfg);
}

std::vector<double> forwardLosses(const LmReplay& run) {
    std::vector<double> out;
    for (const auto& f : run.log().forwardLosses) out.push_back(f.loss);
    return out;
}

OptimizerSpec optimizerOf(OptimizerKind kind, double weightDecay = 0.0) {
    OptimizerSpec o;
    o.kind = kind;
    o.weightDecay = weightDecay;
    o.beta1 = 0.85;
    o.beta2 = 0.97;
    o.eps = 1e-6;
    return o;
}

// The rows: each corrector alone and combinations, with the optimizer and step size of each.
struct Row {
    const char* name;
    CorrectorSpec c;
    OptimizerSpec opt;
    double gamma;
    // LocalSGD's replicas each run their microbatches one after the other: no update of a
    // replica's block falls between a read and its gradient's update, so exact s is 0 and
    // w_now = w_read (prediction exact and dc change nothing there; the delays across
    // replicas still count for delay_adaptive).
    bool changesLocalSgd = true;
};

std::vector<Row> rows() {
    std::vector<Row> out;
    const auto add = [&](const char* name, auto setUp, OptimizerSpec opt = {}, double gamma = 0.1) {
        CorrectorSpec c;
        setUp(c);
        out.push_back({name, c, opt, gamma, true});
    };
    add("delay_adaptive", [](CorrectorSpec& c) { c.delayAdaptive = true; });
    add("delay_adaptive per block, tau_ref 2", [](CorrectorSpec& c) {
        c.delayAdaptive = true;
        c.perBlock = true;
        c.tauRef = 2.0;
    });
    add("prediction exact", [](CorrectorSpec& c) { c.prediction = true; });
    out.back().changesLocalSgd = false;
    add("prediction pipeoptim", [](CorrectorSpec& c) {
        c.prediction = true;
        c.steps = PredictionSteps::PipeOptim;
    });
    add("dc", [](CorrectorSpec& c) {
        c.dc = true;
        c.lambda = 2.0;
    });
    out.back().changesLocalSgd = false;
    add("lookahead", [](CorrectorSpec& c) {
        c.lookahead = true;
        c.beta = 0.6;
    });
    add("accumulate k 2", [](CorrectorSpec& c) { c.accumulate = 2; });
    add("accumulate k 3", [](CorrectorSpec& c) { c.accumulate = 3; });
    add("prediction + dc + delay_adaptive", [](CorrectorSpec& c) {
        c.prediction = true;
        c.dc = true;
        c.lambda = 2.0;
        c.delayAdaptive = true;
    });
    add("accumulate 2 + dc + lookahead", [](CorrectorSpec& c) {
        c.accumulate = 2;
        c.dc = true;
        c.lambda = 2.0;
        c.lookahead = true;
        c.beta = 0.6;
    });
    add(
        "lookahead + delay_adaptive, sgd decay",
        [](CorrectorSpec& c) {
            c.lookahead = true;
            c.beta = 0.6;
            c.delayAdaptive = true;
        },
        optimizerOf(OptimizerKind::Sgd, 0.05));
    add(
        "prediction + accumulate 2, adam",
        [](CorrectorSpec& c) {
            c.prediction = true;
            c.accumulate = 2;
        },
        optimizerOf(OptimizerKind::Adam), 0.01);
    add(
        "dc + delay_adaptive, momentum",
        [](CorrectorSpec& c) {
            c.dc = true;
            c.lambda = 2.0;
            c.delayAdaptive = true;
        },
        optimizerOf(OptimizerKind::Momentum), 0.05);
    return out;
}

void addRows() {
    QTest::addColumn<int>("row");
    const auto all = rows();
    for (size_t i = 0; i < all.size(); ++i) QTest::newRow(all[i].name) << static_cast<int>(i);
}

// The message of the ConfigError `f` throws ("" if none).
constexpr auto configError = &errorMessageOf<ConfigError>;

// An executor that is not the CPU's (as the OpenCL one): it keeps the base's defaults.
class OtherExecutor final : public LmPipelineExecutor {
  public:
    OtherExecutor(Problem p, int replicas)
        : cpu_(makeLmCpuPipelineExecutor(std::move(p), replicas)) {}
    std::string describe() const override { return "test device"; }
    double forward(int m, int s, int r, int b) override { return cpu_->forward(m, s, r, b); }
    void backward(int m, int s, int r, int b, double g) override { cpu_->backward(m, s, r, b, g); }
    void averageReplicas() override { cpu_->averageReplicas(); }
    double meanLoss(const TokenBatches& b) override { return cpu_->meanLoss(b); }
    VectorXd weights() const override { return cpu_->weights(); }
    std::vector<int> peakStashedWeights() const override { return cpu_->peakStashedWeights(); }
    std::vector<int> peakKeptInputs() const override { return cpu_->peakKeptInputs(); }

  private:
    std::unique_ptr<LmPipelineExecutor> cpu_;
};

class OtherRpdExecutor final : public LmRpdExecutor {
  public:
    explicit OtherRpdExecutor(Problem p) : cpu_(makeLmCpuRpdExecutor(std::move(p))) {}
    std::string describe() const override { return "test device"; }
    double step(const std::vector<int>& point, int stage, int batch, int from, int to,
                double stepSize) override {
        return cpu_->step(point, stage, batch, from, to, stepSize);
    }
    double meanLoss(const std::vector<int>& point, const TokenBatches& b) override {
        return cpu_->meanLoss(point, b);
    }
    VectorXd weights(const std::vector<int>& point) const override { return cpu_->weights(point); }

  private:
    std::unique_ptr<LmRpdExecutor> cpu_;
};

// RPD with PD's delays and order (S = 3), and the reference: every iterate kept, z_k's block j
// is iterate k - d_kj's; dc at the newest version against the one read; delay_adaptive's tau_k
// the largest of the update's delays.
struct RpdPair {
    VectorXd engine, reference, plain;
};

RpdPair rpdRun(const CorrectorSpec& c, const OptimizerSpec& opt, double gamma) {
    const int S = 3;
    const Problem p = tinyLmProblem(S);
    const auto table =
        std::make_shared<const DelayTable>(buildTimeline(schedule(ScheduleKind::PipeDream, S, 8)));
    const long long K = table->updates();
    LmRpdConfig cfg;
    cfg.updates = K;
    cfg.stepSize = gamma;
    cfg.delayMode = DelayMode::PipeDream;
    cfg.order = StageOrder::PipeDream;
    cfg.pipeDream = table;
    cfg.maxDelay = table->maxDelay();
    cfg.batchOf = lmBatchesOf(*p, 8);
    cfg.optimizer = opt;
    cfg.correctors = c;
    auto run = makeLmRpdReplay(p, cfg);
    run->runToEnd();
    if (!run->result().finished) throw std::runtime_error("the RPD run did not finish");
    const double tauRef = c.tauRef > 0 ? c.tauRef : S;
    const auto walk = [&](bool corrected) {
        std::vector<VectorXd> hist{p->w0};
        std::vector<RefOptimizer> optimizer(S, RefOptimizer(opt));
        for (long long k = 0; k < K; ++k) {
            VectorXd z(p->w0.size());
            long long tau = 0;
            for (int j = 0; j < S; ++j) {
                const auto& b = p->layout.stage(j);
                tau = std::max(tau, table->delay(k, j));
                z.segment(b.offset, b.size) =
                    hist[static_cast<size_t>(k - table->delay(k, j))].segment(b.offset, b.size);
            }
            const BlockUpdateInfo& u = table->update(k);
            const auto& b = p->layout.stage(u.stage);
            VectorXd g = lmStageGradient(*p, z, u.stage, cfg.batchOf[u.microbatch]);
            VectorXd next = hist.back();
            if (corrected && c.dc) {
                for (Eigen::Index i = 0; i < g.size(); ++i) {
                    g[i] += c.lambda * g[i] * g[i] * (next[b.offset + i] - z[b.offset + i]);
                }
            }
            const double gammaK = corrected && c.delayAdaptive
                                      ? gamma * tauRef / std::max(tauRef, static_cast<double>(tau))
                                      : gamma;
            optimizer[static_cast<size_t>(u.stage)].apply(next.segment(b.offset, b.size), g,
                                                          gammaK);
            hist.push_back(next);
        }
        return hist.back();
    };
    return {run->weights(), walk(true), walk(false)};
}

json lmConfig(const json& correctors, const std::string& method) {
    return {{"name", "lm-correctors"},
            {"seed", 1},
            {"stages", 3},
            {"batch_size", 2},
            {"backend", "cpu"},
            {"objective", test::tinyLmObjectiveJson()},
            {"budget", {{"slots", 40}}},
            {"methods",
             json::array({{{"method", method}, {"step_size", 0.01}, {"correctors", correctors}}})}};
}

}  // namespace

class TestLmCorrectors : public QObject {
    Q_OBJECT
  private slots:
    // PipeDream (S = 3 and 4) and LocalSGD (R = 2, H = 2): each corrector and combination
    // against the reference to 1e-12 in double; the reference itself differs from the
    // uncorrected run by far more (except where Row::changesLocalSgd says why not), so an engine
    // that ignored the corrector would fail. The slot threads give the same bits as one thread.
    void pipelinesMatchTheReference_data() { addRows(); }
    void pipelinesMatchTheReference() {
        QFETCH(int, row);
        const Row r = rows()[static_cast<size_t>(row)];
        struct Case {
            int stages, replicas;
            Timeline tl;
        };
        const std::vector<Case> cases = {
            {3, 1, buildTimeline(schedule(ScheduleKind::PipeDream, 3, 10))},
            {4, 1, buildTimeline(schedule(ScheduleKind::PipeDream, 4, 10))},
            {3, 2, localSgd(3, 12)},
            // A truncate budget's run: forwards whose backwards never came, microbatches
            // never read.
            {3, 1, truncatedTimeline(schedule(ScheduleKind::PipeDream, 3, 10), 30)}};
        for (const Case& k : cases) {
            const Problem p = tinyLmProblem(k.stages);
            const RefRun ref = refCorrected(*p, k.tl, k.replicas, r.gamma, r.opt, r.c);
            const VectorXd plain =
                refCorrected(*p, k.tl, k.replicas, r.gamma, r.opt, CorrectorSpec{}).weights;
            const auto run = engine(p, k.tl, k.replicas, r.gamma, r.opt, r.c);
            const double err = relError(run->weights(), ref.weights);
            const double effect = relError(ref.weights, plain);
            qInfo("S = %d, R = %d: max rel. error %.2g, corrector's effect %.2g", k.stages,
                  k.replicas, err, effect);
            QVERIFY(err <= 1e-12);
            if (k.replicas == 1 || r.changesLocalSgd) {
                QVERIFY(effect > 1e-9);
            } else {
                QCOMPARE(effect, 0.0);
            }
            const auto threaded = engine(p, k.tl, k.replicas, r.gamma, r.opt, r.c, 3);
            QVERIFY(sameBits(threaded->weights(), run->weights()));
            QVERIFY(forwardLosses(*threaded) == forwardLosses(*run));
        }
    }

    // Accumulate: RunResult::effectiveDelays against the reference's own count (PD, S = 3 and
    // 4, k = 2 and 3), the delays themselves unchanged.
    void accumulateRecordsTheEffectiveDelays() {
        for (int S : {3, 4}) {
            for (int kA : {2, 3}) {
                const Problem p = tinyLmProblem(S);
                const Timeline tl = buildTimeline(schedule(ScheduleKind::PipeDream, S, 10));
                CorrectorSpec c;
                c.accumulate = kA;
                const RefRun ref = refCorrected(*p, tl, 1, 0.1, {}, c);
                const auto run = engine(p, tl, 1, 0.1, {}, c);
                const RunResult& res = run->result();
                QVERIFY(res.delays && res.effectiveDelays);
                QCOMPARE(res.effectiveDelays->updates(), res.delays->updates());
                QCOMPARE(res.delays->maxDelay(), DelayTable(tl).maxDelay());
                bool differs = false;
                for (long long k = 0; k < res.delays->updates(); ++k) {
                    for (int j = 0; j < S; ++j) {
                        const long long want =
                            ref.effective[static_cast<size_t>(k)][static_cast<size_t>(j)];
                        if (res.effectiveDelays->delay(k, j) != want) {
                            QFAIL(qPrintable(QString("S = %1, k = %2: update %3, block %4: %5, "
                                                     "expected %6")
                                                 .arg(S)
                                                 .arg(kA)
                                                 .arg(k)
                                                 .arg(j)
                                                 .arg(res.effectiveDelays->delay(k, j))
                                                 .arg(want)));
                        }
                        differs = differs || want != res.delays->delay(k, j);
                    }
                }
                QVERIFY(differs);
            }
        }
        // Without accumulate there is no effective table.
        CorrectorSpec dc;
        dc.dc = true;
        const Timeline tl = buildTimeline(schedule(ScheduleKind::PipeDream, 3, 6));
        QVERIFY(!engine(tinyLmProblem(3), tl, 1, 0.1, {}, dc)->result().effectiveDelays);
    }

    // The identities, bit for bit (weights and every forward loss): dc with lambda = 0,
    // lookahead with beta = 0, delay_adaptive with tau_ref >= every tau_k, accumulate k = 1.
    void identitiesAreBitIdentical() {
        const int S = 3;
        const Problem p = tinyLmProblem(S);
        const Timeline tl = buildTimeline(schedule(ScheduleKind::PipeDream, S, 10));
        const auto plain = engine(p, tl, 1, 0.1, {}, {});
        QVERIFY(!sameBits(plain->weights(), p->w0));
        std::vector<std::pair<const char*, CorrectorSpec>> specs;
        CorrectorSpec c;
        c.dc = true;
        c.lambda = 0.0;
        specs.emplace_back("dc lambda 0", c);
        c = {};
        c.lookahead = true;
        c.beta = 0.0;
        specs.emplace_back("lookahead beta 0", c);
        c = {};
        c.delayAdaptive = true;
        c.tauRef = static_cast<double>(DelayTable(tl).maxDelay());
        specs.emplace_back("delay_adaptive tau_ref = max delay", c);
        c = {};
        c.accumulate = 1;
        specs.emplace_back("accumulate k 1", c);
        for (const auto& [name, spec] : specs) {
            for (int threads : {1, 3}) {
                const auto run = engine(p, tl, 1, 0.1, {}, spec, threads);
                if (!sameBits(run->weights(), plain->weights()) ||
                    forwardLosses(*run) != forwardLosses(*plain)) {
                    QFAIL(qPrintable(
                        QString("%1 (%2 threads): not plain PD's bits").arg(name).arg(threads)));
                }
            }
        }
        // One below the largest delay is not the identity.
        c = {};
        c.delayAdaptive = true;
        c.tauRef = static_cast<double>(DelayTable(tl).maxDelay() - 1);
        QVERIFY(!sameBits(engine(p, tl, 1, 0.1, {}, c)->weights(), plain->weights()));
    }

    // Float: the corrected runs within float's rounding of the double reference.
    void floatFollowsTheReference() {
        const Timeline tl = buildTimeline(schedule(ScheduleKind::PipeDream, 3, 10));
        for (const size_t i : {size_t(8), size_t(9), size_t(11)}) {
            const Row r = rows()[i];
            const auto run =
                engine(tinyLmProblem(3, LmPrecision::Float), tl, 1, r.gamma, r.opt, r.c);
            const double err =
                relError(run->weights(),
                         refCorrected(*tinyLmProblem(3), tl, 1, r.gamma, r.opt, r.c).weights);
            qInfo("%s, float: %.2g", r.name, err);
            QVERIFY(err <= 1e-4);
        }
    }

    // RPD with PD's delays and order: delay_adaptive and dc, alone and together, plain SGD and
    // Adam, against the reference to 1e-12; each differs from the uncorrected run.
    void rpdMatchesTheReference() {
        CorrectorSpec adaptive;
        adaptive.delayAdaptive = true;
        CorrectorSpec dc;
        dc.dc = true;
        dc.lambda = 2.0;
        CorrectorSpec both = dc;
        both.delayAdaptive = true;
        both.tauRef = 2.0;
        const std::vector<std::pair<OptimizerSpec, double>> optimizers = {
            {{}, 0.1}, {optimizerOf(OptimizerKind::Adam), 0.01}};
        for (const CorrectorSpec& c : {adaptive, dc, both}) {
            for (const auto& [opt, gamma] : optimizers) {
                const RpdPair r = rpdRun(c, opt, gamma);
                const double err = relError(r.engine, r.reference);
                qInfo("RPD %s with %s: max rel. error %.2g, effect %.2g",
                      correctorSummary(c).c_str(),
                      std::string(enumName(kOptimizerKinds, opt.kind)).c_str(), err,
                      relError(r.reference, r.plain));
                QVERIFY(err <= 1e-12);
                QVERIFY(relError(r.reference, r.plain) > 1e-9);
            }
        }
    }

    // Executors other than the CPU's (OpenCL) refuse correctors by name; without any they run.
    void otherExecutorsRefuseCorrectors() {
        const Problem p = tinyLmProblem(3);
        LmPipelineConfig cfg;
        cfg.timeline = buildTimeline(schedule(ScheduleKind::PipeDream, 3, 4));
        cfg.stepSize = 0.01;
        cfg.correctors.prediction = true;
        cfg.correctors.dc = true;
        const LmExecutorFactory other = [](Problem q, int r) {
            return std::make_unique<OtherExecutor>(std::move(q), r);
        };
        QCOMPARE(QString::fromStdString(configError([&] { makeLmPipelineReplay(p, cfg, other); })),
                 QString("correctors (prediction (exact s) + DC (lambda=0.5)) are not supported "
                         "by the language model's test device executor: none; use the CPU "
                         "engine (backend = \"cpu\")"));
        cfg.correctors = {};
        QVERIFY(makeLmPipelineReplay(p, cfg, other) != nullptr);

        LmRpdConfig rpd;
        rpd.updates = 6;
        rpd.stepSize = 0.01;
        rpd.correctors.delayAdaptive = true;
        const LmRpdExecutorFactory otherRpd = [](Problem q) {
            return std::make_unique<OtherRpdExecutor>(std::move(q));
        };
        QCOMPARE(QString::fromStdString(configError([&] { makeLmRpdReplay(p, rpd, otherRpd); })),
                 QString("correctors (delay-adaptive) are not supported by the language "
                         "model's test device executor: none; use the CPU engine (backend = "
                         "\"cpu\")"));
        rpd.correctors = {};
        QVERIFY(makeLmRpdReplay(p, rpd, otherRpd) != nullptr);
    }

    // The guards behind validate(): lookahead with Adam, correctors on a synchronous step.
    void replayGuards() {
        const Problem p = tinyLmProblem(3);
        LmPipelineConfig cfg;
        cfg.timeline = buildTimeline(schedule(ScheduleKind::PipeDream, 3, 4));
        cfg.stepSize = 0.01;
        cfg.correctors.lookahead = true;
        cfg.optimizer = optimizerOf(OptimizerKind::Adam);
        QCOMPARE(QString::fromStdString(configError([&] { makeLmPipelineReplay(p, cfg); })),
                 QString("correctors: lookahead with optimizer.kind = \"adam\" is not allowed: "
                         "sgd only (lookahead is the momentum)"));
        cfg.optimizer = {};
        cfg.stepScale = 0.25;
        QVERIFY_THROWS_EXCEPTION(std::logic_error, makeLmPipelineReplay(p, cfg));
    }

    // The config: correctors on the language model run end to end on the CPU, with their label.
    void configRunsCorrectorsOnTheLanguageModel() {
        const json pred = json::array({{{"kind", "prediction"}}, {{"kind", "dc"}}});
        const ExperimentResult res =
            runExperiment(ExperimentConfig::fromJson(lmConfig(pred, "pd")));
        QCOMPARE(res.methods.size(), size_t(1));
        QCOMPARE(QString::fromStdString(res.methods[0].label),
                 QString("PipeDream + prediction (exact s) + DC (lambda=0.5)"));
        QVERIFY(res.methods[0].result.finished);
        QVERIFY(std::isfinite(lmOf(res.methods[0]).finalLoss));
        const json rpd = json::array({{{"kind", "delay_adaptive"}}, {{"kind", "dc"}}});
        const ExperimentResult r2 = runExperiment(ExperimentConfig::fromJson(lmConfig(rpd, "rpd")));
        QVERIFY(r2.methods[0].result.finished);
        QVERIFY(std::isfinite(lmOf(r2.methods[0]).finalLoss));
        // The OpenCL executors apply them too (tests/gpu/tst_opencl_correctors): backend
        // "opencl" validates.
        json opencl = lmConfig(rpd, "rpd");
        opencl["backend"] = "opencl";
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(opencl); })),
                 QString());
    }
};

QTEST_APPLESS_MAIN(TestLmCorrectors)
#include "tst_lm_correctors.moc"

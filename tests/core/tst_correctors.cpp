// Staleness correctors (docs/correctors.md, "Correctors") on the linear models' CPU engine,
// against a reference written here from the formulas: it counts s, tau_k, the accumulation
// groups and the effective delays itself over the schedule's events (replayOrder) by brute
// force, and walks the events with per-coordinate loops and its own gradients. Neither the
// engine's code path nor planCorrectors (except where a test checks planCorrectors itself
// against hand-checked values).
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute/corrector.hpp"
#include "compute/cpu_backend.hpp"
#include "errors.hpp"
#include "expect_error.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/budget.hpp"
#include "experiment/run/experiment.hpp"
#include "forwarding_backend.hpp"
#include "ref_optimizer.hpp"
#include "replay/corrector_plan.hpp"
#include "replay/pipeline_replay.hpp"
#include "replay/rpd_replay.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"
#include "small_objective.hpp"

using namespace pipelens;
using Eigen::VectorXd;
using nlohmann::json;

namespace {

std::shared_ptr<LinearObjective> makeObjective(LossKind loss) {
    return test::smallObjective(loss, 40, 7);
}

using test::refBlockGradient;

// What the reference counts over the schedule's events, by brute force.
struct RefSchedule {
    std::vector<ReplayEvent> events;
    int S = 0;
    int N = 0;
    int R = 1;
    std::vector<long long> updateOf;        // per event: its update index (backwards), else -1
    std::vector<size_t> updateEvent;        // per update: its event
    std::vector<size_t> forwardEvent;       // per (m, j): F(m, j)'s event
    std::vector<char> applies;              // per update: takes effect (accumulate)
    std::vector<long long> closing;         // per update: the update applying it, -1 never
    std::vector<double> s;                  // per event: prediction's exact s (forwards)
    std::vector<long long> updatesBeforeF;  // per (m, j): updates (any) before F(m, j)

    const ReplayEvent& update(long long u) const { return events[updateEvent[u]]; }
    int cell(const ReplayEvent& e) const { return (e.microbatch % R) * S + e.stage; }
};

RefSchedule refSchedule(const Timeline& tl, int replicas, int accumulate) {
    RefSchedule r;
    r.events = replayOrder(tl);
    r.S = tl.params.stages;
    r.N = tl.params.microbatches;
    r.R = replicas;
    const size_t E = r.events.size();
    r.updateOf.assign(E, -1);
    r.forwardEvent.assign(static_cast<size_t>(r.N) * r.S, 0);
    r.updatesBeforeF.assign(static_cast<size_t>(r.N) * r.S, 0);
    for (size_t e = 0; e < E; ++e) {
        const ReplayEvent& ev = r.events[e];
        const size_t mj = static_cast<size_t>(ev.microbatch) * r.S + ev.stage;
        if (ev.op == OpKind::Forward) {
            r.forwardEvent[mj] = e;
            r.updatesBeforeF[mj] = static_cast<long long>(r.updateEvent.size());
        } else {
            r.updateOf[e] = static_cast<long long>(r.updateEvent.size());
            r.updateEvent.push_back(e);
        }
    }
    const auto K = static_cast<long long>(r.updateEvent.size());
    // Accumulation: the k-th, 2k-th, ... backward of each replica's block takes effect and
    // applies the gradients of the backwards since the previous one; the rest wait.
    r.applies.assign(static_cast<size_t>(K), 1);
    r.closing.assign(static_cast<size_t>(K), -1);
    for (long long u = 0; u < K; ++u) {
        long long nth = 0;  // this backward's place among its cell's backwards, from 1
        for (long long v = 0; v <= u; ++v) nth += r.cell(r.update(v)) == r.cell(r.update(u));
        r.applies[u] = nth % accumulate == 0 ? 1 : 0;
        // Its gradient lands at the next backward of the cell whose place is a multiple of k.
        long long place = nth;
        for (long long v = u; v < K; ++v) {
            if (v > u && r.cell(r.update(v)) == r.cell(r.update(u))) ++place;
            if (r.cell(r.update(v)) == r.cell(r.update(u)) && place % accumulate == 0) {
                r.closing[u] = v;
                break;
            }
        }
    }
    // Exact s: updates of the block (same replica) that take effect after F(m, j) and before
    // the update applying B(m, j)'s gradient (to the run's end where it is never applied).
    r.s.assign(E, 0.0);
    for (size_t e = 0; e < E; ++e) {
        const ReplayEvent& f = r.events[e];
        if (f.op != OpKind::Forward) continue;
        long long own = -1;
        for (long long u = 0; u < K; ++u) {
            if (r.update(u).microbatch == f.microbatch && r.update(u).stage == f.stage) own = u;
        }
        // No backward (the run's end cut it off), or never applied: to the run's end.
        const long long until = own < 0 || r.closing[own] < 0 ? K : r.closing[own];
        long long n = 0;
        for (long long u = 0; u < until; ++u) {
            n += r.updateEvent[u] > e && r.applies[u] && r.cell(r.update(u)) == r.cell(f);
        }
        r.s[e] = static_cast<double>(n);
    }
    return r;
}

// tau_k per update: the largest delay in `unit` over the blocks the update's microbatch read.
std::vector<long long> refTau(const RefSchedule& r, DelayUnit unit) {
    std::vector<long long> tau(r.updateEvent.size(), 0);
    for (size_t u = 0; u < tau.size(); ++u) {
        const ReplayEvent& b = r.update(static_cast<long long>(u));
        for (int j = 0; j < r.S; ++j) {
            const size_t f = r.forwardEvent[static_cast<size_t>(b.microbatch) * r.S + j];
            long long d = 0;
            if (unit == DelayUnit::BlockUpdates) {
                d = static_cast<long long>(u) -
                    r.updatesBeforeF[static_cast<size_t>(b.microbatch) * r.S + j];
            } else if (unit == DelayUnit::OptimizerSteps) {
                for (size_t v = 0; v < u; ++v) d += r.updateEvent[v] > f && r.update(v).stage == j;
            } else {
                d = b.slot - r.events[f].slot;
            }
            tau[u] = std::max(tau[u], d);
        }
    }
    return tau;
}

// Per update, tau_k, or with per_block its block's most frequent tau_k (ties to the larger).
std::vector<long long> refStepDelay(const RefSchedule& r, const CorrectorSpec& c) {
    std::vector<long long> tau = refTau(r, c.unit);
    if (!c.perBlock) return tau;
    std::vector<long long> steady(static_cast<size_t>(r.S), 0);
    for (int j = 0; j < r.S; ++j) {
        std::map<long long, int> count;
        for (size_t u = 0; u < tau.size(); ++u) {
            if (r.update(static_cast<long long>(u)).stage == j) ++count[tau[u]];
        }
        int best = 0;
        for (const auto& [value, n] : count) {
            if (n > best || (n == best && value > steady[j])) best = n, steady[j] = value;
        }
    }
    for (size_t u = 0; u < tau.size(); ++u)
        tau[u] = steady[r.update(static_cast<long long>(u)).stage];
    return tau;
}

// The corrected run, event by event, from w = 0. Returns the replicas' final average.
VectorXd refCorrectedPipeline(const LinearObjective& obj, const Timeline& tl, int replicas,
                              double gamma, const OptimizerSpec& opt, const CorrectorSpec& c) {
    const RefSchedule r = refSchedule(tl, replicas, std::max(1, c.accumulate));
    const int S = r.S;
    const auto blocks = splitBlocks(obj.dim(), S);
    const std::vector<long long> tau =
        c.delayAdaptive ? refStepDelay(r, c) : std::vector<long long>(r.updateEvent.size(), 0);
    const double tauRef = c.tauRef > 0 ? c.tauRef : S;
    const VectorXd zero = VectorXd::Zero(obj.dim());
    std::vector<VectorXd> w(static_cast<size_t>(replicas), zero);
    std::vector<VectorXd> d(static_cast<size_t>(replicas), zero);    // last applied change
    std::vector<VectorXd> sum(static_cast<size_t>(replicas), zero);  // accumulate
    std::vector<VectorXd> stash(static_cast<size_t>(r.N), zero);
    std::vector<std::vector<test::RefOptimizer>> state(
        static_cast<size_t>(replicas), std::vector<test::RefOptimizer>(S, test::RefOptimizer(opt)));
    size_t nextAverage = 0;
    auto average = [&] {
        VectorXd mean = zero;
        for (const auto& x : w) mean += x;
        mean /= replicas;
        for (auto& x : w) x = mean;
        test::averageStates(state);
    };
    for (size_t e = 0; e < r.events.size(); ++e) {
        const ReplayEvent& ev = r.events[e];
        while (nextAverage < tl.averagingSlots.size() && tl.averagingSlots[nextAverage] < ev.slot) {
            average();
            ++nextAverage;
        }
        const int rep = ev.microbatch % replicas;
        const BlockRange& blk = blocks[ev.stage];
        VectorXd& wr = w[rep];
        VectorXd& dr = d[rep];
        if (ev.op == OpKind::Forward) {
            double shift = 0.0;
            if (c.prediction) {
                shift = c.steps == PredictionSteps::Exact ? r.s[e] : S - 1 - ev.stage;
            } else if (c.lookahead) {
                shift = c.beta;
            }
            for (int i = blk.offset; i < blk.offset + blk.size; ++i) {
                stash[ev.microbatch][i] = wr[i] + shift * dr[i];
            }
            continue;
        }
        VectorXd g =
            refBlockGradient(obj, ev.microbatch % obj.batches(), stash[ev.microbatch], blk);
        if (c.dc) {
            for (int i = 0; i < blk.size; ++i) {
                const int x = blk.offset + i;
                g[i] = g[i] + c.lambda * g[i] * g[i] * (wr[x] - stash[ev.microbatch][x]);
            }
        }
        const long long u = r.updateOf[e];
        if (c.accumulate > 1) {
            for (int i = 0; i < blk.size; ++i) sum[rep][blk.offset + i] += g[i];
            if (!r.applies[u]) continue;
            for (int i = 0; i < blk.size; ++i) {
                g[i] = sum[rep][blk.offset + i] / c.accumulate;
                sum[rep][blk.offset + i] = 0.0;
            }
        }
        const double gammaK =
            gamma *
            (c.delayAdaptive ? tauRef / std::max(tauRef, static_cast<double>(tau[u])) : 1.0);
        if (c.lookahead) {
            // delta = beta d - gamma_k (g + weight decay w): SGD's step plus beta times the last.
            for (int i = blk.offset; i < blk.offset + blk.size; ++i) {
                const double delta =
                    c.beta * dr[i] - gammaK * (g[i - blk.offset] + opt.weightDecay * wr[i]);
                wr[i] += delta;
                dr[i] = delta;
            }
            continue;
        }
        const VectorXd before = wr.segment(blk.offset, blk.size);
        auto block = wr.segment(blk.offset, blk.size);
        state[rep][ev.stage].apply(block, g, gammaK);
        dr.segment(blk.offset, blk.size) = block - before;
    }
    while (nextAverage++ < tl.averagingSlots.size()) average();
    VectorXd mean = zero;
    for (const auto& x : w) mean += x;
    return mean / replicas;
}

// The effective delays (accumulate), counted from the definition: updates that took effect
// before the one applying k's gradient minus those before F(m, j).
std::vector<std::vector<long long>> refEffectiveDelays(const RefSchedule& r) {
    const auto K = static_cast<long long>(r.updateEvent.size());
    auto takenBefore = [&](long long t) {
        long long n = 0;
        for (long long v = 0; v < t; ++v) n += r.applies[v];
        return n;
    };
    std::vector<std::vector<long long>> out;
    for (long long u = 0; u < K; ++u) {
        const int m = r.update(u).microbatch;
        const long long landed = takenBefore(r.closing[u] < 0 ? K : r.closing[u]);
        std::vector<long long> row;
        row.reserve(static_cast<size_t>(r.S));
        for (int j = 0; j < r.S; ++j) {
            row.push_back(landed - takenBefore(r.updatesBeforeF[static_cast<size_t>(m) * r.S + j]));
        }
        out.push_back(row);
    }
    return out;
}

ScheduleParams pdParams(int S, int N) {
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = S;
    p.microbatches = N;
    return p;
}

ScheduleParams localSgdParams(int S, int N, int replicas, int localSteps) {
    ScheduleParams p;
    p.kind = ScheduleKind::LocalSgd;
    p.stages = S;
    p.microbatches = N;
    p.replicas = replicas;
    p.localSteps = localSteps;
    return p;
}

struct EngineRun {
    VectorXd w;
    RunResult result;
};

EngineRun enginePipeline(std::shared_ptr<LinearObjective> obj, const Timeline& tl, int replicas,
                         double gamma, const OptimizerSpec& opt, const CorrectorSpec& c,
                         Method method = Method::PipeDream) {
    PipelineReplayConfig cfg;
    cfg.method = method;
    cfg.timeline = tl;
    cfg.replicas = replicas;
    cfg.stepSize = gamma;
    cfg.optimizer = opt;
    cfg.correctors = c;
    auto backend = std::make_unique<CpuBackend>();
    CpuBackend* raw = backend.get();
    PipelineReplay replay(std::move(obj), std::move(backend), cfg);
    replay.runToEnd();
    if (!replay.result().finished) throw std::runtime_error("the engine's run did not finish");
    return {raw->weights(), replay.result()};
}

// RPD with PipeDream's delays and order, every iterate kept: block s_k of w_k steps on
// grad_{s_k} f_batch(z_k) (+ dc), gamma_k from the largest delay of z_k's blocks.
VectorXd refCorrectedRpd(const LinearObjective& obj, const DelayTable& table, double gamma,
                         const OptimizerSpec& opt, const CorrectorSpec& c) {
    const int S = table.stages();
    const auto blocks = splitBlocks(obj.dim(), S);
    const double tauRef = c.tauRef > 0 ? c.tauRef : S;
    std::vector<VectorXd> hist{VectorXd::Zero(obj.dim())};
    std::vector<test::RefOptimizer> state(S, test::RefOptimizer(opt));
    for (long long k = 0; k < table.updates(); ++k) {
        VectorXd z(obj.dim());
        long long tau = 0;
        for (int j = 0; j < S; ++j) {
            const BlockRange& b = blocks[j];
            tau = std::max(tau, table.delay(k, j));
            z.segment(b.offset, b.size) =
                hist[static_cast<size_t>(k - table.delay(k, j))].segment(b.offset, b.size);
        }
        const BlockUpdateInfo& u = table.update(k);
        const BlockRange& b = blocks[u.stage];
        VectorXd next = hist.back();
        VectorXd g = refBlockGradient(obj, u.microbatch % obj.batches(), z, b);
        if (c.dc) {
            for (int i = 0; i < b.size; ++i) {
                g[i] = g[i] + c.lambda * g[i] * g[i] * (next[b.offset + i] - z[b.offset + i]);
            }
        }
        const double gammaK =
            gamma * (c.delayAdaptive ? tauRef / std::max(tauRef, static_cast<double>(tau)) : 1.0);
        VectorXd block = next.segment(b.offset, b.size);
        state[u.stage].apply(block, g, gammaK);
        next.segment(b.offset, b.size) = block;
        hist.push_back(next);
    }
    return hist.back();
}

std::shared_ptr<const DelayTable> pdTable(int S, int N) {
    return std::make_shared<const DelayTable>(buildTimeline(pdParams(S, N)));
}

EngineRun engineRpd(std::shared_ptr<LinearObjective> obj,
                    const std::shared_ptr<const DelayTable>& table, double gamma,
                    const OptimizerSpec& opt, const CorrectorSpec& c) {
    RpdReplayConfig cfg;
    cfg.stages = table->stages();
    cfg.updates = table->updates();
    cfg.stepSize = gamma;
    cfg.delayMode = DelayMode::PipeDream;
    cfg.order = StageOrder::PipeDream;
    cfg.pipeDream = table;
    cfg.optimizer = opt;
    cfg.correctors = c;
    auto backend = std::make_unique<CpuBackend>();
    CpuBackend* raw = backend.get();
    RpdReplay replay(std::move(obj), std::move(backend), cfg);
    replay.runToEnd();
    if (!replay.result().finished) throw std::runtime_error("the engine's RPD run did not finish");
    return {raw->weights(), replay.result()};
}

// max_i |a_i - b_i| / max(1, |b_i|): at most 1e-12 for "equal in double".
double relativeDifference(const VectorXd& a, const VectorXd& b) {
    double worst = 0.0;
    for (Eigen::Index i = 0; i < b.size(); ++i) {
        worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i])));
    }
    return worst;
}

// The named corrector cases of the reference tests; each also names its optimizer.
struct Case {
    CorrectorSpec correctors;
    OptimizerSpec optimizer;
};

Case caseNamed(const QString& name) {
    Case c;
    CorrectorSpec& k = c.correctors;
    for (const QString& part : name.split('+')) {
        if (part == "delay_adaptive") {
            k.delayAdaptive = true;
        } else if (part == "delay_adaptive_per_block") {
            k.delayAdaptive = true;
            k.perBlock = true;
            k.tauRef = 1.5;  // below every block's steady delay, so the factor is not 1
        } else if (part == "delay_adaptive_steps") {
            k.delayAdaptive = true;
            k.unit = DelayUnit::OptimizerSteps;
            k.tauRef = 0.5;  // PD's step delays are at most S - 1: tau_ref = S would be a no-op
        } else if (part == "prediction") {
            k.prediction = true;
        } else if (part == "prediction_pipeoptim") {
            k.prediction = true;
            k.steps = PredictionSteps::PipeOptim;
        } else if (part == "dc") {
            k.dc = true;
            k.lambda = 2.0;
        } else if (part == "lookahead") {
            k.lookahead = true;
            k.beta = 0.6;
        } else if (part == "accumulate2") {
            k.accumulate = 2;
        } else if (part == "accumulate3") {
            k.accumulate = 3;
        } else if (part == "adam") {
            c.optimizer.kind = OptimizerKind::Adam;
            c.optimizer.beta1 = 0.8;
            c.optimizer.beta2 = 0.95;
            c.optimizer.eps = 1e-6;
        } else if (part == "momentum") {
            c.optimizer.kind = OptimizerKind::Momentum;
            c.optimizer.beta = 0.7;
        } else if (part == "sgd_wd") {
            c.optimizer.weightDecay = 0.02;
        } else {
            throw std::invalid_argument("unknown test case part " + part.toStdString());
        }
    }
    return c;
}

// The message of the ConfigError `f` throws ("" if none).
constexpr auto configError = &errorMessageOf<ConfigError>;

json baseConfig(json method) {
    method["step_size"] = 0.01;
    return {{"stages", 2},
            {"batch_size", 5},
            {"data", {{"rows", 40}, {"dim", 6}}},
            {"budget", {{"microbatches", 16}}},
            {"methods", json::array({method})}};
}

// A backend that keeps ComputeBackend's default setCorrectors.
class NoCorrectorBackend final : public test::ForwardingCpuBackend {
  public:
    NoCorrectorBackend() : ForwardingCpuBackend("no-corrector") {}
};

}  // namespace

class TestCorrectors : public QObject {
    Q_OBJECT

  private slots:
    void pipeDreamMatchesTheReference_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("loss");
        QTest::addColumn<int>("stages");
        QTest::addColumn<bool>("cut");
        const char* cases[] = {"delay_adaptive",
                               "delay_adaptive_per_block",
                               "delay_adaptive_steps",
                               "prediction",
                               "prediction_pipeoptim",
                               "dc",
                               "lookahead",
                               "accumulate2",
                               "accumulate3",
                               "prediction+dc+delay_adaptive",
                               "accumulate2+dc",
                               "lookahead+delay_adaptive",
                               "prediction+adam",
                               "prediction_pipeoptim+momentum",
                               "accumulate3+adam",
                               "dc+adam",
                               "lookahead+sgd_wd"};
        for (const char* name : cases) {
            for (LossKind loss : {LossKind::Quadratic, LossKind::Logistic}) {
                for (int S : {2, 3}) {
                    QTest::addRow("%s-%s-S%d", name, lossKindName(loss).c_str(), S)
                        << QString(name) << static_cast<int>(loss) << S << false;
                }
                QTest::addRow("%s-%s-S3-cut", name, lossKindName(loss).c_str())
                    << QString(name) << static_cast<int>(loss) << 3 << true;
            }
        }
    }

    void pipeDreamMatchesTheReference() {
        QFETCH(QString, name);
        QFETCH(int, loss);
        QFETCH(int, stages);
        QFETCH(bool, cut);
        auto obj = makeObjective(static_cast<LossKind>(loss));
        const Case c = caseNamed(name);
        // N = 13: with accumulate a group is left unfinished at the end (never applied). Cut: a
        // truncate budget's run, which ends with forwards whose backwards never came and
        // microbatches never read.
        const Timeline tl =
            cut ? truncatedTimeline(pdParams(stages, 13), 40) : buildTimeline(pdParams(stages, 13));
        const double gamma = 0.05;
        const VectorXd want = refCorrectedPipeline(*obj, tl, 1, gamma, c.optimizer, c.correctors);
        const EngineRun got = enginePipeline(obj, tl, 1, gamma, c.optimizer, c.correctors);
        QVERIFY2(want.norm() > 1e-3, "the run moved the weights");
        QVERIFY2(relativeDifference(got.w, want) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got.w, want))));
        // The corrector must matter here: an engine that ignored it would fail the check above.
        const VectorXd plain =
            refCorrectedPipeline(*obj, tl, 1, gamma, c.optimizer, CorrectorSpec{});
        QVERIFY2(relativeDifference(plain, want) > 1e-8,
                 qPrintable(QString("the corrector changes the run by only %1")
                                .arg(relativeDifference(plain, want))));
    }

    void localSgdMatchesTheReference_data() {
        QTest::addColumn<QString>("name");
        for (const char* name :
             {"prediction_pipeoptim", "accumulate2", "delay_adaptive", "prediction_pipeoptim+adam",
              "lookahead", "accumulate3+momentum"}) {
            QTest::addRow("%s", name) << QString(name);
        }
    }

    void localSgdMatchesTheReference() {
        // R = 2, H = 2: d and the sums stay per replica across averaging; tau_k counts every
        // replica's updates, as the delay table does. (A replica reads its own fresh weights:
        // exact s and dc's w - w_read are 0 there, neutralSettingsArePlainBitForBit checks.)
        QFETCH(QString, name);
        auto obj = makeObjective(LossKind::Logistic);
        const Case c = caseNamed(name);
        const Timeline tl = buildTimeline(localSgdParams(3, 13, 2, 2));
        QVERIFY(!tl.averagingSlots.empty());
        const VectorXd want = refCorrectedPipeline(*obj, tl, 2, 0.05, c.optimizer, c.correctors);
        const EngineRun got =
            enginePipeline(obj, tl, 2, 0.05, c.optimizer, c.correctors, Method::LocalSgd);
        QVERIFY(want.norm() > 1e-3);
        QVERIFY2(relativeDifference(got.w, want) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got.w, want))));
        const VectorXd plain =
            refCorrectedPipeline(*obj, tl, 2, 0.05, c.optimizer, CorrectorSpec{});
        QVERIFY(relativeDifference(plain, want) > 1e-8);
        QVERIFY(!got.result.effectiveDelays);  // no delay table with replicas
    }

    void rpdMatchesTheReference_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("loss");
        QTest::addColumn<int>("stages");
        for (const char* name :
             {"delay_adaptive", "dc", "dc+delay_adaptive", "dc+adam", "delay_adaptive+momentum"}) {
            for (LossKind loss : {LossKind::Quadratic, LossKind::Logistic}) {
                for (int S : {2, 3}) {
                    QTest::addRow("%s-%s-S%d", name, lossKindName(loss).c_str(), S)
                        << QString(name) << static_cast<int>(loss) << S;
                }
            }
        }
    }

    void rpdMatchesTheReference() {
        // RPD with PipeDream's delays and order (a known delay sequence).
        QFETCH(QString, name);
        QFETCH(int, loss);
        QFETCH(int, stages);
        auto obj = makeObjective(static_cast<LossKind>(loss));
        const Case c = caseNamed(name);
        const auto table = pdTable(stages, 13);
        const VectorXd want = refCorrectedRpd(*obj, *table, 0.05, c.optimizer, c.correctors);
        const EngineRun got = engineRpd(obj, table, 0.05, c.optimizer, c.correctors);
        QVERIFY(want.norm() > 1e-3);
        QVERIFY2(relativeDifference(got.w, want) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(got.w, want))));
        const VectorXd plain = refCorrectedRpd(*obj, *table, 0.05, c.optimizer, CorrectorSpec{});
        QVERIFY2(relativeDifference(plain, want) > 1e-8,
                 qPrintable(QString("the corrector changes the run by only %1")
                                .arg(relativeDifference(plain, want))));
    }

    void rpdOnPipeDreamsDelaysIsCorrectedPipeDream() {
        // RPD with PD's delays and order reproduces PD; with dc and delay_adaptive it must
        // reproduce PD with them (w_now - w_read and tau_k agree between the two engines).
        auto obj = makeObjective(LossKind::Logistic);
        const Case c = caseNamed("dc+delay_adaptive");
        const auto table = pdTable(3, 13);
        const EngineRun pd =
            enginePipeline(obj, buildTimeline(pdParams(3, 13)), 1, 0.05, {}, c.correctors);
        const EngineRun rpd = engineRpd(obj, table, 0.05, {}, c.correctors);
        QVERIFY2(relativeDifference(rpd.w, pd.w) <= 1e-12,
                 qPrintable(QString("difference %1").arg(relativeDifference(rpd.w, pd.w))));
    }

    void neutralSettingsArePlainBitForBit() {
        // dc with lambda = 0, lookahead with beta = 0, delay_adaptive with tau_ref above every
        // delay, an explicit accumulate k = 1, prediction on sequential SGD (s = 0): the plain
        // run's numbers, bit for bit.
        auto obj = makeObjective(LossKind::Logistic);
        const Timeline pd = buildTimeline(pdParams(3, 13));
        const EngineRun plain = enginePipeline(obj, pd, 1, 0.1, OptimizerSpec{}, CorrectorSpec{});
        QVERIFY(plain.result.objectivePerUpdate.size() == 39);
        auto same = [&](const CorrectorSpec& c, const char* what) {
            const EngineRun run = enginePipeline(obj, pd, 1, 0.1, OptimizerSpec{}, c);
            QVERIFY2(run.result.objectivePerUpdate == plain.result.objectivePerUpdate, what);
            QVERIFY2(run.result.objectivePerSlot == plain.result.objectivePerSlot, what);
            QVERIFY2(run.result.blockGradNormSq == plain.result.blockGradNormSq, what);
            QVERIFY2(run.w == plain.w, what);
        };
        CorrectorSpec dc;
        dc.dc = true;
        dc.lambda = 0.0;
        same(dc, "dc lambda = 0");
        CorrectorSpec look;
        look.lookahead = true;
        look.beta = 0.0;
        same(look, "lookahead beta = 0");
        CorrectorSpec adaptive;
        adaptive.delayAdaptive = true;
        adaptive.tauRef = static_cast<double>(DelayTable(pd).maxDelay());
        same(adaptive, "delay_adaptive tau_ref = max delay");
        const CorrectorSpec k1 = readCorrectors(json::parse(R"([{"kind": "accumulate", "k": 1}])"),
                                                "methods[0].correctors");
        QCOMPARE(k1.accumulate, 1);
        same(k1, "accumulate k = 1");
        // Each of them with a non-neutral setting changes the run (so the checks above can fail).
        for (CorrectorSpec c : {dc, look, adaptive}) {
            c.lambda = 2.0;
            c.beta = 0.5;
            c.tauRef = 1.0;
            QVERIFY(enginePipeline(obj, pd, 1, 0.1, OptimizerSpec{}, c).result.objectivePerUpdate !=
                    plain.result.objectivePerUpdate);
        }
        CorrectorSpec k2;
        k2.accumulate = 2;
        QVERIFY(enginePipeline(obj, pd, 1, 0.1, OptimizerSpec{}, k2).result.objectivePerUpdate !=
                plain.result.objectivePerUpdate);

        // Sequential SGD: every forward is followed by its own backward before the block is
        // read again, so exact s = 0 everywhere.
        const Timeline sgd = buildTimeline(localSgdParams(3, 13, 1, 13));
        CorrectorSpec pred;
        pred.prediction = true;
        const EngineRun a = enginePipeline(obj, sgd, 1, 0.1, OptimizerSpec{}, {}, Method::Sgd);
        const EngineRun b = enginePipeline(obj, sgd, 1, 0.1, OptimizerSpec{}, pred, Method::Sgd);
        QVERIFY(a.result.objectivePerUpdate == b.result.objectivePerUpdate);
        // LocalSGD likewise: each replica's forward and backward of a microbatch meet no other
        // update of the block in between, so exact s = 0 and w - w_read = 0 (dc).
        const Timeline local = buildTimeline(localSgdParams(3, 13, 2, 2));
        const EngineRun l0 =
            enginePipeline(obj, local, 2, 0.1, OptimizerSpec{}, {}, Method::LocalSgd);
        QVERIFY(enginePipeline(obj, local, 2, 0.1, OptimizerSpec{}, pred, Method::LocalSgd)
                    .result.objectivePerUpdate == l0.result.objectivePerUpdate);
        CorrectorSpec dcOn;
        dcOn.dc = true;
        dcOn.lambda = 2.0;
        QVERIFY(enginePipeline(obj, local, 2, 0.1, OptimizerSpec{}, dcOn, Method::LocalSgd)
                    .result.objectivePerUpdate == l0.result.objectivePerUpdate);
        pred.steps = PredictionSteps::PipeOptim;  // S - 1 - j > 0: not neutral here
        QVERIFY(enginePipeline(obj, sgd, 1, 0.1, OptimizerSpec{}, pred, Method::Sgd)
                    .result.objectivePerUpdate != a.result.objectivePerUpdate);

        // RPD: dc lambda = 0 and delay_adaptive tau_ref >= every drawn delay.
        const auto table = pdTable(3, 13);
        const EngineRun rpd = engineRpd(obj, table, 0.1, OptimizerSpec{}, {});
        QVERIFY(engineRpd(obj, table, 0.1, OptimizerSpec{}, dc).result.objectivePerUpdate ==
                rpd.result.objectivePerUpdate);
        adaptive.tauRef = static_cast<double>(table->maxDelay());
        QVERIFY(engineRpd(obj, table, 0.1, OptimizerSpec{}, adaptive).result.objectivePerUpdate ==
                rpd.result.objectivePerUpdate);
        adaptive.tauRef = 1.0;
        QVERIFY(engineRpd(obj, table, 0.1, OptimizerSpec{}, adaptive).result.objectivePerUpdate !=
                rpd.result.objectivePerUpdate);
    }

    void exactStepsOnPipeDreamS3() {
        // Hand-checked from PD's event order at S = 3, N = 6 (F(2, 1) reads in slot 3, before
        // block 1's updates by B(0, 1) in slot 4 and B(1, 1) in slot 6: s = 2, above the steady
        // S - 1 - j = 1; the first microbatches find fewer updates ahead of them).
        const std::vector<std::vector<double>> want{{0, 1, 2, 2, 2, 2},   // stage 0: steady 2
                                                    {0, 1, 2, 1, 1, 1},   // stage 1: steady 1
                                                    {0, 0, 0, 0, 0, 0}};  // stage 2: steady 0
        const Timeline tl = buildTimeline(pdParams(3, 6));
        CorrectorSpec c;
        c.prediction = true;
        const std::vector<ReplayEvent> events = replayOrder(tl);
        const CorrectorPlan plan = planCorrectors(events, tl, 1, c);
        const RefSchedule ref = refSchedule(tl, 1, 1);
        int forwards = 0;
        for (size_t e = 0; e < events.size(); ++e) {
            const ReplayEvent& ev = events[e];
            if (ev.op != OpKind::Forward) {
                QCOMPARE(plan.readShift[e], 0.0);
                continue;
            }
            ++forwards;
            const double s = want[ev.stage][ev.microbatch];
            QCOMPARE(plan.readShift[e], s);
            QCOMPARE(ref.s[e], s);  // the reference's own count agrees with the hand
        }
        QCOMPARE(forwards, 18);
        // PipeOptim's s is S - 1 - j for every forward.
        c.steps = PredictionSteps::PipeOptim;
        const CorrectorPlan pipeoptim = planCorrectors(events, tl, 1, c);
        for (size_t e = 0; e < events.size(); ++e) {
            if (events[e].op == OpKind::Forward)
                QCOMPARE(pipeoptim.readShift[e], 2.0 - events[e].stage);
        }
    }

    void effectiveDelaysOnPipeDreamS2() {
        // PD S = 2, N = 6, accumulate k = 2. Updates k = 0..11 alternate blocks 1 and 0
        // (B(m, 1) then B(m, 0)); those that take effect: k = 2, 3, 6, 7, 10, 11. Hand-counted:
        // e.g. k = 5 (B(2, 0)) lands with k = 7, after k = 2, 3, 6 took effect (3), and F(2, 0)
        // read before any (0): 3; its read of block 1 (F(2, 1), after k = 2, 3): 3 - 2 = 1.
        const std::vector<std::vector<long long>> want{{0, 0}, {1, 1}, {0, 0}, {1, 1},
                                                       {2, 0}, {3, 1}, {0, 0}, {1, 1},
                                                       {2, 0}, {3, 1}, {0, 0}, {1, 1}};
        auto obj = makeObjective(LossKind::Quadratic);
        const Timeline tl = buildTimeline(pdParams(2, 6));
        CorrectorSpec c;
        c.accumulate = 2;
        const EngineRun run = enginePipeline(obj, tl, 1, 0.05, OptimizerSpec{}, c);
        QVERIFY(run.result.effectiveDelays.has_value());
        const DelayTable& eff = *run.result.effectiveDelays;
        QCOMPARE(eff.updates(), 12LL);
        for (long long k = 0; k < 12; ++k) {
            for (int j = 0; j < 2; ++j) {
                QCOMPARE(eff.delay(k, j), want[static_cast<size_t>(k)][static_cast<size_t>(j)]);
            }
        }
        QCOMPARE(eff.maxDelay(), 3LL);
        // The schedule's own delays are unchanged beside them.
        QCOMPARE(run.result.delays->delay(5, 0), 3LL);
        // The reference's count agrees on these and on S = 3, N = 13, k = 3 (an unfinished
        // group at the end: its gradients count to the run's end).
        QVERIFY(refEffectiveDelays(refSchedule(tl, 1, 2)) == want);
        const Timeline tl3 = buildTimeline(pdParams(3, 13));
        c.accumulate = 3;
        const EngineRun run3 = enginePipeline(obj, tl3, 1, 0.05, OptimizerSpec{}, c);
        const auto ref3 = refEffectiveDelays(refSchedule(tl3, 1, 3));
        for (long long k = 0; k < run3.result.effectiveDelays->updates(); ++k) {
            for (int j = 0; j < 3; ++j) {
                QCOMPARE(run3.result.effectiveDelays->delay(k, j),
                         ref3[static_cast<size_t>(k)][static_cast<size_t>(j)]);
            }
        }
        // Only accumulation defines one.
        CorrectorSpec dc;
        dc.dc = true;
        QVERIFY(!enginePipeline(obj, tl, 1, 0.05, OptimizerSpec{}, dc).result.effectiveDelays);
    }

    void effectiveDelaysOnTruncatedRun() {
        // A truncate budget (the study's rule) stops the run inside a longer timeline: its last
        // microbatches are never read (DelayTable's h = -1), and the effective table keeps them
        // unread. CI's AddressSanitizer caught the former read of before[-1] here.
        auto obj = makeObjective(LossKind::Quadratic);
        const Timeline tl = truncatedTimeline(pdParams(3, 8), 40);
        const DelayTable table(tl);
        bool unread = false;
        for (int m = 0; m < table.microbatches() && !unread; ++m) {
            for (int j = 0; j < 3; ++j) unread = unread || table.forwardIndex(m, j) < 0;
        }
        QVERIFY2(unread, "the cut timeline should list microbatches the run never read");
        CorrectorSpec c;
        c.accumulate = 2;
        const EngineRun run = enginePipeline(obj, tl, 1, 0.05, OptimizerSpec{}, c);
        QVERIFY(run.result.effectiveDelays.has_value());
        const DelayTable& eff = *run.result.effectiveDelays;
        const auto ref = refEffectiveDelays(refSchedule(tl, 1, 2));
        QCOMPARE(eff.updates(), static_cast<long long>(ref.size()));
        for (long long k = 0; k < eff.updates(); ++k) {
            for (int j = 0; j < 3; ++j) {
                QCOMPARE(eff.delay(k, j), ref[static_cast<size_t>(k)][static_cast<size_t>(j)]);
            }
        }
        for (int m = 0; m < table.microbatches(); ++m) {
            for (int j = 0; j < 3; ++j) {
                if (table.forwardIndex(m, j) < 0) QCOMPARE(eff.forwardIndex(m, j), -1LL);
            }
        }
    }

    void switchOnTurnsOneKindOn() {
        for (const auto& entry : kCorrectorKinds) {
            CorrectorSpec c;
            switchOn(c, entry.value);
            const bool on[] = {c.delayAdaptive, c.prediction, c.dc, c.lookahead, c.accumulate == 2};
            // Exactly the kind's own switch (the table's order is the struct's).
            for (size_t i = 0; i < std::size(on); ++i) {
                QCOMPARE(on[i], i == static_cast<size_t>(&entry - kCorrectorKinds.data()));
            }
            CorrectorSpec off = c;
            off.accumulate = 1;
            off.delayAdaptive = off.prediction = off.dc = off.lookahead = false;
            QVERIFY(off == CorrectorSpec{});  // nothing else was touched
        }
        CorrectorSpec c;
        c.accumulate = 3;
        c.beta = 0.5;
        switchOn(c, CorrectorKind::Accumulate);
        switchOn(c, CorrectorKind::Lookahead);
        QCOMPARE(c.accumulate, 3);  // a k already set is kept
        QCOMPARE(c.beta, 0.5);
        QVERIFY(c.lookahead);
    }

    void configMessages_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("message");
        QTest::addRow("not a list")
            << R"({"method": "pd", "correctors": {"kind": "dc"}})"
            << R"(methods[0].correctors = {"kind":"dc"} is not allowed: a list of correctors, )"
               R"(each {"kind": one of delay_adaptive, prediction, dc, lookahead, accumulate, ...})";
        QTest::addRow("kind missing")
            << R"({"method": "pd", "correctors": [{"lambda": 0.1}]})"
            << "methods[0].correctors[0].kind is missing: one of delay_adaptive, prediction, dc, "
               "lookahead, accumulate";
        QTest::addRow("twice")
            << R"({"method": "pd", "correctors": [{"kind": "dc"}, {"kind": "dc"}]})"
            << R"(methods[0].correctors[1].kind = "dc" is not allowed: each corrector at most )"
               R"(once per method)";
        QTest::addRow("k 0")
            << R"({"method": "pd", "correctors": [{"kind": "accumulate", "k": 0}]})"
            << "methods[0].correctors[0].k = 0 is not allowed: an integer in "
               "[1, 1024] (1 = off)";
        QTest::addRow("synchronous")
            << R"({"method": "1f1b", "correctors": [{"kind": "dc"}]})"
            << R"(methods[0].correctors[0].kind = "dc" is not allowed with method "1f1b": )"
               R"(correctors apply to the asynchronous methods (pd, localsgd, sgd, imported with )"
               R"(update "async") and rpd; a synchronous step reads fresh weights)";
        QTest::addRow("rpd prediction")
            << R"({"method": "rpd", "correctors": [{"kind": "prediction"}, {"kind": "dc"}]})"
            << R"(methods[0].correctors[0].kind = "prediction" is not allowed with method )"
               R"("rpd": delay_adaptive or dc (RPD draws its delays and has no forward pass to )"
               R"(move))";
        // The index is the file's: prediction is the second entry here.
        QTest::addRow("rpd prediction listed second")
            << R"({"method": "rpd", "correctors": [{"kind": "dc"}, {"kind": "prediction"}]})"
            << R"(methods[0].correctors[1].kind = "prediction" is not allowed with method )"
               R"("rpd": delay_adaptive or dc (RPD draws its delays and has no forward pass to )"
               R"(move))";
        QTest::addRow("lookahead listed first")
            << R"({"method": "pd", "correctors": [{"kind": "lookahead"}, )"
               R"({"kind": "prediction"}]})"
            << R"(methods[0].correctors[0].kind = "lookahead" is not allowed together with )"
               R"(prediction: one of them (both move the point a forward reads))";
        QTest::addRow("prediction and lookahead")
            << R"({"method": "pd", "correctors": [{"kind": "prediction"}, )"
               R"({"kind": "lookahead"}]})"
            << R"(methods[0].correctors[1].kind = "lookahead" is not allowed together with )"
               R"(prediction: one of them (both move the point a forward reads))";
        QTest::addRow("lookahead with adam")
            << R"({"method": "pd", "optimizer": {"kind": "adam"}, )"
               R"("correctors": [{"kind": "lookahead"}]})"
            << R"(methods[0].correctors[0].kind = "lookahead" is not allowed with )"
               R"(optimizer.kind = "adam": optimizer sgd (lookahead is Nesterov momentum itself))";
    }

    void configMessages() {
        QFETCH(QString, method);
        QFETCH(QString, message);
        const json m = json::parse(method.toStdString());
        QCOMPARE(
            QString::fromStdString(configError([&] { ExperimentConfig::fromJson(baseConfig(m)); })),
            message);
    }

    void openClTakesCorrectors() {
        // Every engine applies every corrector (docs/opencl.md): backend "opencl" validates.
        json j = baseConfig({{"method", "pd"}, {"correctors", {{{"kind", "prediction"}}}}});
        j["backend"] = "opencl";
        QCOMPARE(QString::fromStdString(configError([&] { ExperimentConfig::fromJson(j); })),
                 QString());
        // What the method refuses is still refused, with the method's message.
        j["methods"][0] = {{"method", "pd"},
                           {"step_size", 0.01},
                           {"optimizer", {{"kind", "adam"}}},
                           {"correctors", {{{"kind", "lookahead"}}}}};
        QVERIFY(configError([&] {
                    ExperimentConfig::fromJson(j);
                }).starts_with(R"(methods[0].correctors[0].kind = "lookahead" is not allowed)"));
    }

    void autoOnADeviceRunsCorrectorsThere() {
        // The engine chosen is a device (backend name not "cpu"): the corrected method runs
        // there too, with no notice (the device backend is asked to apply the correctors).
        ExperimentConfig c = ExperimentConfig::fromJson(
            baseConfig({{"method", "pd"}, {"correctors", {{{"kind", "dc"}}}}}));
        MethodSpec plainPd = c.methods[0];
        plainPd.correctors = {};
        c.methods.push_back(plainPd);
        int deviceBackends = 0;
        RunOptions options;
        options.backendName = "opencl: a device";
        options.backend = [&deviceBackends]() -> std::unique_ptr<ComputeBackend> {
            ++deviceBackends;
            return std::make_unique<CpuBackend>();
        };
        options.threads = 1;
        const ExperimentResult r = runExperiment(c, options);
        QCOMPARE(deviceBackends, 2);  // both methods
        QVERIFY(r.methods[0].result.finished);
        QVERIFY(r.notices.empty());
        const ExperimentResult cpu = runExperiment(c);
        QVERIFY(cpu.notices.empty());
        QVERIFY(cpu.methods[0].result.objectivePerUpdate == r.methods[0].result.objectivePerUpdate);
        QVERIFY(cpu.methods[0].result.objectivePerUpdate !=
                cpu.methods[1].result.objectivePerUpdate);
    }

    void aBackendWithoutCorrectorsRefusesThem() {
        auto obj = makeObjective(LossKind::Quadratic);
        PipelineReplayConfig cfg;
        cfg.timeline = buildTimeline(pdParams(2, 4));
        cfg.stepSize = 0.1;
        cfg.correctors.dc = true;
        const std::string e =
            configError([&] { PipelineReplay(obj, std::make_unique<NoCorrectorBackend>(), cfg); });
        QCOMPARE(QString::fromStdString(e),
                 QString(R"(correctors (DC (lambda=0.5)) are not supported by the no-corrector )"
                         R"(backend: none; use the CPU engine (backend = "cpu"))"));
        RpdReplayConfig rpd;
        rpd.stages = 2;
        rpd.updates = 8;
        rpd.maxDelay = 2;
        rpd.correctors.dc = true;
        QVERIFY(!configError([&] {
                     RpdReplay(obj, std::make_unique<NoCorrectorBackend>(), rpd);
                 }).empty());
        cfg.correctors = {};
        PipelineReplay plain(obj, std::make_unique<NoCorrectorBackend>(), cfg);
        plain.runToEnd();
        QVERIFY(plain.result().finished);
    }

    void synchronousStepsAreRefused() {
        // validate() refuses correctors there; a direct caller meets the replay's guard.
        auto obj = makeObjective(LossKind::Quadratic);
        PipelineReplayConfig cfg;
        ScheduleParams p = pdParams(2, 4);
        p.kind = ScheduleKind::FillDrain;
        p.flushGroup = 2;
        cfg.timeline = buildTimeline(p);
        cfg.method = Method::FillDrain;
        cfg.stepScale = 0.5;
        cfg.correctors.dc = true;
        QVERIFY_THROWS_EXCEPTION(std::logic_error,
                                 PipelineReplay(obj, std::make_unique<CpuBackend>(), cfg));
    }
};

QTEST_APPLESS_MAIN(TestCorrectors)
#include "tst_correctors.moc"

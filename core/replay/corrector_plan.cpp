#include "replay/corrector_plan.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace pipelens {
namespace {

// tau_k per update: the largest delay (in `unit`) over the blocks the update's microbatch read.
std::vector<long long> updateDelays(const DelayTable& table, DelayUnit unit) {
    std::vector<long long> tau(static_cast<size_t>(table.updates()), 0);
    for (long long k = 0; k < table.updates(); ++k) {
        long long worst = 0;
        for (int j = 0; j < table.stages(); ++j) worst = std::max(worst, table.delayIn(unit, k, j));
        tau[static_cast<size_t>(k)] = worst;
    }
    return tau;
}

// Each block's steady delay: the most frequent tau_k among its updates, ties to the larger.
std::vector<long long> steadyDelays(const DelayTable& table, const std::vector<long long>& tau) {
    std::vector<std::map<long long, long long>> counts(static_cast<size_t>(table.stages()));
    for (long long k = 0; k < table.updates(); ++k) {
        ++counts[static_cast<size_t>(table.update(k).stage)][tau[static_cast<size_t>(k)]];
    }
    std::vector<long long> steady(counts.size(), 0);
    for (size_t j = 0; j < counts.size(); ++j) {
        long long best = -1;
        for (const auto& [value, n] : counts[j]) {
            if (n >= best) {  // ascending values: >= keeps the larger of a tie
                best = n;
                steady[j] = value;
            }
        }
    }
    return steady;
}

}  // namespace

CorrectorPlan planCorrectors(const std::vector<ReplayEvent>& events, const Timeline& timeline,
                             int replicas, const CorrectorSpec& spec) {
    if (stepMicrobatchesOf(timeline.params) > 0) {
        throw std::invalid_argument(
            "correctors need a schedule whose every block update is a step of its own");
    }
    const int S = timeline.params.stages;
    const int N = timeline.params.microbatches;
    const size_t E = events.size();
    CorrectorPlan plan;
    plan.readShift.assign(E, 0.0);
    plan.stepFactor.assign(E, 1.0);
    plan.applies.assign(E, 1);

    // Which backwards take effect, and the update (backward count) that applies each one.
    const int k = std::max(1, spec.accumulate);
    const auto cells = static_cast<size_t>(replicas) * S;
    std::vector<int> count(cells, 0);
    std::vector<std::vector<long long>> group(cells);  // update indices waiting in the sum
    std::vector<long long> closing;                    // per update
    std::vector<char> updateApplies;                   // per update
    // For prediction's exact s: per (microbatch, block), the forward's event and the updates of
    // its block (replica) that had taken effect at the read.
    std::vector<size_t> forwardEvent(static_cast<size_t>(N) * S, 0);
    std::vector<long long> takenAtRead(static_cast<size_t>(N) * S, 0);
    std::vector<long long> taken(cells, 0);  // per replica and block
    std::vector<std::vector<int>> waiting(cells);
    // Forwards whose backward has not come (yet): a run a budget cuts ends with some.
    std::vector<char> read(static_cast<size_t>(N) * S, 0);
    const bool exactS = spec.prediction && spec.steps == PredictionSteps::Exact;
    for (size_t e = 0; e < E; ++e) {
        const ReplayEvent& ev = events[e];
        const size_t cell = static_cast<size_t>(ev.microbatch % replicas) * S + ev.stage;
        const size_t mi = static_cast<size_t>(ev.microbatch) * S + ev.stage;
        if (ev.op == OpKind::Forward) {
            forwardEvent[mi] = e;
            takenAtRead[mi] = taken[cell];
            read[mi] = 1;
            continue;
        }
        read[mi] = 0;  // its backward came: the groups below account for it
        const auto u = static_cast<long long>(closing.size());
        closing.push_back(-1);
        group[cell].push_back(u);
        waiting[cell].push_back(ev.microbatch);
        const bool applies = ++count[cell] == k;
        updateApplies.push_back(applies ? 1 : 0);
        plan.applies[e] = applies ? 1 : 0;
        if (!applies) continue;
        for (const long long member : group[cell]) closing[static_cast<size_t>(member)] = u;
        if (exactS) {
            // The updates that took effect between each member's read and this one.
            for (const int m : waiting[cell]) {
                const size_t wi = static_cast<size_t>(m) * S + ev.stage;
                plan.readShift[forwardEvent[wi]] =
                    static_cast<double>(taken[cell] - takenAtRead[wi]);
            }
        }
        group[cell].clear();
        waiting[cell].clear();
        count[cell] = 0;
        ++taken[cell];
    }
    if (exactS) {
        // Gradients never applied (an unfinished group at the run's end, or a forward whose
        // backward the run's end cut off): s counts the block's updates to the end of the run.
        for (size_t cell = 0; cell < cells; ++cell) {
            for (const int m : waiting[cell]) {
                const size_t wi = static_cast<size_t>(m) * S + static_cast<int>(cell % S);
                plan.readShift[forwardEvent[wi]] =
                    static_cast<double>(taken[cell] - takenAtRead[wi]);
            }
        }
        for (size_t mi = 0; mi < read.size(); ++mi) {
            if (read[mi] == 0) continue;
            const size_t cell = (mi / S % static_cast<size_t>(replicas)) * S + mi % S;
            plan.readShift[forwardEvent[mi]] = static_cast<double>(taken[cell] - takenAtRead[mi]);
        }
    }
    if (spec.prediction || spec.lookahead) {
        for (size_t e = 0; e < E; ++e) {
            const ReplayEvent& ev = events[e];
            if (ev.op != OpKind::Forward) continue;
            if (spec.lookahead) {
                plan.readShift[e] = spec.beta;
            } else if (spec.steps == PredictionSteps::PipeOptim) {
                plan.readShift[e] = static_cast<double>(S - 1 - ev.stage);
            }
        }
    }

    if (spec.delayAdaptive || k > 1) {
        const DelayTable table(timeline);
        if (spec.delayAdaptive) {
            const std::vector<long long> tau = updateDelays(table, spec.unit);
            const std::vector<long long> steady =
                spec.perBlock ? steadyDelays(table, tau) : std::vector<long long>{};
            const double ref = tauRefFor(spec, S);
            long long u = 0;
            for (size_t e = 0; e < E; ++e) {
                if (events[e].op == OpKind::Forward) continue;
                const long long t = spec.perBlock ? steady[static_cast<size_t>(events[e].stage)]
                                                  : tau[static_cast<size_t>(u)];
                // The ratio first: tau_ref >= tau_k gives exactly 1.0.
                plan.stepFactor[e] = ref / std::max(ref, static_cast<double>(t));
                ++u;
            }
        }
        if (k > 1) plan.effective = table.effective(updateApplies, closing);
    }
    return plan;
}

}  // namespace pipelens

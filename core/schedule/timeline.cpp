#include "schedule/timeline.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <sstream>

#include "data/memory_limit.hpp"
#include "errors.hpp"
#include "schedule/program.hpp"
#include "schedule/program_schedules.hpp"
#include "util/csv_writer.hpp"

namespace pipelens {
namespace {

constexpr int kNotDone = -1;
constexpr long long kMaxCells = 400'000'000;  // guards memory: N*S*2 cells

void require(bool ok, const std::string& field, long long value, const std::string& allowed) {
    if (!ok) {
        throw ConfigError(field + " = " + std::to_string(value) + " is not allowed: " + allowed);
    }
}

ScheduleParams resolved(ScheduleParams p) {
    if (p.noam == 0) p.noam = p.stages;
    if (p.replicas == 0) p.replicas = p.stages;
    if (p.flushGroup == 0) {
        if (p.kind == ScheduleKind::Imported && p.program) {
            p.flushGroup = summarizeProgram(*p.program).microbatches;
        } else if (isProgramKind(p.kind)) {
            p.flushGroup = p.stages / std::max(1, p.virtualStages);  // devices
        } else {
            p.flushGroup = std::max(1, p.microbatches);
        }
    }
    return p;
}

// Per-stage state of the slot-by-slot simulation.
struct StageState {
    int nextForward = 0;
    int nextBackward = 0;
    int busyThrough = -1;  // last slot of the op in progress
    bool ranBackward = false;
    bool turnIsBackward = false;
};

class Simulator {
  public:
    using Visit = std::function<void(const TimelineCell&)>;
    Simulator(const ScheduleParams& p, const Visit* visit)
        : p_(p),
          S_(p.stages),
          N_(p.microbatches),
          fEnd_(static_cast<size_t>(S_) * N_, kNotDone),
          bEnd_(static_cast<size_t>(S_) * N_, kNotDone),
          stages_(S_),
          visit_(visit) {}

    Timeline run() {
        Timeline tl;
        tl.params = p_;
        if (!visit_) tl.cells.reserve(static_cast<size_t>(2) * S_ * N_);
        tl.peakStash.assign(S_, 0);
        peakStash_ = &tl.peakStash;
        const int roundSize = roundLength();
        const long long guard = guardSlots();
        const bool fillDrain = p_.kind == ScheduleKind::FillDrain;
        for (int t = 0; doneB0_ < N_; ++t) {
            advanceCompleted(t, tl, roundSize);
            if (doneB0_ >= N_) break;
            for (int s = 0; s < S_; ++s) {
                StageState& st = stages_[s];
                if (st.busyThrough >= t) continue;
                if (fillDrain) {
                    // Synchronous: forwards first; backwards only after the group's forwards left
                    // the last stage (checked in backwardReady).
                    if (forwardReady(s, t)) {
                        startForward(s, t, tl);
                    } else if (backwardReady(s, t)) {
                        startBackward(s, t, tl);
                    }
                    continue;
                }
                // 1F1B: a ready backward runs if the stage never ran one, if it is its turn, or
                // if no forward is ready (evaluated lazily: the common cases need one test).
                const bool bReady = backwardReady(s, t);
                bool runBackward = bReady && (!st.ranBackward || st.turnIsBackward);
                bool fReady = false;
                if (!runBackward) {
                    fReady = forwardReady(s, t);
                    runBackward = bReady && !fReady;
                }
                if (runBackward) {
                    startBackward(s, t, tl);
                    st.ranBackward = true;
                    st.turnIsBackward = false;
                } else if (fReady) {
                    startForward(s, t, tl);
                    if (st.ranBackward) st.turnIsBackward = true;
                }
            }
            if (t > guard) {
                throw ConfigError("schedule did not finish within " + std::to_string(guard) +
                                  " slots; the parameters admit no progress");
            }
        }
        // Cells were appended slot by slot and, within a slot, stage by stage: already in
        // (startSlot, stage) order, no sort needed.
        tl.totalSlots = lastSlot_ + 1;
        return tl;
    }

  private:
    int idx(int m, int s) const { return m * S_ + s; }
    bool finishedBefore(int end, int t, int latency) const {
        return end != kNotDone && end + latency < t;
    }
    int roundLength() const {
        if (p_.kind == ScheduleKind::LocalSgd) return p_.replicas * p_.localSteps;
        if (p_.kind == ScheduleKind::FillDrain) return p_.flushGroup;
        return N_;
    }
    long long guardSlots() const {
        long long per = static_cast<long long>(p_.costs.forwardSlots) + p_.costs.backwardSlots +
                        2LL * p_.costs.latencySlots;
        return 4 * (static_cast<long long>(N_) + S_ + 2) * per * S_ + 64;
    }

    // Counts microbatches whose stage-0 backward finished before slot t; records averaging slots.
    void advanceCompleted(int t, Timeline& tl, int roundSize) {
        while (doneB0_ < N_ && finishedBefore(bEnd_[idx(doneB0_, 0)], t, 0)) {
            ++doneB0_;
            if (p_.kind == ScheduleKind::LocalSgd && doneB0_ % roundSize == 0) {
                // The round's last stage-0 backward ends in slot t-1 (B on stage 0 is in order).
                tl.averagingSlots.push_back(bEnd_[idx(doneB0_ - 1, 0)]);
            }
        }
    }

    bool forwardReady(int s, int t) const {
        int m = stages_[s].nextForward;
        if (m >= N_) return false;
        if (s > 0 && !finishedBefore(fEnd_[idx(m, s - 1)], t, p_.costs.latencySlots)) return false;
        if (s == 0) {
            if (p_.kind == ScheduleKind::PipeDream && m - doneB0_ >= p_.noam) return false;
            if (p_.kind != ScheduleKind::PipeDream) {
                int round = m / roundLength();
                if (doneB0_ < round * roundLength()) return false;  // full drain between rounds
            }
        }
        if (p_.kind == ScheduleKind::LocalSgd) {
            int roundStart = (m / roundLength()) * roundLength();
            int prev = m - p_.replicas;  // the same replica's previous microbatch
            if (prev >= roundStart && !finishedBefore(bEnd_[idx(prev, s)], t, 0)) return false;
        }
        return true;
    }

    bool backwardReady(int s, int t) const {
        int m = stages_[s].nextBackward;
        if (m >= stages_[s].nextForward) return false;
        if (!finishedBefore(fEnd_[idx(m, s)], t, 0)) return false;
        if (s < S_ - 1 && !finishedBefore(bEnd_[idx(m, s + 1)], t, p_.costs.latencySlots)) {
            return false;
        }
        if (p_.kind == ScheduleKind::FillDrain) {
            int group = m / p_.flushGroup;
            int last = std::min(N_, (group + 1) * p_.flushGroup) - 1;
            if (!finishedBefore(fEnd_[idx(last, S_ - 1)], t, 0)) return false;
        }
        return true;
    }

    void emit(const TimelineCell& cell, Timeline& tl) {
        if (visit_) {
            (*visit_)(cell);
        } else {
            tl.cells.push_back(cell);
        }
    }

    void startForward(int s, int t, Timeline& tl) {
        StageState& st = stages_[s];
        int m = st.nextForward++;
        int end = t + p_.costs.forwardSlots - 1;
        fEnd_[idx(m, s)] = end;
        st.busyThrough = end;
        lastSlot_ = std::max(lastSlot_, end);
        // Stashed copies only grow when a forward starts.
        (*peakStash_)[s] = std::max((*peakStash_)[s], st.nextForward - st.nextBackward);
        emit({t, end, s, OpKind::Forward, m}, tl);
    }

    void startBackward(int s, int t, Timeline& tl) {
        int m = stages_[s].nextBackward++;
        int end = t + p_.costs.backwardSlots - 1;
        bEnd_[idx(m, s)] = end;
        stages_[s].busyThrough = end;
        lastSlot_ = std::max(lastSlot_, end);
        emit({t, end, s, OpKind::Backward, m}, tl);
    }

    ScheduleParams p_;
    int S_;
    int N_;
    std::vector<int> fEnd_;
    std::vector<int> bEnd_;
    std::vector<StageState> stages_;
    int doneB0_ = 0;
    int lastSlot_ = -1;
    std::vector<int>* peakStash_ = nullptr;
    const Visit* visit_ = nullptr;
};

}  // namespace

namespace {
const std::string kAtMostMaxStages = std::string("at most ").append(std::to_string(kMaxStages));
}  // namespace

long long pipeDreamMicrobatchesFor(long long updates, int stages) {
    const long long s = std::max(1, stages);
    return std::max(1LL, (updates + s - 1) / s);
}

void validateScheduleParams(const ScheduleParams& raw) {
    require(raw.stages >= 1, "stages", raw.stages, "an integer >= 1");
    require(raw.stages <= kMaxStages, "stages", raw.stages, kAtMostMaxStages);
    require(raw.microbatches >= 1, "microbatches", raw.microbatches, "an integer >= 1");
    require(static_cast<long long>(raw.microbatches) * raw.stages * 2 <= kMaxCells, "microbatches",
            raw.microbatches, "microbatches * stages * 2 must be at most 400000000");
    require(raw.noam >= 0, "noam", raw.noam, "0 (meaning S) or an integer >= 1");
    require(raw.replicas >= 0, "replicas", raw.replicas, "0 (meaning S) or an integer >= 1");
    require(raw.localSteps >= 1, "local_steps", raw.localSteps, "an integer >= 1 (H)");
    require(raw.flushGroup >= 0, "flush_group", raw.flushGroup, "0 (meaning N) or an integer >= 1");
    require(raw.costs.forwardSlots >= 1, "forward_slots", raw.costs.forwardSlots,
            "an integer >= 1");
    require(raw.costs.backwardSlots >= 1, "backward_slots", raw.costs.backwardSlots,
            "an integer >= 1");
    require(raw.costs.latencySlots >= 0, "latency_slots", raw.costs.latencySlots,
            "an integer >= 0");
    // Bounded so that no slot number can overflow an int (UBSan found the wrap).
    require(raw.costs.forwardSlots <= 1000, "forward_slots", raw.costs.forwardSlots,
            "at most 1000");
    require(raw.costs.backwardSlots <= 1000, "backward_slots", raw.costs.backwardSlots,
            "at most 1000");
    require(raw.costs.latencySlots <= 1000, "latency_slots", raw.costs.latencySlots,
            "at most 1000");
    const long long perOp =
        raw.costs.forwardSlots + raw.costs.backwardSlots + 2LL * raw.costs.latencySlots;
    const long long longest =
        4 * (static_cast<long long>(raw.microbatches) + raw.stages + 2) * perOp * raw.stages + 64;
    require(longest <= std::numeric_limits<int>::max(), "microbatches", raw.microbatches,
            "with these stages and costs the run could exceed 2147483647 slots; use fewer "
            "microbatches or smaller costs");
}

void requireScheduleMemory(const ScheduleParams& params, bool keepCells) {
    // The simulator's finish tables (two ints per microbatch and stage) and, when the timeline
    // is kept, two cells per microbatch and stage.
    const std::uint64_t pairs =
        bytesFor(static_cast<std::uint64_t>(std::max(0, params.stages)),
                 static_cast<std::uint64_t>(std::max(0, params.microbatches)));
    const std::uint64_t perPair = 2 * sizeof(int) + (keepCells ? 2 * sizeof(TimelineCell) : 0);
    const std::uint64_t bytes = bytesFor(pairs, perPair);
    if (bytes < (std::uint64_t{1} << 20)) return;  // small: not worth reading the limits
    requireMemory(bytes,
                  "the " + scheduleKindName(params.kind) +
                      " schedule (stages = " + std::to_string(params.stages) +
                      ", microbatches = " + std::to_string(params.microbatches) + ")",
                  "fewer stages or microbatches");
}

Timeline buildTimeline(const ScheduleParams& params) {
    validateScheduleParams(params);
    const ScheduleParams r = resolved(params);
    requireScheduleMemory(r, true);
    if (isProgramKind(r.kind)) return buildProgramTimeline(r);
    return Simulator(r, nullptr).run();
}

Timeline simulateSchedule(const ScheduleParams& params,
                          const std::function<void(const TimelineCell&)>& visit) {
    validateScheduleParams(params);
    const ScheduleParams r = resolved(params);
    requireScheduleMemory(r, false);
    if (isProgramKind(r.kind)) return buildProgramTimeline(r, &visit);
    return Simulator(r, &visit).run();
}

long long programScheduleRunLength(const ScheduleParams& params) {
    validateScheduleParams(params);
    return programRunLength(resolved(params));
}

std::optional<long long> programScheduleBudgetFit(const ScheduleParams& params,
                                                  long long slotBudget) {
    validateScheduleParams(params);
    return programBudgetFit(resolved(params), slotBudget);
}

Utilization utilization(const Timeline& tl) {
    Utilization u;
    int S = tl.params.stages;
    u.perStage.assign(S, 0.0);
    if (tl.totalSlots == 0) return u;
    for (const auto& c : tl.cells) u.perStage[c.stage] += c.endSlot - c.startSlot + 1;
    double sum = 0.0;
    for (double& v : u.perStage) {
        v /= tl.totalSlots;
        sum += v;
    }
    // Devices, not stages, idle: a rank holding several stages is busy when any of them is.
    const int devices =
        tl.stageRank.empty() ? S : *std::max_element(tl.stageRank.begin(), tl.stageRank.end()) + 1;
    u.overall = sum / devices;
    u.bubbleFraction = 1.0 - u.overall;
    return u;
}

int pipeDreamSlotsFormula(int stages, int microbatches) {
    return 2 * microbatches + 2 * (stages - 1);
}

int localSgdRoundSlotsFormula(int stages, int localSteps) {
    return 2 * stages * localSteps + 2 * (stages - 1);
}

std::string timelineCsv(const Timeline& tl, bool withEndSlot) {
    CsvWriter out;
    out.header(withEndSlot ? "slot,stage,op,microbatch,end_slot" : "slot,stage,op,microbatch");
    for (const auto& c : tl.cells) {
        out.integer(c.startSlot)
            .integer(c.stage)
            .plain(c.op == OpKind::Forward ? "F" : "B")
            .integer(c.microbatch);
        if (withEndSlot) out.integer(c.endSlot);
        out.endRow();
    }
    return out.take();
}

std::string timelineArt(const Timeline& tl, int maxSlots) {
    int S = tl.params.stages;
    int T = std::min(tl.totalSlots, maxSlots);
    int width =
        2 + static_cast<int>(std::to_string(std::max(0, tl.params.microbatches - 1)).size());
    std::vector<std::string> rows(S, std::string(static_cast<size_t>(T) * width, '.'));
    for (const auto& c : tl.cells) {
        for (int t = c.startSlot; t <= c.endSlot && t < T; ++t) {
            std::string label(1, c.op == OpKind::Forward ? 'F' : 'B');
            label += std::to_string(c.microbatch);
            label.resize(static_cast<size_t>(width - 1), ' ');
            rows[c.stage].replace(static_cast<size_t>(t) * width, label.size(), label);
            rows[c.stage][static_cast<size_t>(t) * width + width - 1] = ' ';
        }
    }
    std::ostringstream out;
    out << scheduleKindName(tl.params.kind) << ": S=" << S << " N=" << tl.params.microbatches
        << " slots=" << tl.totalSlots;
    if (tl.totalSlots > T) out << " (first " << T << " shown)";
    out << '\n';
    for (int s = 0; s < S; ++s) out << "stage " << s << " | " << rows[s] << '\n';
    return out.str();
}

std::vector<ReplayEvent> replayOrder(const Timeline& tl) {
    if (!tl.events.empty()) return tl.events;
    std::vector<ReplayEvent> ev;
    ev.reserve(tl.cells.size());
    for (const auto& c : tl.cells) {
        int slot = c.op == OpKind::Forward ? c.startSlot : c.endSlot;
        ev.push_back({slot, c.stage, c.op, c.microbatch});
    }
    // With one-slot backwards every op acts in its start slot: the cell order is the replay order.
    if (tl.params.costs.backwardSlots == 1) return ev;
    std::stable_sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) {
        return a.slot != b.slot ? a.slot < b.slot : a.stage < b.stage;
    });
    return ev;
}

}  // namespace pipelens

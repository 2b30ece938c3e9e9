#include "schedule/program_schedules.hpp"

#include <algorithm>
#include <compare>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "errors.hpp"
#include "schedule/flush_family.hpp"

namespace pipelens {
namespace {

std::string kindName(const ScheduleParams& p) {
    return scheduleKindName(p.kind);
}

int stepSize(const ScheduleParams& p) {
    return std::max(1, p.flushGroup);
}

// The program restricted to microbatches below `keep` (the last, partial step of an imported
// schedule): dropping whole microbatches keeps every dependency of the rest.
PipelineProgram restrictProgram(const PipelineProgram& full, int keep) {
    PipelineProgram out;
    out.ignoredActions = full.ignoredActions;
    out.ranks.resize(full.ranks.size());
    for (size_t r = 0; r < full.ranks.size(); ++r) {
        // Steps left empty are dropped: the timing skips idle steps of an order-only program.
        std::vector<ProgramStep>& row = out.ranks[r];
        for (const ProgramStep& step : full.ranks[r]) {
            ProgramStep kept;
            for (int i = 0; i < step.count; ++i) {
                if (step.actions[static_cast<size_t>(i)].microbatch < keep)
                    kept.actions[static_cast<size_t>(kept.count++)] =
                        step.actions[static_cast<size_t>(i)];
            }
            if (kept.count > 0) row.push_back(kept);
        }
    }
    out.orderOnly = true;  // idle steps left behind are not times: timeProgram places the rest
    return out;
}

// An interleaved chunk op costs 1/v of a stage op: the slot costs divided by v (validated to
// divide exactly).
ActionCosts stepActionCosts(const ScheduleParams& p) {
    ActionCosts a = programActionCosts(p.costs);
    if (p.kind != ScheduleKind::Interleaved) return a;
    const int v = std::max(1, p.virtualStages);
    a.forward /= v;
    a.backward /= v;
    a.inputGrad = std::max(1, a.inputGrad / v);
    a.weightGrad = std::max(1, a.weightGrad / v);
    return a;
}

// The flushing family's parameters of a step of `microbatches` (1F1B, ZB-H1, interleaved):
// `stages` counts the model's chunks, v per device for interleaved.
FlushScheduleParams flushParams(const ScheduleParams& p, int microbatches) {
    FlushScheduleParams f;
    f.kind = p.kind == ScheduleKind::OneFOneB       ? FlushKind::OneFOneB
             : p.kind == ScheduleKind::ZeroBubbleH1 ? FlushKind::ZeroBubbleH1
                                                    : FlushKind::Interleaved;
    f.virtualStages = p.kind == ScheduleKind::Interleaved ? p.virtualStages : 1;
    f.devices = p.stages / std::max(1, f.virtualStages);
    f.microbatches = microbatches;
    return f;
}

// One step's timing depends only on these (not on the run's microbatches): the cache's key.
// An imported program is told apart by its address, and held by the key so that the address
// stays its own while the key is kept.
struct StepKey {
    ScheduleKind kind = ScheduleKind::OneFOneB;
    int stages = 0;
    int virtualStages = 1;
    int stepMicrobatches = 0;  // M, the full step's
    int forward = 0;
    int backward = 0;
    int weight = 0;
    std::shared_ptr<const PipelineProgram> program;
    bool async = false;    // imported, update = async (where its updates land)
    int microbatches = 0;  // this step's, at most M
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>
    auto operator<=>(const StepKey&) const = default;
};

struct StepTemplate {
    std::shared_ptr<const ProgramTiming> timing;
    std::vector<TimelineCell> cells;
    std::vector<ReplayEvent> events;
};
StepTemplate makeStepTemplate(const ScheduleParams& p, int microbatches);

// At most `capacity` values, the least recently used dropped first (not thread-safe:
// StepTimings locks).
template <class Value>
class RecentList {
  public:
    explicit RecentList(std::size_t capacity) : capacity_(capacity) {}
    // The value of `key` (now the most recent), or null.
    std::shared_ptr<const Value> find(const StepKey& key) {
        for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            if (it->first == key) {
                auto found = std::move(*it);
                entries_.erase(it);
                entries_.push_front(found);
                return found.second;
            }
        }
        return nullptr;
    }
    void add(const StepKey& key, std::shared_ptr<const Value> value) {
        entries_.emplace_front(key, std::move(value));
        if (entries_.size() > capacity_) entries_.pop_back();
    }

  private:
    std::size_t capacity_;
    std::deque<std::pair<StepKey, std::shared_ptr<const Value>>> entries_;
};

// Timings of steps, shared by every plan, budget fit and timeline of the process (the app plans
// on the GUI thread as S is dragged, its worker plans the same config again, and a budget fit
// asks for many run lengths): each step is timed once. Lengths are kept for up to 16384 steps,
// whole steps (timing, cells and events a timeline copies) for the last 8 used, at most about
// 5 MB each at S = 128. Thread-safe; a step timed twice at once by two threads is merely timed
// twice.
class StepTimings {
  public:
    // The step's timing, cells and events (makeStepTemplate).
    std::shared_ptr<const StepTemplate> step(const ScheduleParams& p, int microbatches) {
        const StepKey key = keyOf(p, microbatches);
        {
            const std::lock_guard lock(mutex_);
            if (auto found = steps_.find(key)) return found;
        }
        auto made = std::make_shared<const StepTemplate>(makeStepTemplate(p, microbatches));
        const std::lock_guard lock(mutex_);
        lengths_[lengthKey(key)] = made->timing->length;
        steps_.add(key, made);
        return made;
    }

    long long length(const ScheduleParams& p, int microbatches) {
        const StepKey key = lengthKey(keyOf(p, microbatches));
        {
            const std::lock_guard lock(mutex_);
            if (auto it = lengths_.find(key); it != lengths_.end()) return it->second;
        }
        // A whole step is what every timeline of the schedule copies: made whole at once.
        if (microbatches == stepSize(p)) return step(p, microbatches)->timing->length;
        const long long made = timingOf(p, microbatches)->length;
        const std::lock_guard lock(mutex_);
        if (lengths_.size() >= kLengths) lengths_.clear();
        lengths_[key] = made;
        return made;
    }

    // The timing of a step; the last 4 are kept, so that the partial step a budget fit chose is
    // not timed again when the run's timeline is built from it (makeStepTemplate).
    std::shared_ptr<const ProgramTiming> timingOf(const ScheduleParams& p, int microbatches) {
        const StepKey key = lengthKey(keyOf(p, microbatches));
        {
            const std::lock_guard lock(mutex_);
            if (auto found = timings_.find(key)) return found;
        }
        auto made = std::make_shared<const ProgramTiming>(
            timeProgram(*program(p, microbatches), stepActionCosts(p)));
        const std::lock_guard lock(mutex_);
        timings_.add(key, made);
        return made;
    }

    // The program of a step: a partial step of interleaved or an imported file is the whole
    // step's program less the missing microbatches, so the whole step's program is kept (the
    // last 4) rather than rebuilt for every partial step a budget fit tries.
    std::shared_ptr<const PipelineProgram> program(const ScheduleParams& p, int microbatches) {
        const int M = stepSize(p);
        const bool restricted = microbatches < M && (p.kind == ScheduleKind::Interleaved ||
                                                     p.kind == ScheduleKind::Imported);
        if (!restricted)
            return std::make_shared<const PipelineProgram>(stepProgram(p, microbatches));
        const StepKey key = lengthKey(keyOf(p, M));
        std::shared_ptr<const PipelineProgram> whole;
        {
            const std::lock_guard lock(mutex_);
            whole = wholePrograms_.find(key);
        }
        if (!whole) {
            whole = std::make_shared<const PipelineProgram>(stepProgram(p, M));
            const std::lock_guard lock(mutex_);
            wholePrograms_.add(key, whole);
        }
        return std::make_shared<const PipelineProgram>(restrictProgram(*whole, microbatches));
    }

  private:
    static constexpr std::size_t kLengths = 16384;

    static StepKey keyOf(const ScheduleParams& p, int microbatches) {
        StepKey k;
        k.kind = p.kind;
        k.stages = p.stages;
        k.virtualStages = p.kind == ScheduleKind::Interleaved ? p.virtualStages : 1;
        k.stepMicrobatches = stepSize(p);
        k.forward = p.costs.forwardSlots;
        k.backward = p.costs.backwardSlots;
        k.weight = p.costs.weightSlots;
        if (p.kind == ScheduleKind::Imported) k.program = p.program;
        k.async = p.kind == ScheduleKind::Imported && p.asyncUpdate;
        k.microbatches = microbatches;
        return k;
    }
    // A length does not depend on where updates land.
    static StepKey lengthKey(StepKey k) {
        k.async = false;
        return k;
    }

    std::mutex mutex_;
    std::map<StepKey, long long> lengths_;
    RecentList<StepTemplate> steps_{8};
    RecentList<ProgramTiming> timings_{4};
    RecentList<PipelineProgram> wholePrograms_{4};
};

StepTimings& stepTimings() {
    static StepTimings cache;
    return cache;
}

OpKind opOf(ActionKind kind) {
    switch (kind) {
        case ActionKind::Forward:
            return OpKind::Forward;
        case ActionKind::Backward:
            return OpKind::Backward;
        case ActionKind::InputGrad:
            return OpKind::InputGrad;
        case ActionKind::WeightGrad:
            return OpKind::WeightGrad;
    }
    return OpKind::Forward;
}

bool updatesBlock(ActionKind kind) {
    return kind == ActionKind::Backward || kind == ActionKind::WeightGrad;
}

// Asynchronous updates in PipeDream's processing order (SPEC section 3): slot, then stage, so
// that block-update delays count as the paper's; a stage's forward before its own update.
void sortAsPipeDream(std::vector<ReplayEvent>& events) {
    std::stable_sort(events.begin(), events.end(), [](const ReplayEvent& a, const ReplayEvent& b) {
        if (a.slot != b.slot) return a.slot < b.slot;
        if (a.stage != b.stage) return a.stage < b.stage;
        return a.op == OpKind::Forward && b.op != OpKind::Forward;
    });
}

// Events sorted by slot; inside a slot forwards first (stages ascending), then updates (stages
// descending, microbatches ascending): a read at the start of a slot sees no update that ends
// in it, and the language model's backward of stage s + 1 comes before that of stage s.
void sortEvents(std::vector<ReplayEvent>& events) {
    std::stable_sort(events.begin(), events.end(), [](const ReplayEvent& a, const ReplayEvent& b) {
        if (a.slot != b.slot) return a.slot < b.slot;
        const bool fa = a.op == OpKind::Forward;
        const bool fb = b.op == OpKind::Forward;
        if (fa != fb) return fa;
        if (a.stage != b.stage) return fa ? a.stage < b.stage : a.stage > b.stage;
        return a.microbatch < b.microbatch;
    });
}

void requireCells(long long cells) {
    if (cells > 400'000'000) {
        throw ConfigError("microbatches is too large for this schedule: its run would hold " +
                          std::to_string(cells) + " operations; at most 400000000");
    }
}

// One step of `microbatches` as a run holds it, the step starting at slot 0 with microbatches
// from 0: its cells in (startSlot, stage) order and its events in the replay's order (async:
// forwards and updates as PipeDream processes them; sync: forwards, then the step's updates in
// its last slot). Step q of a run is the same shifted by its start slot and q·M: sorting is
// unchanged by that shift, so a run copies its steps instead of sorting each.
StepTemplate makeStepTemplate(const ScheduleParams& p, int microbatches) {
    StepTemplate out;
    out.timing = stepTimings().timingOf(p, microbatches);
    const ProgramTiming& t = *out.timing;
    const bool async = p.kind == ScheduleKind::Imported && p.asyncUpdate;
    const int S = static_cast<int>(t.peakActivations.size());
    const long long last = t.length - 1;
    if (last > std::numeric_limits<int>::max() - 2) {
        throw ConfigError(kindName(p) + ": one step would exceed 2147483647 slots");
    }
    out.cells.reserve(t.actions.size());
    for (const TimedAction& a : t.actions) {
        const int m = a.action.microbatch;
        const auto start = static_cast<int>(a.start);
        const auto end = static_cast<int>(a.end - 1);
        out.cells.push_back({start, end, a.action.stage, opOf(a.action.kind), m});
        if (a.action.kind == ActionKind::Forward) {
            out.events.push_back({start, a.action.stage, OpKind::Forward, m});
        } else if (async && updatesBlock(a.action.kind)) {
            out.events.push_back({end, a.action.stage, OpKind::Backward, m});
        }
    }
    if (async) {
        sortAsPipeDream(out.events);
    } else {
        sortEvents(out.events);
        // The optimizer step: every update of the step in its last slot.
        for (int s = S - 1; s >= 0; --s) {
            for (int m = 0; m < microbatches; ++m)
                out.events.push_back({static_cast<int>(last), s, OpKind::Backward, m});
        }
    }
    std::stable_sort(out.cells.begin(), out.cells.end(), [](const auto& a, const auto& b) {
        return a.startSlot != b.startSlot ? a.startSlot < b.startSlot : a.stage < b.stage;
    });
    return out;
}

// 1F1B, ZB-H1, interleaved and imported: the step's program repeated.
Timeline repeatedProgram(const ScheduleParams& p,
                         const std::function<void(const TimelineCell&)>* visit) {
    const int M = stepSize(p);
    const int N = p.microbatches;
    const int steps = (N + M - 1) / M;
    const std::shared_ptr<const StepTemplate> fullStep = stepTimings().step(p, M);
    const ProgramTiming& full = *fullStep->timing;
    const int S = static_cast<int>(full.peakActivations.size());
    requireCells(static_cast<long long>(full.actions.size()) * steps);

    Timeline tl;
    tl.params = p;
    tl.stageRank.assign(static_cast<size_t>(S), 0);
    for (const TimedAction& a : full.actions) tl.stageRank[a.action.stage] = a.rank;
    tl.peakActivations = full.peakActivations;
    tl.weightVersions.assign(static_cast<size_t>(S), 1);
    tl.peakStash.assign(static_cast<size_t>(S), std::min(M, N));
    const bool async = p.kind == ScheduleKind::Imported && p.asyncUpdate;
    if (!visit) {
        tl.cells.reserve(full.actions.size() * static_cast<size_t>(steps));
        tl.events.reserve(fullStep->events.size() * static_cast<size_t>(steps));
    }
    // Per stage, the stashes (async) held at once: forwards minus updates in time order.
    std::vector<int> held(static_cast<size_t>(S), 0);
    std::vector<int> peakHeld(static_cast<size_t>(S), 0);
    long long offset = 0;
    for (int q = 0; q < steps; ++q) {
        const int here = std::min(M, N - q * M);
        const std::shared_ptr<const StepTemplate> partial =
            here < M ? stepTimings().step(p, here) : nullptr;
        const StepTemplate& step = here < M ? *partial : *fullStep;
        const ProgramTiming& t = *step.timing;
        for (int s = 0; s < S; ++s)
            tl.peakActivations[s] = std::max(tl.peakActivations[s], t.peakActivations[s]);
        const long long last = offset + t.length - 1;
        if (last > std::numeric_limits<int>::max() - 2) {
            throw ConfigError("microbatches = " + std::to_string(N) + " is not allowed with " +
                              kindName(p) + ": the run would exceed 2147483647 slots");
        }
        const auto shift = static_cast<int>(offset);
        const int first = q * M;
        for (TimelineCell c : step.cells) {
            c.startSlot += shift;
            c.endSlot += shift;
            c.microbatch += first;
            if (visit) {
                (*visit)(c);
            } else {
                tl.cells.push_back(c);
            }
        }
        if (async) {
            for (const ReplayEvent& e : step.events) {
                int& h = held[static_cast<size_t>(e.stage)];
                h += e.op == OpKind::Forward ? 1 : -1;
                peakHeld[static_cast<size_t>(e.stage)] =
                    std::max(peakHeld[static_cast<size_t>(e.stage)], h);
            }
        }
        if (!visit) {
            for (ReplayEvent e : step.events) {
                e.slot += shift;
                e.microbatch += first;
                tl.events.push_back(e);
            }
        }
        tl.stepEndSlots.push_back(static_cast<int>(last));
        offset += t.length;
    }
    if (async) tl.weightVersions = peakHeld;
    tl.totalSlots = static_cast<int>(offset);
    return tl;
}

// 2BW: PipeDream's timeline, updates grouped by m.
Timeline twoBw(const ScheduleParams& p, const std::function<void(const TimelineCell&)>* visit) {
    ScheduleParams pd = p;
    pd.kind = ScheduleKind::PipeDream;
    pd.noam = p.stages;
    const int S = p.stages;
    const int N = p.microbatches;
    const int m = stepSize(p);
    const int groups = (N + m - 1) / m;
    // Forward start and backward end of every (microbatch, stage).
    std::vector<int> fStart(static_cast<size_t>(N) * S, 0);
    std::vector<int> groupEnd(static_cast<size_t>(groups), 0);
    std::vector<TimelineCell> cells;
    if (!visit) cells.reserve(static_cast<size_t>(2) * S * N);
    auto record = [&](const TimelineCell& c) {
        if (c.op == OpKind::Forward) {
            fStart[static_cast<size_t>(c.microbatch) * S + c.stage] = c.startSlot;
        } else {
            int& e = groupEnd[static_cast<size_t>(c.microbatch / m)];
            e = std::max(e, c.endSlot);
        }
        if (visit) {
            (*visit)(c);
        } else {
            cells.push_back(c);
        }
    };
    const std::function<void(const TimelineCell&)> visitor = record;
    Timeline tl = simulateSchedule(pd, visitor);
    tl.params = p;
    tl.cells = std::move(cells);
    tl.stageRank.resize(static_cast<size_t>(S));
    for (int s = 0; s < S; ++s) tl.stageRank[s] = s;
    tl.peakActivations = tl.peakStash;
    tl.weightVersions.assign(static_cast<size_t>(S), 2);
    tl.peakStash.assign(static_cast<size_t>(S), std::min(2 * m, N));
    tl.stepEndSlots = groupEnd;
    if (visit) return tl;
    std::vector<ReplayEvent>& ev = tl.events;
    ev.reserve(static_cast<size_t>(2) * S * N);
    for (int j = 0; j < N; ++j) {
        const int t = j / m;
        for (int s = 0; s < S; ++s) {
            int slot = fStart[static_cast<size_t>(j) * S + s];
            // Read version t - 1: before group t - 1's step lands.
            if (t >= 1) slot = std::min(slot, groupEnd[static_cast<size_t>(t - 1)]);
            ev.push_back({slot, s, OpKind::Forward, j});
        }
    }
    for (int t = 0; t < groups; ++t) {
        for (int s = S - 1; s >= 0; --s) {
            for (int j = t * m; j < std::min(N, (t + 1) * m); ++j)
                ev.push_back({groupEnd[static_cast<size_t>(t)], s, OpKind::Backward, j});
        }
    }
    sortEvents(ev);
    return tl;
}

}  // namespace

bool isProgramKind(ScheduleKind kind) {
    return kind == ScheduleKind::OneFOneB || kind == ScheduleKind::ZeroBubbleH1 ||
           kind == ScheduleKind::TwoBw || kind == ScheduleKind::Imported ||
           kind == ScheduleKind::Interleaved;
}

int programStepMicrobatches(const ScheduleParams& p) {
    if (p.flushGroup > 0) return p.flushGroup;
    if (p.kind == ScheduleKind::Imported && p.program)
        return summarizeProgram(*p.program).microbatches;
    return std::max(1, p.stages / std::max(1, p.virtualStages));
}

ActionCosts programActionCosts(const OpCosts& c) {
    ActionCosts a;
    a.forward = c.forwardSlots;
    a.backward = c.backwardSlots;
    a.inputGrad = std::max(1, c.backwardSlots - c.weightSlots);
    a.weightGrad = c.weightSlots;
    return a;
}

void validateProgramSchedule(const ScheduleParams& p) {
    const std::string who = kindName(p);
    if (p.costs.latencySlots != 0) {
        throw ConfigError("costs.latency_slots = " + std::to_string(p.costs.latencySlots) +
                          " is not allowed with " + who +
                          ": program schedules time their ops without link latency; allowed: 0");
    }
    if (p.costs.weightSlots < 1 || p.costs.weightSlots > 1000) {
        throw ConfigError("costs.weight_slots = " + std::to_string(p.costs.weightSlots) +
                          " is not allowed: an integer from 1 to 1000");
    }
    if (p.kind == ScheduleKind::TwoBw && p.flushGroup > 0 && p.flushGroup < p.stages) {
        throw ConfigError("accumulation = " + std::to_string(p.flushGroup) +
                          " is not allowed with 2bw: it sums the gradients of m >= S = " +
                          std::to_string(p.stages) +
                          " microbatches per step (so two weight versions suffice)");
    }
    if (p.kind == ScheduleKind::Imported) {
        if (!p.program) throw ConfigError("imported schedule: no schedule_file was read");
        const ProgramSummary sum = summarizeProgram(*p.program);
        if (sum.stages != p.stages) {
            throw ConfigError("stages = " + std::to_string(p.stages) +
                              " is not allowed with the imported schedule: its file has " +
                              std::to_string(sum.stages) + " stages (set stages to " +
                              std::to_string(sum.stages) + " or leave it out)");
        }
        if (p.flushGroup != 0 && p.flushGroup != sum.microbatches) {
            throw ConfigError("imported schedule: flush_group = " + std::to_string(p.flushGroup) +
                              " but its file has " + std::to_string(sum.microbatches) +
                              " microbatches per step");
        }
    }
    if (p.kind == ScheduleKind::Interleaved) {
        const int v = p.virtualStages;
        if (v < 2) {
            throw ConfigError("virtual_stages = " + std::to_string(v) +
                              " is not allowed with interleaved: an integer >= 2 (chunks per "
                              "device)");
        }
        if (p.stages % v != 0) {
            throw ConfigError("interleaved: the model's " + std::to_string(p.stages) +
                              " chunks are not virtual_stages = " + std::to_string(v) +
                              " per device");
        }
        if (p.costs.forwardSlots % v != 0 || p.costs.backwardSlots % v != 0) {
            throw ConfigError(
                "costs.forward_slots = " + std::to_string(p.costs.forwardSlots) +
                " and costs.backward_slots = " + std::to_string(p.costs.backwardSlots) +
                " are not allowed with interleaved, virtual_stages = " + std::to_string(v) +
                ": each chunk op costs 1/v of a stage op, so both must be multiples of " +
                std::to_string(v) + " (e.g. forward_slots = " + std::to_string(v) +
                ", backward_slots = " + std::to_string(2 * v) +
                ", with the other methods' costs the same for equal terms)");
        }
    }
    if (p.kind == ScheduleKind::OneFOneB || p.kind == ScheduleKind::ZeroBubbleH1 ||
        p.kind == ScheduleKind::Interleaved)
        validateFlushScheduleParams(flushParams(p, std::max(1, p.flushGroup)));
}

PipelineProgram stepProgram(const ScheduleParams& p, int microbatches) {
    switch (p.kind) {
        case ScheduleKind::OneFOneB:
        case ScheduleKind::ZeroBubbleH1:
            return buildFlushProgram(flushParams(p, microbatches));
        case ScheduleKind::Interleaved: {
            // A step needs a multiple of the devices: a last, partial step is the full step's
            // program without the microbatches it lacks.
            const PipelineProgram full = buildFlushProgram(flushParams(p, stepSize(p)));
            return microbatches >= stepSize(p) ? full : restrictProgram(full, microbatches);
        }
        case ScheduleKind::Imported:
            if (!p.program) throw ConfigError("imported schedule: no schedule_file was read");
            return microbatches >= stepSize(p) ? *p.program
                                               : restrictProgram(*p.program, microbatches);
        default:
            throw std::logic_error("stepProgram: not a program schedule");
    }
}

Timeline buildProgramTimeline(const ScheduleParams& p,
                              const std::function<void(const TimelineCell&)>* visit) {
    validateProgramSchedule(p);
    if (p.kind == ScheduleKind::TwoBw) return twoBw(p, visit);
    return repeatedProgram(p, visit);
}

long long programRunLength(const ScheduleParams& p) {
    validateProgramSchedule(p);
    if (p.kind == ScheduleKind::TwoBw) {
        ScheduleParams pd = p;
        pd.kind = ScheduleKind::PipeDream;
        pd.noam = p.stages;
        return simulateSchedule(pd, [](const TimelineCell&) {}).totalSlots;
    }
    const int M = stepSize(p);
    const long long whole = p.microbatches / M;
    long long total = whole > 0 ? whole * stepTimings().length(p, M) : 0;
    if (const int rest = p.microbatches % M; rest > 0) total += stepTimings().length(p, rest);
    return total;
}

std::optional<long long> programBudgetFit(const ScheduleParams& p, long long slotBudget) {
    validateProgramSchedule(p);
    if (p.kind == ScheduleKind::TwoBw) return std::nullopt;
    if (slotBudget <= 0) return 0;
    // Steps run back to back, so N = q·M + r lasts q·full + partial(r): as many whole steps as
    // fit, then the largest partial step (r < M) in what is left. A partial step lasts no
    // longer than a whole one and grows with r; its length is nearly linear in r, so the probe
    // is interpolated (bisecting whenever that did not halve the interval).
    const int M = stepSize(p);
    const long long full = stepTimings().length(p, M);
    const long long whole = slotBudget / full;
    const long long left = slotBudget - whole * full;
    int lo = 0;  // fits: partial(0) = 0
    long long lengthLo = 0;
    int hi = M;  // does not: partial(M) = full > left
    long long lengthHi = full;
    // A partial step is a fill and drain plus a share per microbatch: interpolate from one
    // microbatch's step, not from zero.
    if (M > 1) {
        const long long one = stepTimings().length(p, 1);
        if (one > left) return whole * M;
        lo = 1;
        lengthLo = one;
    }
    bool bisect = false;
    while (hi - lo > 1) {
        int probe = lo + (hi - lo) / 2;
        if (!bisect && lengthHi > lengthLo) {
            const double t =
                static_cast<double>(left - lengthLo) / static_cast<double>(lengthHi - lengthLo);
            probe = std::clamp(lo + static_cast<int>(t * (hi - lo)), lo + 1, hi - 1);
        }
        const int width = hi - lo;
        const long long l = stepTimings().length(p, probe);
        if (l <= left) {
            lo = probe;
            lengthLo = l;
        } else {
            hi = probe;
            lengthHi = l;
        }
        bisect = !bisect && 2 * (hi - lo) > width;
    }
    return whole * M + lo;
}

std::optional<std::string> backpropOrderViolation(const Timeline& tl) {
    const int S = tl.params.stages;
    std::vector<long long> at(static_cast<size_t>(tl.params.microbatches) * S, -1);
    for (size_t i = 0; i < tl.events.size(); ++i) {
        const ReplayEvent& e = tl.events[i];
        if (e.op != OpKind::Backward) continue;
        at[static_cast<size_t>(e.microbatch) * S + e.stage] = static_cast<long long>(i);
        if (e.stage + 1 < S && at[static_cast<size_t>(e.microbatch) * S + e.stage + 1] < 0) {
            return "the update of block " + std::to_string(e.stage) + " by microbatch " +
                   std::to_string(e.microbatch) + " (slot " + std::to_string(e.slot) +
                   ") comes before that of block " + std::to_string(e.stage + 1);
        }
    }
    return std::nullopt;
}

}  // namespace pipelens

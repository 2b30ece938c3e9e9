// timeProgram (program.hpp): list scheduling of a program's per-rank orders. Each rank runs its
// row's steps in order, idle steps dropped; an overlapped pair's two actions start together and
// keep the rank busy for the larger of their costs (a pair whose actions depend on each other
// can never start: a deadlock). An action starts when its rank is free and its dependencies
// have ended: F(m, s) after F(m, s − 1); B or I(m, s) after F(m, s) and after B or I(m, s + 1);
// W(m, s) after B or I(m, s). The start times are those of the longest paths in the graph of
// rank order and dependencies, found in one pass over the actions: a rank whose next step
// waits for an action not yet timed parks on that action and is woken when it is. The same
// routine times a bare per-rank order into a buffer of starts (detail::timeOrder,
// program_timing_detail.hpp), which buildFlushProgram writes straight into its grid.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "schedule/program.hpp"
#include "schedule/program_timing_detail.hpp"

namespace pipelens {
namespace {

std::string where(std::size_t rank, std::size_t step, const ProgramStep& cell) {
    std::string out = "program: rank ";
    out += std::to_string(rank);
    out += ", step ";
    out += std::to_string(step);
    out += " (cell ";
    out += stepName(cell);
    out += ')';
    return out;
}

// Timer::state_ of an action that has not ended: kPending, not timed yet and no rank parked on
// it; kAbsent, not in the program (no rank is parked there: it never ends); kFirstWaiter − w
// (w >= 0), not timed yet and rank w the first one parked on it.
constexpr int kPending = -1;
constexpr int kAbsent = -2;
constexpr int kFirstWaiter = -3;

// Dependency classes: F, B-or-I (what the stage before waits for), W.
enum Slot : int { kSlotF = 0, kSlotBackward = 1, kSlotW = 2, kSlots = 3 };

int slotOf(ActionKind kind) {
    switch (kind) {
        case ActionKind::Forward:
            return kSlotF;
        case ActionKind::Backward:
        case ActionKind::InputGrad:
            return kSlotBackward;
        case ActionKind::WeightGrad:
            return kSlotW;
    }
    return kSlotF;
}

long long costOf(ActionKind kind, const ActionCosts& costs) {
    switch (kind) {
        case ActionKind::Forward:
            return costs.forward;
        case ActionKind::Backward:
            return costs.backward;
        case ActionKind::InputGrad:
            return costs.inputGrad;
        case ActionKind::WeightGrad:
            return costs.weightGrad;
    }
    return 1;
}

void requireCost(const char* name, int value) {
    if (value < 1) {
        throw ConfigError("action costs: " + std::string(name) + " = " + std::to_string(value) +
                          "; every cost must be at least 1 slot");
    }
}

// A row's step: a ProgramStep of a program, or one Action of a per-rank order.
int stepCount(const ProgramStep& step) {
    return step.count;
}
int stepCount(const Action& /*action*/) {
    return 1;
}
const Action& stepAction(const ProgramStep& step, int i) {
    return step.actions[static_cast<std::size_t>(i)];
}
const Action& stepAction(const Action& action, int /*i*/) {
    return action;
}
const ProgramStep& asStep(const ProgramStep& step) {
    return step;
}
ProgramStep asStep(const Action& action) {
    ProgramStep step;
    step.actions[0] = action;
    step.count = 1;
    return step;
}

// Step: ProgramStep (timeProgram) or Action (detail::timeOrder, one action per step). End: the
// type of the end slots kept per action, std::int32_t where every end fits (the tables are the
// timer's memory traffic), long long otherwise (timeWith picks).
template <class Step, class End>
class Timer {
  public:
    using Rows = std::vector<std::vector<Step>>;

    Timer(const Rows& rows, const ActionCosts& costs) : rows_(rows), costs_(costs) {}

    // The sorted list of timed actions (timeProgram).
    ProgramTiming run();
    // Each action's start only (detail::timeOrder).
    void startsInto(detail::OrderStarts& out);

  private:
    struct Dependencies {
        std::array<long long, 2> keys{};
        int count = 0;
    };

    long long key(int slot, int stage, int microbatch) const {
        return (static_cast<long long>(slot) * stages_ + stage) * microbatches_ + microbatch;
    }
    [[gnu::always_inline]] Dependencies dependencies(const Action& a) const;
    void index();
    // Runs rank r's steps until one waits for an action not yet timed (it parks there).
    void advance(int rank);
    [[noreturn]] void reportDeadlock() const;
    Action actionOf(long long k) const;
    // Times every action into start_ and out_ (but out_.actions); throws on a deadlock.
    void schedule();

    const Rows& rows_;
    const ActionCosts& costs_;
    int stages_ = 0;
    int microbatches_ = 0;
    long long actionCount_ = 0;
    // Per key: its end slot once timed; before, kPending, kAbsent or a parked rank (above).
    std::vector<End> state_;
    std::vector<int> nextWaiter_;           // per rank: the next rank parked on the same key
    std::vector<std::size_t> position_;     // per rank: the next step of its row
    std::vector<long long> free_;           // per rank: when it is free
    std::vector<int> ready_;                // ranks to advance
    std::vector<std::size_t> firstAction_;  // per rank: index of its first action in start_
    std::vector<std::size_t> nextAction_;   // per rank: index of its next action in start_
    std::vector<End> start_;                // per action, ranks in order, rows in order
    std::vector<int> held_;                 // per stage: activations held now
    ProgramTiming out_;
};

template <class Step, class End>
inline typename Timer<Step, End>::Dependencies Timer<Step, End>::dependencies(
    const Action& a) const {
    Dependencies d;
    switch (a.kind) {
        case ActionKind::Forward:
            if (a.stage > 0) d.keys[d.count++] = key(kSlotF, a.stage - 1, a.microbatch);
            break;
        case ActionKind::Backward:
        case ActionKind::InputGrad:
            d.keys[d.count++] = key(kSlotF, a.stage, a.microbatch);
            if (a.stage + 1 < stages_) {
                d.keys[d.count++] = key(kSlotBackward, a.stage + 1, a.microbatch);
            }
            break;
        case ActionKind::WeightGrad:
            d.keys[d.count++] = key(kSlotBackward, a.stage, a.microbatch);
            break;
    }
    return d;
}

template <class Step, class End>
Action Timer<Step, End>::actionOf(long long k) const {
    const long long perSlot = static_cast<long long>(stages_) * microbatches_;
    const auto slot = static_cast<int>(k / perSlot);
    const long long rest = k % perSlot;
    Action a;
    a.stage = static_cast<int>(rest / microbatches_);
    a.microbatch = static_cast<int>(rest % microbatches_);
    a.kind = slot == kSlotF ? ActionKind::Forward
                            : (slot == kSlotW ? ActionKind::WeightGrad : ActionKind::InputGrad);
    return a;
}

template <class Step, class End>
void Timer<Step, End>::index() {
    const auto& ranks = rows_;
    bool hasWeightGrad = false;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        for (std::size_t t = 0; t < ranks[r].size(); ++t) {
            const Step& step = ranks[r][t];
            if (stepCount(step) < 0 || stepCount(step) > 2) {
                throw ConfigError(where(r, t, ProgramStep{}) + ": a step holds " +
                                  std::to_string(stepCount(step)) +
                                  " actions; 0, 1 or 2 are allowed");
            }
            for (int i = 0; i < stepCount(step); ++i) {
                const Action& a = stepAction(step, i);
                if (a.stage < 0 || a.microbatch < 0) {
                    throw ConfigError(where(r, t, asStep(step)) +
                                      ": stage and microbatch must be at least 0");
                }
                stages_ = std::max(stages_, a.stage + 1);
                microbatches_ = std::max(microbatches_, a.microbatch + 1);
                hasWeightGrad = hasWeightGrad || a.kind == ActionKind::WeightGrad;
                ++actionCount_;
            }
        }
    }
    const long long pairs = static_cast<long long>(stages_) * microbatches_;
    if (pairs > actionCount_ + (1LL << 20)) {
        throw ConfigError("program: " + std::to_string(stages_) + " stages × " +
                          std::to_string(microbatches_) + " microbatches for only " +
                          std::to_string(actionCount_) +
                          " actions; stage and microbatch numbers must count from 0 without "
                          "large gaps");
    }
    // The W slot (the last) only where some W runs: nothing else refers to it.
    const auto keys = static_cast<std::size_t>(pairs * (hasWeightGrad ? kSlots : kSlotW));
    state_.assign(keys, static_cast<End>(kAbsent));
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        for (std::size_t t = 0; t < ranks[r].size(); ++t) {
            const Step& step = ranks[r][t];
            for (int i = 0; i < stepCount(step); ++i) {
                const Action& a = stepAction(step, i);
                const auto k = static_cast<std::size_t>(key(slotOf(a.kind), a.stage, a.microbatch));
                if (state_[k] != kAbsent) {
                    const std::string note =
                        slotOf(a.kind) == kSlotBackward
                            ? " (a stage's backward of a microbatch is one B or one I)"
                            : "";
                    throw ConfigError(where(r, t, asStep(step)) + ": " + actionName(a) +
                                      " runs more than once" + note);
                }
                state_[k] = static_cast<End>(kPending);
            }
        }
    }
}

template <class Step, class End>
void Timer<Step, End>::advance(int rank) {
    const auto r = static_cast<std::size_t>(rank);
    const std::vector<Step>& row = rows_[r];
    std::size_t& pos = position_[r];
    while (pos < row.size()) {
        const Step& step = row[pos];
        if (stepCount(step) == 0) {
            ++pos;
            continue;
        }
        long long start = free_[r];
        for (int i = 0; i < stepCount(step); ++i) {
            const Dependencies d = dependencies(stepAction(step, i));
            for (int j = 0; j < d.count; ++j) {
                const auto k = static_cast<std::size_t>(d.keys[static_cast<std::size_t>(j)]);
                const End state = state_[k];
                if (state < 0) {
                    if (state != kAbsent) {
                        nextWaiter_[r] =
                            state == kPending ? -1 : kFirstWaiter - static_cast<int>(state);
                        state_[k] = static_cast<End>(kFirstWaiter - rank);
                    }
                    return;
                }
                start = std::max(start, static_cast<long long>(state));
            }
        }
        long long busy = 0;
        for (int i = 0; i < stepCount(step); ++i) {
            const Action& a = stepAction(step, i);
            const long long cost = costOf(a.kind, costs_);
            busy = std::max(busy, cost);
            start_[nextAction_[r]++] = static_cast<End>(start);
            if (a.kind == ActionKind::Forward) {
                const int held = ++held_[static_cast<std::size_t>(a.stage)];
                int& peak = out_.peakActivations[static_cast<std::size_t>(a.stage)];
                peak = std::max(peak, held);
            }
        }
        for (int i = 0; i < stepCount(step); ++i) {
            const Action& a = stepAction(step, i);
            if (a.kind == ActionKind::Backward || a.kind == ActionKind::WeightGrad) {
                --held_[static_cast<std::size_t>(a.stage)];
            }
            const auto k = static_cast<std::size_t>(key(slotOf(a.kind), a.stage, a.microbatch));
            const End before = state_[k];
            state_[k] = static_cast<End>(start + costOf(a.kind, costs_));
            const int first = before < kPending ? kFirstWaiter - static_cast<int>(before) : -1;
            for (int w = first; w >= 0; w = nextWaiter_[static_cast<std::size_t>(w)]) {
                ready_.push_back(w);
            }
        }
        free_[r] = start + busy;
        out_.busyPerRank[r] += busy;
        out_.length = std::max(out_.length, free_[r]);
        ++pos;
    }
}

// Follows the waits from the first stuck rank to their root: an action missing from the
// program, or a cycle (a rank's step waits, directly or through other ranks, for an action
// behind it in its own row).
template <class Step, class End>
void Timer<Step, End>::reportDeadlock() const {
    const auto& ranks = rows_;
    // The first dependency of rank r's next step that has not ended.
    const auto firstWait = [&](std::size_t r) {
        const Step& step = ranks[r][position_[r]];
        for (int i = 0; i < stepCount(step); ++i) {
            const Dependencies d = dependencies(stepAction(step, i));
            for (int j = 0; j < d.count; ++j) {
                const long long k = d.keys[static_cast<std::size_t>(j)];
                if (state_[static_cast<std::size_t>(k)] < 0) return k;
            }
        }
        return -1LL;  // not reached: a stuck rank waits for something
    };
    // Where an action sits (rank, step), found only now that a deadlock is reported.
    const auto locate = [&](long long k) {
        for (std::size_t r = 0; r < ranks.size(); ++r) {
            for (std::size_t t = 0; t < ranks[r].size(); ++t) {
                const Step& step = ranks[r][t];
                for (int i = 0; i < stepCount(step); ++i) {
                    const Action& a = stepAction(step, i);
                    if (key(slotOf(a.kind), a.stage, a.microbatch) == k) {
                        return std::pair<std::size_t, std::size_t>{r, t};
                    }
                }
            }
        }
        return std::pair<std::size_t, std::size_t>{ranks.size(), 0};
    };
    std::size_t r = 0;
    while (r < ranks.size() && position_[r] >= ranks[r].size()) ++r;
    std::vector<std::uint8_t> visited(ranks.size(), 0);
    while (r < ranks.size()) {
        visited[r] = 1;
        const std::size_t t = position_[r];
        const Step& step = ranks[r][t];
        const long long k = firstWait(r);
        if (k < 0) break;
        const Action dep = actionOf(k);
        const std::string head =
            where(r, t, asStep(step)) + " can never start: it waits for " + actionName(dep);
        if (state_[static_cast<std::size_t>(k)] == kAbsent) {
            const std::string names =
                dep.kind == ActionKind::InputGrad
                    ? "neither " + actionName(dep) + " nor " +
                          actionName(Action{ActionKind::Backward, dep.stage, dep.microbatch}) +
                          " is"
                    : actionName(dep) + " is not";
            throw ConfigError(head + ", which never runs (" + names + " in the program)");
        }
        const auto [q, j] = locate(k);
        if (q >= ranks.size() || visited[q] != 0) {
            throw ConfigError(head + " (rank " + std::to_string(q) + ", step " + std::to_string(j) +
                              "), and the waits form a cycle");
        }
        r = q;
    }
    throw ConfigError("program: deadlock");  // not reached
}

template <class Step, class End>
void Timer<Step, End>::schedule() {
    requireCost("forward", costs_.forward);
    requireCost("backward", costs_.backward);
    requireCost("input_grad", costs_.inputGrad);
    requireCost("weight_grad", costs_.weightGrad);
    index();
    const std::size_t ranks = rows_.size();
    nextWaiter_.assign(ranks, -1);
    position_.assign(ranks, 0);
    free_.assign(ranks, 0);
    firstAction_.assign(ranks, 0);
    start_.assign(static_cast<std::size_t>(actionCount_), 0);
    std::size_t offset = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
        firstAction_[r] = offset;
        for (const Step& step : rows_[r]) {
            offset += static_cast<std::size_t>(stepCount(step));
        }
    }
    nextAction_ = firstAction_;
    held_.assign(static_cast<std::size_t>(stages_), 0);
    out_.busyPerRank.assign(ranks, 0);
    out_.peakActivations.assign(static_cast<std::size_t>(stages_), 0);
    for (std::size_t r = 0; r < ranks; ++r) {
        ready_.push_back(static_cast<int>(ranks - 1 - r));
    }
    while (!ready_.empty()) {
        const int r = ready_.back();
        ready_.pop_back();
        advance(r);
    }
    for (std::size_t r = 0; r < ranks; ++r) {
        if (position_[r] < rows_[r].size()) reportDeadlock();
    }
    long long busy = 0;
    for (long long b : out_.busyPerRank) busy += b;
    if (ranks > 0 && out_.length > 0) {
        out_.bubbleFraction = 1.0 - static_cast<double>(busy) / (static_cast<double>(ranks) *
                                                                 static_cast<double>(out_.length));
    }
}

template <class Step, class End>
void Timer<Step, End>::startsInto(detail::OrderStarts& out) {
    schedule();
    out.starts = std::move(start_);
    out.length = out_.length;
}

template <class Step, class End>
ProgramTiming Timer<Step, End>::run() {
    schedule();
    const std::size_t ranks = rows_.size();
    // Sorted by (start, rank), row order within: a counting sort on the start when the length
    // is of the order of the number of actions (always with unit costs), else a stable sort.
    const auto forEachAction = [&](auto&& use) {
        for (std::size_t r = 0; r < ranks; ++r) {
            std::size_t index = firstAction_[r];
            for (const Step& step : rows_[r]) {
                for (int i = 0; i < stepCount(step); ++i) {
                    const Action& a = stepAction(step, i);
                    const long long start = start_[index++];
                    use(TimedAction{a, static_cast<int>(r), start, start + costOf(a.kind, costs_)});
                }
            }
        }
    };
    if (out_.length <= 4 * actionCount_ + 1024) {
        std::vector<std::size_t> first(static_cast<std::size_t>(out_.length) + 1, 0);
        for (const long long start : start_) ++first[static_cast<std::size_t>(start) + 1];
        for (std::size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
        out_.actions.resize(static_cast<std::size_t>(actionCount_));
        forEachAction([&](const TimedAction& a) {
            out_.actions[first[static_cast<std::size_t>(a.start)]++] = a;
        });
    } else {
        out_.actions.reserve(static_cast<std::size_t>(actionCount_));
        forEachAction([&](const TimedAction& a) { out_.actions.push_back(a); });
        std::stable_sort(out_.actions.begin(), out_.actions.end(),
                         [](const TimedAction& a, const TimedAction& b) {
                             return a.start < b.start || (a.start == b.start && a.rank < b.rank);
                         });
    }
    return std::move(out_);
}

// Runs `use` on a Timer of the rows with the narrowest End type that holds every end: no end
// passes the sum of all actions' costs (a longest path visits each action once), at most
// steps × actions per step × the largest cost.
template <class Step>
bool endsFitInt32(const std::vector<std::vector<Step>>& rows, const ActionCosts& costs) {
    long long steps = 0;
    for (const std::vector<Step>& row : rows) steps += static_cast<long long>(row.size());
    const long long perStep = std::is_same_v<Step, ProgramStep> ? 2 : 1;
    const long long largest =
        std::max({costs.forward, costs.backward, costs.inputGrad, costs.weightGrad});
    return largest < 1 || steps * perStep <= std::numeric_limits<std::int32_t>::max() / largest;
}

template <class Step, class Use>
auto timeWith(const std::vector<std::vector<Step>>& rows, const ActionCosts& costs, Use&& use) {
    if (endsFitInt32(rows, costs)) {
        Timer<Step, std::int32_t> timer(rows, costs);
        return use(timer);
    }
    Timer<Step, long long> timer(rows, costs);
    return use(timer);
}

}  // namespace

ProgramTiming timeProgram(const PipelineProgram& program, const ActionCosts& costs) {
    return timeWith(program.ranks, costs, [](auto& timer) { return timer.run(); });
}

namespace detail {

void timeOrder(const std::vector<std::vector<Action>>& order, const ActionCosts& costs,
               OrderStarts& out) {
    if (!endsFitInt32(order, costs)) {
        throw ConfigError(
            "program: too many actions or too large costs to time into 32-bit "
            "starts (at most 2147483647 slots)");
    }
    Timer<Action, std::int32_t> timer(order, costs);
    timer.startsInto(out);
}

}  // namespace detail

}  // namespace pipelens

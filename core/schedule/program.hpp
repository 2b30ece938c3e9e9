#pragma once
// A pipeline schedule as a grid of actions, one row per rank (device) and one column per step:
// what PyTorch's `torch.distributed.pipelining` schedules generate and its schedule CSV holds
// (../shared/INTEROP.md), and what PipeLens's flushing schedule family (GPipe, 1F1B with flush,
// interleaved 1F1B, ZB-H1; SPEC section 2.1) builds. A step of a compute-only program is one
// unit of time (every op costs one step), so a column is a time; `timeProgram` places the same
// per-rank order with other op costs.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pipelens {

// F forward; B full backward; I backward with respect to the input only; W backward with
// respect to the weights only (I + W = B, the zero-bubble split).
enum class ActionKind : std::uint8_t { Forward, Backward, InputGrad, WeightGrad };

struct Action {
    ActionKind kind = ActionKind::Forward;
    int stage = 0;       // global stage (model chunk) index, from 0
    int microbatch = 0;  // from 0

    bool operator==(const Action&) const = default;
};

// One cell of the grid: idle (count 0), one action, or an overlapped forward/backward pair
// (PyTorch's `(a;b)OVERLAP_F_B`, count 2: both run in this step).
struct ProgramStep {
    std::array<Action, 2> actions{};
    int count = 0;

    bool idle() const { return count == 0; }
    bool operator==(const ProgramStep&) const = default;
};

struct PipelineProgram {
    std::vector<std::vector<ProgramStep>> ranks;  // ranks[r][t]; rows may differ in length
    // Communication and sharding actions of an imported "compute + comms" file (SEND_F, RECV_F,
    // SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD): dropped from the grid, counted here.
    long long ignoredActions = 0;
    // True when the steps are a per-rank order only (a file with communication actions): the
    // columns of different ranks are then not aligned in time, and `timeProgram` gives the
    // times.
    bool orderOnly = false;
};

// "0F0", "3I2", "3W2", "1B7"; an overlapped pair "(0F7;7B3)OVERLAP_F_B"; idle "".
std::string actionName(const Action& action);
std::string stepName(const ProgramStep& step);
// stepName appended to `out` (the CSV writer's loop: no string per cell).
void appendStepName(std::string& out, const ProgramStep& step);

struct ProgramSummary {
    int ranks = 0;
    int stages = 0;
    int microbatches = 0;
    long long lengthSteps = 0;    // the longest row with unit costs (timeProgram for orderOnly)
    long long actions = 0;        // F, B, I and W actions (an overlapped pair counts 2)
    double bubbleFraction = 0.0;  // idle rank-steps / (ranks x lengthSteps)
    bool splitBackward = false;   // some stage runs I + W
    std::vector<int> stageRank;   // rank that holds stage s
    // Per stage: the most microbatches whose activations are held at once (from F until the
    // full B, or until W where the backward is split), with unit costs.
    std::vector<int> peakActivations;
};

// Strict checks; throws ConfigError naming rank (row, from 0), step (column, from 0) and cell:
// a stage on two ranks; for every stage and microbatch 0 … M − 1 exactly one F and either one
// B or one I and one W (a missing or repeated microbatch is named); on its rank, B or I after F
// and W after I; no W where a full B ran; across stages (unit-time columns, or the unit-cost
// timing for an orderOnly program), F(m, s) after F(m, s − 1) and B or I(m, s) after B or
// I(m, s + 1), strictly later; two actions in one step only as an overlapped F/B pair.
void validateProgram(const PipelineProgram& program);

// Summary of a valid program (call validateProgram first).
ProgramSummary summarizeProgram(const PipelineProgram& program);

// Slots each action kind takes when a program is timed.
struct ActionCosts {
    int forward = 1;
    int backward = 1;    // a full B
    int inputGrad = 1;   // I
    int weightGrad = 1;  // W
};

struct TimedAction {
    Action action;
    int rank = 0;
    long long start = 0;  // first slot
    long long end = 0;    // one past the last slot
};

struct ProgramTiming {
    std::vector<TimedAction> actions;  // sorted by (start, rank)
    long long length = 0;              // slots until the last action ends
    std::vector<long long> busyPerRank;
    double bubbleFraction = 0.0;       // 1 - busy / (ranks x length)
    std::vector<int> peakActivations;  // per stage, as in ProgramSummary
};

// Each rank runs its actions in its row's order (idle steps dropped; an overlapped pair's two
// actions start together and keep the rank busy for the larger of their costs, and a pair whose
// actions depend on each other is a deadlock); an action starts when its rank is free and its
// dependencies (as in validateProgram) have ended. Throws ConfigError naming the first rank and
// action that can never start (a deadlock). With unit costs the start of every action of a
// valid compute-only program is at most its column.
ProgramTiming timeProgram(const PipelineProgram& program, const ActionCosts& costs = {});

}  // namespace pipelens

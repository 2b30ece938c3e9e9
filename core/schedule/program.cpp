// Names, strict checks and the summary of a pipeline program (program.hpp).
#include "schedule/program.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>

#include "errors.hpp"
#include "schedule/program_check.hpp"

namespace pipelens {

namespace {

char kindLetter(ActionKind kind) {
    switch (kind) {
        case ActionKind::Forward:
            return 'F';
        case ActionKind::Backward:
            return 'B';
        case ActionKind::InputGrad:
            return 'I';
        case ActionKind::WeightGrad:
            return 'W';
    }
    return '?';
}

void appendInt(std::string& out, long long value) {
    std::array<char, 24> buffer{};
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    out.append(buffer.data(), result.ptr);
}

void appendAction(std::string& out, const Action& action) {
    appendInt(out, action.stage);
    out += kindLetter(action.kind);
    appendInt(out, action.microbatch);
}

// Where an action sits in the grid.
struct Place {
    int rank = 0;
    int step = 0;
};

// The four actions a (stage, microbatch) may have, as indices into the list of places (-1: none).
struct KeyActions {
    std::array<int, 4> index{-1, -1, -1, -1};
};

int kindIndex(ActionKind kind) {
    return static_cast<int>(kind);
}

bool isBackward(ActionKind kind) {
    return kind == ActionKind::Backward || kind == ActionKind::InputGrad;
}

class Checker {
  public:
    Checker(const PipelineProgram& program, const detail::ColumnOf& columnOf)
        : program_(program), columnOf_(columnOf) {}

    void run();

  private:
    [[noreturn]] void failAt(int rank, int step, const std::string& message) const;
    std::string placeOf(int index) const;
    std::string nameAt(int index) const;
    void checkCells();
    void checkPlacement();
    void findMissingMicrobatch() const;
    void fillTable();
    void checkPairs();
    void checkCrossStage() const;

    const PipelineProgram& program_;
    const detail::ColumnOf& columnOf_;
    int stages_ = 0;
    int microbatches_ = 0;
    std::vector<Place> places_;    // every action, in row order
    std::vector<Action> actions_;  // parallel to places_
    std::vector<int> stageRank_;
    std::vector<int> stageFirst_;    // index of the stage's first action
    std::vector<KeyActions> table_;  // stage * M + microbatch
};

void Checker::failAt(int rank, int step, const std::string& message) const {
    const int column = columnOf_ ? columnOf_(rank, step) : step;
    const auto& row = program_.ranks[static_cast<std::size_t>(rank)];
    throw ConfigError(detail::placeText(rank, step, column) + ", cell '" +
                      stepName(row[static_cast<std::size_t>(step)]) + "': " + message);
}

std::string Checker::placeOf(int index) const {
    const Place& p = places_[static_cast<std::size_t>(index)];
    const int column = columnOf_ ? columnOf_(p.rank, p.step) : p.step;
    return detail::placeText(p.rank, p.step, column);
}

std::string Checker::nameAt(int index) const {
    return actionName(actions_[static_cast<std::size_t>(index)]);
}

// One pass over the grid: each step holds 0, 1 or an overlapped F/B pair; indices in range.
void Checker::checkCells() {
    if (program_.ranks.empty()) {
        throw ConfigError("the schedule has no ranks: it needs one row per rank");
    }
    std::size_t total = 0;
    for (const auto& row : program_.ranks) {
        total += row.size();
    }
    places_.reserve(total);
    actions_.reserve(total);
    int maxStage = -1;
    int maxMicrobatch = -1;
    for (std::size_t r = 0; r < program_.ranks.size(); ++r) {
        const auto& row = program_.ranks[r];
        const int rank = static_cast<int>(r);
        bool any = false;
        for (std::size_t t = 0; t < row.size(); ++t) {
            const ProgramStep& cell = row[t];
            const int step = static_cast<int>(t);
            if (cell.count < 0 || cell.count > 2) {
                throw ConfigError(detail::placeText(rank, step, step) + ": a step holds " +
                                  std::to_string(cell.count) +
                                  " actions; allowed are 0 (idle), 1 or an overlapped F/B pair");
            }
            for (int k = 0; k < cell.count; ++k) {
                const Action& a = cell.actions[static_cast<std::size_t>(k)];
                if (kindIndex(a.kind) < 0 || kindIndex(a.kind) > 3) {
                    throw ConfigError(detail::placeText(rank, step, step) +
                                      ": unknown action kind " + std::to_string(kindIndex(a.kind)));
                }
                if (a.stage < 0 || a.stage > detail::kMaxScheduleIndex || a.microbatch < 0 ||
                    a.microbatch > detail::kMaxScheduleIndex) {
                    failAt(rank, step,
                           "stage and microbatch must be in 0 … " +
                               std::to_string(detail::kMaxScheduleIndex));
                }
                maxStage = std::max(maxStage, a.stage);
                maxMicrobatch = std::max(maxMicrobatch, a.microbatch);
                places_.push_back({rank, step});
                actions_.push_back(a);
                any = true;
            }
            if (cell.count == 2) {
                const ActionKind k0 = cell.actions[0].kind;
                const ActionKind k1 = cell.actions[1].kind;
                const bool pair = (k0 == ActionKind::Forward && isBackward(k1)) ||
                                  (k1 == ActionKind::Forward && isBackward(k0));
                if (!pair) {
                    failAt(rank, step,
                           "two actions in one step must be an overlapped pair of one forward F "
                           "and one backward B or I");
                }
            }
        }
        if (!any) {
            throw ConfigError("rank " + std::to_string(rank) + " (row " + std::to_string(rank) +
                              ") has no actions: every rank holds at least one stage (an empty "
                              "line, also one at the end of a file, is a rank)");
        }
    }
    stages_ = maxStage + 1;
    microbatches_ = maxMicrobatch + 1;
}

// Each stage on exactly one rank, and stages 0 … S − 1 all present.
void Checker::checkPlacement() {
    stageRank_.assign(static_cast<std::size_t>(stages_), -1);
    stageFirst_.assign(static_cast<std::size_t>(stages_), -1);
    for (std::size_t i = 0; i < actions_.size(); ++i) {
        const auto s = static_cast<std::size_t>(actions_[i].stage);
        if (stageRank_[s] < 0) {
            stageRank_[s] = places_[i].rank;
            stageFirst_[s] = static_cast<int>(i);
        } else if (stageRank_[s] != places_[i].rank) {
            failAt(places_[i].rank, places_[i].step,
                   "stage " + std::to_string(s) + " is on two ranks, rank " +
                       std::to_string(stageRank_[s]) + " (first at " + placeOf(stageFirst_[s]) +
                       ", cell '" + nameAt(stageFirst_[s]) + "') and rank " +
                       std::to_string(places_[i].rank) + ": a stage runs on one rank only");
        }
    }
    for (int s = 0; s < stages_; ++s) {
        if (stageRank_[static_cast<std::size_t>(s)] < 0) {
            throw ConfigError("stage " + std::to_string(s) + " has no actions, though stages 0 … " +
                              std::to_string(stages_ - 1) +
                              " appear: stages are numbered from 0 without gaps");
        }
    }
}

// Called when S x M exceeds the number of actions: some stage lacks some microbatch.
void Checker::findMissingMicrobatch() const {
    std::vector<std::vector<int>> seen(static_cast<std::size_t>(stages_));
    for (const Action& a : actions_) {
        seen[static_cast<std::size_t>(a.stage)].push_back(a.microbatch);
    }
    for (int s = 0; s < stages_; ++s) {
        auto& list = seen[static_cast<std::size_t>(s)];
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
        int expected = 0;
        for (const int m : list) {
            if (m != expected) break;
            ++expected;
        }
        if (expected < microbatches_) {
            throw ConfigError("stage " + std::to_string(s) + " (rank " +
                              std::to_string(stageRank_[static_cast<std::size_t>(s)]) +
                              ") has no microbatch " + std::to_string(expected) +
                              " (microbatches 0 … " + std::to_string(microbatches_ - 1) +
                              " appear elsewhere): every stage runs every microbatch");
        }
    }
}

void Checker::fillTable() {
    table_.assign(static_cast<std::size_t>(stages_) * static_cast<std::size_t>(microbatches_),
                  KeyActions{});
    for (std::size_t i = 0; i < actions_.size(); ++i) {
        const Action& a = actions_[i];
        const std::size_t key =
            static_cast<std::size_t>(a.stage) * static_cast<std::size_t>(microbatches_) +
            static_cast<std::size_t>(a.microbatch);
        int& slot = table_[key].index[static_cast<std::size_t>(kindIndex(a.kind))];
        if (slot >= 0) {
            failAt(places_[i].rank, places_[i].step,
                   "repeats " + actionName(a) + " (first at " + placeOf(slot) +
                       "): every action runs once");
        }
        slot = static_cast<int>(i);
    }
}

// On its rank: B or I after F, W after I, no W where a full B ran, no B beside an I; every
// (stage, microbatch) has its F and its backward.
void Checker::checkPairs() {
    auto stepOf = [&](int index) { return places_[static_cast<std::size_t>(index)].step; };
    for (std::size_t i = 0; i < actions_.size(); ++i) {
        const Action& a = actions_[i];
        const Place& p = places_[i];
        const std::size_t key =
            static_cast<std::size_t>(a.stage) * static_cast<std::size_t>(microbatches_) +
            static_cast<std::size_t>(a.microbatch);
        const KeyActions& k = table_[key];
        const int f = k.index[0];
        const int b = k.index[1];
        const int in = k.index[2];
        const int w = k.index[3];
        Action forward = a;
        forward.kind = ActionKind::Forward;
        if (isBackward(a.kind)) {
            if (f < 0) {
                failAt(p.rank, p.step,
                       "a backward with no forward " + actionName(forward) + " anywhere");
            }
            if (stepOf(f) >= p.step) {
                failAt(p.rank, p.step,
                       "a backward before its forward " + actionName(forward) + " (at " +
                           placeOf(f) + "): B or I runs in a later step than its F");
            }
            if (a.kind == ActionKind::Backward && in >= 0) {
                failAt(p.rank, p.step,
                       "both a full backward B and an input-gradient I (" + nameAt(in) + " at " +
                           placeOf(in) + ") for one stage and microbatch: use B, or I and W");
            }
            if (a.kind == ActionKind::InputGrad && w < 0 && b < 0) {
                Action weight = a;
                weight.kind = ActionKind::WeightGrad;
                failAt(p.rank, p.step,
                       "an input-gradient backward I with no W (" + actionName(weight) +
                           "): a split backward needs both I and W");
            }
        } else if (a.kind == ActionKind::WeightGrad) {
            if (b >= 0) {
                if (stepOf(b) < p.step) {
                    failAt(p.rank, p.step,
                           "a W after a full backward B (" + nameAt(b) + " at " + placeOf(b) +
                               "): in the current spelling the input-gradient backward is I "
                               "(e.g. 2I0), B is the full backward");
                }
                failAt(p.rank, p.step,
                       "a W with a full backward B (" + nameAt(b) + " at " + placeOf(b) +
                           "): W belongs to a split backward, I then W");
            }
            Action input = a;
            input.kind = ActionKind::InputGrad;
            if (in < 0) {
                failAt(p.rank, p.step,
                       "a W with no input-gradient backward " + actionName(input) +
                           ": W runs after its I");
            }
            if (stepOf(in) >= p.step) {
                failAt(p.rank, p.step,
                       "a W before its I (" + nameAt(in) + " at " + placeOf(in) +
                           "): W runs in a later step than its I");
            }
        }
    }
    for (int s = 0; s < stages_; ++s) {
        for (int m = 0; m < microbatches_; ++m) {
            const KeyActions& k =
                table_[static_cast<std::size_t>(s) * static_cast<std::size_t>(microbatches_) +
                       static_cast<std::size_t>(m)];
            if (k.index[0] < 0) {
                throw ConfigError("stage " + std::to_string(s) + " (rank " +
                                  std::to_string(stageRank_[static_cast<std::size_t>(s)]) +
                                  ") has no microbatch " + std::to_string(m) +
                                  " (microbatches 0 … " + std::to_string(microbatches_ - 1) +
                                  " appear elsewhere): every stage runs every microbatch");
            }
            if (k.index[1] < 0 && k.index[2] < 0) {
                const Place& p = places_[static_cast<std::size_t>(k.index[0])];
                const std::string st = std::to_string(s);
                const std::string mb = std::to_string(m);
                failAt(p.rank, p.step,
                       "a forward with no backward: add " + st + "B" + mb + ", or " + st + "I" +
                           mb + " and " + st + "W" + mb);
            }
        }
    }
}

// Unit-time columns: F(m, s) after F(m, s − 1), B or I(m, s) after B or I(m, s + 1).
void Checker::checkCrossStage() const {
    auto backwardOf = [](const KeyActions& k) { return k.index[1] >= 0 ? k.index[1] : k.index[2]; };
    const auto m = static_cast<std::size_t>(microbatches_);
    for (int s = 0; s < stages_; ++s) {
        for (std::size_t mb = 0; mb < m; ++mb) {
            const KeyActions& here = table_[static_cast<std::size_t>(s) * m + mb];
            if (s > 0) {
                const KeyActions& prev = table_[static_cast<std::size_t>(s - 1) * m + mb];
                const Place& p = places_[static_cast<std::size_t>(here.index[0])];
                if (places_[static_cast<std::size_t>(prev.index[0])].step >= p.step) {
                    failAt(p.rank, p.step,
                           "the forward must come strictly after " + nameAt(prev.index[0]) +
                               " of the previous stage (at " + placeOf(prev.index[0]) +
                               "); in a file without communication actions a column is a time "
                               "step");
                }
            }
            if (s + 1 < stages_) {
                const KeyActions& next = table_[static_cast<std::size_t>(s + 1) * m + mb];
                const int mine = backwardOf(here);
                const int theirs = backwardOf(next);
                const Place& p = places_[static_cast<std::size_t>(mine)];
                if (places_[static_cast<std::size_t>(theirs)].step >= p.step) {
                    failAt(p.rank, p.step,
                           "the backward must come strictly after " + nameAt(theirs) +
                               " of the next stage (at " + placeOf(theirs) +
                               "); in a file without communication actions a column is a time "
                               "step");
                }
            }
        }
    }
}

void Checker::run() {
    checkCells();
    checkPlacement();
    const long long keys = static_cast<long long>(stages_) * microbatches_;
    if (keys > static_cast<long long>(actions_.size())) {
        findMissingMicrobatch();
    }
    fillTable();
    checkPairs();
    if (!program_.orderOnly) {
        checkCrossStage();
        return;
    }
    try {
        (void)timeProgram(program_);
    } catch (const ConfigError& e) {
        throw ConfigError(std::string("the per-rank order of this compute + comms schedule "
                                      "cannot run: ") +
                          e.what());
    }
}

}  // namespace

namespace detail {

std::string placeText(int rank, int step, int column) {
    return "rank " + std::to_string(rank) + " (row " + std::to_string(rank) + "), step " +
           std::to_string(step) + " (column " + std::to_string(column) + ")";
}

void validateProgramAt(const PipelineProgram& program, const ColumnOf& columnOf) {
    Checker(program, columnOf).run();
}

}  // namespace detail

std::string actionName(const Action& action) {
    std::string out;
    appendAction(out, action);
    return out;
}

void appendStepName(std::string& out, const ProgramStep& step) {
    if (step.count == 1) {
        appendAction(out, step.actions[0]);
    } else if (step.count >= 2) {
        out += '(';
        appendAction(out, step.actions[0]);
        out += ';';
        appendAction(out, step.actions[1]);
        out += ")OVERLAP_F_B";
    }
}

std::string stepName(const ProgramStep& step) {
    std::string out;
    appendStepName(out, step);
    return out;
}

void validateProgram(const PipelineProgram& program) {
    detail::validateProgramAt(program, {});
}

ProgramSummary summarizeProgram(const PipelineProgram& program) {
    ProgramSummary summary;
    summary.ranks = static_cast<int>(program.ranks.size());
    int maxStage = -1;
    int maxMicrobatch = -1;
    long long busySteps = 0;
    std::size_t longest = 0;
    for (const auto& row : program.ranks) {
        longest = std::max(longest, row.size());
        for (const ProgramStep& cell : row) {
            busySteps += cell.count > 0 ? 1 : 0;
            for (int k = 0; k < cell.count && k < 2; ++k) {
                const Action& a = cell.actions[static_cast<std::size_t>(k)];
                maxStage = std::max(maxStage, a.stage);
                maxMicrobatch = std::max(maxMicrobatch, a.microbatch);
                summary.splitBackward = summary.splitBackward || a.kind == ActionKind::InputGrad;
                ++summary.actions;
            }
        }
    }
    summary.stages = maxStage + 1;
    summary.microbatches = maxMicrobatch + 1;
    summary.stageRank.assign(static_cast<std::size_t>(summary.stages), -1);
    for (std::size_t r = 0; r < program.ranks.size(); ++r) {
        for (const ProgramStep& cell : program.ranks[r]) {
            for (int k = 0; k < cell.count && k < 2; ++k) {
                summary.stageRank[static_cast<std::size_t>(
                    cell.actions[static_cast<std::size_t>(k)].stage)] = static_cast<int>(r);
            }
        }
    }
    if (program.orderOnly) {
        const ProgramTiming timing = timeProgram(program);
        summary.lengthSteps = timing.length;
        summary.bubbleFraction = timing.bubbleFraction;
        summary.peakActivations = timing.peakActivations;
        return summary;
    }
    summary.lengthSteps = static_cast<long long>(longest);
    const double area = static_cast<double>(summary.ranks) * static_cast<double>(longest);
    summary.bubbleFraction = area > 0 ? (area - static_cast<double>(busySteps)) / area : 0.0;
    // Activations held from the F's column through the releasing column (the full B, or the W
    // of a split backward), both included. A stage's actions are all on one rank, so walking
    // each row in order sees each stage's events in time order.
    std::vector<int> held(static_cast<std::size_t>(summary.stages), 0);
    summary.peakActivations.assign(static_cast<std::size_t>(summary.stages), 0);
    for (const auto& row : program.ranks) {
        for (const ProgramStep& cell : row) {
            for (int k = 0; k < cell.count && k < 2; ++k) {
                const Action& a = cell.actions[static_cast<std::size_t>(k)];
                if (a.kind == ActionKind::Forward) {
                    const auto s = static_cast<std::size_t>(a.stage);
                    ++held[s];
                    summary.peakActivations[s] = std::max(summary.peakActivations[s], held[s]);
                }
            }
            for (int k = 0; k < cell.count && k < 2; ++k) {
                const Action& a = cell.actions[static_cast<std::size_t>(k)];
                if (a.kind == ActionKind::Backward || a.kind == ActionKind::WeightGrad) {
                    --held[static_cast<std::size_t>(a.stage)];
                }
            }
        }
    }
    return summary;
}

}  // namespace pipelens

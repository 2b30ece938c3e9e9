#include "schedule_program_command.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "errors.hpp"
#include "experiment/config/field_limits.hpp"
#include "limits.hpp"
#include "schedule/flush_family.hpp"
#include "schedule/pytorch_csv.hpp"
#include "util/file_target.hpp"

namespace pipelens {

namespace {

using Args = cmdline::ParsedArgs;

// The costs of --forward-slots, --backward-slots (a full B, or I for zb-h1) and --weight-slots.
ActionCosts costsOf(const Args& a) {
    ActionCosts c;
    c.forward = a.integer("forward-slots", 1, limits::kOpSlots.lo, limits::kOpSlots.hi);
    c.backward = a.integer("backward-slots", 1, limits::kOpSlots.lo, limits::kOpSlots.hi);
    c.inputGrad = c.backward;
    c.weightGrad = a.integer("weight-slots", 1, limits::kOpSlots.lo, limits::kOpSlots.hi);
    return c;
}

bool unitCosts(const ActionCosts& c) {
    return c.forward == 1 && c.backward == 1 && c.inputGrad == 1 && c.weightGrad == 1;
}

// A cell as the drawing shows it: "." idle, "0F3", an overlapped pair "0F3+3B1".
std::string artCell(const ProgramStep& step) {
    if (step.idle()) return ".";
    if (step.count == 1) return actionName(step.actions[0]);
    return actionName(step.actions[0]) + "+" + actionName(step.actions[1]);
}

// Rank r's row as text: one column per step, each op its cell padded to the widest.
std::string programArt(const PipelineProgram& program) {
    size_t width = 1;
    for (const auto& row : program.ranks) {
        for (const ProgramStep& s : row) width = std::max(width, artCell(s).size());
    }
    std::string out;
    for (size_t r = 0; r < program.ranks.size(); ++r) {
        out += "rank " + std::to_string(r) + " |";
        for (const ProgramStep& s : program.ranks[r]) {
            std::string cell = artCell(s);
            cell.resize(width, ' ');
            out += cell + '|';
        }
        out += '\n';
    }
    return out;
}

void printSummary(const ProgramSummary& s, const std::optional<ProgramTiming>& timed,
                  std::ostream& out) {
    out << "ranks: " << s.ranks << "\nstages: " << s.stages << "\nmicrobatches: " << s.microbatches
        << "\nactions: " << s.actions << "\nlength_slots: " << s.lengthSteps
        << "\nbubble_fraction: " << s.bubbleFraction
        << "\nsplit_backward: " << (s.splitBackward ? "yes" : "no") << "\nstage_rank:";
    for (int r : s.stageRank) out << ' ' << r;
    out << "\npeak_activations:";
    for (int v : s.peakActivations) out << ' ' << v;
    out << '\n';
    if (timed) {
        out << "with_costs_length_slots: " << timed->length
            << "\nwith_costs_bubble_fraction: " << timed->bubbleFraction << '\n';
    }
}

}  // namespace

bool isProgramSchedule(const Args& a) {
    return a.has("import") || parseEnum(kFlushKinds, a.get("kind")).has_value();
}

namespace {

nlohmann::json summaryObject(const ProgramSummary& s, const PipelineProgram& program) {
    nlohmann::json j;
    j["ranks"] = s.ranks;
    j["stages"] = s.stages;
    j["microbatches"] = s.microbatches;
    j["length_slots"] = s.lengthSteps;
    j["bubble_fraction"] = s.bubbleFraction;
    j["actions"] = s.actions;
    j["split_backward"] = s.splitBackward;
    j["order_only"] = program.orderOnly;
    j["ignored_actions"] = program.ignoredActions;
    j["stage_rank"] = s.stageRank;
    std::vector<std::vector<int>> rankStages(static_cast<size_t>(s.ranks));
    for (size_t stage = 0; stage < s.stageRank.size(); ++stage) {
        rankStages[static_cast<size_t>(s.stageRank[stage])].push_back(static_cast<int>(stage));
    }
    j["rank_stages"] = rankStages;
    j["peak_activations"] = s.peakActivations;
    return j;
}

}  // namespace

std::string programSummaryJson(const ProgramSummary& s, const PipelineProgram& program) {
    return summaryObject(s, program).dump(2) + "\n";
}

void exportProgramCsv(const PipelineProgram& program, const std::string& path) {
    const std::string csv = pytorchScheduleCsv(program);
    replaceFileAtomically(path, csv.data(), csv.size());
}

int runProgramSchedule(const Args& a, std::ostream& out) {
    PipelineProgram program;
    std::optional<ProgramTiming> timed;
    const ActionCosts costs = costsOf(a);
    if (a.has("import")) {
        for (const char* other : {"kind", "stages", "microbatches", "virtual-stages"}) {
            if (a.has(other)) {
                throw ConfigError(std::string("--") + other +
                                  " cannot be given with --import: the file defines the schedule");
            }
        }
        program = readPytorchScheduleCsv(a.get("import"));
    } else {
        if (!a.has("stages")) throw ConfigError("--stages is missing: an integer >= 1");
        if (!a.has("microbatches")) throw ConfigError("--microbatches is missing: an integer >= 1");
        FlushScheduleParams p;
        p.kind = *parseEnum(kFlushKinds, a.get("kind"));
        p.devices = a.integer("stages", 0, limits::kStages.lo, limits::kStages.hi);
        p.microbatches = a.integer("microbatches", 0, 1, 100'000'000);
        p.virtualStages = a.integer("virtual-stages", p.kind == FlushKind::Interleaved ? 2 : 1, 1,
                                    limits::kStages.hi);
        program = buildFlushProgram(p);  // validates p
    }
    if (!unitCosts(costs)) {
        if (!a.has("summary") && !a.has("json")) {
            throw ConfigError(
                "op costs above 1 (--forward-slots, --backward-slots, --weight-slots) change the "
                "timing only: give --summary or --json; the CSV and --art show the unit-cost grid");
        }
        timed = timeProgram(program, costs);
    }
    if (a.has("export-csv")) exportProgramCsv(program, a.get("export-csv"));
    const ProgramSummary summary = summarizeProgram(program);
    if (a.has("json")) {
        nlohmann::json j = summaryObject(summary, program);
        if (timed) {
            j["with_costs"] = {{"forward", costs.forward},
                               {"backward", costs.backward},
                               {"weight", costs.weightGrad},
                               {"length_slots", timed->length},
                               {"bubble_fraction", timed->bubbleFraction}};
        }
        out << j.dump(2) << '\n';
        return 0;
    }
    if (a.has("art")) {
        out << programArt(program);
    } else if (!a.has("summary") && !a.has("export-csv")) {
        out << pytorchScheduleCsv(program);
    }
    if (a.has("summary")) printSummary(summary, timed, out);
    return 0;
}

}  // namespace pipelens

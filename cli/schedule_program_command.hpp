#pragma once
// `pipelens-cli schedule` for programs of actions (core/schedule/program.hpp): the flushing
// family (--kind gpipe|1f1b|interleaved|zb-h1), a PyTorch schedule CSV (--import FILE.csv),
// and --export-csv of any kind (the slot timelines of pd, fill-drain and localsgd too).
#include <ostream>
#include <string>

#include "cmdline/args.hpp"
#include "schedule/program.hpp"

namespace pipelens {

// Whether the command names a program: a family kind or --import.
bool isProgramSchedule(const cmdline::ParsedArgs& args);

// Runs it: prints the program's PyTorch CSV, its text drawing (--art), its summary (--summary,
// or --json for one JSON object), and writes --export-csv FILE. Throws ConfigError / IoError.
int runProgramSchedule(const cmdline::ParsedArgs& args, std::ostream& out);

// Writes `program` to `path` atomically in PyTorch's schedule CSV.
void exportProgramCsv(const PipelineProgram& program, const std::string& path);

// The summary as `schedule --import F --json` prints it: ranks, stages, microbatches,
// length_slots, bubble_fraction, actions, split_backward, order_only, ignored_actions,
// stage_rank (stage -> rank), rank_stages (rank -> its stages), peak_activations (per stage).
std::string programSummaryJson(const ProgramSummary& summary, const PipelineProgram& program);

}  // namespace pipelens

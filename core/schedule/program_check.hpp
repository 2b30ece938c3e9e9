#pragma once
// Internal to the schedule program's readers: the index limit and the strict checks with
// positions named as a file's columns (an imported "compute + comms" file drops its
// communication cells, so a grid step is not the file's column there).
#include <functional>
#include <string>

#include "schedule/program.hpp"

namespace pipelens::detail {

// The largest stage or microbatch index a schedule may name (a file naming more is refused
// before anything is sized by it).
inline constexpr int kMaxScheduleIndex = 1000000;

// Maps (rank, step) of the grid to the file's column; empty: the step is the column.
using ColumnOf = std::function<int(int rank, int step)>;

// "rank 1 (row 1), step 3 (column 3)".
std::string placeText(int rank, int step, int column);

// validateProgram, naming `columnOf(rank, step)` as the column.
void validateProgramAt(const PipelineProgram& program, const ColumnOf& columnOf);

}  // namespace pipelens::detail

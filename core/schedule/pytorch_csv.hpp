#pragma once
// PyTorch's pipeline schedule CSV (`torch.distributed.pipelining`, torchtitan;
// ../shared/INTEROP.md), both ways. Row r is rank r, column t its step t, a cell one action
// (`0F0`, `1B3`, `2I0`, `2W0`, `(0F7;7B3)OVERLAP_F_B`), empty = idle.
//
// Communication and sharding cells (SEND_F, RECV_F, SEND_B, RECV_B with a microbatch;
// UNSHARD, RESHARD, REDUCE_GRAD without) are accepted and dropped: they are counted in
// `ignoredActions`, and a dropped cell leaves no idle step behind, so the rows of such a file are
// per-rank orders (`orderOnly`), timed by `timeProgram`. Messages name the file's own column.
#include <memory>
#include <string>
#include <string_view>

#include "schedule/program.hpp"

namespace pipelens {

// Parses and validates (validateProgram) a schedule CSV. Accepts `\n` and `\r\n`, a trailing
// newline, a UTF-8 byte order mark, blanks around cells. Throws ConfigError naming the file,
// rank (row, from 0), step (column, from 0), the cell and what is allowed; the older spellings
// (`BW` for the full backward, `B` for the input gradient followed by a `W`) are refused with
// the current spelling named.
PipelineProgram parsePytorchScheduleCsv(std::string_view text, const std::string& fileName);

// Reads the file (a FIFO, a folder or a device is refused; the size is capped), then parses and
// validates it.
PipelineProgram readPytorchScheduleCsv(const std::string& path);

// The same, shared: a file whose text is byte for byte one read before (the last 4 files, up to
// 64 MiB of text) gives back that read's program without parsing or validating it again. A
// config names its file once, but it is read at every plan (the app plans at every edit), and
// the schedule's cached step timings (program_schedules.cpp) are found by the program's address.
std::shared_ptr<const PipelineProgram> readPytorchScheduleCsvShared(const std::string& path);

// Writes the format, one line per rank ending in `\n`, one cell per step (a row keeps its
// trailing idle steps), so that parsePytorchScheduleCsv gives back the same program. An
// orderOnly program is written as its unit-cost timing (timeProgram): each action at its start
// step, so that the columns are times again (the dropped communication actions stay dropped).
std::string pytorchScheduleCsv(const PipelineProgram& program);

}  // namespace pipelens

#pragma once
// `pipelens-cli sweep` as one process of an MPI job (built with PIPELENS_MPI; docs/mpi.md).
#include <functional>
#include <ostream>

#include "sweep_command.hpp"

namespace pipelens {

// Every process of the job calls it. `parse` (the command line) runs on rank 0 only, which
// alone prints and writes the folder; the other ranks compute and print nothing. Returns the
// exit code; rank 0 lets the sweep's errors propagate (the CLI prints them), other ranks
// return 1 when the sweep failed.
int runSweepCommandOverMpi(const std::function<SweepCommand()>& parse, std::ostream& out,
                           std::ostream& err);

}  // namespace pipelens

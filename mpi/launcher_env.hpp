#pragma once
// Whether an MPI launcher started this process, from its environment alone: no MPI library is
// needed to ask, so pipelens-cli can decide before loading one (app/cli_main.cpp).

namespace pipelens {

// The number of processes a launcher started this job with, read from its environment
// (Open MPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_SIZE, or PMI_SIZE); 1 when not launched by one.
int launcherWorldSize();

}  // namespace pipelens

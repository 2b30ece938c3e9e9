// pipelens-cli-mpi: pipelens-cli with the MPI sweep (docs/mpi.md). pipelens-cli execs it for a
// `sweep` started by an MPI launcher, so that only such runs load Open MPI (about 12 ms of CPU
// per process); the commands and their output are pipelens-cli's.
#include <iostream>

#include "cli.hpp"

int main(int argc, char** argv) {
    return pipelens::runCli(argc, argv, std::cout, std::cerr);
}

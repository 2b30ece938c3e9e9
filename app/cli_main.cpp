// pipelens-cli: the engine without a window. All commands live in cli/; `reproduce` (which
// draws with the app's charts) in ui/figures, linked only in UI builds.
#include <malloc.h>

#include <iostream>

#include "cli.hpp"
#ifdef PIPELENS_HAVE_FIGURES
#include "reproduce_command.hpp"
#endif

int main(int argc, char** argv) {
    // Serve and keep blocks under 64 MiB in the heap rather than mapping and unmapping each one:
    // a run allocates and frees many buffers of a few MiB (X, timelines, result tables), and the
    // first touch of every freshly mapped page cost about a tenth of a small run's CPU time.
    // Larger blocks (a big X) are still mapped and returned to the system when freed.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    std::vector<pipelens::CliCommand> extra;
#ifdef PIPELENS_HAVE_FIGURES
    extra.push_back({"reproduce", pipelens::ui::runReproduceCommand});
#endif
    return pipelens::runCli(argc, argv, std::cout, std::cerr, extra);
}

// pipelens-cli: the engine without a window. All commands live in cli/; `reproduce`, `study` and
// `animate` (which draw with the app's charts, UI builds only) run in the sibling binary
// pipelens-reproduce and a `sweep` started by mpirun in pipelens-cli-mpi, so that no other
// command loads Qt or Open MPI.
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#ifdef PIPELENS_HAVE_MPI
#include "launcher_env.hpp"
#endif

namespace {

#if defined(PIPELENS_HAVE_MPI) || defined(PIPELENS_HAVE_FIGURES)
// Replaces this process with the binary `name` in the same folder, with the same arguments:
// its output and exit code are the command's.
int execSibling(const char* name, char** argv, std::ostream& err) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string helper = (self.parent_path() / name).string();
    std::cout.flush();
    err.flush();
    execv(helper.c_str(), argv);
    err << "pipelens-cli: cannot start " << helper << ": " << std::strerror(errno) << '\n';
    return 2;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    // Serve and keep blocks under 64 MiB in the heap rather than mapping and unmapping each one:
    // a run allocates and frees many buffers of a few MiB (X, timelines, result tables), and the
    // first touch of every freshly mapped page cost about a tenth of a small run's CPU time.
    // Larger blocks (a big X) are still mapped and returned to the system when freed.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#ifdef PIPELENS_HAVE_MPI
    if (argc > 1 && std::string(argv[1]) == "sweep" && pipelens::launcherWorldSize() > 1) {
        return execSibling("pipelens-cli-mpi", argv, std::cerr);
    }
#endif
    std::vector<pipelens::CliCommand> extra;
#ifdef PIPELENS_HAVE_FIGURES
    // `run --figures` draws with the app's charts: the same run, in the binary that has them.
    if (argc > 1 && std::string(argv[1]) == "run") {
        for (int i = 2; i < argc; ++i) {
            if (std::string(argv[i]) == "--figures") {
                return execSibling("pipelens-reproduce", argv, std::cerr);
            }
        }
    }
    extra.push_back({"reproduce", [](int, char** args, std::ostream&, std::ostream& err) {
                         return execSibling("pipelens-reproduce", args, err);
                     }});
    extra.push_back({"animate", [](int, char** args, std::ostream&, std::ostream& err) {
                         return execSibling("pipelens-reproduce", args, err);
                     }});
    extra.push_back({"study", [](int, char** args, std::ostream&, std::ostream& err) {
                         return execSibling("pipelens-reproduce", args, err);
                     }});
#endif
    return pipelens::runCli(argc, argv, std::cout, std::cerr, extra);
}

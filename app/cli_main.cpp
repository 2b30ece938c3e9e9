// pipelens-cli: the engine without a window. All commands live in cli/; `reproduce` (which
// draws with the app's charts, ui/figures, UI builds only) runs in the sibling binary
// pipelens-reproduce, so that no other command loads Qt.
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli.hpp"

namespace {

#ifdef PIPELENS_HAVE_FIGURES
// Replaces this process with pipelens-reproduce (same folder, same arguments): its output and
// exit code are the command's.
int execReproduce(int, char** argv, std::ostream& out, std::ostream& err) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string helper = (self.parent_path() / "pipelens-reproduce").string();
    out.flush();
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
    std::vector<pipelens::CliCommand> extra;
#ifdef PIPELENS_HAVE_FIGURES
    extra.push_back({"reproduce", execReproduce});
#endif
    return pipelens::runCli(argc, argv, std::cout, std::cerr, extra);
}

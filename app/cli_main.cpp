// pipelens-cli: the engine without a window. All commands live in cli/; `reproduce` (which
// draws with the app's charts) in ui/figures, linked only in UI builds.
#include <iostream>

#include "cli.hpp"
#ifdef PIPELENS_HAVE_FIGURES
#include "reproduce_command.hpp"
#endif

int main(int argc, char** argv) {
    std::vector<pipelens::CliCommand> extra;
#ifdef PIPELENS_HAVE_FIGURES
    extra.push_back({"reproduce", pipelens::ui::runReproduceCommand});
#endif
    return pipelens::runCli(argc, argv, std::cout, std::cerr, extra);
}

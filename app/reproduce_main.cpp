// pipelens-reproduce: `pipelens-cli reproduce` in a binary of its own. reproduce draws with Qt
// Charts; kept out of pipelens-cli, every other command starts without loading Qt's GUI
// libraries (about 40 ms of CPU per process). pipelens-cli hands `reproduce` here with exec.
#include <iostream>

#include "cli.hpp"
#include "reproduce_command.hpp"

int main(int argc, char** argv) {
    return pipelens::runCli(argc, argv, std::cout, std::cerr,
                            {{"reproduce", pipelens::ui::runReproduceCommand}});
}

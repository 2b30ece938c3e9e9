// pipelens-reproduce: the pipelens-cli commands that draw with the app's charts, in a binary of
// their own (`reproduce`, `animate`, `study` and `run --figures`); kept out of pipelens-cli, every
// other command starts without loading Qt's GUI libraries (about 40 ms of CPU per process).
// pipelens-cli hands them here with exec.
#include <iostream>

#include "animation/animate_command.hpp"
#include "cli.hpp"
#include "reproduce_command.hpp"
#include "run_figures.hpp"
#include "study_command.hpp"

int main(int argc, char** argv) {
    const auto figures = [](const pipelens::ExperimentResult& result, double seconds,
                            const std::filesystem::path& folder) {
        pipelens::ui::writeRunFigures(result, seconds, folder);
    };
    return pipelens::runCli(argc, argv, std::cout, std::cerr,
                            {{"reproduce", pipelens::ui::runReproduceCommand},
                             {"animate", pipelens::ui::runAnimateCommand},
                             {"study", pipelens::ui::runStudyCommand}},
                            figures);
}

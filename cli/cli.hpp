#pragma once
#include <exception>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace pipelens {

// A command that lives outside this library (e.g. `reproduce`, which draws with the desktop
// app's charts and so exists only in UI builds). `run` gets the full argv; the exceptions it
// throws are reported like the built-in commands' (ConfigError: exit 1, IoError: exit 2).
struct CliCommand {
    std::string name;
    std::function<int(int argc, char** argv, std::ostream& out, std::ostream& err)> run;
};

struct ExperimentResult;

// Draws a finished run's figures into `folder` (the temporary results folder, before it is
// swapped into place): `run --figures`, in UI builds only (pipelens-reproduce supplies it).
using RunFigureWriter = std::function<void(const ExperimentResult& result, double seconds,
                                           const std::filesystem::path& folder)>;

// Runs one pipelens-cli command. Returns the process exit code: 0 on success, 1 for bad input
// (with a one-line reason on `err`), 2 for a failed run. Without `figures`, `run --figures` is
// refused.
int runCli(int argc, char** argv, std::ostream& out, std::ostream& err,
           const std::vector<CliCommand>& extra = {}, const RunFigureWriter& figures = {});

// Prints the one-line reason a command failed with `error` and returns the exit code for it.
int reportCliError(const std::exception_ptr& error, std::ostream& err);

}  // namespace pipelens

#pragma once
#include <exception>
#include <ostream>

namespace pipelens {

// Runs one pipelens-cli command. Returns the process exit code: 0 on success, 1 for bad input
// (with a one-line reason on `err`), 2 for a failed run.
int runCli(int argc, char** argv, std::ostream& out, std::ostream& err);

// Prints the one-line reason a command failed with `error` and returns the exit code for it.
int reportCliError(const std::exception_ptr& error, std::ostream& err);

}  // namespace pipelens

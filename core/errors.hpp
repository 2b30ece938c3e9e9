#pragma once
// Typed errors of the engine. Each message names the offending field, its value and what is
// allowed, so the CLI and the UI can show it to a person unchanged.
#include <stdexcept>
#include <string>

namespace pipelens {

// A configuration value is out of range, missing or unknown.
class ConfigError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A data file or data set is missing, malformed or inconsistent.
class DataError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// An input asks for more memory (or time) than this machine can give; the message says how much.
class ResourceError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A run or a write stopped on request (Ctrl-C, SIGTERM, a cancel flag); nothing half-written is
// left behind.
class Interrupted : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Writing results failed (disk, permissions).
class IoError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

}  // namespace pipelens

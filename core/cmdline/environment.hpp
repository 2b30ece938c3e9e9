#pragma once
// The PIPELENS_* environment variables: one table of their names and rules. Every reader takes
// its value through checkedEnvironment(), which refuses a bad value with a ConfigError naming the
// variable, the value (escaped) and what is allowed, the way a bad config value is refused.
// pipelens-cli and the app call checkEnvironment() at start-up, so a typo fails at once rather
// than mid-run. Unset or empty means the default.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipelens {

struct EnvironmentVariable {
    const char* name;
    const char*
        allowed;  // for messages and docs: "a number of bytes, optionally with K, M, G or T"
};

// Throws ConfigError for the first variable with a bad value.
void checkEnvironment();

// The variable's value if set and not empty, after its rule's check (ConfigError if bad).
std::optional<std::string> checkedEnvironment(const char* name);

// PIPELENS_MEMORY_LIMIT in bytes, or nothing when unset; 99999999T is refused, not "no limit".
std::optional<std::uint64_t> environmentMemoryLimit();

// A non-negative number variable (PIPELENS_AUTO_*), or `def` when unset.
double environmentNumber(const char* name, double def);

}  // namespace pipelens

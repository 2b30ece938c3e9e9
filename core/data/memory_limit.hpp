#pragma once
// How much memory PipeLens lets itself use, and the check made before every large allocation, so
// that a small input asking for a huge matrix gets a message saying how much it needs instead of
// an allocation failure (or a machine driven into swap).
#include <cstdint>
#include <string>

namespace pipelens {

// The smallest of: physical memory, the cgroup (container) limit, RLIMIT_AS / RLIMIT_DATA, and
// PIPELENS_MEMORY_LIMIT (bytes, or with a K/M/G/T suffix) when set. Read on every call.
std::uint64_t memoryLimitBytes();

// "1.5 GiB", "800 MiB", "512 bytes".
std::string formatBytes(std::uint64_t bytes);

// Throws ResourceError "`what` needs about N GiB of memory, more than the M GiB available
// (hint)" when `bytes` exceeds memoryLimitBytes().
void requireMemory(std::uint64_t bytes, const std::string& what, const std::string& hint = "");

// a * b * c in bytes, saturating at UINT64_MAX instead of wrapping.
std::uint64_t bytesFor(std::uint64_t a, std::uint64_t b, std::uint64_t c = 1);

}  // namespace pipelens

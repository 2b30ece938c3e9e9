#include "data/memory_limit.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string_view>

#include "cmdline/environment.hpp"
#include "errors.hpp"

namespace pipelens {
namespace {

constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();

std::uint64_t physicalMemory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0) return kNoLimit;
    return bytesFor(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(pageSize));
}

// cgroup v2 memory.max of this process's group ("max" means none).
std::uint64_t cgroupLimit() {
    std::ifstream in("/sys/fs/cgroup/memory.max");
    std::string text;
    if (!(in >> text) || text == "max") return kNoLimit;
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() ? value : kNoLimit;
}

std::uint64_t rlimit(int resource) {
    struct rlimit lim {};
    if (::getrlimit(resource, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return kNoLimit;
    return static_cast<std::uint64_t>(lim.rlim_cur);
}

// PIPELENS_MEMORY_LIMIT: "4000000000", "512M", "8G" (its rule: cmdline/environment.cpp).
std::uint64_t userLimit() {
    return environmentMemoryLimit().value_or(kNoLimit);
}

}  // namespace

std::uint64_t bytesFor(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t ab = 0;
    std::uint64_t abc = 0;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return kNoLimit;
    return abc;
}

std::uint64_t memoryLimitBytes() {
    return std::min(
        {physicalMemory(), cgroupLimit(), rlimit(RLIMIT_AS), rlimit(RLIMIT_DATA), userLimit()});
}

std::string formatBytes(std::uint64_t bytes) {
    if (bytes == kNoLimit) return "more than 16 EiB";
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " bytes";
    double value = static_cast<double>(bytes);
    int unit = -1;
    while (value >= 1024.0 && unit < 5) {
        value /= 1024.0;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return text;
}

void requireMemory(std::uint64_t bytes, const std::string& what, const std::string& hint) {
    const std::uint64_t limit = memoryLimitBytes();
    if (bytes <= limit) return;
    throw ResourceError(what + " needs about " + formatBytes(bytes) + " of memory, more than the " +
                        formatBytes(limit) + " available" +
                        (hint.empty() ? "" : " (" + hint + ")"));
}

}  // namespace pipelens

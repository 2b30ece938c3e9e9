#include "cmdline/environment.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "cmdline/args.hpp"
#include "errors.hpp"

namespace pipelens {
namespace {

// PIPELENS_MEMORY_LIMIT's form: digits, then K, M, G or T (either case) or nothing; no overflow.
std::optional<std::uint64_t> parseBytes(std::string_view text) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
    int shift = 0;
    if (suffix == "K" || suffix == "k")
        shift = 10;
    else if (suffix == "M" || suffix == "m")
        shift = 20;
    else if (suffix == "G" || suffix == "g")
        shift = 30;
    else if (suffix == "T" || suffix == "t")
        shift = 40;
    else if (!suffix.empty())
        return std::nullopt;
    if (value == 0 || value > (std::numeric_limits<std::uint64_t>::max() >> shift))
        return std::nullopt;
    return value << shift;
}

bool nonNegativeNumber(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    return end != text.c_str() && *end == '\0' && std::isfinite(v) && v >= 0.0;
}

bool millisecondsUpToADay(const std::string& text) {
    if (text.empty() || text.size() > 9) return false;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
    }
    return std::stol(text) <= 86'400'000;
}

bool oneOf(const std::string& text, std::initializer_list<const char*> allowed) {
    for (const char* a : allowed) {
        if (text == a) return true;
    }
    return false;
}

bool printable(const std::string& text) {
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) return false;
    }
    return true;
}

struct Rule {
    EnvironmentVariable variable;
    bool (*valid)(const std::string&);
};

const std::vector<Rule>& rules() {
    static const std::vector<Rule> r{
        {{"PIPELENS_MEMORY_LIMIT",
          "a number of bytes from 1 to 16 EiB, optionally followed by K, M, G or T"},
         [](const std::string& t) { return parseBytes(t).has_value(); }},
        {{"PIPELENS_PROGRESS_AFTER_MS", "an integer number of milliseconds from 0 to 86400000"},
         millisecondsUpToADay},
        {{"PIPELENS_AUTO_OPENCL_MIN_WORK", "a number >= 0"}, nonNegativeNumber},
        {{"PIPELENS_AUTO_LM_MIN_FLOPS", "a number >= 0"}, nonNegativeNumber},
        {{"PIPELENS_CL_PROFILE", "0 or 1"},
         [](const std::string& t) {
             return oneOf(t, {"0", "1"});
         }},
        {{"PIPELENS_CL_STAGE_QUEUES", "0 or 1"},
         [](const std::string& t) {
             return oneOf(t, {"0", "1"});
         }},
        {{"PIPELENS_CLBLAST_TUNING", "one of on, off, 1, 0"},
         [](const std::string& t) {
             return oneOf(t, {"on", "off", "1", "0"});
         }},
        {{"PIPELENS_LM_KERNELS", "one of auto, portable"},
         [](const std::string& t) {
             return oneOf(t, {"auto", "portable"});
         }},
        {{"PIPELENS_CACHE_DIR", "a folder path without control characters"}, printable},
    };
    return r;
}

const Rule& ruleFor(const char* name) {
    for (const Rule& r : rules()) {
        if (std::strcmp(r.variable.name, name) == 0) return r;
    }
    throw std::logic_error(std::string("no rule for the environment variable ") + name);
}

}  // namespace

std::optional<std::string> checkedEnvironment(const char* name) {
    const Rule& rule = ruleFor(name);
    const char* env = std::getenv(name);
    if (env == nullptr || *env == '\0') return std::nullopt;
    const std::string value(env);
    if (!rule.valid(value)) {
        throw ConfigError(std::string(name) + " = \"" + cmdline::shownValue(value) +
                          "\" is not allowed: " + rule.variable.allowed +
                          " (an environment variable; unset it for the default)");
    }
    return value;
}

void checkEnvironment() {
    for (const Rule& r : rules()) (void)checkedEnvironment(r.variable.name);
}

std::optional<std::uint64_t> environmentMemoryLimit() {
    const auto text = checkedEnvironment("PIPELENS_MEMORY_LIMIT");
    if (!text) return std::nullopt;
    return parseBytes(*text);
}

double environmentNumber(const char* name, double def) {
    const auto text = checkedEnvironment(name);
    return text ? std::strtod(text->c_str(), nullptr) : def;
}

}  // namespace pipelens

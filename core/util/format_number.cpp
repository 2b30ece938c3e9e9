#include "util/format_number.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace pipelens {

void appendNumber(std::string& out, double value, int significant) {
    if (std::isnan(value)) {
        out += "nan";
        return;
    }
    if (std::isinf(value)) {
        out += value > 0 ? "inf" : "-inf";
        return;
    }
    std::array<char, 40> buffer{};  // %.17g of a double needs at most 24 characters
    char* const first = buffer.data();
    char* const last = first + buffer.size();
    const auto result =
        significant > 0 ? std::to_chars(first, last, value, std::chars_format::general, significant)
                        : std::to_chars(first, last, value);
    out.append(first, result.ec == std::errc{} ? result.ptr : first);
}

std::string formatDuration(double seconds) {
    const long long s = std::llround(std::max(0.0, seconds));
    std::string out;
    if (s >= 3600) out += std::to_string(s / 3600) + "h";
    if (s >= 60) out += std::to_string((s % 3600) / 60) + "m";
    out += std::to_string(s % 60) + "s";
    return out;
}

}  // namespace pipelens

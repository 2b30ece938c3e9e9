#include "util/format_number.hpp"

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
    const auto result = significant > 0
                            ? std::to_chars(first, last, value, std::chars_format::general,
                                            significant)
                            : std::to_chars(first, last, value);
    out.append(first, result.ec == std::errc{} ? result.ptr : first);
}

}  // namespace pipelens

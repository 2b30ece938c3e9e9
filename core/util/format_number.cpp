#include "util/format_number.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace pipelens {

std::string formatNumber(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    std::array<char, 32> buffer{};  // the shortest form of a double needs at most 24
    const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    if (error != std::errc{}) return "?";
    return std::string(buffer.data(), end);
}

}  // namespace pipelens

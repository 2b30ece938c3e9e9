#pragma once
// An enumeration with one table of names: each value's name in files, on the command line and in
// messages is written once, next to the value (like kMethods in method.hpp). Parsing, printing
// and the "one of ..." list of a message all read the same table.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens {

template <typename E>
struct EnumName {
    E value;
    std::string_view name;
};

template <typename E, std::size_t N>
using EnumNames = std::array<EnumName<E>, N>;

// The value's name (every value is in its table: a missing one is a programming error, caught
// by tst_config's table test).
template <typename E, std::size_t N>
constexpr std::string_view enumName(const EnumNames<E, N>& table, E value) {
    for (const EnumName<E>& e : table) {
        if (e.value == value) return e.name;
    }
    return "?";
}

template <typename E, std::size_t N>
std::optional<E> parseEnum(const EnumNames<E, N>& table, std::string_view text) {
    for (const EnumName<E>& e : table) {
        if (e.name == text) return e.value;
    }
    return std::nullopt;
}

// Every name in table order, as ObjectReader::text and argument parsers list them.
template <typename E, std::size_t N>
std::vector<std::string> enumNames(const EnumNames<E, N>& table) {
    std::vector<std::string> out;
    out.reserve(N);
    for (const EnumName<E>& e : table) out.emplace_back(e.name);
    return out;
}

// "auto, cpu, opencl": the allowed values of a message.
template <typename E, std::size_t N>
std::string enumNameList(const EnumNames<E, N>& table) {
    std::string out;
    for (const EnumName<E>& e : table) {
        if (!out.empty()) out += ", ";
        out += e.name;
    }
    return out;
}

}  // namespace pipelens

#pragma once
// Text of a results table built in one string with std::to_chars. The per-update tables have
// tens of thousands of rows; formatting them through ostreams was a fifth of a small run's time.
#include <charconv>
#include <cmath>
#include <concepts>
#include <string>
#include <string_view>

#include "util/format_number.hpp"

namespace pipelens {

class TextBuilder {
  public:
    TextBuilder& operator<<(std::string_view s) {
        text_.append(s);
        return *this;
    }
    TextBuilder& operator<<(char c) {
        text_.push_back(c);
        return *this;
    }
    template <std::integral T>
    requires(!std::same_as<T, char> && !std::same_as<T, bool>) TextBuilder& operator<<(T v) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        text_.append(buf, r.ptr);
        return *this;
    }
    // 17 significant digits (printf's %.17g, what an ostream with setprecision(17) writes), so
    // every double reads back exactly; nan, inf and -inf spelled out.
    TextBuilder& number(double v) {
        appendNumber(text_, v, 17);
        return *this;
    }
    // A CSV field in double quotes, inner quotes doubled (labels hold commas: "R=4, H=5").
    TextBuilder& quoted(std::string_view s) {
        text_.push_back('"');
        for (char c : s) {
            if (c == '"') text_.push_back('"');
            text_.push_back(c);
        }
        text_.push_back('"');
        return *this;
    }
    std::string take() { return std::move(text_); }

  private:
    std::string text_;
};

}  // namespace pipelens

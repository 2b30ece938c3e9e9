#pragma once
// The one way PipeLens writes a double as text (messages, CSV, the app's fields), on
// std::to_chars: by default the shortest decimal that reads back to the same value, or a fixed
// number of significant digits (17: printf's %.17g, what the results tables use); "nan", "inf"
// and "-inf" for the non-finite.
#include <string>

namespace pipelens {

// Appends `value` to `out`; significant = 0: the shortest round-trip form.
void appendNumber(std::string& out, double value, int significant = 0);

inline std::string formatNumber(double value, int significant = 0) {
    std::string out;
    appendNumber(out, value, significant);
    return out;
}

// A duration rounded to whole seconds: "41s", "1m12s", "2h0m5s".
std::string formatDuration(double seconds);

}  // namespace pipelens

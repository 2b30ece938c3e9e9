#pragma once
// The one way PipeLens writes a double as text (messages, CSV, the app's fields): the shortest
// decimal that reads back to the same value (std::to_chars), so nothing is lost and nothing is
// padded; "nan", "inf" and "-inf" for the non-finite.
#include <string>

namespace pipelens {

std::string formatNumber(double value);

}  // namespace pipelens

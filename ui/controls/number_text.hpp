#pragma once
// Numbers as every field and label of the app writes them: the engine's formatNumber (compact,
// and exact enough to read back the same double: "0.25", "1.5e-05"), as a QString.
#include <QString>

#include "util/format_number.hpp"

namespace pipelens::ui {

inline QString formatNumber(double value) {
    return QString::fromStdString(pipelens::formatNumber(value));
}

}  // namespace pipelens::ui

#pragma once
// One colour per method family in every chart, export and preset (Okabe-Ito, safe under the
// common colour-vision deficiencies): PD blue, RPD vermillion, LocalSGD green, SGD black,
// fill-drain purple. Several methods of one family (LocalSGD at H = 2, 5, 30) get shades of it.
// The Gantt chart's forward and backward fills (chart::kGanttForward, chart::kGanttBackward)
// are colours no method uses.
#include <QColor>
#include <cstddef>
#include <vector>

#include "method.hpp"

namespace pipelens {
struct MethodRun;
}

namespace pipelens::ui {

QColor familyColour(Method family);
// The `variant`-th method of `family` in one experiment (0: the family's own colour; then
// darker and lighter shades in turn, distinct from one another and from the other families).
QColor methodColour(Method family, int variant);
// The colour of runs[i]: its family's, shaded by how many runs of that family come before it.
// (An uncorrected twin, models/uncorrected_twin.hpp, takes its corrected partner's colour.)
QColor methodColour(const std::vector<MethodRun>& runs, std::size_t i);

}  // namespace pipelens::ui

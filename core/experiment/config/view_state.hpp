#pragma once
// How the desktop app showed an experiment when it was saved (the config's optional "view"
// object): a shared file opens as its author saw it. The engine and the CLI ignore it.
#include <array>
#include <optional>
#include <string>

#include "util/named_enum.hpp"

namespace pipelens {

enum class LossXAxis { Slots, Updates };
inline constexpr EnumNames<LossXAxis, 2> kLossXAxes{
    {{LossXAxis::Slots, "slots"}, {LossXAxis::Updates, "updates"}}};

struct ViewState {
    std::string ganttMethod;  // legend label of the method the Gantt chart shows; "": first
    LossXAxis xAxis = LossXAxis::Slots;  // the loss chart's x axis
    bool logY = true;
    bool logX = false;
    bool theoremChart = false;  // the RPD theorem chart shown beside the loss curves
    int cursor = -1;            // playback cursor, in slots done; -1: the end of the run
    std::optional<std::array<double, 2>> ganttRange;    // visible slots [first, last]
    std::optional<std::array<double, 2>> heatmapRange;  // visible block updates [first, last]

    bool operator==(const ViewState&) const = default;
};

}  // namespace pipelens

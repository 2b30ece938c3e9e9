#include "charts/method_colours.hpp"

#include "experiment/run/experiment.hpp"
#include "models/uncorrected_twin.hpp"

namespace pipelens::ui {

QColor familyColour(Method family) {
    switch (family) {
        case Method::PipeDream:
            return QColor(0x00, 0x72, 0xb2);  // blue
        case Method::RandomizedPipeDream:
            return QColor(0xd5, 0x5e, 0x00);  // vermillion
        case Method::LocalSgd:
            return QColor(0x00, 0x9e, 0x73);  // bluish green
        case Method::Sgd:
            return QColor(0x00, 0x00, 0x00);  // black
        case Method::FillDrain:
            return QColor(0xcc, 0x79, 0xa7);  // reddish purple
        case Method::OneFOneB:
            return QColor(0x56, 0xb4, 0xe9);  // sky blue
        case Method::ZeroBubbleH1:
            return QColor(0xe6, 0x9f, 0x00);  // orange
        case Method::TwoBw:
            return QColor(0x88, 0x22, 0x55);  // wine
        case Method::Imported:
            return QColor(0x44, 0xaa, 0x99);  // teal
        case Method::Interleaved:
            return QColor(0x33, 0x22, 0x88);  // indigo
    }
    return QColor(0x66, 0x66, 0x66);
}

QColor methodColour(Method family, int variant) {
    const QColor base = familyColour(family);
    if (variant <= 0) return base;
    // Black has no darker shade: greys that stay readable on white.
    if (base.value() == 0) {
        const int grey = std::min(150, 45 * variant);
        return QColor(grey, grey, grey);
    }
    // Darker, lighter, darker still, lighter still, ...: alternating, so neighbours differ most.
    const int step = (variant + 1) / 2;
    return variant % 2 == 1 ? base.darker(100 + 45 * step) : base.lighter(100 + 40 * step);
}

QColor methodColour(const std::vector<MethodRun>& runs, std::size_t i) {
    if (i >= runs.size()) return QColor(0x66, 0x66, 0x66);
    std::vector<MethodSpec> specs;
    specs.reserve(runs.size());
    for (const MethodRun& r : runs) specs.push_back(r.spec);
    // An uncorrected twin is drawn in its corrected partner's colour (the loss chart dashes
    // it), and takes no shade of its own from the methods after it.
    const std::vector<int> partner = uncorrectedPartners(specs);
    if (partner[i] >= 0) i = static_cast<std::size_t>(partner[i]);
    const Method family = runs[i].spec.method;
    int before = 0;
    for (std::size_t j = 0; j < i; ++j) {
        if (runs[j].spec.method == family && partner[j] < 0) ++before;
    }
    return methodColour(family, before);
}

}  // namespace pipelens::ui

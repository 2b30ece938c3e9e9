#include "models/uncorrected_twin.hpp"

#include <string>

namespace pipelens::ui {

const char* uncorrectedSuffix() {
    return " (uncorrected)";
}

MethodSpec uncorrectedTwin(const MethodSpec& corrected, int stages) {
    MethodSpec twin = corrected;
    twin.correctors = CorrectorSpec{};
    const std::string base =
        corrected.label.empty() ? defaultMethodLabel(twin, stages) : corrected.label;
    twin.label = base + uncorrectedSuffix();
    return twin;
}

bool isUncorrectedTwin(const MethodSpec& twin, const MethodSpec& corrected) {
    if (!corrected.correctors.any() || twin.correctors.any()) return false;
    const std::string suffix = uncorrectedSuffix();
    if (twin.label.size() <= suffix.size() ||
        twin.label.compare(twin.label.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    MethodSpec a = normalizedMethod(twin);
    MethodSpec b = normalizedMethod(corrected);
    a.label.clear();
    b.label.clear();
    b.correctors = CorrectorSpec{};
    return a == b;
}

std::vector<int> uncorrectedPartners(const std::vector<MethodSpec>& methods) {
    const int n = static_cast<int>(methods.size());
    std::vector<int> partner(methods.size(), -1);
    for (int i = 0; i < n; ++i) {
        const MethodSpec& twin = methods[static_cast<size_t>(i)];
        if (twin.correctors.any()) continue;
        // The nearest before first: "Compare with uncorrected" puts the twin right after.
        for (int j = i - 1; j >= 0 && partner[static_cast<size_t>(i)] < 0; --j) {
            if (isUncorrectedTwin(twin, methods[static_cast<size_t>(j)]))
                partner[static_cast<size_t>(i)] = j;
        }
        for (int j = i + 1; j < n && partner[static_cast<size_t>(i)] < 0; ++j) {
            if (isUncorrectedTwin(twin, methods[static_cast<size_t>(j)]))
                partner[static_cast<size_t>(i)] = j;
        }
    }
    return partner;
}

}  // namespace pipelens::ui

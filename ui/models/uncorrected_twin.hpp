#pragma once
// A corrected method's "uncorrected twin": the same method, step size and optimizer without its
// correctors, labelled "... (uncorrected)", so that the loss chart can draw the two curves as a
// pair (the twin dashed, in its partner's colour) and a researcher sees what the correctors did.
#include <vector>

#include "experiment/config/config.hpp"

namespace pipelens::ui {

// " (uncorrected)": the end of every twin's label.
const char* uncorrectedSuffix();
// `corrected` without its correctors, labelled "<its label> (uncorrected)" (its custom label, or
// the default label of the method without correctors, "PipeDream (uncorrected)").
MethodSpec uncorrectedTwin(const MethodSpec& corrected, int stages);
// Whether `twin` is the uncorrected twin of `corrected`: `corrected` has correctors, `twin` none,
// its label ends with uncorrectedSuffix(), and they run alike otherwise (normalizedMethod, labels
// aside). The label is not compared whole: a default label names S-dependent values.
bool isUncorrectedTwin(const MethodSpec& twin, const MethodSpec& corrected);
// For each method, the index of the method it is the uncorrected twin of (the nearest one
// before it, else the nearest after), or -1.
std::vector<int> uncorrectedPartners(const std::vector<MethodSpec>& methods);

}  // namespace pipelens::ui

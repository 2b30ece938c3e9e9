#pragma once
// Settings that run without error but do not do what their name says. Computed once here; the
// CLI prints them (stderr), summary.json lists them ("warnings") and the app shows them beside
// the method.
#include <optional>
#include <string>
#include <vector>

#include "experiment/run/experiment.hpp"

namespace pipelens {

// LocalSGD whose run is shorter than one round (R·H microbatches; 2SH + 2(S − 1) slots when
// R = S) never averages: it is R independent runs of plain SGD. The warning names the method,
// its N and the round; nullopt when the method averages at least once (or is not LocalSGD).
std::optional<std::string> neverAveragesWarning(const MethodRun& run);

// Every warning of a planned or finished experiment, in method order.
std::vector<std::string> experimentWarnings(const ExperimentResult& result);

}  // namespace pipelens

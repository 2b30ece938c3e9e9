#pragma once
// How much work one run of an experiment gives the CPU engine, estimated from the config alone
// (no data loaded, no device asked). `backend: auto` uses it to leave small runs on the CPU
// engine without initialising OpenCL (backend/backend_select.hpp, docs/opencl.md).
#include <string>

#include "experiment/config/config.hpp"

namespace pipelens {

// Entries of X (n * d): rows * dim for synthetic data; for a data file, its size in bytes / 8
// (exact for a float64 .npy, an underestimate for text and sparse files). 0 when unknown.
double estimatedDataEntries(const ExperimentConfig& config);

// PipeDream microbatches of one run: budget.microbatches, round(epochs * floor(n / b)), or for a
// slot budget slots / (forward + backward slots). 0 when the budget gives none.
double estimatedRunMicrobatches(const ExperimentConfig& config);

// n * d * microbatches: with f logged after every block update, the CPU engine reads each block of
// X once per update, i.e. all of X once per microbatch (S cancels out).
double estimatedRunWork(const ExperimentConfig& config);

}  // namespace pipelens

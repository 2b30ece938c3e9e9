#pragma once
// Limits that several rooms enforce alike (the config, the command line, the app, the schedules
// and the language model): each is written here once.

namespace pipelens {

// The largest S PipeLens simulates, and so the largest LocalSGD R.
inline constexpr int kMaxStages = 4096;

}  // namespace pipelens

#pragma once
// A run's schedule as Chrome trace event JSON, for ui.perfetto.dev and chrome://tracing
// (../shared/INTEROP.md; docs/results.md, "Traces for Perfetto"). The file is
// {"traceEvents": [...], "displayTimeUnit": "ms"} with 1 slot = 1 ms: ts = slot x 1000 and
// dur = slots x 1000 (microseconds).
//
// Tracks: one process per method (pid 1, 2, ... in order), or, for a LocalSGD timeline with
// R > 1 replicas, one process per replica named "LABEL replica r" (r from 1); one thread per
// stage named "stage s" (s from 1, as on screen), tids 1, 2, ... unique over the whole file.
// Metadata events process_name, process_sort_index, thread_name and thread_sort_index name and
// order them.
//
// Events:
// - one complete event ("X") per timeline cell: name "F m" or "B m" (m the microbatch, from 0),
//   cat "forward" or "backward", args {microbatch, stage (from 1), and, when the method has a
//   delay table, version_read and staleness}. version_read is DelayTable::versionRead(m, s): the
//   updates of the stage's block made before F(m, s) read it (the version B(m, s) also uses,
//   weight stashing). staleness is the own-block delay of the block update that B(m, s) makes,
//   counted in block updates of all blocks: k - h(m, s), where k is that update's index in
//   replay order (slot, then stage) and h(m, s) the number of block updates before F(m, s), i.e.
//   DelayTable::delay(k, s). A forward carries no staleness (it updates nothing).
// - LocalSGD (R > 1): at each averaging, one instant event ("i", scope "p", name "average",
//   cat "averaging", args {round}) on every replica's process, at the end of the averaging slot.
// - the loss as a counter ("C", name "loss", args {"loss": v}) on the method's process (for
//   LocalSGD replica 1's, where it is the loss of the replica average): v after i slots at
//   ts = i x 1000 (i = 0 is the start). At most kTraceMaxLossSamples samples per method: a
//   longer series keeps evenly spaced ones, the first and the last always (traceLossSamples).
//   Non-finite values (a diverged run, the language model's start) are left out: JSON has no
//   NaN or infinity.
#include <cstddef>
#include <string>
#include <vector>

#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

namespace pipelens {

struct ExperimentResult;

struct TraceMethod {
    std::string label;
    const Timeline* timeline = nullptr;                // required
    const DelayTable* delays = nullptr;                // may be null: no version_read, staleness
    const std::vector<double>* lossPerSlot = nullptr;  // may be null or empty: no counter
};

inline constexpr std::size_t kTraceMaxLossSamples = 20000;

// The indices of a series of `count` values that the loss counter keeps: all of them when
// count <= maxSamples, else maxSamples evenly spaced ones, 0 and count - 1 included, ascending.
std::vector<std::size_t> traceLossSamples(std::size_t count,
                                          std::size_t maxSamples = kTraceMaxLossSamples);

// The trace of these methods (a method without a timeline is skipped).
std::string chromeTraceJson(const std::vector<TraceMethod>& methods);

// Every method of a run that has a timeline (the pipeline methods, both objective families;
// RPD has none), with its delay table and per-slot objective or loss where the run has them.
std::string chromeTraceJson(const ExperimentResult& result);

}  // namespace pipelens

#pragma once
// A sweep spread over the ranks of an MPI job (docs/mpi.md). Rank 0 parses the sweep and opens
// its folder, sends the sweep to every rank, hands the points not yet done out one at a time
// (distributeWork) and writes each point through the folder as it arrives, then the summary:
// the folder is the one a single process writes, byte for byte. Every other rank computes the
// points it is given with runSweepPoint, one at a time on one thread.
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiment/sweep/sweep.hpp"
#include "mpi_world.hpp"

namespace pipelens {

struct SweepJob {  // what rank 0 prepares before any rank computes
    SweepSpec spec;
    SweepFolder folder;
};

struct SweepOverRanksOptions {
    // Called once on every rank with the sweep rank 0 sent: the compute backend of that rank.
    std::function<BackendProvider(const SweepSpec&)> backend;
    // Rank 0, after each point it writes (fractionDone counts the points of this run).
    std::function<void(const SweepProgress&)> onProgress;
    bool coordinatorComputes = true;  // see DistributorOptions
};

struct SweepOverRanksOutcome {
    SweepPoints points;            // rank 0: every finished point (those found and new)
    std::size_t computedHere = 0;  // points this rank computed
    std::vector<int> rankOfPoint;  // rank 0: per point, the rank that computed it (-1: not
                                   // computed in this run)
};

// A rank other than 0 stops because rank 0 reported the failure (rank 0 shows the message).
class StoppedByOtherRank : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Collective: every rank calls it; `prepare` runs on rank 0 only. An exception from `prepare`
// is rethrown on rank 0 (its type kept) and is StoppedByOtherRank elsewhere. A point that
// throws stops the sweep after the points in flight are written: on rank 0 an error of the
// same kind (ConfigError, DataError, IoError, or runtime_error) naming the point, its axis value
// and the rank; StoppedByOtherRank elsewhere.
SweepOverRanksOutcome runSweepOverRanks(const MpiWorld& world,
                                        const std::function<SweepJob()>& prepare,
                                        const SweepOverRanksOptions& options);

}  // namespace pipelens

#pragma once
// Hands work items out to the ranks of an MPI job one at a time, so fast items never wait for
// slow ones. Rank 0 coordinates: a rank that is free asks it for the next item, computes it,
// sends back the result (a string) and asks again. Rank 0 passes every result to `onFinish` on
// its own calling thread the moment it arrives; it also computes items on a second thread
// (always when it is the only rank). An item that throws stops the handing out: the items
// already running finish and are passed on, then every rank throws WorkItemFailed naming the
// item and the rank. (mpirun ends the whole job once one process exits non-zero: a caller that
// exits with an error code calls MpiWorld::waitForAll first, after rank 0 has reported.)
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_world.hpp"

namespace pipelens {

using ComputeWorkItem = std::function<std::string(std::size_t item)>;
using FinishWorkItem = std::function<void(std::size_t item, const std::string& result)>;

struct DistributorOptions {
    // Rank 0 computes items on a second thread while it coordinates. Off, it only coordinates
    // (unless it is the only rank): useful when the ranks fill every core of the machines.
    bool coordinatorComputes = true;
};

struct DistributorReport {
    std::size_t computedHere = 0;  // items this rank computed
    std::vector<int> rankOfItem;   // rank 0: who computed todo[i] (-1: not finished)
};

// The first failure of a distributed run, known to every rank.
class WorkItemFailed : public std::runtime_error {
  public:
    WorkItemFailed(std::size_t item, int rank, const std::string& message);
    std::size_t item() const { return item_; }
    int rank() const { return rank_; }
    const std::string& message() const { return message_; }

  private:
    std::size_t item_;
    int rank_;
    std::string message_;
};

// Collective: every rank of `world` calls it. `todo` (the items to compute, in the order they
// are handed out) and `onFinish` are used on rank 0 only; `compute` on whichever rank gets an
// item. An exception from `onFinish` counts as a failure of that item on rank 0.
DistributorReport distributeWork(const MpiWorld& world, const std::vector<std::size_t>& todo,
                                 const ComputeWorkItem& compute, const FinishWorkItem& onFinish,
                                 const DistributorOptions& options = {});

}  // namespace pipelens

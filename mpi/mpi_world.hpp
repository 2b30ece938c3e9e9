#pragma once
// The MPI world of one process: MPI_Init_thread on construction, MPI_Finalize on destruction
// (every rank must destroy it, also on failure, so that no rank waits for another forever).
// Only the constructing thread calls MPI (MPI_THREAD_FUNNELED); other threads may compute.
#include <string>

#include "launcher_env.hpp"

namespace pipelens {

class MpiWorld {
  public:
    MpiWorld();
    ~MpiWorld();
    MpiWorld(const MpiWorld&) = delete;
    MpiWorld& operator=(const MpiWorld&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    bool isCoordinator() const { return rank_ == 0; }

    // Collective: returns when every rank has called it, sleeping (not spinning) meanwhile.
    void waitForAll() const;

    // Collective: every rank returns rank 0's `text` (the others' argument is ignored).
    std::string broadcastFromCoordinator(const std::string& text) const;

  private:
    int rank_ = 0;
    int size_ = 1;
};

}  // namespace pipelens

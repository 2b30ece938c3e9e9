#pragma once
// Checking MPI calls (internal to mpi/): a failed call becomes MpiCallFailed naming the call.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace pipelens {

class MpiCallFailed : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

void checkMpiCall(int code, const char* call);

// The job cannot go on (an MPI call failed, so the ranks cannot even agree to stop): prints the
// reason with the rank on stderr and ends every rank of the job through MPI_Abort.
[[noreturn]] void abortJob(int rank, const std::string& reason);

// Waiting without a busy loop: Open MPI's blocking calls spin on a core, which would take it from
// the ranks (or rank 0's thread) that compute. Sleeps grow from 20 us to 1 ms while idle.
class Backoff {
  public:
    void reset() { sleep_ = std::chrono::microseconds(20); }
    void wait() {
        std::this_thread::sleep_for(sleep_);
        sleep_ = std::min(sleep_ * 2, std::chrono::microseconds(1000));
    }

  private:
    std::chrono::microseconds sleep_{20};
};

}  // namespace pipelens

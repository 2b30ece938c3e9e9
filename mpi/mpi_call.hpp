#pragma once
// Checking MPI calls (internal to mpi/): a failed call becomes MpiCallFailed naming the call.
#include <stdexcept>
#include <string>

namespace pipelens {

class MpiCallFailed : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

void checkMpiCall(int code, const char* call);

// The job cannot go on (an MPI call failed, so the ranks cannot even agree to stop): prints the
// reason with the rank on stderr and ends every rank of the job through MPI_Abort.
[[noreturn]] void abortJob(int rank, const std::string& reason);

}  // namespace pipelens

#include "mpi_world.hpp"

#include <mpi.h>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "mpi_call.hpp"

namespace pipelens {

void checkMpiCall(int code, const char* call) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw MpiCallFailed(std::string(call) + " failed: " + std::string(text, length));
}

void abortJob(int rank, const std::string& reason) {
    std::cerr << "pipelens: rank " << rank << ": " << reason << "; aborting the MPI job\n";
    std::cerr.flush();
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

MpiWorld::MpiWorld() {
    int provided = 0;
    checkMpiCall(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
                 "MPI_Init_thread");
    // Errors come back as codes (and become exceptions) instead of aborting the job silently.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    checkMpiCall(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    checkMpiCall(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        throw std::runtime_error(
            "this MPI library does not allow threads beside MPI calls "
            "(MPI_THREAD_FUNNELED)");
    }
}

MpiWorld::~MpiWorld() {
    MPI_Finalize();
}

void MpiWorld::waitForAll() const {
    MPI_Request request;
    checkMpiCall(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    Backoff idle;
    for (;;) {
        int done = 0;
        checkMpiCall(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done) return;
        idle.wait();
    }
}

std::string MpiWorld::broadcastFromCoordinator(const std::string& text) const {
    std::uint64_t length = rank_ == 0 ? text.size() : 0;
    checkMpiCall(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    std::string out = rank_ == 0 ? text : std::string(length, '\0');
    if (length > 0) {
        checkMpiCall(MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD),
                     "MPI_Bcast");
    }
    return out;
}

}  // namespace pipelens

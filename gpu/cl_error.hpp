#pragma once
// ClError: an OpenCL call failed. The message names the call, the status (symbol and number) and
// what the backend was doing, so a person can tell "no device" from "out of memory".
#include <stdexcept>
#include <string>

namespace pipelens::gpu {

class ClError : public std::runtime_error {
  public:
    ClError(std::string call, int status, const std::string& detail = {});
    const std::string& call() const { return call_; }
    int status() const { return status_; }
    // True for statuses after which the device cannot be trusted any more (lost, out of memory).
    bool deviceFailure() const;

  private:
    std::string call_;
    int status_;
};

// "CL_OUT_OF_RESOURCES" for -5, "CL_UNKNOWN_ERROR" for codes it does not know.
std::string clStatusName(int status);

// Throws ClError(call, status, detail) unless status is CL_SUCCESS (0).
inline void checkCl(int status, const char* call, const std::string& detail = {}) {
    if (status != 0) throw ClError(call, status, detail);
}

}  // namespace pipelens::gpu

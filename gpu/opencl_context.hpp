#pragma once
// One OpenCL device, its context and its compiled kernels. Programs are built once per context
// and precision (on the first run that needs them, on that run's thread, never the GUI's), and
// shared by every backend made from this context; each backend makes its own queue and kernel
// objects, so runs on different threads never share mutable OpenCL state.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cl_headers.hpp"
#include "devices.hpp"

namespace pipelens::gpu {

enum class Precision { Double, Float };
std::string precisionName(Precision p);

struct ContextOptions {
    std::string device;                  // index or name substring ("" = first)
    std::string extraKernelSource;       // appended to the program (tests: a build failure)
    std::uint64_t memoryLimitBytes = 0;  // pretend the device has at most this much (tests)
};

class OpenClContext {
  public:
    // Chooses the device (ConfigError when there is none or the choice is bad) and creates the
    // context (ClError).
    explicit OpenClContext(const ContextOptions& options = {});
    OpenClContext(const OpenClContext&) = delete;
    OpenClContext& operator=(const OpenClContext&) = delete;

    const DeviceInfo& info() const { return info_; }
    const cl::Device& device() const { return device_; }
    const cl::Context& context() const { return context_; }
    // The work-group size every reduction kernel is compiled for (a power of two).
    int workGroupSize() const { return workGroupSize_; }
    // Double needs cl_khr_fp64; asking for it on a device without throws ConfigError.
    bool supports(Precision p) const { return p == Precision::Float || info_.fp64; }

    // The program for `p`, built on first use; a failed build throws ClError with the device's
    // build log. Thread-safe.
    cl::Program program(Precision p);

    // A device buffer of `bytes`; refuses (ClError CL_MEM_OBJECT_ALLOCATION_FAILURE or
    // CL_INVALID_BUFFER_SIZE, naming `what` and the sizes) what the device cannot hold.
    cl::Buffer buffer(std::size_t bytes, const std::string& what) const;
    std::uint64_t memoryLimitBytes() const;
    std::uint64_t maxAllocBytes() const;
    // "pthread-skylake (Portable Computing Language), double"
    std::string describe(Precision p) const;

  private:
    ContextOptions options_;
    DeviceInfo info_;
    cl::Device device_;
    cl::Context context_;
    int workGroupSize_ = 64;
    std::mutex buildMutex_;
    std::map<Precision, cl::Program> programs_;
};

// A kernel from `program`, with the error naming it.
cl::Kernel makeKernel(const cl::Program& program, const char* name);

}  // namespace pipelens::gpu

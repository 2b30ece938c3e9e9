#include "opencl_context.hpp"

#include <algorithm>

#include "cl_error.hpp"
#include "embedded_kernels.hpp"
#include "errors.hpp"

namespace pipelens::gpu {
namespace {

std::string mib(std::uint64_t bytes) {
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

// common.cl first: it defines what the others use.
std::string programSource(const std::string& extra) {
    std::string src;
    for (const auto& k : embeddedKernels()) {
        if (k.file == "common.cl")
            src = std::string(k.source) + "\n" + src;
        else
            src += "\n// ---- " + std::string(k.file) + "\n" + std::string(k.source);
    }
    return src + "\n" + extra;
}

}  // namespace

std::string precisionName(Precision p) {
    return p == Precision::Double ? "double" : "float";
}

OpenClContext::OpenClContext(const ContextOptions& options) : options_(options) {
    info_ = chooseDevice(options.device);
    std::vector<cl::Platform> platforms;
    checkCl(cl::Platform::get(&platforms), "clGetPlatformIDs");
    if (info_.platformIndex >= static_cast<int>(platforms.size())) {
        throw ClError("clGetPlatformIDs", CL_INVALID_PLATFORM, "the platform list changed");
    }
    std::vector<cl::Device> devices;
    checkCl(platforms[static_cast<size_t>(info_.platformIndex)].getDevices(CL_DEVICE_TYPE_ALL,
                                                                           &devices),
            "clGetDeviceIDs");
    if (info_.deviceIndex >= static_cast<int>(devices.size())) {
        throw ClError("clGetDeviceIDs", CL_DEVICE_NOT_FOUND, "the device list changed");
    }
    device_ = devices[static_cast<size_t>(info_.deviceIndex)];
    cl_int err = CL_SUCCESS;
    context_ = cl::Context(device_, nullptr, nullptr, nullptr, &err);
    checkCl(err, "clCreateContext", info_.name);
    // Reductions need a power-of-two group; 128 keeps PoCL's per-group overhead low and fits
    // any GPU.
    workGroupSize_ = 1;
    while (workGroupSize_ * 2 <= 128 &&
           static_cast<std::size_t>(workGroupSize_) * 2 <= info_.maxWorkGroupSize) {
        workGroupSize_ *= 2;
    }
}

cl::Program OpenClContext::program(Precision p) {
    std::lock_guard lock(buildMutex_);
    if (auto it = programs_.find(p); it != programs_.end()) return it->second;
    if (!supports(p)) {
        throw ConfigError("precision = \"double\" is not allowed on " + info_.name +
                          ": the device has no cl_khr_fp64 (use float)");
    }
    cl_int err = CL_SUCCESS;
    cl::Program program(context_, programSource(options_.extraKernelSource), false, &err);
    checkCl(err, "clCreateProgramWithSource");
    std::string flags = "-DREAL=" + precisionName(p) + " -DREAL8=" + precisionName(p) + "8" +
                        " -DWG=" + std::to_string(workGroupSize_);
    if (p == Precision::Double) flags += " -DUSE_FP64";
    // lm.cl's GELU: in float on a CPU device, the project's own vectorisable erf (see there).
    if (p == Precision::Float && info_.type == "cpu") flags += " -DLM_FLOAT_ERF_POLY";
    err = program.build(device_, flags.c_str());
    if (err != CL_SUCCESS) {
        std::string log;
        program.getBuildInfo(device_, CL_PROGRAM_BUILD_LOG, &log);
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
        throw ClError("clBuildProgram", err,
                      "the kernels did not compile for " + info_.name + " (" + flags +
                          "); build log:\n" + log);
    }
    programs_[p] = program;
    return program;
}

std::uint64_t OpenClContext::memoryLimitBytes() const {
    return options_.memoryLimitBytes > 0 ? std::min(options_.memoryLimitBytes, info_.globalMemBytes)
                                         : info_.globalMemBytes;
}

std::uint64_t OpenClContext::maxAllocBytes() const {
    return std::min(info_.maxAllocBytes, memoryLimitBytes());
}

cl::Buffer OpenClContext::buffer(std::size_t bytes, const std::string& what) const {
    bytes = std::max<std::size_t>(bytes, 16);
    if (bytes > maxAllocBytes()) {
        throw ClError("clCreateBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE,
                      "device out of memory: " + what + " needs " + mib(bytes) + " but " +
                          info_.name + " allows at most " + mib(maxAllocBytes()) +
                          " per buffer (use precision float, a smaller data set, or the CPU "
                          "backend)");
    }
    cl_int err = CL_SUCCESS;
    cl::Buffer b(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    checkCl(err, "clCreateBuffer", what + " (" + mib(bytes) + ")");
    return b;
}

std::string OpenClContext::describe(Precision p) const {
    return "opencl: " + info_.name + " (" + info_.platform + "), " + precisionName(p);
}

cl::Kernel makeKernel(const cl::Program& program, const char* name) {
    cl_int err = CL_SUCCESS;
    cl::Kernel k(program, name, &err);
    checkCl(err, "clCreateKernel", name);
    return k;
}

}  // namespace pipelens::gpu

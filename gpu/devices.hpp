#pragma once
// OpenCL platforms and devices: listing, choosing one by index or name, and the kernel cache.
#include <cstdint>
#include <string>
#include <vector>

namespace pipelens::gpu {

struct DeviceInfo {
    int index = 0;  // position in listDevices(), the number --device takes
    int platformIndex = 0;
    int deviceIndex = 0;   // within its platform
    std::string platform;  // platform name
    std::string platformVersion;
    std::string name;
    std::string vendor;
    std::string driver;   // driver version
    std::string version;  // OpenCL version the device reports
    std::string type;     // cpu | gpu | accelerator | other
    unsigned computeUnits = 0;
    std::uint64_t globalMemBytes = 0;
    std::uint64_t maxAllocBytes = 0;
    std::uint64_t localMemBytes = 0;
    std::size_t maxWorkGroupSize = 0;
    bool fp64 = false;  // cl_khr_fp64
};

// Every device of every platform, in platform order. Empty (not an error) when no platform or
// ICD is installed; a platform that fails to answer is skipped.
std::vector<DeviceInfo> listDevices();

// Chooses a device: "" = the first, a decimal index into listDevices(), or a case-insensitive
// substring of "platform / name / vendor". Throws ConfigError naming the choices when nothing
// matches or there is no device at all.
DeviceInfo chooseDevice(const std::string& spec);

// The folder PoCL caches compiled kernels in: $POCL_CACHE_DIR if set, else
// $XDG_CACHE_HOME/pipelens/pocl or ~/.cache/pipelens/pocl. Sets POCL_CACHE_DIR (and creates the
// folder) before the first OpenCL call so the cache is ours and writable.
std::string ensureKernelCacheDir();

// A table of the devices for a person, or a line saying there are none.
std::string devicesText(const std::vector<DeviceInfo>& devices);
// The same as JSON (an array of objects).
std::string devicesJson(const std::vector<DeviceInfo>& devices);

}  // namespace pipelens::gpu

#include "devices.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cl_error.hpp"
#include "cl_headers.hpp"
#include "errors.hpp"

namespace pipelens::gpu {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// OpenCL strings may carry a trailing NUL and spaces.
std::string tidy(std::string s) {
    while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
    return s;
}

template <cl_device_info Name, typename T>
T deviceInfo(const cl::Device& d, const char* what) {
    T value{};
    checkCl(d.getInfo(Name, &value), "clGetDeviceInfo", what);
    return value;
}

std::string typeName(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU) return "gpu";
    if (t & CL_DEVICE_TYPE_CPU) return "cpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

std::string mib(std::uint64_t bytes) {
    std::ostringstream s;
    s << (bytes >> 20) << " MiB";
    return s.str();
}

}  // namespace

std::string ensureKernelCacheDir() {
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    namespace fs = std::filesystem;
    if (const char* set = std::getenv("POCL_CACHE_DIR"); set && *set) return set;
    fs::path dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
        dir = fs::path(xdg) / "pipelens" / "pocl";
    } else if (const char* home = std::getenv("HOME"); home && *home) {
        dir = fs::path(home) / ".cache" / "pipelens" / "pocl";
    } else {
        dir = fs::temp_directory_path() / "pipelens-pocl-cache";
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    // An unwritable cache only costs compile time: PoCL then compiles every run.
    if (!ec) setenv("POCL_CACHE_DIR", dir.c_str(), 0);
    return dir.string();
}

std::vector<DeviceInfo> listDevices() {
    ensureKernelCacheDir();
    std::vector<cl::Platform> platforms;
    // No ICD or no platform is an empty list, not an error (CL_PLATFORM_NOT_FOUND_KHR).
    if (cl::Platform::get(&platforms) != CL_SUCCESS) return {};
    std::vector<DeviceInfo> out;
    for (size_t p = 0; p < platforms.size(); ++p) {
        std::vector<cl::Device> devices;
        if (platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &devices) != CL_SUCCESS) continue;
        std::string platformName, platformVersion;
        platforms[p].getInfo(CL_PLATFORM_NAME, &platformName);
        platforms[p].getInfo(CL_PLATFORM_VERSION, &platformVersion);
        for (size_t i = 0; i < devices.size(); ++i) {
            const cl::Device& d = devices[i];
            DeviceInfo info;
            info.index = static_cast<int>(out.size());
            info.platformIndex = static_cast<int>(p);
            info.deviceIndex = static_cast<int>(i);
            info.platform = tidy(platformName);
            info.platformVersion = tidy(platformVersion);
            info.name = tidy(deviceInfo<CL_DEVICE_NAME, std::string>(d, "CL_DEVICE_NAME"));
            info.vendor = tidy(deviceInfo<CL_DEVICE_VENDOR, std::string>(d, "CL_DEVICE_VENDOR"));
            info.driver = tidy(deviceInfo<CL_DRIVER_VERSION, std::string>(d, "CL_DRIVER_VERSION"));
            info.version = tidy(deviceInfo<CL_DEVICE_VERSION, std::string>(d, "CL_DEVICE_VERSION"));
            info.type = typeName(deviceInfo<CL_DEVICE_TYPE, cl_device_type>(d, "CL_DEVICE_TYPE"));
            info.computeUnits =
                deviceInfo<CL_DEVICE_MAX_COMPUTE_UNITS, cl_uint>(d, "CL_DEVICE_MAX_COMPUTE_UNITS");
            info.globalMemBytes =
                deviceInfo<CL_DEVICE_GLOBAL_MEM_SIZE, cl_ulong>(d, "CL_DEVICE_GLOBAL_MEM_SIZE");
            info.maxAllocBytes = deviceInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE, cl_ulong>(
                d, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
            info.localMemBytes =
                deviceInfo<CL_DEVICE_LOCAL_MEM_SIZE, cl_ulong>(d, "CL_DEVICE_LOCAL_MEM_SIZE");
            info.maxWorkGroupSize = deviceInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE, size_t>(
                d, "CL_DEVICE_MAX_WORK_GROUP_SIZE");
            const std::string ext =
                deviceInfo<CL_DEVICE_EXTENSIONS, std::string>(d, "CL_DEVICE_EXTENSIONS");
            info.fp64 = ext.find("cl_khr_fp64") != std::string::npos;
            out.push_back(std::move(info));
        }
    }
    return out;
}

DeviceInfo chooseDevice(const std::string& spec) {
    const std::vector<DeviceInfo> devices = listDevices();
    auto choices = [&] {
        std::string s;
        for (const auto& d : devices) {
            s += (s.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name;
        }
        return s;
    };
    if (devices.empty()) {
        throw ConfigError(
            "no OpenCL device found: no OpenCL platform (ICD) is installed or none "
            "reports a device (on Debian: apt install pocl-opencl-icd)");
    }
    if (spec.empty()) return devices.front();
    const bool numeric =
        std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (numeric) {
        const long index = spec.size() > 6 ? -1 : std::strtol(spec.c_str(), nullptr, 10);
        if (index < 0 || index >= static_cast<long>(devices.size())) {
            throw ConfigError("device = \"" + spec + "\" is not allowed: there " +
                              (devices.size() == 1
                                   ? "is 1 OpenCL device"
                                   : "are " + std::to_string(devices.size()) + " OpenCL devices") +
                              " (" + choices() + "); give an index or part of a name");
        }
        return devices[static_cast<size_t>(index)];
    }
    const std::string want = lower(spec);
    for (const auto& d : devices) {
        if (lower(d.platform + " / " + d.name + " / " + d.vendor).find(want) != std::string::npos) {
            return d;
        }
    }
    throw ConfigError("device = \"" + spec +
                      "\" is not allowed: no OpenCL device name contains it (" + choices() + ")");
}

std::string devicesText(const std::vector<DeviceInfo>& devices) {
    if (devices.empty()) {
        return "No OpenCL device found (no platform or ICD installed; on Debian: "
               "apt install pocl-opencl-icd). Runs use the CPU engine.\n";
    }
    std::ostringstream s;
    int lastPlatform = -1;
    for (const auto& d : devices) {
        if (d.platformIndex != lastPlatform) {
            s << "Platform " << d.platformIndex << ": " << d.platform << " (" << d.platformVersion
              << ")\n";
            lastPlatform = d.platformIndex;
        }
        s << "  [" << d.index << "] " << d.name << '\n'
          << "      vendor: " << d.vendor << ", type: " << d.type << '\n'
          << "      driver: " << d.driver << ", " << d.version << '\n'
          << "      compute units: " << d.computeUnits
          << ", global memory: " << mib(d.globalMemBytes) << " (largest buffer "
          << mib(d.maxAllocBytes) << ")\n"
          << "      fp64: " << (d.fp64 ? "yes" : "no (float only)")
          << ", max work-group size: " << d.maxWorkGroupSize << '\n';
    }
    return s.str();
}

std::string devicesJson(const std::vector<DeviceInfo>& devices) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& d : devices) {
        arr.push_back({{"index", d.index},
                       {"platform_index", d.platformIndex},
                       {"platform", d.platform},
                       {"platform_version", d.platformVersion},
                       {"name", d.name},
                       {"vendor", d.vendor},
                       {"driver", d.driver},
                       {"version", d.version},
                       {"type", d.type},
                       {"compute_units", d.computeUnits},
                       {"global_mem_bytes", d.globalMemBytes},
                       {"max_alloc_bytes", d.maxAllocBytes},
                       {"local_mem_bytes", d.localMemBytes},
                       {"max_work_group_size", d.maxWorkGroupSize},
                       {"fp64", d.fp64}});
    }
    return arr.dump(2) + "\n";
}

}  // namespace pipelens::gpu

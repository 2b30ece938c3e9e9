#include "backend_select.hpp"

#include "errors.hpp"

namespace pipelens {

BackendChoice selectBackend(const ExperimentConfig& config, std::vector<std::string>& notices) {
    if (config.backend == "opencl") {
        if (!config.allowCpuFallback) {
            throw ConfigError("backend = \"opencl\" is not available: this build has no OpenCL "
                              "backend (allowed: cpu, auto)");
        }
        notices.push_back("this build has no OpenCL backend: running on the CPU engine");
    } else if (config.backend == "auto") {
        notices.push_back("no OpenCL backend in this build: running on the CPU engine");
    }
    return {cpuBackendProvider(), "cpu"};
}

}  // namespace pipelens

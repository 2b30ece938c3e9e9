#pragma once
// The OpenCL C sources of gpu/kernels/, embedded at build time (gpu/cmake/embed_kernels.cmake).
#include <string_view>
#include <vector>

namespace pipelens::gpu {

struct EmbeddedKernel {
    std::string_view file;    // e.g. "pipeline.cl"
    std::string_view source;  // the file's text
};

const std::vector<EmbeddedKernel>& embeddedKernels();

}  // namespace pipelens::gpu

#pragma once
// CLBlast's GEMM parameters for PoCL's CPU device. CLBlast has no tuned entry for PoCL, so it
// falls back to generic parameters and, for the language model's small products, to its
// XgemmDirect kernel; both leave PoCL's vectoriser little to do (3-7 % of the host's peak).
// Measured on this project's 2-core machine (docs/benchmarks.md, "Language model on OpenCL"):
// the indirect Xgemm kernel with 64 x 64 tiles, no local memory, 4 work-items along m with
// vectors of 16 (float) or 8 (double) along m, 8 work-items along n with vectors of 8.
// The first tuning (8 x 8 work-items, vectors of 8 in both precisions) ran the model's shapes
// 1.6-2.1x faster than CLBlast's defaults; these per-precision ones trained the small model about
// 1.25x (float) and 1.05x (double) faster again in a sweep. Applied once per device and process,
// before the first product; PIPELENS_CLBLAST_TUNING=off keeps CLBlast's defaults.
#include <string>
#include <unordered_map>
#include <vector>

#include "devices.hpp"
#include "opencl_context.hpp"

namespace pipelens::gpu {

// One CLBlast kernel family's overridden parameters (clblast::OverrideParameters' arguments).
struct ClblastOverride {
    std::string kernel;     // "Xgemm", "GemmRoutine"
    std::string precision;  // "float", "double"; "" both
    std::unordered_map<std::string, std::size_t> params;
};

// What PipeLens overrides on `device` (empty: CLBlast's defaults), given the value of
// PIPELENS_CLBLAST_TUNING ("" when unset; "off" or "0" turns the overrides off).
std::vector<ClblastOverride> clblastOverridesFor(const DeviceInfo& device,
                                                 const std::string& setting);

// The line applyClblastTuning returns for the context's device, without applying anything: what
// its products run with (what was applied in this process, else what would be). The language
// model's backend name in results, and so the auto calibration's cache key, carry it.
std::string clblastTuningLine(const OpenClContext& context);

// Applies clblastOverridesFor(context.info(), $PIPELENS_CLBLAST_TUNING) for the precisions the
// device has, once per device and process; returns a line saying what is in force ("CLBlast:
// default parameters" or "CLBlast: Xgemm tuned for PoCL's CPU device (...)"). Throws ClError
// when CLBlast refuses.
std::string applyClblastTuning(const OpenClContext& context);

}  // namespace pipelens::gpu

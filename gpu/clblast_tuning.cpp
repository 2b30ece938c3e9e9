#include "clblast_tuning.hpp"

#include <clblast.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "cl_error.hpp"
#include "cmdline/environment.hpp"

namespace pipelens::gpu {

namespace {

bool isPoclCpu(const DeviceInfo& device) {
    return device.type == "cpu" &&
           device.platform.find("Portable Computing Language") != std::string::npos;
}

std::string describe(const std::vector<ClblastOverride>& overrides) {
    if (overrides.empty()) return "CLBlast: default parameters";
    std::string text = "CLBlast: Xgemm tuned for PoCL's CPU device (";
    for (const auto& o : overrides) {
        if (o.kernel != "Xgemm") continue;
        text += o.precision + ":";
        bool first = true;
        for (const char* name : {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "VWM", "VWN", "SA", "SB"}) {
            text +=
                (first ? " " : ", ") + std::string(name) + " " + std::to_string(o.params.at(name));
            first = false;
        }
        text += "; ";
    }
    return text + "the indirect kernel for every size; PIPELENS_CLBLAST_TUNING=off undoes it)";
}

}  // namespace

std::vector<ClblastOverride> clblastOverridesFor(const DeviceInfo& device,
                                                 const std::string& setting) {
    if (setting == "off" || setting == "0" || !isPoclCpu(device)) return {};
    // The constraints CLBlast checks: MWG divisible by MDIMC VWM and MDIMA VWM, NWG by NDIMC VWN
    // and NDIMB VWN, KWG by MDIMC NDIMC / MDIMA and by KWI. Both precisions: 64 x 64 tiles, k in
    // steps of 32, no local memory, 8 work-items along n with vectors of 8 (NWG = NDIMC VWN).
    const std::unordered_map<std::string, std::size_t> common{
        {"GEMMK", 0}, {"KREG", 1}, {"KWG", 32}, {"KWI", 8},   {"MWG", 64},  {"NWG", 64}, {"SA", 0},
        {"SB", 0},    {"STRM", 0}, {"STRN", 0}, {"NDIMB", 8}, {"NDIMC", 8}, {"VWN", 8}};
    // Along m, each work-item keeps 32 values of a column of C in two vectors: in float vectors
    // of 16 (one AVX-512 register each) and 2 work-items (MWG = 64 = 2 x 32), in double vectors
    // of 8 and 4 work-items (64 = 4 x 16). Timed on the model's block products in the form it
    // asks them (docs/benchmarks.md, 2026-12-04, "copy-free"): float with 4 work-items along m
    // (one vector each) took a third longer on the paper's sizes.
    ClblastOverride single{"Xgemm", "float", common};
    single.params.insert({{"VWM", 16}, {"MDIMA", 2}, {"MDIMC", 2}});
    ClblastOverride twice{"Xgemm", "double", common};
    twice.params.insert({{"VWM", 8}, {"MDIMA", 4}, {"MDIMC", 4}});
    // Below this m n k cube root CLBlast would use XgemmDirect, slower on PoCL at every size the
    // model has (512 x 64 x 64 upwards).
    ClblastOverride routine{"GemmRoutine", "", {{"XGEMM_MIN_INDIRECT_SIZE", 1}}};
    return {single, twice, routine};
}

namespace {

// What applyClblastTuning has applied in this process, by device.
struct Applied {
    std::mutex mutex;
    std::map<cl_device_id, std::string> lines;
};
Applied& applied() {
    static Applied a;
    return a;
}

std::string settingFromEnvironment() {
    return checkedEnvironment("PIPELENS_CLBLAST_TUNING").value_or("");
}

}  // namespace

std::string clblastTuningLine(const OpenClContext& context) {
    Applied& a = applied();
    const std::lock_guard<std::mutex> lock(a.mutex);
    if (auto it = a.lines.find(context.device()()); it != a.lines.end()) return it->second;
    return describe(clblastOverridesFor(context.info(), settingFromEnvironment()));
}

std::string applyClblastTuning(const OpenClContext& context) {
    const DeviceInfo& device = context.info();
    cl_device_id id = context.device()();
    Applied& a = applied();
    const std::lock_guard<std::mutex> lock(a.mutex);
    if (auto it = a.lines.find(id); it != a.lines.end()) return it->second;
    const auto overrides = clblastOverridesFor(device, settingFromEnvironment());
    std::vector<clblast::Precision> precisions{clblast::Precision::kSingle};
    if (device.fp64) precisions.push_back(clblast::Precision::kDouble);
    for (const auto& o : overrides) {
        for (auto p : precisions) {
            const bool single = p == clblast::Precision::kSingle;
            if (!o.precision.empty() && o.precision != (single ? "float" : "double")) continue;
            const auto status = clblast::OverrideParameters(id, o.kernel, p, o.params);
            if (status != clblast::StatusCode::kSuccess) {
                throw ClError("clblast::OverrideParameters", static_cast<int>(status),
                              o.kernel + " on " + device.name);
            }
        }
    }
    return a.lines[id] = describe(overrides);
}

}  // namespace pipelens::gpu

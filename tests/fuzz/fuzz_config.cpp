// libFuzzer target: the JSON experiment config reader (parsing, depth and duplicate-key checks,
// validation) on arbitrary text, then the round trip of every config it accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "experiment/config/config.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipelens::fuzz::expectTypedErrorsOnly([&] {
        pipelens::ExperimentConfig config = pipelens::ExperimentConfig::fromText(text, "fuzz.json");
        // What the reader accepts, its writer must write back to the same config.
        const nlohmann::json written = config.toJson();
        if (pipelens::ExperimentConfig::fromJson(written).toJson() != written) std::abort();
    });
    return 0;
}

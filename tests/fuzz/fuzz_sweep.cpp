// libFuzzer target: a sweep file's text through SweepSpec::fromText, the entry point `sweep`
// uses after reading the file (parsing with the config reader's depth, duplicate-key and number
// checks, the axis and every point validated), then the round trip of every sweep it accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "experiment/sweep/sweep_spec.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipelens::fuzz::expectTypedErrorsOnly([&] {
        const pipelens::SweepSpec spec = pipelens::SweepSpec::fromText(text, "fuzz.json");
        // What the reader accepts, its writer must write back to the same sweep (the form
        // stored as sweep.json and compared on --resume).
        const nlohmann::json written = spec.toJson();
        if (pipelens::SweepSpec::fromJson(written).toJson() != written) std::abort();
    });
    return 0;
}

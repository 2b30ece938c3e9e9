// libFuzzer target: a point file's text (points/point-NNNN.json of a sweep folder) through
// pointResultFromText, the reader `sweep --resume` uses, then the round trip of every point it
// accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "experiment/sweep/point_result.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipelens::fuzz::expectTypedErrorsOnly([&] {
        const pipelens::PointResult point = pipelens::pointResultFromText(text, "fuzz.json");
        const nlohmann::json written = pipelens::pointResultToJson(point);
        if (pipelens::pointResultToJson(pipelens::pointResultFromJson(written)) != written) {
            std::abort();
        }
    });
    return 0;
}

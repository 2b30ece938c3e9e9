// libFuzzer target: the CSV reader on arbitrary text, with the label in the last and the first
// column.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "data/loaders.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const int labelColumn = size % 2 == 0 ? -1 : 0;
    pipelens::fuzz::expectTypedErrorsOnly([&] {
        (void)pipelens::parseCsv(text, "fuzz.csv", labelColumn, pipelens::fuzz::smallShapes());
    });
    return 0;
}

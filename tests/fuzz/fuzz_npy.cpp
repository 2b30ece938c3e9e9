// libFuzzer target: the .npy reader on arbitrary bytes. Any exception other than the reader's
// typed errors, and any crash or sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "data/loaders.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    pipelens::fuzz::expectTypedErrorsOnly(
        [&] { (void)pipelens::parseNpyMatrix(bytes, "fuzz.npy", pipelens::fuzz::smallShapes()); });
    return 0;
}

// libFuzzer target: the LIBSVM reader on arbitrary text (dim taken from the file).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "data/loaders.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipelens::fuzz::expectTypedErrorsOnly(
        [&] { (void)pipelens::parseLibsvm(text, "fuzz.svm", 0, pipelens::fuzz::smallShapes()); });
    return 0;
}

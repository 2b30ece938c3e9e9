// libFuzzer target: the PyTorch schedule CSV importer on arbitrary text. A file it accepts must
// summarize, export and import again to the same program (an order-only file to its timing, a
// compute-only file to itself); anything but a typed error aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "schedule/program.hpp"
#include "schedule/pytorch_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipelens::fuzz::expectTypedErrorsOnly([&] {
        const pipelens::PipelineProgram program =
            pipelens::parsePytorchScheduleCsv(text, "fuzz.csv");
        (void)pipelens::summarizeProgram(program);
        const std::string csv = pipelens::pytorchScheduleCsv(program);
        pipelens::PipelineProgram back;
        try {
            back = pipelens::parsePytorchScheduleCsv(csv, "export.csv");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "the export of an accepted file is refused: %s\n", e.what());
            std::abort();
        }
        if (back.orderOnly || back.ignoredActions != 0 ||
            (!program.orderOnly && back.ranks != program.ranks)) {
            std::fprintf(stderr, "the export does not give back the program\n");
            std::abort();
        }
    });
    return 0;
}

#pragma once
// Shared by the fuzz targets: the only exceptions a reader may throw are PipeLens's typed errors
// (each carries a message for the user); anything else aborts, so libFuzzer records it.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "data/loaders.hpp"
#include "errors.hpp"

namespace pipelens::fuzz {

template <typename F>
void expectTypedErrorsOnly(F&& read) {
    try {
        read();
    } catch (const ConfigError&) {
    } catch (const DataError&) {
    } catch (const ResourceError&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "untyped exception: %s\n", e.what());
        std::abort();
    }
}

// Matrices above 2^20 entries (8 MiB) are refused like an over-sized input, so the fuzzer
// explores parsing instead of allocating.
inline ShapeCheck smallShapes() {
    return [](std::int64_t rows, std::int64_t cols) {
        if (rows < 0 || cols < 0 || rows * cols > (std::int64_t{1} << 20)) {
            throw ResourceError("fuzz: shape too large");
        }
    };
}

}  // namespace pipelens::fuzz

#pragma once
// Shared by the OpenCL test suites: one context for the whole executable, and the rule that a
// missing OpenCL platform fails the suite (CI installs PoCL) unless PIPELENS_ALLOW_NO_OPENCL=1.
#include <QtTest>

#include <cstdlib>
#include <memory>
#include <string>

#include "devices.hpp"
#include "opencl_context.hpp"

namespace opencl_test {

inline bool noOpenClAllowed() {
    const char* v = std::getenv("PIPELENS_ALLOW_NO_OPENCL");
    return v && std::string(v) == "1";
}

inline std::shared_ptr<pipelens::gpu::OpenClContext>& context() {
    static std::shared_ptr<pipelens::gpu::OpenClContext> ctx;
    return ctx;
}

// |got - want| <= abs + rel * |want|.
inline bool close(double got, double want, double rel, double abs = 0.0) {
    return std::abs(got - want) <= abs + rel * std::abs(want);
}

}  // namespace opencl_test

// In initTestCase: fail (or, when allowed, skip) when there is no OpenCL device, else make the
// shared context on the first device.
#define PIPELENS_REQUIRE_OPENCL()                                                            \
    do {                                                                                     \
        if (pipelens::gpu::listDevices().empty()) {                                          \
            if (opencl_test::noOpenClAllowed()) {                                            \
                QSKIP(                                                                       \
                    "no OpenCL platform found and PIPELENS_ALLOW_NO_OPENCL=1: OpenCL tests " \
                    "skipped");                                                              \
            }                                                                                \
            QFAIL(                                                                           \
                "no OpenCL platform found: install pocl-opencl-icd (or set "                 \
                "PIPELENS_ALLOW_NO_OPENCL=1 to skip these tests knowingly)");                \
        }                                                                                    \
        if (!opencl_test::context()) {                                                       \
            opencl_test::context() = std::make_shared<pipelens::gpu::OpenClContext>();       \
        }                                                                                    \
    } while (false)

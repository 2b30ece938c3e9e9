#pragma once
// The Khronos C++ bindings, configured once for the whole backend. The bindings' own exceptions
// stay off: every call's status is checked by hand and reported as a ClError naming the call.
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <CL/opencl.hpp>
#pragma GCC diagnostic pop

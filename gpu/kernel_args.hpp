#pragma once
// One description of how a kernel's arguments are set, shared by the backend, the kernel tests
// and the kernel benchmark: in order, reals in the program's precision, and a failure that
// names the kernel and the argument.
#include <cstddef>
#include <string>

#include "cl_error.hpp"
#include "cl_headers.hpp"
#include "opencl_context.hpp"

namespace pipelens::gpu {

// A real argument: passed as double or float, as the program was built.
struct Real {
    double value;
};
// Work-group local memory of this many bytes.
struct Local {
    std::size_t bytes;
};

// KernelArgs(kernel, "name", precision)(buffer)(n)(Real{step})(Local{bytes});
class KernelArgs {
  public:
    KernelArgs(cl::Kernel& kernel, const char* name, Precision precision)
        : kernel_(kernel), name_(name), fp64_(precision == Precision::Double) {}
    KernelArgs& operator()(const cl::Buffer& b) { return check(kernel_.setArg(index_, b)); }
    KernelArgs& operator()(int v) { return check(kernel_.setArg(index_, static_cast<cl_int>(v))); }
    KernelArgs& operator()(cl_long v) { return check(kernel_.setArg(index_, v)); }
    KernelArgs& operator()(Real r) {
        return check(fp64_ ? kernel_.setArg(index_, r.value)
                           : kernel_.setArg(index_, static_cast<float>(r.value)));
    }
    KernelArgs& operator()(Local l) { return check(kernel_.setArg(index_, cl::Local(l.bytes))); }

  private:
    KernelArgs& check(cl_int status) {
        checkCl(status, "clSetKernelArg",
                std::string(name_) + " argument " + std::to_string(index_));
        ++index_;
        return *this;
    }
    cl::Kernel& kernel_;
    const char* name_;
    bool fp64_;
    cl_uint index_ = 0;
};

}  // namespace pipelens::gpu

# OpenCL backend benchmarks (docs/benchmarks.md, "OpenCL"). Plain executables.
#   bench_opencl_kernels: each kernel's achieved bandwidth next to a copy kernel's on the device.
#   bench_opencl_runs:    whole runs, OpenCL against the CPU engine (--large for the 4 GiB run).
foreach(bench bench_opencl_kernels bench_opencl_runs)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${bench}.cpp)
    add_executable(${bench} ${CMAKE_CURRENT_SOURCE_DIR}/${bench}.cpp)
    target_link_libraries(${bench} PRIVATE pipelens_gpu pipelens_core pipelens_warnings)
    target_compile_options(${bench} PRIVATE -O3)
  endif()
endforeach()

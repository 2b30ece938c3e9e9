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

# The language model on OpenCL: CLBlast GEMM GFLOP/s and PD tokens/s against the CPU engine.
#   cmake --build build -j2 --target bench_opencl_lm
#   POCL_CACHE_DIR=build/pocl-cache build/tests/bench/bench_opencl_lm
add_executable(bench_opencl_lm ${CMAKE_CURRENT_SOURCE_DIR}/bench_opencl_lm.cpp)
target_link_libraries(bench_opencl_lm PRIVATE pipelens_gpu pipelens_core pipelens_warnings)
target_compile_options(bench_opencl_lm PRIVATE -O3)
target_compile_definitions(bench_opencl_lm PRIVATE PIPELENS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

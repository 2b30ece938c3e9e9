# CPU engine benchmarks (the foundation issue's speed and memory targets). Plain executables
# timed with std::chrono, so the output is one table; see docs/benchmarks.md, "CPU engine".
#   cmake --build build-bench --target bench_engine bench_rpd_memory bench_setup
#   build-bench/tests/bench/bench_engine --reps 5
#   build-bench/tests/bench/bench_rpd_memory
#   build-bench/tests/bench/bench_setup --reps 7     (data, f* and L before the first slot)
#   build-bench/tests/bench/bench_correctors --reps 5 (PD with each corrector vs plain PD)
#   build-bench/tests/bench/bench_correctors --backend opencl (the same on the OpenCL backend)
foreach(bench bench_engine bench_rpd_memory bench_setup bench_correctors)
  add_executable(${bench} ${CMAKE_CURRENT_SOURCE_DIR}/${bench}.cpp)
  target_link_libraries(${bench} PRIVATE pipelens_core pipelens_warnings)
  target_compile_options(${bench} PRIVATE -O3)
endforeach()
# bench_correctors --backend opencl: the same runs on the OpenCL backend (a build with OpenCL).
if(TARGET pipelens_gpu)
  target_link_libraries(bench_correctors PRIVATE pipelens_gpu)
  target_compile_definitions(bench_correctors PRIVATE PIPELENS_BENCH_OPENCL=1)
else()
  target_compile_definitions(bench_correctors PRIVATE PIPELENS_BENCH_OPENCL=0)
endif()

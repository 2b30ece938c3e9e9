# Language-model CPU throughput (tokens per second); figures in docs/benchmarks.md,
# "Language model (CPU engine)".
#   cmake --build build -j2 --target bench_lm_cpu
#   build/tests/bench/bench_lm_cpu
add_executable(bench_lm_cpu ${CMAKE_CURRENT_SOURCE_DIR}/bench_lm_cpu.cpp)
target_link_libraries(bench_lm_cpu PRIVATE pipelens_core pipelens_warnings)
target_compile_options(bench_lm_cpu PRIVATE -O3)
target_compile_definitions(bench_lm_cpu PRIVATE PIPELENS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

# How long `reproduce E5` takes at full size, from two short PD runs and the protocol's plan
# (docs/benchmarks.md, "E5 at full size").
#   cmake --build build -j2 --target bench_e5_estimate
#   build/tests/bench/bench_e5_estimate
add_executable(bench_e5_estimate ${CMAKE_CURRENT_SOURCE_DIR}/bench_e5_estimate.cpp)
target_link_libraries(bench_e5_estimate PRIVATE pipelens_core pipelens_warnings)
target_compile_definitions(bench_e5_estimate PRIVATE PIPELENS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

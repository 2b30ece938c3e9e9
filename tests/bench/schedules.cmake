# Schedule family, PyTorch schedule CSV and Chrome trace benchmarks (issue 31, "Speed"). A plain
# executable timed with std::chrono that prints one table; figures in docs/benchmarks.md,
# "Schedules: the family, PyTorch CSV, traces".
#   cmake --build build --target bench_schedules
#   build/tests/bench/bench_schedules --reps 5      # --only flush,csv,trace or a workload name
add_executable(bench_schedules ${CMAKE_CURRENT_SOURCE_DIR}/bench_schedules.cpp)
target_link_libraries(bench_schedules PRIVATE pipelens_core pipelens_warnings)
target_compile_options(bench_schedules PRIVATE -O3)

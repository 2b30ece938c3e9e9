# The schedule family's replays against PipeDream's per block update (issue 31, "Speed").
#   cmake --build build --target bench_family_replay
#   build/tests/bench/bench_family_replay --reps 3
add_executable(bench_family_replay ${CMAKE_CURRENT_SOURCE_DIR}/bench_family_replay.cpp)
target_link_libraries(bench_family_replay PRIVATE pipelens_core pipelens_warnings)
target_compile_options(bench_family_replay PRIVATE -O3)

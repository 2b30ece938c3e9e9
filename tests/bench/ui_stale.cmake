# Never stale while S changes (issue 9): after an edit of S at d = 512, how soon the schedule
# views (target 50 ms) and the first live curve (300 ms) show the new S, when the run is drawn
# whole, and how soon a superseded run stops (50 ms). Figures in docs/benchmarks.md ("UI").
#   cmake --build build --target bench_ui_stale
#   QT_QPA_PLATFORM=offscreen build/tests/bench/bench_ui_stale [--reps N] [--grab DIR]
#     [--family | --schedule pd|1f1b|zb-h1|interleaved|2bw]   (the schedule family, issue 31)
find_package(Qt6 6.4 REQUIRED COMPONENTS Widgets)
add_executable(bench_ui_stale ${CMAKE_CURRENT_SOURCE_DIR}/bench_ui_stale.cpp)
target_link_libraries(bench_ui_stale PRIVATE pipelens_ui Qt6::Widgets pipelens_warnings)
target_compile_options(bench_ui_stale PRIVATE -O3)

# Redraw speed of the workbench's hand-drawn charts (GanttChart, StalenessHeatmap) on S = 128 over
# 20,000 slots. A plain executable timed with std::chrono; figures in docs/benchmarks.md ("UI").
#   cmake --build build-bench --target bench_ui_redraw
#   QT_QPA_PLATFORM=offscreen build-bench/tests/bench/bench_ui_redraw --frames 20 --reps 5
find_package(Qt6 6.4 REQUIRED COMPONENTS Widgets)
add_executable(bench_ui_redraw ${CMAKE_CURRENT_SOURCE_DIR}/bench_ui_redraw.cpp)
target_link_libraries(bench_ui_redraw PRIVATE pipelens_ui Qt6::Widgets pipelens_warnings)
target_compile_options(bench_ui_redraw PRIVATE -O3)

# From a parameter change to updated loss curves in the workbench (default preset); target
# under 150 ms. A plain executable timed with std::chrono; figures in docs/benchmarks.md ("UI").
#   cmake --build BUILD --target bench_ui_update
#   QT_QPA_PLATFORM=offscreen BUILD/tests/bench/bench_ui_update [--reps N]
find_package(Qt6 6.4 REQUIRED COMPONENTS Widgets)
add_executable(bench_ui_update ${CMAKE_CURRENT_SOURCE_DIR}/bench_ui_update.cpp)
target_link_libraries(bench_ui_update PRIVATE pipelens_ui Qt6::Widgets pipelens_warnings)
target_compile_options(bench_ui_update PRIVATE -O3)

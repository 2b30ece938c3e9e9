# `pipelens-cli animate --default` (GIF and MP4, 960 x 540, 10 fps) timed as the real command;
# each output is decoded back (libavformat) and must hold every slot's frame. Figures in
# docs/benchmarks.md ("Animation export").
#   cmake --build build --target bench_animate pipelens-cli
#   build/tests/bench/bench_animate            # --reps N, --panels gantt|gantt+loss|all, --keep DIR
if(TARGET pipelens_figures)
  add_executable(bench_animate ${CMAKE_CURRENT_SOURCE_DIR}/bench_animate.cpp)
  target_link_libraries(bench_animate PRIVATE pipelens_video pipelens_warnings)
  target_compile_definitions(bench_animate PRIVATE PIPELENS_CLI_PATH="$<TARGET_FILE:pipelens-cli>")
  add_dependencies(bench_animate pipelens-cli)
endif()

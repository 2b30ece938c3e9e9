# `pipelens-cli reproduce all`, full (one seed) and --quick, timed as the real command; each run
# must finish and its summaries must hold the findings. Figures in docs/benchmarks.md
# ("Reproducing the paper").
#   cmake --build build --target bench_reproduce pipelens-cli
#   build/tests/bench/bench_reproduce            # --only quick | --only full, --keep DIR
if(TARGET pipelens_figures)
  add_executable(bench_reproduce ${CMAKE_CURRENT_SOURCE_DIR}/bench_reproduce.cpp)
  target_link_libraries(bench_reproduce PRIVATE nlohmann_json::nlohmann_json pipelens_warnings)
  target_compile_definitions(bench_reproduce PRIVATE PIPELENS_CLI_PATH="$<TARGET_FILE:pipelens-cli>")
  add_dependencies(bench_reproduce pipelens-cli)
endif()

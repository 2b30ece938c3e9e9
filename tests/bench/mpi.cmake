# Sweep throughput over MPI ranks against the threaded single process (docs/benchmarks.md,
# "Sweeps over MPI"). Drives the real pipelens-cli and mpirun.
#   cmake --build build --target bench_mpi_sweep pipelens-cli
#   build/tests/bench/bench_mpi_sweep --reps 3 --ranks 1,2,4
add_executable(bench_mpi_sweep ${CMAKE_CURRENT_SOURCE_DIR}/bench_mpi_sweep.cpp)
target_link_libraries(bench_mpi_sweep PRIVATE nlohmann_json::nlohmann_json pipelens_warnings)
target_compile_definitions(bench_mpi_sweep PRIVATE
  PIPELENS_CLI_PATH="$<TARGET_FILE:pipelens-cli>" PIPELENS_MPIEXEC="${MPIEXEC_EXECUTABLE}")
add_dependencies(bench_mpi_sweep pipelens-cli)
target_include_directories(bench_mpi_sweep PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/..)

#!/usr/bin/env bash
# Builds PipeLens with AddressSanitizer + UndefinedBehaviorSanitizer (PIPELENS_SANITIZE) into
# build-asan/ (UI on, benchmarks off) and runs the chosen test labels under them; any report
# fails the job. Usage: scripts/sanitize.sh [ctest label regex, default core|cli]
# CI runs the default (the engine and the command line); 'core|cli|ui' adds the app's suites,
# whose build (Qt Charts in every file) doubles the job (docs/reliability.md, "In CI").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
labels="${1:-core|cli}"
build="${PIPELENS_ASAN_BUILD_DIR:-$here/build-asan}"

# -O1 -g1: the sanitizers need frames and line numbers, not full debug info or full
# optimisation, and -O1 compiles faster than -O2 on CI's two cores.
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DPIPELENS_SANITIZE=ON \
  -DPIPELENS_BUILD_UI=ON -DPIPELENS_BUILD_BENCH=OFF -DPIPELENS_WERROR=ON >/dev/null
# Only what the chosen labels run: their test executables (each brings pipelens-cli and
# pipelens-reproduce); the OpenCL and MPI suites and the app are left out, which shortens the
# build, the longest part of this job.
targets=$(ctest --test-dir "$build" -N -L "$labels" |
  sed -n 's/.*Test *#[0-9]*: [a-z]*\.\(tst_[a-z_0-9]*\)$/\1/p')
if [ -z "$targets" ]; then
  echo "sanitize: no test matches the labels '$labels'" >&2
  exit 2
fi
# shellcheck disable=SC2086  # one target per word
cmake --build "$build" -j "$(nproc)" --target $targets

# use_sigaltstack=0: LLVM inside PoCL installs its own alternate signal stack on threads that
# compile kernels and leaves it behind; with ASan's own sigaltstack handling on, a worker
# thread exiting then aborts two ui suites. PipeLens code never relies on sigaltstack.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:use_sigaltstack=0:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# Leaks inside the OpenCL driver only; each suppression says why (scripts/lsan.supp).
export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp:print_suppressions=0"
# The sanitizers slow the runs several times over: the ui tests' waits for results get five times
# their usual bound (tests/ui/ui_test_support.hpp); what they check is unchanged.
export PIPELENS_TEST_TIME_SCALE=5
# QtTest's watchdog ends a test function after 300 s; the same factor of five (a slow function
# under the sanitizers, such as a whole preset's run, is not a hang).
export QTEST_FUNCTION_TIMEOUT=1500000
export POCL_CACHE_DIR="$build/pocl-cache"
mkdir -p "$POCL_CACHE_DIR"
ctest --test-dir "$build" -L "$labels" --output-on-failure -j 2

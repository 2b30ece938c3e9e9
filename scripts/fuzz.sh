#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) into build-fuzz/ and runs each for SECONDS
# (default 60) on a copy of its seed corpus in tests/fuzz/corpus/<target>/, nproc targets at a
# time (PIPELENS_FUZZ_JOBS overrides): each target is one libFuzzer process on one core and still
# gets its full SECONDS, so the wall time is about ceil(targets / jobs) x SECONDS. Fails on any
# crash, sanitizer report, leak or timeout: no further target starts, the running ones finish,
# and the end of each failing target's log is printed. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(fuzz_config fuzz_npy fuzz_csv fuzz_libsvm fuzz_text_corpus fuzz_sweep fuzz_point fuzz_args
           fuzz_csv_writer fuzz_schedule_csv)
fi
build="${PIPELENS_FUZZ_BUILD_DIR:-$here/build-fuzz}"

# PIPELENS_FUZZ_SKIP_BUILD=1 runs what is built (several instances side by side).
if [ "${PIPELENS_FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  # clang and Debian's libFuzzer (what scripts/setup.sh does not install), plus the build tools.
  bash "$here/scripts/install_missing.sh" clang libfuzzer-14-dev cmake ninja-build libeigen3-dev \
    nlohmann-json3-dev
  # -g1: line tables are all a finding's stack trace needs; full debug info made the build
  # (the most of this job on CI's two cores) slower for nothing.
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1" \
    -DCMAKE_CXX_COMPILER=clang++ -DPIPELENS_FUZZ=ON -DPIPELENS_WERROR=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
fi

# Findings (crash-*, leak-*, timeout-*) land in build-fuzz/findings/<target>/; the corpus grown
# during the run stays in build-fuzz/corpus/<target>/ (the committed seeds are never modified).
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
parallel="${PIPELENS_FUZZ_JOBS:-$(nproc)}"
declare -A running=() # PID -> target
failed=()
# An interrupted run (Ctrl-C) stops the fuzzers it started.
trap 'for pid in "${!running[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
start_target() {
  local t="$1"
  local corpus="$build/corpus/$t" findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  echo "fuzz: $t for ${seconds}s"
  "$build/tests/fuzz/$t" "$corpus" "$here/tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$findings/" -print_final_stats=1 2>"$build/$t.log" &
  running[$!]="$t"
}
next=0
while true; do
  while ((${#failed[@]} == 0 && next < ${#targets[@]} && ${#running[@]} < parallel)); do
    start_target "${targets[next]}"
    next=$((next + 1))
  done
  ((${#running[@]} > 0)) || break
  pid=""
  if wait -n -p pid; then rc=0; else rc=$?; fi
  t="${running[$pid]}"
  unset "running[$pid]"
  if ((rc != 0)); then
    echo "fuzz: $t FAILED (exit $rc)" >&2
    failed+=("$t")
    continue
  fi
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/$t.log" | tail -n 2 |
    sed "s/^/fuzz: $t: /"
done
if ((${#failed[@]} > 0)); then
  for t in "${failed[@]}"; do
    echo "fuzz: $t FAILED; the end of $build/$t.log:" >&2
    tail -n 40 "$build/$t.log" >&2
  done
  exit 1
fi
echo "fuzz: no crash in ${targets[*]} (${seconds}s each, $parallel at a time)"

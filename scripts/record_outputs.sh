#!/usr/bin/env bash
# Records what PipeLens computes, so a refactor can be proven not to change it: runs
# `reproduce all --quick`, every example in examples/ (run or sweep) and the golden test suites,
# then lists a SHA-256 per written file, with the wall-clock fields (seconds, dates) dropped from
# JSON files and PNG/SVG figures left out (their bytes depend on fonts, not on the engine).
# Usage: scripts/record_outputs.sh BUILD_DIR OUT_DIR   -> OUT_DIR/outputs.sha256
# Compare two records with: diff A/outputs.sha256 B/outputs.sha256
set -euo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
cli="$build/app/pipelens-cli"
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/runs"
cd "$repo"
"$cli" reproduce all --quick --out "$out/runs/reproduce" --threads 2 >"$out/reproduce.log" 2>&1
for f in examples/*.json; do
    name=$(basename "$f" .json)
    if [[ $name == *sweep* ]]; then
        "$cli" sweep "$f" --out "$out/runs/$name" --threads 2 --quiet >/dev/null
    else
        "$cli" run "$f" --out "$out/runs/$name" --threads 2 --quiet >/dev/null
    fi
done
# The golden cases: the suites that compare the engine with the authors' numbers.
for t in tst_golden tst_lm_model tst_lm_pipeline; do
    if [[ -x "$build/tests/$t" ]]; then
        "$build/tests/$t" >"$out/$t.log" 2>&1 || { echo "$t failed" >&2; exit 1; }
        grep -E "^Totals" "$out/$t.log"
    fi
done
# Wall-clock values differ between any two runs; everything else must not.
strip_time='walk(if type == "object" then with_entries(select(.key | test("seconds|wall|cpu_s|date|time_s|elapsed") | not)) else . end)'
cd "$out/runs"
find . -type f ! -name '*.png' ! -name '*.svg' | sort | while read -r f; do
    if [[ $f == *.json ]] && command -v jq >/dev/null; then
        printf '%s  %s\n' "$(jq -S "$strip_time" "$f" | sha256sum | cut -d' ' -f1)" "$f"
    else
        printf '%s  %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$f"
    fi
done >"$out/outputs.sha256"
wc -l <"$out/outputs.sha256"

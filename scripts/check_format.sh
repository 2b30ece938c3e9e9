#!/usr/bin/env bash
# Fails (exit 1) when a C++ file of the repository is not formatted by the root .clang-format
# (clang-format 14, Debian 12's), and lists each such file with the fix; or when a shell script
# (scripts/*.sh, .ci/run) does not parse. Generated tables
# (written by scripts/*.py) are left as their generators write them.
#   scripts/check_format.sh          check every tracked .cpp/.hpp (a few seconds)
#   scripts/check_format.sh --fix    format them in place
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_missing.sh clang-format-14
generated='^(core/random/ziggurat_tables\.hpp|ui/charts/viridis_table\.cpp)$'
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' | grep -Ev "$generated")
if [ "${1:-}" = "--fix" ]; then
  clang-format-14 -i --style=file "${files[@]}"
  exit 0
fi
# One run over every file; each unformatted place is reported as FILE:LINE:COL: error: ...
mapfile -t bad < <(clang-format-14 --style=file --dry-run --Werror "${files[@]}" 2>&1 |
                   sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} file(s) not formatted by .clang-format:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "check_format: run scripts/check_format.sh --fix (or clang-format-14 -i FILE)" >&2
  exit 1
fi
# Every shell script at least parses (a broken quote once hid in run.sh's headless branch).
mapfile -t scripts < <(git ls-files '*.sh' .ci/run)
for f in "${scripts[@]}"; do
  if ! bash -n "$f"; then
    echo "check_format: $f does not parse (bash -n)" >&2
    exit 1
  fi
done
echo "check_format: ${#files[@]} files formatted, ${#scripts[@]} shell scripts parse"

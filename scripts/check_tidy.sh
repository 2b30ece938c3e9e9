#!/usr/bin/env bash
# Runs clang-tidy 14 (Debian 12's) with the root .clang-tidy on C++ files of the repository and
# fails (exit 1) on any finding, printing each one; prints "check_tidy: N files clean" and the
# duration otherwise. It needs a configured build's compile_commands.json (build/, or
# PIPELENS_BUILD_DIR, as scripts/test.sh): Qt's generated headers must exist, so run it after a
# build.
#   scripts/check_tidy.sh            the C++ files changed since the commit in .ci/tidy-base (CI)
#   scripts/check_tidy.sh --all      every tracked C++ file (about 48 minutes on 2 cores)
#   scripts/check_tidy.sh FILE...    those files
# .ci/tidy-base holds a commit whose whole tree is known clean (--all, or a clean run of this
# mode there: docs/reliability.md); "changed" is that commit against the working tree, plus
# untracked files. When the clone does not know that
# commit (a shallow clone), the files changed by HEAD's own commit are checked instead.
# A .cpp is checked as its own translation unit; a .hpp through its own .cpp when there is one,
# else through one .cpp that includes it, with a header filter that shows that header's
# findings (and no other header's). Generated tables (scripts/*.py) are skipped.
# PIPELENS_TIDY_JOBS sets how many clang-tidy run at once (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
start=$SECONDS
bash scripts/install_missing.sh clang-tidy-14
build="${PIPELENS_BUILD_DIR:-$root/build}"
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check_tidy: $build/compile_commands.json is missing: build first (scripts/test.sh)" >&2
  exit 2
fi
generated='^(core/random/ziggurat_tables\.hpp|ui/charts/viridis_table\.cpp)$'

files=()
if [ "${1:-}" = "--all" ]; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
  what="every tracked C++ file"
elif (($# > 0)); then
  for f in "$@"; do files+=("$(realpath --relative-to="$root" "$f")"); done
  what="the given files"
else
  base="$(sed -n 's/^\([0-9a-f]\{40\}\)$/\1/p' .ci/tidy-base 2>/dev/null | head -n 1)"
  if [ -n "$base" ] && git cat-file -e "$base^{commit}" 2>/dev/null; then
    mapfile -t files < <({ git diff --name-only --diff-filter=d "$base" -- '*.cpp' '*.hpp'
                           git ls-files --others --exclude-standard -- '*.cpp' '*.hpp'; } | sort -u)
    what="the C++ files changed since ${base:0:12} (.ci/tidy-base)"
  elif git rev-parse -q --verify 'HEAD^' >/dev/null; then
    echo "check_tidy: .ci/tidy-base's commit '${base:-none}' is not in this clone (shallow?):" \
         "checking the files changed by HEAD's own commit only"
    mapfile -t files < <(git diff --name-only --diff-filter=d 'HEAD^' HEAD -- '*.cpp' '*.hpp')
    what="the C++ files changed by HEAD ($(git rev-parse --short HEAD))"
  else
    echo "check_tidy: neither .ci/tidy-base's commit '${base:-none}' nor HEAD's parent is in" \
         "this clone: nothing to compare with, so nothing checked (run scripts/check_tidy.sh --all)"
    exit 0
  fi
fi
mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -E '\.(cpp|hpp)$' | grep -Ev "$generated" |
                     sort -u || true)
for f in "${files[@]}"; do
  if [ ! -f "$f" ]; then echo "check_tidy: no such file: $f" >&2; exit 2; fi
done
if ((${#files[@]} == 0)); then
  echo "check_tidy: no C++ file to check ($what); 0 files clean, $((SECONDS - start)) s"
  exit 0
fi

# One job per translation unit: "TU<TAB>HEADER-REGEX". A header goes with its own .cpp, else
# with one .cpp that includes it (a quoted #include that names it from that .cpp's folder or
# one of its -I folders; the nearest such .cpp, the one with the longest include path first).
jobs_file="$(mktemp)"
out_dir="$(mktemp -d)"
trap 'rm -rf "$jobs_file" "$out_dir"' EXIT
python3 - "$build/compile_commands.json" "${files[@]}" >"$jobs_file" <<'PY'
import json, os, re, shlex, subprocess, sys

db_path, files = sys.argv[1], sys.argv[2:]
root = os.getcwd()
include_dirs = {}
for entry in json.load(open(db_path)):
    path = os.path.relpath(os.path.normpath(os.path.join(entry["directory"], entry["file"])), root)
    args = entry.get("arguments") or shlex.split(entry["command"])
    dirs = include_dirs.setdefault(path, [])
    for i, a in enumerate(args):
        if a in ("-I", "-isystem", "-iquote") and i + 1 < len(args):
            dirs.append(args[i + 1])
        elif a.startswith("-I") and len(a) > 2:
            dirs.append(a[2:])
tracked = set(subprocess.run(["git", "ls-files", "*.cpp"], capture_output=True, text=True,
                             check=True).stdout.split())

all_dirs = sorted({d for dirs in include_dirs.values() for d in dirs})

def direct_includers(header):
    """(preference, file) for each tracked .cpp or .hpp whose quoted #include names header."""
    name = os.path.basename(header)
    grep = subprocess.run(["git", "grep", "-n", "-E", r'#\s*include\s*"([^"]*/)?' +
                           re.escape(name) + '"', "--", "*.cpp", "*.hpp"],
                          capture_output=True, text=True).stdout
    found = []
    for line in grep.splitlines():
        f, _, rest = line.split(":", 2)
        spelled = re.search(r'"([^"]*)"', rest).group(1)
        # Where the includer looks: its own folder, then its -I folders (a header's, or those of
        # a .cpp outside the database: any folder of the database).
        dirs = [os.path.join(root, os.path.dirname(f))] + include_dirs.get(f, all_dirs)
        if not any(os.path.normpath(os.path.join(d, spelled)) == os.path.join(root, header)
                   for d in dirs):
            continue
        shared = os.path.commonpath([f, header])
        near = len(shared.split(os.sep)) if shared else 0
        # ".." in the spelling would put it in the header's path: prefer plain spellings. The
        # smallest key wins; a translation unit without Qt is the quicker to check.
        qt = f.startswith(("ui/", "tests/ui/", "app/"))
        found.append(((f not in include_dirs, ".." in spelled, -near, qt, -len(spelled), f), f))
    return found

def includer(header):
    """A .cpp that includes header, directly or through other headers (the fewest steps, then
    one of the compile database, with the plainest spelling, nearest), or None."""
    seen, level = {header}, [header]
    while level:
        cpps, above = [], []
        for h in level:
            for key, f in direct_includers(h):
                if f.endswith(".cpp"):
                    cpps.append((key, f))
                elif f not in seen:
                    seen.add(f)
                    above.append(f)
        if cpps:
            return min(cpps)[1]
        level = above
    return None

jobs = {}  # TU -> headers checked through it
for f in files:
    if f.endswith(".cpp"):
        jobs.setdefault(f, [])
        continue
    own = f[:-4] + ".cpp"
    tu = own if own in tracked else includer(f)
    if tu is None:
        print(f"check_tidy: {f}: no .cpp includes it: not checked", file=sys.stderr)
        continue
    jobs.setdefault(tu, []).append(f)
# The ui translation units (Qt Charts) are the slowest: start them first.
for tu in sorted(jobs, key=lambda t: (not ("ui/" in t), t)):
    headers = jobs[tu]
    # Paths hold only [A-Za-z0-9_./-]: escaping the dots makes them exact (LLVM's regex).
    regex = "(^|/)(" + "|".join(h.replace(".", r"\.") for h in headers) + ")$" if headers else "^$"
    print(f"{tu}\t{regex}")
PY
njobs="$(wc -l <"$jobs_file")"
echo "check_tidy: ${#files[@]} file(s), $what: $njobs translation unit(s)," \
     "${PIPELENS_TIDY_JOBS:-$(nproc)} at a time"

# Each job writes its output to out_dir/<n>.log and, on a finding or an error, out_dir/<n>.fail.
run_one() {
  local n="$1" tu="$2" regex="$3"
  if ! clang-tidy-14 -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option \
         --header-filter="$regex" "$tu" >"$out_dir/$n.log" 2>&1; then
    touch "$out_dir/$n.fail"
  fi
}
export -f run_one
export build out_dir
awk -F'\t' '{ printf "%d\t%s\t%s\n", NR, $1, $2 }' "$jobs_file" |
  xargs -d '\n' -n 1 -P "${PIPELENS_TIDY_JOBS:-$(nproc)}" \
    bash -c 'IFS=$'"'"'\t'"'"' read -r n tu regex <<<"$1"; run_one "$n" "$tu" "$regex"' _

failed=0
for n in $(seq 1 "$njobs"); do
  if [ -e "$out_dir/$n.fail" ]; then
    failed=$((failed + 1))
    tu="$(sed -n "${n}p" "$jobs_file" | cut -f1)"
    echo "check_tidy: findings through $tu:" >&2
    grep -Ev '^[0-9]+ (warning|error)s? (generated|treated as error)|^Error while processing' \
      "$out_dir/$n.log" >&2 || true
  fi
done
if ((failed > 0)); then
  echo "check_tidy: findings in $failed of $njobs translation unit(s) ($((SECONDS - start)) s);" \
       "fix them, or for a false positive add '// NOLINT(check-name): why' on that line" >&2
  exit 1
fi
echo "check_tidy: ${#files[@]} files clean ($njobs translation units, $((SECONDS - start)) s)"

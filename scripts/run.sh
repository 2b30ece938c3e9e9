#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default experiment: in the desktop app when a
# display is available, otherwise headless with its results and figures (PNG, and an index.html
# that shows them) written to results/default/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$here/scripts/setup.sh"
build="${PIPELENS_BUILD_DIR:-$here/build}"
if { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } && [ -x "$build/app/pipelens" ]; then
  exec "$build/app/pipelens" --preset default "$@"
fi
out="$here/results/default"
echo "No display: running the default experiment headless into $out"
"$build/app/pipelens-cli" run --default --figures --out "$out" "$@"
echo "Open $out/index.html in a browser: the figures (the Gantt chart, staleness, loss, the window"
echo "as the app shows this run) with the summary table."

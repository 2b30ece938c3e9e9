#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (core, OpenCL on PoCL, the UI offscreen).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The tests' build treats compiler warnings as errors, here as in CI.
bash "$here/scripts/setup.sh" --werror
build="${PIPELENS_BUILD_DIR:-$here/build}"
# PoCL compiles kernels on first use; keep its cache inside the build folder.
export POCL_CACHE_DIR="$build/pocl-cache"
mkdir -p "$POCL_CACHE_DIR"
# tst_authors_data checks the synthetic data against a NumPy script run by /usr/bin/python3.
bash "$here/scripts/install_missing.sh" python3-numpy
ctest --test-dir "$build" --output-on-failure -j 2

#!/usr/bin/env bash
# Installs the Debian packages PipeLens needs (only the missing ones), then configures and
# builds it into build/. Called by run.sh and test.sh; safe to run again.
#   setup.sh [--werror]   --werror: compiler warnings are errors (test.sh, and so CI, always
#                         passes it; it does not depend on any environment variable)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  g++ cmake ninja-build pkg-config
  qt6-base-dev qt6-charts-dev qt6-svg-dev libgl-dev
  libeigen3-dev nlohmann-json3-dev
  opencl-headers opencl-clhpp-headers ocl-icd-opencl-dev pocl-opencl-icd clinfo libclblast-dev
  libopenmpi-dev openmpi-bin
  xvfb xauth fonts-dejavu-core
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
  # import pipelens (docs/python.md): the module, its tests and the tour notebook
  pybind11-dev python3-dev python3-numpy python3-pytest python3-nbconvert python3-ipykernel
  python3-matplotlib
)
bash "$here/scripts/install_missing.sh" "${packages[@]}"

build="${PIPELENS_BUILD_DIR:-$here/build}"
cmake_args=(-S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release)
# Without --werror the build folder keeps whatever it was configured with (a build made by
# test.sh is not rebuilt for run.sh).
for arg in "$@"; do
  case "$arg" in
    --werror) cmake_args+=(-DPIPELENS_WERROR=ON) ;;
    *) echo "setup.sh: unknown argument '$arg' (allowed: --werror)" >&2; exit 2 ;;
  esac
done
cmake "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"

#!/usr/bin/env bash
# Installs the Debian packages PipeLens needs (only the missing ones), then configures and
# builds it into build/. Sourced by run.sh and test.sh; safe to run again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  g++ cmake ninja-build pkg-config
  qt6-base-dev qt6-charts-dev qt6-svg-dev libgl-dev
  libeigen3-dev nlohmann-json3-dev
  opencl-headers opencl-clhpp-headers ocl-icd-opencl-dev pocl-opencl-icd clinfo
  libopenmpi-dev openmpi-bin
  xvfb xauth fonts-dejavu-core
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    "${missing[@]}" >/dev/null
fi

build="${PIPELENS_BUILD_DIR:-$here/build}"
cmake_args=(-S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release)
# CI builds treat warnings as errors.
if [ "${CI:-}" = "true" ] || [ "${PIPELENS_WERROR:-0}" = "1" ]; then
  cmake_args+=(-DPIPELENS_WERROR=ON)
fi
cmake "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"

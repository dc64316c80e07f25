#!/usr/bin/env bash
# Installs what is missing (Debian packages only) and builds balancenet into build/.
# Usage: scripts/setup.sh            (BUILD_DIR, BUILD_TYPE and JOBS may be set in the environment;
#        BUILD_TESTS=OFF BUILD_BENCH=OFF build the balancenet program alone, as scripts/demo.sh does)
set -euo pipefail
cd "$(dirname "$0")/.."

# libopenblas0-pthread: the optimised BLAS that balancenet's binaries load by their RPATH (cmake/
# BalancenetModule.cmake); installing it also makes it the system's default libblas.so.3 (Debian's
# alternatives), as for any program. ninja-build: a faster build than make's. fortunes, python3-numpy and
# python3-pil: the examples' real data (English text) and their converters (examples/*.py). python3-torch,
# python3-dev and pybind11-dev: the Python package balancenet.torch (docs/python.md), built against the same torch.
PACKAGES=(build-essential cmake ccache pkg-config ninja-build libopenblas0-pthread
          libtorch-dev libgloo-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
          zlib1g-dev libjpeg62-turbo-dev libpng-dev libssl-dev googletest libgtest-dev libgmock-dev libbenchmark-dev
          dataset-fashion-mnist gnuplot-nox fortunes python3-numpy python3-pil python3-torch python3-dev pybind11-dev)
# Callers add packages they alone need (the test suite: python3-torchvision, the loader benchmark's peer, and
# chromium, to open the report page).
read -r -a EXTRA <<< "${EXTRA_PACKAGES:-}"
PACKAGES+=("${EXTRA[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
GENERATOR=()  # an existing build directory keeps its generator (CMake refuses to change it)
[ -f "$BUILD_DIR/CMakeCache.txt" ] || GENERATOR=(-G Ninja)
cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DBUILD_TESTS="${BUILD_TESTS:-ON}" -DBUILD_BENCH="${BUILD_BENCH:-ON}" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

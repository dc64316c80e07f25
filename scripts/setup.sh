#!/usr/bin/env bash
# Installs what is missing (Debian packages, then the pinned torch from PyPI into .venv/) and builds balancenet
# into build/.
# Usage: scripts/setup.sh            (BUILD_DIR, BUILD_TYPE and JOBS may be set in the environment;
#        BUILD_TESTS=OFF BUILD_BENCH=OFF build the balancenet program alone, as scripts/demo.sh does;
#        BALANCENET_PYTHON=/path/to/python builds against that interpreter's torch 2.9+ instead of .venv's)
set -euo pipefail
cd "$(dirname "$0")/.."

# torch comes from PyPI (requirements.txt): Debian's libtorch is 1.13 (2022) and CPU-only. Everything else is a
# Debian package. ninja-build: a faster build than make's. python3-venv and python3-dev: the project's virtual
# environment and the headers of the Python package balancenet.torch (docs/python.md). fortunes: the examples'
# real text. libgloo-dev: only the headers that torch's ProcessGroupGloo.hpp includes (the wheel ships none);
# nothing links Debian's libgloo: the Gloo in the process is libtorch's own (cmake/TorchFromPython.cmake).
PACKAGES=(build-essential clang cmake ccache pkg-config ninja-build python3 python3-venv python3-dev
          libgloo-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
          zlib1g-dev libjpeg62-turbo-dev libpng-dev libssl-dev googletest libgtest-dev libgmock-dev libbenchmark-dev
          dataset-fashion-mnist gnuplot-nox fortunes)
# Callers add packages they alone need (the test suite: chromium, to open the report page, and the schedulers).
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

# The project's virtual environment with the pinned torch (several GB with its CUDA libraries). uv (Astral's
# installer of PyPI's wheels, itself a wheel on PyPI) installs them: it downloads in parallel and links from its
# cache (here 20 s with nothing cached, download included; 17 s from its cache with the bytecode compiled; pip
# took 100 s from its own warm cache: benchmarks.md).
# Where uv has no wheel for the machine, pip does the same, slower. A given BALANCENET_PYTHON is used as it is.
UV_VERSION=0.13.9
if [ -z "${BALANCENET_PYTHON:-}" ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "setup: making .venv/ (Debian's python3)"
    /usr/bin/python3 -m venv .venv
  fi
  if ! .venv/bin/python - requirements.txt <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
pins = [l.split("#")[0].strip() for l in open(sys.argv[1])]
sys.exit(any(version(n) != v for n, v in (p.split("==") for p in pins if p)))
PY
    echo "setup: installing requirements.txt into .venv/ (torch from PyPI: a few GB the first time)"
    if .venv/bin/pip install -q --disable-pip-version-check "uv==$UV_VERSION"; then
      # Bytecode now, as pip does: where PYTHONDONTWRITEBYTECODE is set (these machines) every Python start
      # would compile torch's modules again (import torch 5.7 s instead of 3.0 s; the Python tests 1.7x slower).
      .venv/bin/uv pip install -q --compile-bytecode --python .venv/bin/python -r requirements.txt
    else
      echo "setup: no uv $UV_VERSION for this machine; pip installs instead"
      .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    fi
  fi
  BALANCENET_PYTHON="$PWD/.venv/bin/python"
fi

echo "setup: packages and the venv ready after ${SECONDS} s"
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
GENERATOR=()  # an existing build directory keeps its generator (CMake refuses to change it)
# clang++ (CXX to choose another): it compiles torch's headers in about half of g++ 12's time, as its PCH keeps
# their template instantiations (g++ redid 7-8 s of them in every file; docs/benchmarks.md).
[ -f "$BUILD_DIR/CMakeCache.txt" ] || GENERATOR=(-G Ninja -DCMAKE_CXX_COMPILER="${CXX:-clang++}")
cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DBALANCENET_PYTHON="$BALANCENET_PYTHON" \
  -DBUILD_TESTS="${BUILD_TESTS:-ON}" -DBUILD_BENCH="${BUILD_BENCH:-ON}" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
echo "setup: built after ${SECONDS} s"

#!/usr/bin/env bash
# Makes one wheel of balancenet, for the torch it was built against, in dist/: the program, the Python package with
# its extension, and the CUDA plugin where one was built. `pip install dist/balancenet-*.whl` then installs it in
# seconds into any venv on any host that has that torch (pip brings it where it is missing) and the Debian runtime
# libraries of scripts/setup.sh's packages; nothing compiles there.
# Usage: scripts/wheel.sh   (BUILD_DIR: the build to pack, default build/, made by scripts/setup.sh when absent
#        (BUILD_TESTS=OFF BUILD_BENCH=OFF unless set); BALANCENET_PYTHON: the Python it was built for, as setup.sh;
#        DIST_DIR: where the wheel goes, default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -x "$BUILD_DIR/apps/balancenet" ]; then
  BUILD_TESTS=${BUILD_TESTS:-OFF} BUILD_BENCH=${BUILD_BENCH:-OFF} scripts/setup.sh
fi
PYTHON=${BALANCENET_PYTHON:-$PWD/.venv/bin/python}
# patchelf (Debian's) gives the installed binaries their places relative to the venv; wheel (PyPI's) writes the
# archive with its RECORD of hashes: both do what this script would otherwise write out by hand.
dpkg-query -W -f='${Status}' patchelf 2>/dev/null | grep -q "install ok installed" || {
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # Waits for dpkg's lock (another apt on the machine, or the suite's install.apt_install) rather than failing.
  $SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=120 --no-install-recommends patchelf >/dev/null
}
WHEEL_VERSION=0.45.1
"$PYTHON" -c "import wheel, sys; sys.exit(wheel.__version__ != '$WHEEL_VERSION')" 2>/dev/null ||
  "$PYTHON" -m pip install -q --disable-pip-version-check "wheel==$WHEEL_VERSION"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$BUILD_DIR" --prefix "$stage/prefix" >/dev/null
"$PYTHON" scripts/make_wheel.py "$stage/prefix" "${DIST_DIR:-dist}"

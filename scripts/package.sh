#!/usr/bin/env bash
# Builds the Debian package balancenet_<version>_<arch>.deb (CPack, cmake/BalancenetPackage.cmake) from a
# configured build directory: the program and the Python package only, not the tests. Prints the .deb's path.
# Usage: scripts/package.sh   (BUILD_DIR, default build; PACKAGE_DIR, default $BUILD_DIR/package;
#        SKIP_BUILD=1 packages what is built, as the test fixture does; JOBS)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PACKAGE_DIR=${PACKAGE_DIR:-$BUILD_DIR/package}
if [ ! -f "$BUILD_DIR/CPackConfig.cmake" ]; then
  echo "package.sh: $BUILD_DIR is not configured (run scripts/setup.sh first)" >&2
  exit 2
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" --target balancenet_installed >&2  # stdout: the .deb alone
fi
# A fresh folder: one .deb, that of this build (an older version's would stay beside it).
rm -rf "$PACKAGE_DIR"
cpack --config "$BUILD_DIR/CPackConfig.cmake" -B "$PACKAGE_DIR" >"$PACKAGE_DIR.log" 2>&1 || {
  cat "$PACKAGE_DIR.log" >&2
  exit 1
}
ls "$PACKAGE_DIR"/balancenet_*.deb

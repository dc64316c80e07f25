#!/usr/bin/env bash
# Installs, builds, and runs the whole test suite (unit, multi-rank, multi-process integration).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRA_PACKAGES="python3-torch chromium" scripts/setup.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)" --timeout 600

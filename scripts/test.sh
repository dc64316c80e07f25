#!/usr/bin/env bash
# Installs, builds, and runs the whole test suite (unit, multi-rank, multi-process integration), after
# checking that the C++ files follow .clang-format (a failed check still runs the tests, then fails).
set -euo pipefail
cd "$(dirname "$0")/.."
# slurmctld, slurmd (with slurm-client) and openmpi-bin: the real schedulers of tests/integration's scheduler_tests
# (a one-node Slurm from scripts/slurm-local.sh, and mpirun): 11 s of apt-get install, 8.7 MB to download.
EXTRA_PACKAGES="python3-torchvision chromium clang-format iproute2 slurmctld slurmd openmpi-bin" scripts/setup.sh
format=0
scripts/check-format.sh || format=$?
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)" --timeout 600
exit "$format"

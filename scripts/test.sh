#!/usr/bin/env bash
# Installs, builds, and runs the whole test suite (unit, multi-rank, multi-process integration), after
# checking that the C++ files follow .clang-format (a failed check still runs the tests, then fails).
set -euo pipefail
cd "$(dirname "$0")/.."
# slurmctld, slurmd (with slurm-client) and openmpi-bin: the real schedulers of tests/integration's scheduler_tests
# (a one-node Slurm from scripts/slurm-local.sh, and mpirun): 11 s of apt-get install, 8.7 MB to download.
EXTRA_PACKAGES="chromium clang-format iproute2 slurmctld slurmd openmpi-bin" scripts/setup.sh
# The tests' own Python packages (Lightning, transformers, Accelerate, the build backend), into the project's venv
# as setup.sh installs torch (uv, from its cache when it has them; 20 s with nothing cached).
if [ -z "${BALANCENET_PYTHON:-}" ] && [ -x .venv/bin/uv ]; then
  .venv/bin/uv pip install -q --compile-bytecode --python .venv/bin/python -r requirements-test.txt -c requirements.txt
else
  "${BALANCENET_PYTHON:-.venv/bin/python}" -m pip install -q --disable-pip-version-check -r requirements-test.txt
fi
built=$SECONDS
format=0
scripts/check-format.sh || format=$?
cd "${BUILD_DIR:-build}"
suite=0
# One test more than cores: most tests are processes that wait on sockets, rendezvous and paced steps (at -j
# nproc the 2-core machine was 1.5 cores busy), and every test must pass on a busy machine anyway.
ctest --output-on-failure -j "$(($(nproc) + 1))" --timeout 600 || suite=$?
# The last line of CI's log says where its time went (CI allows 25 minutes).
echo "test.sh: setup and build ${built} s, format check and suite $((SECONDS - built)) s, in all ${SECONDS} s"
[ "$suite" -eq 0 ] || exit "$suite"
exit "$format"

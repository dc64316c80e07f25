# Sourced by the example scripts: the balancenet binary, the Python with numpy/PIL, and where outputs go.
# BALANCENET  the program (default: build/apps/balancenet of this checkout, which scripts/setup.sh builds, else
#             the installed one on PATH)
# OUT         the example's folder for its data and runs (default: runs/<example>, relative to the caller)
# RUN_DIR     the run's directory, where summary.json goes (default: $OUT/run-<time>)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BALANCENET=${BALANCENET:-$ROOT/build/apps/balancenet}
# Installed (share/doc/balancenet/examples, no build/ above): the program on PATH.
[ -x "$BALANCENET" ] || BALANCENET=$(command -v balancenet || echo "$BALANCENET")
PYTHON="${BALANCENET_PYTHON:-$ROOT/.venv/bin/python}"  # the project's Python (scripts/setup.sh): numpy, PIL, torch
if [ ! -x "$BALANCENET" ]; then
  echo "$(basename "$0"): $BALANCENET is not built (run scripts/setup.sh, or set BALANCENET)" >&2
  exit 2
fi
OUT=${OUT:-runs/$(basename "$0" .sh)}
RUN_DIR=${RUN_DIR:-$OUT/run-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"

#!/usr/bin/env bash
# Issue 28: one PyTorch script (bench/ddp_peer.py: the zoo's cnn, Fashion-MNIST, SGD) as plain DDP and with
# balancenet.torch's five lines (--balancenet), both under `balancenet launch --workers 4 --threads 1`, back
# to back. The pacing is the script's own on both sides (each rank's step lasts at least its current share /
# its speed), so the only difference is the split: DDP's equal one, balancenet's policy's live one.
# Usage: bench/python_vs_ddp.sh [out-dir] [scenario...]      scenarios: h1 homo (default: both)
#   h1:   4 workers paced 100,100,100,25 samples/s; homo: 4 x 100. Global batch 128, up to 300 steps,
#         evaluation every 25, each side stops at its first evaluation at or above 85% test accuracy.
#   MAX_LOAD=l, QUIET_WAIT=s  before each scenario, wait (up to s seconds, default 1200) for a 1-minute load
#         average below l (default 1.2): the machine is shared. Its two sides then run back to back (the load
#         average our own first side leaves takes minutes to decay); the load before and after each is kept
#   QUICK=1  a smoke run (tests/bench): 4 steps, evaluation every 2 on 400 test images, no target, no waiting
#   BALANCENET_BINARY=path  the launcher (default build/apps/balancenet)
# Exit 77 (a skip, for CTest) when the project's Python (.venv/) has no torch. Results: docs/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/python-vs-ddp/$(date +%Y%m%d-%H%M%S)}
shift $(( $# > 0 ? 1 : 0 ))
SCENARIOS=${*:-h1 homo}
. bench/lib/peers.sh  # PY, require_torch
. bench/lib/rates.sh  # load1
BN=${BALANCENET_BINARY:-build/apps/balancenet}  # the package is the one beside it (<build>/python)
WARMUP=1              # steps left out of samples/s on both sides (one-time allocations, DDP's first bucket pass)

require_torch python_vs_ddp
[ -x "$BN" ] || { echo "python_vs_ddp: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
ls "$(dirname "$BN")"/../python/balancenet/_engine*.so > /dev/null 2>&1 ||
  { echo "python_vs_ddp: the extension is not built (cmake --build build --target balancenet_python)" >&2; exit 2; }

# name -> the pace of each worker (samples/s)
scenario() {
  case $1 in
    h1)   echo "100,100,100,25" ;;
    homo) echo "100,100,100,100" ;;
    *) echo "python_vs_ddp: unknown scenario $1 (h1 homo)" >&2; exit 2 ;;
  esac
}

steps=300 every=25 target=0.85 test=0
[ "${QUICK:-0}" = 1 ] && steps=4 every=2 target=0 test=400

# Waits for a quiet machine (not in QUICK mode).
wait_quiet() {
  local waited=0
  while [ "${QUICK:-0}" != 1 ] && awk -v l="$(load1)" -v m="${MAX_LOAD:-1.2}" 'BEGIN {exit !(l >= m)}' &&
    ((waited < ${QUIET_WAIT:-1200})); do
    echo "python_vs_ddp: load $(load1), waiting for < ${MAX_LOAD:-1.2}" >&2
    sleep 30
    waited=$((waited + 30))
  done
}

# run SIDE SCENARIO_DIR ARGS...: one side under the launcher; "side load-before load-after" to loads.txt.
run() {
  local side=$1 dir=$2 before
  shift 2
  before=$(load1)
  echo "python_vs_ddp: $(basename "$dir") $side (load $before)" >&2
  rm -rf "$dir/$side-run"
  "$BN" launch --workers 4 --threads 1 --log-level warn --run-dir "$dir/$side-run" bench/ddp_peer.py \
    --out "$dir/$side.json" "$@" > "$dir/$side.log" 2>&1 ||
    { echo "python_vs_ddp: $side failed, see $dir/$side.log" >&2; exit 1; }
  echo "$side $before $(load1)" >> "$dir/loads.txt"
}

for s in $SCENARIOS; do scenario "$s" > /dev/null; done  # a wrong name before anything runs
mkdir -p "$OUT"
: > "$OUT/scenarios.txt"
echo "QUICK=${QUICK:-0} $0 $OUT $SCENARIOS ($(date -Iseconds))" > "$OUT/command.txt"
for s in $SCENARIOS; do
  pace=$(scenario "$s")
  echo "$s $target" >> "$OUT/scenarios.txt"
  mkdir -p "$OUT/$s"
  : > "$OUT/$s/loads.txt"
  wait_quiet
  common=(--global-batch 128 --steps "$steps" --eval-every "$every" --target-accuracy "$target" --test-samples "$test"
          --node-speed "$pace")
  run balancenet "$OUT/$s" --balancenet "${common[@]}"
  run ddp "$OUT/$s" "${common[@]}"
done
"$PY" bench/python_vs_ddp_summary.py "$OUT" "$WARMUP"

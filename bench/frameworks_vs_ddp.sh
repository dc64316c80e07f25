#!/usr/bin/env bash
# Each framework integration against the same framework's own DDP, side by side in one run, with the plain
# package (bench/ddp_peer.py: the zoo's cnn, --balancenet against plain DDP) beside them: Lightning's Trainer (strategy "ddp" /
# BalancedStrategy), transformers' Trainer (Trainer / BalancedTrainer: a small GPT-2 on the fortunes) and an
# Accelerate loop (prepare() alone / balancenet.accelerate.balance()), all under `balancenet launch --workers 4
# --threads 1`, every rank paced to its speed by the script itself on both sides (bench/framework_peer.py), so that
# the split alone differs.
# Usage: bench/frameworks_vs_ddp.sh [out-dir] [scenario...]     scenarios: h1 homo (default: both)
#   h1: 4 workers paced 100,100,100,25 samples/s; homo: 4 x 100. Global batch 128, STEPS steps (default 60).
#   EVAL_EVERY=n TARGET=a  Lightning, Accelerate and the plain package evaluate the test accuracy every n steps
#         and stop at a (default: no evaluation; the time to a then comes out as n/r)
#   TARGET_LM=a  transformers' target: the next-token accuracy on 512 held-out fortunes, evaluated every EVAL_EVERY
#         steps too (default 0.25; its 2-layer GPT-2 at n_embd 64 levels off near 0.27 by 400 steps)
#   FRAMEWORKS="lightning transformers accelerate torch"  which ones (torch: bench/ddp_peer.py, the plain package;
#         fsdp2: an FSDP2 loop, plain against bn.attach(), also accepted)
#   QUICK=1  a smoke run: 2 workers paced 400,100, 4 steps
# Results: docs/results.md#the-frameworks-side-by-side-with-their-own-ddp.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/frameworks-vs-ddp/$(date +%Y%m%d-%H%M%S)}
shift $(( $# > 0 ? 1 : 0 ))
SCENARIOS=${*:-h1 homo}
. bench/lib/peers.sh  # PY, require_torch
BN=${BALANCENET_BINARY:-build/apps/balancenet}
require_torch frameworks_vs_ddp
[ -x "$BN" ] || { echo "frameworks_vs_ddp: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
steps=${STEPS:-60} workers=4
[ "${QUICK:-0}" = 1 ] && steps=4 workers=2

scenario() {
  case $1 in
    h1)   [ "${QUICK:-0}" = 1 ] && echo "400,100" || echo "100,100,100,25" ;;
    homo) [ "${QUICK:-0}" = 1 ] && echo "100,100" || echo "100,100,100,100" ;;
    *) echo "frameworks_vs_ddp: unknown scenario $1 (h1 homo)" >&2; exit 2 ;;
  esac
}
for s in $SCENARIOS; do scenario "$s" > /dev/null; done

# side FRAMEWORK SCENARIO-DIR NAME ARGS...: one side under the launcher.
side() {
  local framework=$1 dir=$2 name=$3
  shift 3
  local script=bench/framework_peer.py
  local -a args=(--framework "$framework")
  if [ "$framework" = torch ]; then script=bench/ddp_peer.py args=(); fi
  echo "frameworks_vs_ddp: $(basename "$dir") $framework $name" >&2
  PYTHONWARNINGS=ignore "$BN" launch --workers "$workers" --threads 1 --log-level warn --run-dir "$dir/$name-run" \
    "$script" "${args[@]}" --out "$dir/$name.json" "$@" > "$dir/$name.log" 2>&1 ||
    { echo "frameworks_vs_ddp: $framework $name failed, see $dir/$name.log" >&2; exit 1; }
}

mkdir -p "$OUT"
echo "QUICK=${QUICK:-0} STEPS=$steps EVAL_EVERY=${EVAL_EVERY:-0} TARGET=${TARGET:-0} TARGET_LM=${TARGET_LM:-0.25} $0 $OUT $SCENARIOS" \
  "($(date -Iseconds), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))" > "$OUT/command.txt"
for s in $SCENARIOS; do
  for framework in ${FRAMEWORKS:-lightning transformers accelerate torch}; do
    dir="$OUT/$s/$framework"
    mkdir -p "$dir"
    common=(--global-batch 128 --steps "$steps" --node-speed "$(scenario "$s")")
    target=${TARGET:-0}
    [ "$framework" = transformers ] && target=${TARGET_LM:-0.25}
    [ -n "${EVAL_EVERY:-}" ] || target=0
    common+=(--eval-every "${EVAL_EVERY:-0}" --target-accuracy "$target")
    [ "$framework" = torch ] && balanced=--balancenet || balanced=--balanced
    side "$framework" "$dir" balanced "$balanced" "${common[@]}"
    side "$framework" "$dir" ddp "${common[@]}"
  done
done
"$PY" bench/frameworks_vs_ddp_summary.py "$OUT" "$([ "${QUICK:-0}" = 1 ] && echo 1 || echo 5)"

#!/usr/bin/env bash
# M1 (issue 53): 4 workers of equal speed (paced at NODE_SPEED samples/s each, default 150: on 2 cores four unpaced
# workers share the CPU, so a worker given less only hands its CPU to the others and a cap costs nothing), worker 3 capped (--memory-limit-mb) to a quarter of the activations its
# share of an equal split needs, side by side in one run:
#   bn-uncapped    balancenet without the cap
#   bn-one-pass    the cap, --accumulate 1: the policy holds worker 3 to what one pass holds (start split 80,80,80,16)
#   bn-auto        the cap, --accumulate auto: worker 3 takes the share its speed earns in passes that fit
#   ddp            PyTorch DDP without the cap (equal split)
#   ddp-accumulate DDP as its users fit the capped worker: every rank in 4 passes (no_sync), an equal split
# Usage: bench/memory_capped.sh [out-dir]     STEPS=n (default 200), BATCH=n (default 256), WARMUP=n (default 20),
#   NODE_SPEED=v (default 150; the real compute of a worker must stay below it for the pace to hold, as the log warns)
# Exit 77 (a skip, for CTest) when the project's Python (.venv/) has no torch. Results: docs/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/memory-capped/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh  # PY, require_torch, free_port, run_ddp
. bench/lib/capped.sh  # cap_mib, run_bn, run_ddp_side
BENCH=memory_capped
BN=${BN:-build/apps/balancenet}
STEPS=${STEPS:-200}
BATCH=${BATCH:-256}
NODES=4
SPEED=${NODE_SPEED:-150}
SPEEDS="$SPEED,$SPEED,$SPEED,$SPEED"
WARMUP=${WARMUP:-20}  # steps left out of samples/s: the first decisions move the split
require_torch memory_capped
[ -x "$BN" ] || { echo "memory_capped: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }

# The cap: the cnn's sgd state and a quarter of the equal share's activations (bench/lib/capped.sh).
read -r params mb_per_sample <<< "$("$BN" models | awk '$1 == "cnn" {print $2, $4}')"
share=$((BATCH / NODES))
pass=$((share / 4))
cap=$(cap_mib "$params" "$mb_per_sample" "$pass")
echo "memory_capped: worker 3 capped at $cap MiB: state and $pass of its $share samples' activations" >&2

mkdir -p "$OUT"
common=(--nodes "$NODES" --threads 1 --model cnn --global-batch "$BATCH" --steps "$STEPS" --eval-samples 0
        --progress-seconds 0 --log-level warn --node-speed "$SPEEDS")
run_bn bn-uncapped
run_bn bn-one-pass --memory-limit-mb "0,0,0,$cap" --split "$(((BATCH - pass) / 3)),$(((BATCH - pass) / 3)),$((BATCH - pass - 2 * ((BATCH - pass) / 3))),$pass" --policy balanced
run_bn bn-auto --memory-limit-mb "0,0,0,$cap" --accumulate auto
ddp=(--global-batch "$BATCH" --steps "$STEPS" --node-speed "$SPEEDS")
run_ddp_side ddp "${ddp[@]}" --accumulate 1
run_ddp_side ddp-accumulate "${ddp[@]}" --accumulate 4
"$PY" bench/memory_capped_summary.py "$OUT" "$WARMUP" "$cap" "$pass" "$mb_per_sample"

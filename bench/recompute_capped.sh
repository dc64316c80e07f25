#!/usr/bin/env bash
# M1 with recomputation (issue 53): 2 workers of one core each, unpaced (recomputation's cost is real compute, which a
# pace would hide), the zoo's resnet18 at WIDTH; worker 1 capped (--memory-limit-mb) so that one pass holds a third of
# its equal share kept whole, all of it recomputed (about 0.26 of the activations: the blocks' inputs and one block).
# Side by side in one run:
#   bn-uncapped     balancenet without the cap
#   bn-one-pass     the cap, --accumulate 1: the policy holds worker 1 to what one pass holds
#   bn-accumulate   the cap, --accumulate auto: worker 1's share in passes that fit
#   bn-recompute    the cap, --recompute auto: worker 1 (only) rebuilds its blocks in backward, its share in one pass
#   ddp             PyTorch DDP without the cap (equal split)
#   ddp-accumulate  DDP as its users fit the capped worker by passes: every rank in PASSES passes (no_sync)
#   ddp-recompute   DDP as its users fit it by recomputation: every rank's blocks under torch.utils.checkpoint
# Usage: bench/recompute_capped.sh [out-dir]   STEPS=n (default 60), BATCH=n (default 64), WARMUP=n (default 10),
#   WIDTH=w (default 0.25). Exit 77 (a skip) when the project's Python has no torch. Results: docs/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/recompute-capped/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh  # PY, require_torch, free_port, run_ddp
. bench/lib/capped.sh  # cap_mib, run_bn, run_ddp_side
BENCH=recompute_capped
BN=${BN:-build/apps/balancenet}
STEPS=${STEPS:-60}
BATCH=${BATCH:-64}
WARMUP=${WARMUP:-10}
WIDTH=${WIDTH:-0.25}
NODES=2
require_torch recompute_capped
[ -x "$BN" ] || { echo "recompute_capped: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }

# The cap: resnet18's sgd state and a third of the equal share's activations kept whole (bench/lib/capped.sh).
read -r params mb_per_sample <<< "$("$BN" models --width "$WIDTH" | awk '$1 == "resnet18" {print $2, $4}')"
share=$((BATCH / NODES))
pass=$((share / 3))
passes=$(((share + pass - 1) / pass))
cap=$(cap_mib "$params" "$mb_per_sample" "$pass")
echo "recompute_capped: worker 1 capped at $cap MiB: state and $pass of its $share samples kept whole" >&2

mkdir -p "$OUT"
common=(--nodes "$NODES" --threads 1 --model resnet18 --width "$WIDTH" --global-batch "$BATCH" --steps "$STEPS"
        --eval-samples 0 --progress-seconds 0 --log-level info)
capped=(--memory-limit-mb "0,$cap")
run_bn bn-uncapped
run_bn bn-one-pass "${capped[@]}" --split "$((BATCH - pass)),$pass" --policy balanced
run_bn bn-accumulate "${capped[@]}" --accumulate auto
run_bn bn-recompute "${capped[@]}" --recompute auto
grep -q "worker 1 recomputes its blocks" "$OUT/bn-recompute.log" \
  || { echo "recompute_capped: worker 1 did not recompute, see $OUT/bn-recompute.log" >&2; exit 1; }
ddp=(--model resnet18 --width "$WIDTH" --global-batch "$BATCH" --steps "$STEPS")
run_ddp_side ddp "${ddp[@]}"
run_ddp_side ddp-accumulate "${ddp[@]}" --accumulate "$passes"
run_ddp_side ddp-recompute "${ddp[@]}" --recompute
"$PY" bench/recompute_capped_summary.py "$OUT" "$WARMUP" "$cap"

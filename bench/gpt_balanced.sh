#!/usr/bin/env bash
# gpt on 2 paced workers (--node-speed 100,25 sequences/s): --policy balanced against --policy equal, tokens/s
# of each, character level on the fortunes text, one thread per worker, alternating in one run.
# Usage: bench/gpt_balanced.sh [out-dir]   LAYERS HEADS EMBED CONTEXT (2 4 128 64: small enough that the
#        real compute is faster than the pace, which paced emulation needs), BATCH (50), STEPS (60),
#        SPEEDS (100,25), REPS (1) override. tokens/s over the steps after the first WARMUP (2) of each run:
#        the balanced policy's first, equal, steps included.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpt-balanced/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh     # PY
. bench/lib/fortunes.sh  # fortunes_text
. bench/lib/rates.sh     # step_rate, load1, rate_table
LAYERS=${LAYERS:-2} HEADS=${HEADS:-4} EMBED=${EMBED:-128} CONTEXT=${CONTEXT:-64}
BATCH=${BATCH:-50} STEPS=${STEPS:-60} SPEEDS=${SPEEDS:-100,25} REPS=${REPS:-1} WARMUP=2
BN=build/apps/balancenet
[ -x "$BN" ] || { echo "gpt_balanced: $BN not built" >&2; exit 2; }
TEXT=$OUT/fortunes.txt
fortunes_text "$TEXT"  # and $OUT
begin_results "$OUT" "$0" "$@" "LAYERS=$LAYERS" "HEADS=$HEADS" "EMBED=$EMBED" "CONTEXT=$CONTEXT" "BATCH=$BATCH" "STEPS=$STEPS" "SPEEDS=$SPEEDS"
for ((i = 1; i <= REPS; i++)); do
  for policy in balanced equal; do
    before=$(load1)
    rm -rf "$OUT/$policy-$i"
    "$BN" train --nodes 2 --threads 1 --node-speed "$SPEEDS" --policy "$policy" --data "text:$TEXT" \
      --val-fraction 0.002 --model gpt --layers "$LAYERS" --heads "$HEADS" --embed "$EMBED" --context "$CONTEXT" \
      --global-batch "$BATCH" --steps "$STEPS" --optimizer adam --lr 1e-3 --progress-seconds 0 --log-level warn \
      --run-dir "$OUT/$policy-$i" > "$OUT/$policy-$i.log" 2>&1 \
      || { echo "gpt_balanced: $policy failed, see $OUT/$policy-$i.log" >&2; exit 1; }
    sps=$(step_rate "$OUT/$policy-$i" "$WARMUP")
    echo "$policy $i $(awk -v s="$sps" -v t="$CONTEXT" 'BEGIN {printf "%.1f", s * t}') $before $(load1)" \
      | tee -a "$OUT/results.txt" >&2
  done
done
rate_table "$OUT/results.txt" tokens/s balanced/equal | tee "$OUT/table.md"
